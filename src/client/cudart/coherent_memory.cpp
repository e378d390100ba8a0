#include "client/cudart/coherent_memory.hpp"

#include <cuda_runtime_api.h>
#include <signal.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <map>
#include <mutex>
#include <vector>

#include "client/core/call.hpp"
#include "client/cudart/concurrent_writes.hpp"
#include "client/cudart/device_backing.hpp"
#include "common/log.hpp"
#include "protocol/ops.hpp"

namespace rgpu::client::coherent_memory {
namespace {

constexpr size_t kChunk = 1 << 20;
enum class State : uint8_t { invalid, clean, dirty };

struct Range {
  size_t size;
  uint64_t device;                     // its device memory's address: the base, or where adopted memory lies
  device_backing::Allocation memory;  // the device allocation holding it (freed with it); none for variables
  // Managed variables of modules: the server's driver owns their memory,
  // which need not fill their pages.
  bool variables;
  // What of the range is device memory, offset -> bytes: all of it, or each
  // variable's bytes (a page's other bytes may be no allocation at all).
  std::map<size_t, size_t> windows;
  cudaStream_t stream;  // its device's copy stream
  std::vector<State> chunks;
  // Chunks fetched while GPU work may have been running, as fetched: at
  // write-back, what the GPU changed since is kept (concurrent_writes).
  std::map<size_t, std::vector<uint8_t>> fetched_while_gpu_ran;
};

struct Registry {
  std::mutex mutex;
  std::map<uint64_t, Range> ranges;  // by base
  // Some chunk holds a host copy: a device call must first drop them.
  std::atomic<bool> host_copies{false};
  struct sigaction previous {};
  // The ranges' extents alone, under their own lock: copies ask for them
  // while a fetch or flush holds `mutex`.
  std::mutex extent_mutex;
  std::map<uint64_t, size_t> extents;
  // Every copy asks contains(): without such memory it takes no lock.
  std::atomic<bool> any{false};
  std::mutex stream_mutex;
  std::map<int, cudaStream_t> streams;  // by device, under stream_mutex
};

Registry& registry() {
  static auto* r = new Registry;
  return *r;
}

// Asynchronous work (a launch, an async copy) went to a GPU since the last
// device-wide synchronization: it may still run, and touch managed memory.
std::atomic<bool> g_gpu_may_run{false};

// Set while this thread moves chunks: its own copies must not flush again,
// and a fault of its own is not one to serve.
thread_local bool t_busy = false;

struct Busy {
  Busy() { t_busy = true; }
  ~Busy() { t_busy = false; }
};

size_t chunk_bytes(const Range& r, size_t i) { return std::min(kChunk, r.size - i * kChunk); }
void* device_chunk(const Range& r, size_t i) { return reinterpret_cast<void*>(r.device + i * kChunk); }

// A fetch or write-back, complete when it returns, ordered after no other work.
cudaError_t copy(void* dst, const void* src, size_t n, cudaMemcpyKind kind, cudaStream_t stream) {
  if (cudaError_t e = cudaMemcpyAsync(dst, src, n, kind, stream)) return e;
  return cudaStreamSynchronize(stream);
}

// Moves chunk i between the GPU and `host` (the chunk's bytes in this
// process); only the windows' bytes are the GPU's.
cudaError_t transfer(const Range& r, size_t i, void* host, bool to_device) {
  const size_t begin = i * kChunk, end = begin + chunk_bytes(r, i);
  for (const auto& [offset, bytes] : r.windows) {
    const size_t lo = std::max(begin, offset), hi = std::min(end, offset + bytes);
    if (lo >= hi) continue;
    char* here = static_cast<char*>(host) + (lo - begin);
    auto* there = reinterpret_cast<char*>(r.device + lo);
    if (cudaError_t e = to_device ? copy(there, here, hi - lo, cudaMemcpyHostToDevice, r.stream)
                                  : copy(here, there, hi - lo, cudaMemcpyDeviceToHost, r.stream))
      return e;
  }
  return cudaSuccess;
}

// A dirty chunk fetched while the GPU may have run: the GPU's bytes as they
// are now, with the host's changes since the fetch laid over them, so
// writes of each side to different bytes both survive. Bytes both sides
// changed cannot be made coherent (CPU and GPU atomics on one allocation,
// systemWideAtomics): the host's win, and the first time it is logged.
void keep_gpu_writes(const Range& r, size_t i, const std::vector<uint8_t>& fetched, std::vector<uint8_t>* host) {
  std::vector<uint8_t> now(host->size());
  if (transfer(r, i, now.data(), false) != cudaSuccess || now == fetched)
    return;
  size_t both = merge_concurrent_writes(fetched.data(), now.data(), host->data(), now.size());
  static std::atomic<bool> logged{false};
  if (both && !logged.exchange(true))
    RGPU_LOG(error, "managed memory at 0x%llx was written by the host and by the GPU at once (%zu bytes both "
             "changed): through rgpu the host works on a copy that is written back at its next CUDA call, so "
             "concurrent CPU and GPU access to one allocation (system-scope atomics, as in systemWideAtomics) "
             "is not coherent; the host's bytes were kept. concurrentManagedAccess reads 0: synchronize before "
             "the host touches managed memory a kernel uses",
             static_cast<unsigned long long>(reinterpret_cast<uint64_t>(device_chunk(r, i))), both);
}

// Dirty chunks to the GPU, then no host copy left. Registry locked.
void flush_and_drop(Registry& reg) {
  std::vector<uint8_t> staging;
  for (auto& [base, r] : reg.ranges) {
    for (size_t i = 0; i < r.chunks.size(); ++i) {
      if (r.chunks[i] == State::invalid) continue;
      auto* p = reinterpret_cast<char*>(base + i * kChunk);
      size_t n = chunk_bytes(r, i);
      if (r.chunks[i] == State::dirty) {
        // Read-only first: another thread's write now waits in the fault
        // handler instead of landing after the copy.
        mprotect(p, n, PROT_READ);
        staging.assign(p, p + n);
        if (auto fetched = r.fetched_while_gpu_ran.find(i); fetched != r.fetched_while_gpu_ran.end())
          keep_gpu_writes(r, i, fetched->second, &staging);
        if (cudaError_t e = transfer(r, i, staging.data(), true))
          RGPU_LOG(error, "coherent memory: writing back 0x%llx failed (%d): the GPU keeps older data",
                   static_cast<unsigned long long>(base + i * kChunk), static_cast<int>(e));
      }
      mprotect(p, n, PROT_NONE);
      r.chunks[i] = State::invalid;
    }
    r.fetched_while_gpu_ran.clear();
  }
  reg.host_copies.store(false, std::memory_order_release);
}

void before_device_work(uint16_t op, bool async) {
  Registry& reg = registry();
  if (!t_busy && reg.host_copies.load(std::memory_order_acquire)) {
    // A copy thread of a chunk fetch in progress must not wait for it.
    std::unique_lock lock(reg.mutex, std::try_to_lock);
    if (lock) {
      Busy busy;
      flush_and_drop(reg);
    }
  }
  if (t_busy) return;  // a fetch or write-back of its own, complete when it returns
  if (async)
    g_gpu_may_run.store(true, std::memory_order_relaxed);
  else if (op == proto::kOpDeviceSynchronize)
    g_gpu_may_run.store(false, std::memory_order_relaxed);
}

bool write_fault(void* context) {
#if defined(__x86_64__)
  return (static_cast<ucontext_t*>(context)->uc_mcontext.gregs[REG_ERR] & 2) != 0;
#else
  (void)context;
  return true;  // unknown: taken as a write, which is correct and only flushes more
#endif
}

// Serves a fault at `address`: false when it is not in a managed range here.
bool serve_fault(uint64_t address, bool write) {
  Registry& reg = registry();
  std::lock_guard lock(reg.mutex);
  auto it = reg.ranges.upper_bound(address);
  if (it == reg.ranges.begin()) return false;
  --it;
  if (address - it->first >= it->second.size) return false;
  Range& r = it->second;
  size_t i = (address - it->first) / kChunk;
  auto* p = reinterpret_cast<char*>(it->first + i * kChunk);
  size_t n = chunk_bytes(r, i);
  int access = write ? PROT_READ | PROT_WRITE : PROT_READ;
  if (r.chunks[i] == State::invalid) {
    // Filled aside and moved in whole, so no thread sees a partial chunk.
    void* fresh = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (fresh == MAP_FAILED) return false;
    if (transfer(r, i, fresh, false) != cudaSuccess) {
      munmap(fresh, n);
      return false;
    }
    if (g_gpu_may_run.load(std::memory_order_relaxed)) {
      auto* bytes = static_cast<const uint8_t*>(fresh);
      r.fetched_while_gpu_ran[i].assign(bytes, bytes + n);
    }
    if (mprotect(fresh, n, access) != 0 || mremap(fresh, n, n, MREMAP_MAYMOVE | MREMAP_FIXED, p) == MAP_FAILED) {
      r.fetched_while_gpu_ran.erase(i);
      munmap(fresh, n);
      return false;
    }
  } else if (r.chunks[i] == State::clean) {
    // Another thread's fetch may have served a read already: only a write
    // needs more.
    if (!write) return true;
    if (mprotect(p, n, PROT_READ | PROT_WRITE) != 0) return false;
  } else {
    return true;  // made writable by another thread while this one waited
  }
  r.chunks[i] = write ? State::dirty : State::clean;
  reg.host_copies.store(true, std::memory_order_release);
  return true;
}

void on_fault(int signal, siginfo_t* info, void* context) {
  if (!t_busy) {
    Busy busy;
    if (serve_fault(reinterpret_cast<uint64_t>(info->si_addr), write_fault(context))) return;
  }
  // Not ours (or the copy failed): whatever handled it before us does.
  const struct sigaction& prev = registry().previous;
  if (prev.sa_flags & SA_SIGINFO) {
    prev.sa_sigaction(signal, info, context);
  } else if (prev.sa_handler != SIG_DFL && prev.sa_handler != SIG_IGN) {
    prev.sa_handler(signal);
  } else {
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigaction(signal, &dfl, nullptr);  // the faulting access repeats and ends the process
  }
}

void install_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction sa {};
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, &registry().previous);
    set_before_device_work(before_device_work);
  });
}

// Reserves [base, base + size) here, with no access until a fault fetches it.
bool reserve(uint64_t base, size_t size) {
  void* want = reinterpret_cast<void*>(base);
  void* p = mmap(want, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
  if (p == MAP_FAILED) return false;
  if (p != want) {  // a kernel without MAP_FIXED_NOREPLACE took it as a hint
    munmap(p, size);
    return false;
  }
  return true;
}

// The current device's copy stream, made at its first range (not in the
// fault handler).
cudaStream_t copy_stream(Registry& reg) {
  std::lock_guard lock(reg.stream_mutex);
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) return nullptr;
  auto [it, fresh] = reg.streams.try_emplace(device, nullptr);
  if (fresh && cudaStreamCreateWithFlags(&it->second, cudaStreamNonBlocking) != cudaSuccess) {
    reg.streams.erase(it);
    return nullptr;
  }
  return it->second;
}

// Device memory whose range (`bytes` from its first page boundary) is free
// here too, reserved; false when this process uses an address in it.
// *memory is the allocation either way.
cudaError_t allocate_reachable(size_t bytes, size_t page, bool server_wide, device_backing::Allocation* memory,
                               uint64_t* start, bool* reserved) {
  if (cudaError_t e = device_backing::allocate(bytes, server_wide, memory)) return e;
  // A GPU packs small allocations closer than pages: the range then starts
  // at the first page boundary of an allocation a page larger.
  if (memory->address % page) {
    device_backing::release(*memory);
    if (cudaError_t e = device_backing::allocate(bytes + page, server_wide, memory)) return e;
  }
  *start = (memory->address + page - 1) / page * page;
  *reserved = reserve(*start, bytes);
  return cudaSuccess;
}

// Registry locked.
void insert_range(Registry& reg, uint64_t base, Range r) {
  r.chunks.assign((r.size + kChunk - 1) / kChunk, State::invalid);
  reg.extents[base] = r.size;
  reg.ranges[base] = std::move(r);
  reg.any.store(true, std::memory_order_release);
}

void add_range(Registry& reg, uint64_t base, size_t bytes, uint64_t device, const device_backing::Allocation& memory,
               cudaStream_t stream) {
  std::scoped_lock lock(reg.mutex, reg.extent_mutex);
  insert_range(reg, base, Range{bytes, device, memory, false, {{0, bytes}}, stream, {}, {}});
}

// Registry locked. Drops the range at `it` (its pages here too).
void erase_range(Registry& reg, std::map<uint64_t, Range>::iterator it) {
  munmap(reinterpret_cast<void*>(it->first), it->second.size);
  reg.extents.erase(it->first);
  reg.ranges.erase(it);
  reg.any.store(!reg.extents.empty(), std::memory_order_release);
}

// Registry locked. Reserves what of [lo, hi) no range in `overlapping`
// (ordered, within [lo, hi)) covers; false, with nothing reserved, when
// this process uses an address there.
bool reserve_gaps(uint64_t lo, uint64_t hi, const std::vector<std::map<uint64_t, Range>::iterator>& overlapping) {
  std::vector<std::pair<uint64_t, size_t>> reserved;
  uint64_t cursor = lo;
  auto gap = [&](uint64_t end) {
    if (end <= cursor) return true;
    if (!reserve(cursor, end - cursor)) return false;
    reserved.emplace_back(cursor, end - cursor);
    return true;
  };
  bool ok = true;
  for (auto it : overlapping) {
    ok = ok && gap(it->first);
    cursor = it->first + it->second.size;
  }
  ok = ok && gap(hi);
  if (!ok)
    for (auto [base, bytes] : reserved) munmap(reinterpret_cast<void*>(base), bytes);
  return ok;
}

}  // namespace

cudaError_t allocate(size_t size, bool server_wide, uint64_t* base) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t bytes = (size + page - 1) / page * page;
  constexpr int kAttempts = 8;
  install_once();
  Registry& reg = registry();
  // No registry lock across calls to the server: another thread's call
  // must be able to write its dirty chunks back meanwhile.
  cudaStream_t stream = copy_stream(reg);
  if (!stream) return cudaErrorMemoryAllocation;
  // Where this process uses the GPU's address, the GPU's next allocation
  // gives another: the ones in the way are held until then.
  std::vector<device_backing::Allocation> in_the_way;
  cudaError_t e = cudaErrorMemoryAllocation;
  for (int i = 0; i < kAttempts; ++i) {
    device_backing::Allocation memory;
    uint64_t start = 0;
    bool reserved = false;
    if ((e = allocate_reachable(bytes, page, server_wide, &memory, &start, &reserved))) break;
    if (!reserved) {
      RGPU_LOG(warn, "the GPU's address 0x%llx is taken in this process: trying another",
               static_cast<unsigned long long>(start));
      in_the_way.push_back(memory);
      e = cudaErrorMemoryAllocation;
      continue;
    }
    add_range(reg, start, bytes, start, memory, stream);
    *base = start;
    break;
  }
  for (const auto& memory : in_the_way) device_backing::release(memory);
  return e;
}

cudaError_t adopt(uint64_t base, size_t size, uint64_t* device) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  if (base % page) return cudaErrorInvalidValue;
  const size_t bytes = (size + page - 1) / page * page;
  install_once();
  Registry& reg = registry();
  cudaStream_t stream = copy_stream(reg);
  if (!stream) return cudaErrorMemoryAllocation;
  // Page-locked memory is every GPU's under unified addressing.
  device_backing::Allocation memory;
  if (cudaError_t e = device_backing::allocate(bytes, true, &memory)) return e;
  void* address = reinterpret_cast<void*>(memory.address);
  if (cudaError_t e = copy(address, reinterpret_cast<void*>(base), size, cudaMemcpyHostToDevice, stream)) {
    device_backing::release(memory);
    return e;
  }
  // The host's pages are the device's now: the next host access fetches.
  if (mprotect(reinterpret_cast<void*>(base), bytes, PROT_NONE) != 0) {
    device_backing::release(memory);
    return cudaErrorMemoryAllocation;
  }
  add_range(reg, base, bytes, memory.address, memory, stream);
  *device = memory.address;
  return cudaSuccess;
}

cudaError_t release(uint64_t base) {
  Registry& reg = registry();
  device_backing::Allocation memory;
  {
    std::scoped_lock lock(reg.mutex, reg.extent_mutex);
    auto it = reg.ranges.find(base);
    if (it == reg.ranges.end() || it->second.variables) return cudaErrorInvalidValue;
    memory = it->second.memory;
    erase_range(reg, it);
  }
  return device_backing::release(memory);
}

cudaError_t add_variable(uint64_t address, size_t size) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  if (size == 0) return cudaErrorInvalidValue;
  uint64_t lo = address / page * page, hi = (address + size + page - 1) / page * page;
  install_once();
  Registry& reg = registry();
  cudaStream_t stream = copy_stream(reg);
  if (!stream) return cudaErrorMemoryAllocation;
  Busy busy;  // the write-backs below are this thread's own copies
  std::scoped_lock lock(reg.mutex, reg.extent_mutex);
  // The ranges it shares pages with become one with it; their host copies
  // go first, as chunks are counted from a range's base.
  std::vector<std::map<uint64_t, Range>::iterator> overlapping;
  for (auto it = reg.ranges.lower_bound(lo); it != reg.ranges.begin();) {
    --it;
    if (it->first + it->second.size <= lo) break;
    overlapping.insert(overlapping.begin(), it);
  }
  for (auto it = reg.ranges.lower_bound(lo); it != reg.ranges.end() && it->first < hi; ++it) overlapping.push_back(it);
  for (auto it : overlapping) {
    if (it->second.variables) continue;
    RGPU_LOG(error, "managed variable at 0x%llx (%zu bytes) shares a page with managed or mapped memory of this "
             "process at 0x%llx: rgpu keeps a variable's host copy by whole pages, so the host cannot reach it",
             static_cast<unsigned long long>(address), size, static_cast<unsigned long long>(it->first));
    return cudaErrorMemoryAllocation;
  }
  if (!overlapping.empty()) {
    lo = std::min(lo, overlapping.front()->first);
    hi = std::max(hi, overlapping.back()->first + overlapping.back()->second.size);
  }
  if (!reserve_gaps(lo, hi, overlapping)) {
    RGPU_LOG(error, "managed variable at 0x%llx (%zu bytes): this process already uses an address of its pages, "
             "so the host cannot reach it at the GPU's address (a limit of rgpu: a module's managed variable is "
             "host-accessible only where its pages are free in the application)",
             static_cast<unsigned long long>(address), size);
    return cudaErrorMemoryAllocation;
  }
  flush_and_drop(reg);
  Range merged{hi - lo, lo, {}, true, {{address - lo, size}}, stream, {}, {}};
  for (auto it : overlapping) {
    for (const auto& [offset, bytes] : it->second.windows) merged.windows.emplace(offset + (it->first - lo), bytes);
    reg.extents.erase(it->first);
    reg.ranges.erase(it);
  }
  insert_range(reg, lo, std::move(merged));
  return cudaSuccess;
}

void remove_variable(uint64_t address) {
  Registry& reg = registry();
  std::scoped_lock lock(reg.mutex, reg.extent_mutex);
  auto it = reg.ranges.upper_bound(address);
  if (it == reg.ranges.begin()) return;
  --it;
  if (!it->second.variables || !it->second.windows.erase(address - it->first)) return;
  if (it->second.windows.empty()) erase_range(reg, it);
}

bool contains(uint64_t ptr) {
  Registry& reg = registry();
  if (!reg.any.load(std::memory_order_acquire)) return false;
  std::lock_guard lock(reg.extent_mutex);
  auto it = reg.extents.upper_bound(ptr);
  return it != reg.extents.begin() && ptr - std::prev(it)->first < std::prev(it)->second;
}

}  // namespace rgpu::client::coherent_memory
