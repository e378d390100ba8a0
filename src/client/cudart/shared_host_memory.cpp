#include "client/cudart/shared_host_memory.hpp"

#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "client/core/runtime.hpp"
#include "common/log.hpp"
#include "protocol/codec.hpp"
#include "protocol/ops.hpp"
#include "transport/shm/shared_memory.hpp"

namespace rgpu::client {
namespace {

size_t page_size() { return static_cast<size_t>(sysconf(_SC_PAGESIZE)); }

constexpr char kMemfdName[] = "rgpu-registered";
constexpr char kMemfdPath[] = "/memfd:rgpu-registered";

// The page ranges live registrations share, by base.
std::mutex g_shared_mutex;
std::map<uint64_t, size_t> g_shared_pages;

bool pages_shared(uint64_t base, size_t size) {
  std::lock_guard lock(g_shared_mutex);
  auto it = g_shared_pages.lower_bound(base + size);
  return it != g_shared_pages.begin() && std::prev(it)->first + std::prev(it)->second > base;
}

// Why [base, base + size) is not all private anonymous read-write memory
// (per /proc/self/maps); empty when it is. A file's pages and shared memory
// (rgpu's own included) cannot be replaced; the stack can (NPP registers a
// local variable and hands the GPU its device pointer).
std::string not_private_anonymous(uint64_t base, size_t size) {
  FILE* maps = std::fopen("/proc/self/maps", "re");
  if (!maps) return "/proc/self/maps cannot be read";
  uint64_t covered = base;
  const uint64_t end = base + size;
  std::string why;
  char line[512];
  while (covered < end && std::fgets(line, sizeof line, maps)) {
    unsigned long long from, to, offset, inode;
    char perms[5] = {}, device[16] = {}, path[256] = {};
    if (std::sscanf(line, "%llx-%llx %4s %llx %15s %llu %255[^\n]", &from, &to, perms, &offset, device, &inode, path) <
        6)
      continue;
    if (to <= covered || from >= end) continue;
    if (from > covered) break;  // a hole
    const char* name = path;
    while (*name == ' ') ++name;
    // Pages an earlier registration made shared stay rgpu's memfd after it
    // ends (NPP registers the same local variable again): those qualify
    // while no live registration shares them (share_registered checks).
    const bool ours = std::strncmp(perms, "rw-s", 4) == 0 && std::strncmp(name, kMemfdPath, sizeof kMemfdPath - 1) == 0;
    if (!ours && (std::strncmp(perms, "rw-p", 4) != 0 || inode != 0 ||
                  (*name && std::strcmp(name, "[heap]") != 0 && std::strcmp(name, "[stack]") != 0))) {
      why = std::string("its pages are ") + perms + (*name ? std::string(" ") + name : std::string(" anonymous")) +
            " memory, not private anonymous read-write memory";
      break;
    }
    covered = to;
  }
  std::fclose(maps);
  if (why.empty() && covered < end) why = "part of it is not mapped";
  return why;
}

// The pages [base, base + size) become fd's, holding the same bytes.
// The bytes go through the kernel (pwrite, called directly): whole pages
// hold the application's neighbours too, which a sanitizer's memcpy would
// take for reads past their allocations.
bool copy_and_map(uint64_t base, size_t size, int fd) {
  for (size_t done = 0; done < size;) {
    long n = syscall(SYS_pwrite64, fd, reinterpret_cast<const char*>(base) + done, size - done, done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return mmap(reinterpret_cast<void*>(base), size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) !=
         MAP_FAILED;
}

// Whether [base, base + size) overlaps the calling thread's stack.
bool on_own_stack(uint64_t base, size_t size) {
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) != 0) return true;  // assume so: the careful way
  void* stack;
  size_t stack_size;
  pthread_attr_getstack(&attr, &stack, &stack_size);
  pthread_attr_destroy(&attr);
  const auto low = reinterpret_cast<uint64_t>(stack);
  return base < low + stack_size && low < base + size;
}

// Linux's state letter of thread `tid` of this process ('S': asleep).
char thread_state(pid_t tid) {
  char path[64], line[512];
  std::snprintf(path, sizeof path, "/proc/self/task/%d/stat", static_cast<int>(tid));
  FILE* f = std::fopen(path, "re");
  if (!f) return '?';
  const char* state = nullptr;
  if (std::fgets(line, sizeof line, f))
    if (const char* paren = std::strrchr(line, ')')) state = paren + 2;
  std::fclose(f);
  return state ? *state : '?';
}

// copy_and_map, for pages of this thread's own stack (NPP registers a local
// variable): the frames that are live would lose what they write between
// the copy and the mapping, so another thread does both while this one
// waits in the kernel, its signals blocked, its stack untouched.
bool replace_on_own_stack(uint64_t base, size_t size, int fd) {
  std::atomic<uint32_t> done{0};
  std::atomic<bool> waiting{false};  // from here on this thread only sleeps
  bool replaced = false;
  const pid_t self = static_cast<pid_t>(syscall(SYS_gettid));
  sigset_t all, saved;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &saved);
  std::thread helper([&] {
    while (!waiting.load() || thread_state(self) != 'S') std::this_thread::yield();
    replaced = copy_and_map(base, size, fd);
    done.store(1);
    syscall(SYS_futex, reinterpret_cast<uint32_t*>(&done), FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
  });
  waiting.store(true);
  while (done.load() == 0)
    syscall(SYS_futex, reinterpret_cast<uint32_t*>(&done), FUTEX_WAIT_PRIVATE, 0, nullptr, nullptr, 0);
  helper.join();
  pthread_sigmask(SIG_SETMASK, &saved, nullptr);
  return replaced;
}

bool replace_with_memfd(uint64_t base, size_t size, int fd) {
  return on_own_stack(base, size) ? replace_on_own_stack(base, size, fd) : copy_and_map(base, size, fd);
}

}  // namespace

const ShareOps kPageLockedShare{proto::kOpHostRegisterShared, proto::kOpHostUnregisterShared};
const ShareOps kManagedShare{proto::kOpManagedMap, proto::kOpManagedUnmap};

cudaError_t map_on_servers(const ShareOps& ops, uint64_t base, size_t size, int fd) {
  auto sessions = Runtime::get().sharing_sessions();
  proto::Writer w;
  w.put<uint64_t>(base).put<uint64_t>(size);
  std::vector<uint8_t> reply;
  for (size_t i = 0; i < sessions.size(); ++i) {
    auto [session, gpu] = sessions[i];
    if (cudaError_t e = session->call_with_fd(ops.map, gpu, w.bytes(), fd, reply)) {
      unmap_on_servers(ops, base, i);
      return e;
    }
  }
  return cudaSuccess;
}

void unmap_on_servers(const ShareOps& ops, uint64_t base, size_t count) {
  auto sessions = Runtime::get().sharing_sessions();
  proto::Writer w;
  w.put<uint64_t>(base);
  std::vector<uint8_t> reply;
  for (size_t i = 0; i < count && i < sessions.size(); ++i)
    sessions[i].first->call(ops.unmap, sessions[i].second, w.bytes(), {}, reply);
}

bool share_with_servers(uint64_t base, size_t size, int fd) {
  return !Runtime::get().sharing_sessions().empty() && map_on_servers(kPageLockedShare, base, size, fd) == cudaSuccess;
}

void unshare_with_servers(uint64_t base, size_t count) { unmap_on_servers(kPageLockedShare, base, count); }

SharedPages registered_pages(uint64_t ptr, size_t size, int fd) {
  const size_t page = page_size();
  uint64_t base = ptr / page * page;
  return {base, (ptr + size - base + page - 1) / page * page, fd};
}

std::optional<SharedPages> share_registered(void* ptr, size_t size) {
  const uint64_t p = reinterpret_cast<uint64_t>(ptr);
  SharedPages pages = registered_pages(p, size, -1);
  if (std::string why = not_private_anonymous(pages.base, pages.size); !why.empty()) {
    RGPU_LOG(warn, "cudaHostRegister(0x%llx, %zu): the GPU cannot be given this memory (%s): it is registered for "
             "copies only, with no device address",
             static_cast<unsigned long long>(p), size, why.c_str());
    return std::nullopt;
  }
  if (pages_shared(pages.base, pages.size)) {
    RGPU_LOG(warn, "cudaHostRegister(0x%llx, %zu): its pages are shared by another registration: it is registered "
             "for copies only, with no device address", static_cast<unsigned long long>(p), size);
    return std::nullopt;
  }
  pages.fd = transport::create_sealed_memfd(kMemfdName, pages.size);
  if (pages.fd < 0) return std::nullopt;
  if (!replace_with_memfd(pages.base, pages.size, pages.fd)) {
    RGPU_LOG(warn, "cudaHostRegister(0x%llx, %zu): its pages could not be shared with the server (%s)",
             static_cast<unsigned long long>(p), size, std::strerror(errno));
    close(pages.fd);
    return std::nullopt;
  }
  if (!share_with_servers(pages.base, pages.size, pages.fd)) {
    RGPU_LOG(warn, "cudaHostRegister(0x%llx, %zu): the server refused its pages: registered for copies only",
             static_cast<unsigned long long>(p), size);
    close(pages.fd);  // the pages stay the application's, as shared memory of its own
    return std::nullopt;
  }
  {
    std::lock_guard lock(g_shared_mutex);
    g_shared_pages[pages.base] = pages.size;
  }
  return pages;
}

void unshare_registered(const SharedPages& pages) {
  {
    std::lock_guard lock(g_shared_mutex);
    g_shared_pages.erase(pages.base);
  }
  unshare_with_servers(pages.base, Runtime::get().sharing_sessions().size());
  close(pages.fd);  // the mapping keeps the memory for the application
}

}  // namespace rgpu::client
