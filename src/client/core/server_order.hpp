// Order that runs through the server, another process, between this
// process's threads: an application thread's request reaches the server
// before the server runs a host callback it made due (the callback thread
// may then touch what the thread wrote), and a callback's end reaches the
// server before the server answers a later call (the caller may then read
// what the callback wrote: a staged copy's download). The sockets carry that
// order and their system calls are full barriers, but ThreadSanitizer cannot
// see it; these mark it for ThreadSanitizer and are nothing elsewhere. Each
// direction has its own token, so that no order between two application
// threads is made up (which would hide their races).
#pragma once
#if defined(__SANITIZE_THREAD__)
#include <sanitizer/tsan_interface.h>
#endif

namespace rgpu::client::server_order {

#if defined(__SANITIZE_THREAD__)
inline char requests, callbacks;
inline void request_sent() { __tsan_release(&requests); }
inline void callback_starts() { __tsan_acquire(&requests); }
inline void callback_ended() { __tsan_release(&callbacks); }
inline void reply_received() { __tsan_acquire(&callbacks); }
#else
inline void request_sent() {}
inline void callback_starts() {}
inline void callback_ended() {}
inline void reply_received() {}
#endif

}  // namespace rgpu::client::server_order
