// Per-thread state that outlives the thread's C++ thread-local destructors.
// At exit() the main thread's thread_local objects are destroyed before the
// libraries' exit handlers run, and those may still call CUDA (PyTorch's
// cuFFT plan cache calls cuCtxPushCurrent from cufftDestroy): a destroyed
// std::vector written then corrupts the heap. This value lives in POSIX
// thread-specific data instead: made on first use, freed when its thread
// ends (after that thread's C++ thread-locals), never by exit() (the main
// thread's stays until the process ends).
#pragma once
#include <pthread.h>

namespace rgpu::client {

template <typename T>
class ThreadResident {
 public:
  T& get() {
    auto* p = static_cast<T*>(pthread_getspecific(key()));
    if (!p) {
      p = new T();
      pthread_setspecific(key(), p);
    }
    return *p;
  }
  T* operator->() { return &get(); }

 private:
  static pthread_key_t key() {
    static const pthread_key_t k = [] {
      pthread_key_t made;
      pthread_key_create(&made, [](void* p) { delete static_cast<T*>(p); });
      return made;
    }();
    return k;
  }
};

}  // namespace rgpu::client
