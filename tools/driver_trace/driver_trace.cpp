// The driver tracer: NVIDIA's real libcuda.so.1 behind a libcuda.so.1 of the
// same exports that logs every call. Exported functions, functions handed out
// by cuGetProcAddress and the slots of the private tables handed out by
// cuGetExportTable all go through call trampolines (trampolines.S), so the
// log shows which undocumented tables and functions NVIDIA's runtime and
// libraries use, with their raw arguments, the memory those point at before
// and after the call, and the results.
//   RGPU_DRIVER_TRACE=FILE      log to FILE.PID (default: standard error)
//   RGPU_DRIVER_TRACE_LIMIT=N   log the first N calls of each function (200)
//   RGPU_REAL_LIBCUDA=PATH      NVIDIA's driver (default: found by ldconfig)
#define __CUDA_API_VERSION_INTERNAL  // the real names, not cuda.h's _v2 macros
#include <cuda.h>
#include <dlfcn.h>
#include <link.h>
#include <sys/uio.h>
#include <unistd.h>

#include <atomic>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "client/cuda/export_tables/integrity_hash.hpp"
#include "client/cuda/export_tables/uuid_text.hpp"

#define EXPORT extern "C" __attribute__((visibility("default")))

extern "C" char rgpu_trace_trampolines[];
extern "C" const void* rgpu_trace_forward[];
extern "C" const char* const rgpu_trace_forward_names[];
extern "C" const uint64_t rgpu_trace_forward_count;

namespace {

constexpr size_t kTrampolines = RGPU_TRACE_TRAMPOLINES;
constexpr size_t kTrampolineSize = 16;

struct Entry {
  const void* target = nullptr;
  std::string label;
  bool table_slot = false;  // dump argument memory, result as a raw word
  std::atomic<uint64_t> calls{0};
  std::atomic<uint64_t> failures{0};
  std::atomic<int64_t> last_failure{0};
};

Entry g_entries[kTrampolines];
std::atomic<size_t> g_used{0};
std::mutex g_mutex;  // trampoline allocation and log lines
std::map<std::pair<std::string, const void*>, size_t> g_by_label;
FILE* g_log = stderr;
uint64_t g_limit = 200;
void* g_real = nullptr;
thread_local int t_depth = 0;

void logf(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void logf(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  std::lock_guard<std::mutex> lock(g_mutex);
  vfprintf(g_log, fmt, ap);
  fflush(g_log);
  va_end(ap);
}

// 32 bytes at `p` if they are readable, as hex; "" otherwise. process_vm_readv
// reports a bad address instead of faulting.
std::string peek(uint64_t p) {
  if (p < 0x10000) return "";
  unsigned char buf[32];
  iovec local{buf, sizeof buf}, remote{reinterpret_cast<void*>(p), sizeof buf};
  if (process_vm_readv(getpid(), &local, 1, &remote, 1, 0) != static_cast<ssize_t>(sizeof buf)) return "";
  std::string s = " [";
  char hex[4];
  for (size_t i = 0; i < sizeof buf; ++i) {
    snprintf(hex, sizeof hex, "%02x", buf[i]);
    s += hex;
    if (i % 8 == 7 && i + 1 < sizeof buf) s += ' ';
  }
  return s + "]";
}

thread_local uint64_t t_args[16][6];  // per depth: the arguments, for the dump after the call

void* trampoline_for(const std::string& label, const void* target, bool table_slot) {
  std::lock_guard<std::mutex> lock(g_mutex);
  auto key = std::make_pair(label, target);
  auto it = g_by_label.find(key);
  size_t i;
  if (it != g_by_label.end()) {
    i = it->second;
  } else {
    i = g_used.load();
    if (i >= kTrampolines) return const_cast<void*>(target);  // untraced
    g_entries[i].target = target;
    g_entries[i].label = label;
    g_entries[i].table_slot = table_slot;
    g_used.store(i + 1);
    g_by_label.emplace(key, i);
  }
  return rgpu_trace_trampolines + i * kTrampolineSize;
}


// NVIDIA's driver's executable segments: table slots pointing there are
// functions to trace, anything else is data copied as it is.
std::vector<std::pair<uint64_t, uint64_t>> g_real_code;

int collect_code(dl_phdr_info* info, size_t, void* base) {
  if (info->dlpi_addr != *static_cast<uint64_t*>(base)) return 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X))
      g_real_code.emplace_back(info->dlpi_addr + ph.p_vaddr, info->dlpi_addr + ph.p_vaddr + ph.p_memsz);
  }
  return 1;
}

bool in_real_code(uint64_t p) {
  for (auto [begin, end] : g_real_code)
    if (p >= begin && p < end) return true;
  return false;
}

int CUDAAPI not_found() { return CUDA_ERROR_NOT_FOUND; }

void load_real_driver() {
  const char* path = getenv("RGPU_REAL_LIBCUDA");
  const char* candidates[] = {path, "/usr/lib/x86_64-linux-gnu/libcuda.so.1", "/usr/lib64/libcuda.so.1",
                              "/usr/lib/libcuda.so.1", "/usr/local/nvidia/lib64/libcuda.so.1"};
  for (const char* c : candidates)
    if (c && (g_real = dlopen(c, RTLD_NOW | RTLD_LOCAL))) {
      logf("driver-trace: NVIDIA's driver from %s\n", c);
      Dl_info info{};
      if (dladdr(dlsym(g_real, "cuInit"), &info)) {
        uint64_t base = reinterpret_cast<uint64_t>(info.dli_fbase);
        dl_iterate_phdr(collect_code, &base);
      }
      return;
    }
  logf("driver-trace: NVIDIA's libcuda.so.1 not found (set RGPU_REAL_LIBCUDA)\n");
}

void start() {
  if (const char* file = getenv("RGPU_DRIVER_TRACE")) {
    std::string name = std::string(file) + "." + std::to_string(getpid());
    if (FILE* f = fopen(name.c_str(), "a")) g_log = f;
  }
  if (const char* limit = getenv("RGPU_DRIVER_TRACE_LIMIT")) g_limit = strtoull(limit, nullptr, 10);
  char exe[512] = {};
  readlink("/proc/self/exe", exe, sizeof exe - 1);
  logf("driver-trace: pid %d %s\n", getpid(), exe);
  load_real_driver();
  for (uint64_t i = 0; i < rgpu_trace_forward_count; ++i) {
    const char* name = rgpu_trace_forward_names[i];
    void* f = g_real ? dlsym(g_real, name) : nullptr;
    rgpu_trace_forward[i] = f ? trampoline_for(name, f, false) : reinterpret_cast<void*>(&not_found);
  }
}

void finish() {
  logf("driver-trace: summary (calls, failures, last failure) pid %d\n", getpid());
  for (size_t i = 0; i < g_used.load(); ++i) {
    const Entry& e = g_entries[i];
    if (e.calls == 0) continue;
    logf("  %-60s %10" PRIu64 " %8" PRIu64 " %" PRId64 "\n", e.label.c_str(), e.calls.load(), e.failures.load(),
         e.last_failure.load());
  }
}

}  // namespace

extern "C" __attribute__((visibility("hidden"))) const void* rgpu_trace_enter(uint64_t index, const uint64_t* regs) {
  Entry& e = g_entries[index];
  uint64_t n = e.calls.fetch_add(1);
  int depth = t_depth++;
  if (depth < 16) memcpy(t_args[depth], regs, sizeof t_args[depth]);
  if (n < g_limit) {
    std::string line = std::string(depth * 2, ' ') + "> " + e.label + "(";
    char word[32];
    for (int a = 0; a < 6; ++a) {
      snprintf(word, sizeof word, "%s0x%" PRIx64, a ? ", " : "", regs[a]);
      line += word;
    }
    line += ")";
    if (e.table_slot)
      for (int a = 0; a < 6; ++a)
        if (std::string m = peek(regs[a]); !m.empty()) line += " a" + std::to_string(a) + m;
    logf("%s tid %d\n", line.c_str(), gettid());
  }
  return e.target;
}

extern "C" __attribute__((visibility("hidden"))) void rgpu_trace_leave(uint64_t index, uint64_t result) {
  Entry& e = g_entries[index];
  int depth = --t_depth;
  int32_t status = static_cast<int32_t>(result);
  if (!e.table_slot && status != 0) {
    e.failures.fetch_add(1);
    e.last_failure.store(status);
  }
  if (e.calls.load() <= g_limit || (!e.table_slot && status != 0 && e.failures.load() <= g_limit)) {
    std::string line = std::string(depth * 2, ' ') + "< " + e.label + " = ";
    char word[32];
    if (e.table_slot)
      snprintf(word, sizeof word, "0x%" PRIx64, result);
    else
      snprintf(word, sizeof word, "%" PRId32, status);
    line += word;
    if (e.table_slot && depth < 16)
      for (int a = 0; a < 6; ++a)
        if (std::string m = peek(t_args[depth][a]); !m.empty()) line += " a" + std::to_string(a) + m;
    logf("%s\n", line.c_str());
  }
}

namespace {

std::map<std::string, uint64_t*> g_tables;

template <typename F>
F real(const char* name) {
  return g_real ? reinterpret_cast<F>(dlsym(g_real, name)) : nullptr;
}

}  // namespace

constexpr const char* kIntegrityTable = "d4082055-bde6-704b-8d34-ba123c66e1f2";
constexpr const char* kCudartInterface = "6bd5fb6c-5bf4-e74a-8987-d93912fd9df9";

using IntegrityCheck = CUresult(CUDAAPI*)(uint32_t, uint64_t, uint64_t*);
IntegrityCheck g_real_integrity_check = nullptr;

uint64_t* table_copy(const char* uuid) {
  std::lock_guard<std::mutex> lock(g_mutex);
  auto it = g_tables.find(uuid);
  return it == g_tables.end() ? nullptr : it->second;
}

// NVIDIA's runtime checks the driver's answer against the addresses of the
// tables it was handed, which are the tracer's copies: the tracer answers as
// NVIDIA's driver would for those (rgpu's integrity_hash), and logs both.
CUresult CUDAAPI traced_integrity_check(uint32_t version, uint64_t unix_seconds, uint64_t* result) {
  CUresult r = g_real_integrity_check(version, unix_seconds, result);
  if (r != CUDA_SUCCESS || !result) return r;
  const rgpu::client::DriverQueries nvidia{
      real<CUresult(CUDAAPI*)(int*)>("cuDriverGetVersion"), real<CUresult(CUDAAPI*)(int*)>("cuDeviceGetCount"),
      real<CUresult(CUDAAPI*)(CUuuid*, CUdevice)>("cuDeviceGetUuid_v2"),
      real<CUresult(CUDAAPI*)(int*, CUdevice_attribute, CUdevice)>("cuDeviceGetAttribute")};
  const uint64_t driver[2] = {result[0], result[1]};
  uint64_t* integrity = table_copy(kIntegrityTable);
  if (CUresult e = rgpu::client::integrity_answer(nvidia, version, unix_seconds, table_copy(kCudartInterface),
                                                  integrity, reinterpret_cast<const void*>(integrity[1]), result)) {
    logf("integrity check %u: cannot recompute (%d); the driver's answer stands\n", version, e);
    return r;
  }
  logf("integrity check %u: driver %016" PRIx64 "%016" PRIx64 ", for the tracer's tables %016" PRIx64 "%016" PRIx64
       "\n", version, driver[0], driver[1], result[0], result[1]);
  return r;
}

// Hands out a copy of NVIDIA's table whose function slots are trampolines.
// A table whose first word is small starts with its size in bytes; others
// end where the driver's code pointers end.
EXPORT CUresult CUDAAPI cuGetExportTable(const void** out, const CUuuid* id) {
  static auto get = real<CUresult(CUDAAPI*)(const void**, const CUuuid*)>("cuGetExportTable");
  if (!get) return CUDA_ERROR_NOT_INITIALIZED;
  CUresult r = get(out, id);
  std::string u = id ? rgpu::client::uuid_text(reinterpret_cast<const unsigned char(&)[16]>(id->bytes)) : "null";
  if (r != CUDA_SUCCESS || !out || !*out) {
    logf("export-table {%s} = %d\n", u.c_str(), r);
    return r;
  }
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (auto it = g_tables.find(u); it != g_tables.end()) {
      *out = it->second;
      return r;
    }
  }
  const auto* t = static_cast<const uint64_t*>(*out);
  bool sized = t[0] < 0x10000;
  size_t n = sized ? std::min<uint64_t>(t[0] / 8, 256) : 0;
  if (!sized)
    while (n < 128 && in_real_code(t[n])) ++n;
  auto* copy = new uint64_t[n ? n : 1]{};
  std::string layout;
  for (size_t i = 0; i < n; ++i) {
    bool code = (!sized || i > 0) && in_real_code(t[i]);
    char word[64];
    snprintf(word, sizeof word, " %zu:%s0x%" PRIx64, i, code ? "fn@" : "", code ? t[i] - g_real_code[0].first : t[i]);
    layout += word;
    copy[i] = code ? reinterpret_cast<uint64_t>(trampoline_for("{" + u + "}[" + std::to_string(i) + "]",
                                                              reinterpret_cast<void*>(t[i]), true))
                   : t[i];
  }
  logf("export-table {%s} %s %zu slots:%s\n", u.c_str(), sized ? "sized" : "unsized", n, layout.c_str());
  if (u == kIntegrityTable && n > 1) {
    g_real_integrity_check = reinterpret_cast<IntegrityCheck>(t[1]);
    copy[1] = reinterpret_cast<uint64_t>(&traced_integrity_check);
  }
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_tables.emplace(u, copy);
  }
  *out = copy;
  return r;
}

EXPORT CUresult CUDAAPI cuGetProcAddress(const char* symbol, void** pfn, int version, cuuint64_t flags);

EXPORT CUresult CUDAAPI cuGetProcAddress_v2(const char* symbol, void** pfn, int version, cuuint64_t flags,
                                            CUdriverProcAddressQueryResult* status) {
  static auto get = real<CUresult(CUDAAPI*)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*)>(
      "cuGetProcAddress_v2");
  if (!get) return CUDA_ERROR_NOT_INITIALIZED;
  CUresult r = get(symbol, pfn, version, flags, status);
  static std::map<std::string, int> seen;
  std::string key = std::string(symbol ? symbol : "null") + " " + std::to_string(version) + " " +
                    std::to_string(flags);
  bool first;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    first = seen.emplace(key, r).second;
  }
  if (first) logf("proc %s = %d%s\n", key.c_str(), r, status ? (" status " + std::to_string(*status)).c_str() : "");
  if (r != CUDA_SUCCESS || !pfn || !*pfn || !symbol) return r;
  if (!strcmp(symbol, "cuGetExportTable"))
    *pfn = reinterpret_cast<void*>(&cuGetExportTable);
  else if (!strcmp(symbol, "cuGetProcAddress"))
    *pfn = *pfn == dlsym(g_real, "cuGetProcAddress_v2") ? reinterpret_cast<void*>(&cuGetProcAddress_v2)
                                                        : reinterpret_cast<void*>(&cuGetProcAddress);
  else
    *pfn = trampoline_for(std::string(symbol) + ((flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) ? "[ptds]" : ""),
                          *pfn, false);
  return r;
}

EXPORT CUresult CUDAAPI cuGetProcAddress(const char* symbol, void** pfn, int version, cuuint64_t flags) {
  return cuGetProcAddress_v2(symbol, pfn, version, flags, nullptr);
}

namespace {
// Defined last: constructed after this file's other globals, destroyed first.
struct Lifetime {
  Lifetime() { start(); }
  ~Lifetime() { finish(); }
} g_lifetime;
}  // namespace
