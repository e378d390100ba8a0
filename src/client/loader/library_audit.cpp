// The dynamic loader's audit module (rtld-audit(7)) that `rgpu run` sets as
// LD_AUDIT. The loader asks it for every library a process loads, before and
// during each path search, so:
// - rgpu's driver and runtime are the ones used even where a path names
//   NVIDIA's: an absolute-path dlopen, or an RPATH searched before the library
//   path (a library loaded by soname is already covered by LD_PRELOAD, but a
//   path is matched to loaded libraries by file, not by name);
// - the driver-side libraries that drive a local GPU's video and JPEG engines
//   directly, not through the CUDA driver, are not loaded: under rgpu the
//   process's GPUs are remote, and on a machine that has a local GPU too (the
//   test machines) they would wait forever for a context of NVIDIA's driver
//   (nvJPEG's hardware backend in libnvcuvid did). Without them NVIDIA's
//   libraries do what they do on a machine without those engines (nvJPEG
//   decodes with its CUDA backend).
// - NCCL (libnccl.so.2) is rgpu's front-end, which runs the collectives on
//   the servers' GPUs (docs/nccl.md), unless RGPU_NCCL=native: then rgpu's
//   is skipped wherever it is found and NVIDIA's runs in the process.
// With RGPU_AUDIT_LIST naming a file, it also appends to it the path of
// every library the program loads, one a line (`rgpu doctor -- PROGRAM`).
// It runs in a namespace of its own with its own C library, before the
// program's libraries are set up: no C++ runtime, no allocation.
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>

namespace {

constexpr const char* kRgpuLibraries[] = {"libcuda.so.1",    "libcuda.so",    "libcudart.so.13",
                                          "libcudart.so",    "libnccl.so.2",  "libnccl.so"};
// Those of kRgpuLibraries from here on are NCCL's.
constexpr size_t kFirstNccl = 4;
constexpr const char* kLocalEngineLibraries[] = {"libnvcuvid.so", "libnvidia-encode.so",
                                                 "libnvidia-opticalflow.so"};
constexpr size_t kPathMax = 4096;

// rgpu's directory (this module's) and the full path of each of its libraries.
size_t g_dir_length;
char g_rgpu_paths[std::size(kRgpuLibraries)][kPathMax];
bool g_engine_refusal_logged;
bool g_nccl_native;
int g_list_fd = -1;

bool starts_with(const char* s, const char* prefix) { return std::strncmp(s, prefix, std::strlen(prefix)) == 0; }

void find_rgpu_libraries() {
  Dl_info info{};
  if (!dladdr(reinterpret_cast<void*>(&find_rgpu_libraries), &info) || !info.dli_fname) return;
  const char* slash = std::strrchr(info.dli_fname, '/');
  if (!slash) return;
  const size_t length = static_cast<size_t>(slash - info.dli_fname);
  for (size_t i = 0; i < std::size(kRgpuLibraries); ++i)
    if (std::snprintf(g_rgpu_paths[i], kPathMax, "%.*s/%s", static_cast<int>(length), info.dli_fname,
                      kRgpuLibraries[i]) >= static_cast<int>(kPathMax))
      return;
  g_dir_length = length;
}

}  // namespace

extern "C" unsigned int la_version(unsigned int) {
  find_rgpu_libraries();
  const char* nccl = std::getenv("RGPU_NCCL");
  g_nccl_native = nccl && std::strcmp(nccl, "native") == 0;
  if (const char* list = std::getenv("RGPU_AUDIT_LIST"); list && *list)
    g_list_fd = open(list, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
  return LAV_CURRENT;
}

// Each library of the program's namespace, once loaded, when listing.
extern "C" unsigned int la_objopen(link_map* map, Lmid_t lmid, uintptr_t*) {
  if (g_list_fd < 0 || lmid != LM_ID_BASE || !map->l_name || !*map->l_name) return 0;
  const iovec line[] = {{map->l_name, std::strlen(map->l_name)}, {const_cast<char*>("\n"), 1}};
  // One write: lines of processes listing into the same file stay whole (a
  // failed write loses a line of the listing, nothing else).
  (void)!writev(g_list_fd, line, 2);
  return 0;
}

extern "C" char* la_objsearch(const char* name, uintptr_t*, unsigned int) {
  const char* slash = std::strrchr(name, '/');
  const char* base = slash ? slash + 1 : name;
  for (const char* engine : kLocalEngineLibraries) {
    if (!starts_with(base, engine)) continue;
    if (!g_engine_refusal_logged) {
      g_engine_refusal_logged = true;
      std::fprintf(stderr,
                   "[rgpu-client %d info] %s is not loaded: it drives a local GPU's video/JPEG engines, and "
                   "this process's GPUs are remote (libraries fall back to their CUDA paths)\n",
                   static_cast<int>(getpid()), base);
    }
    return nullptr;
  }
  // A name without a directory is searched for; each candidate path comes
  // back here (flag LA_SER_RUNPATH, LA_SER_LIBPATH...) and is redirected then.
  if (!slash || g_dir_length == 0) return const_cast<char*>(name);
  for (size_t i = 0; i < std::size(kRgpuLibraries); ++i) {
    if (std::strcmp(base, kRgpuLibraries[i]) != 0) continue;
    const bool in_rgpu_dir = static_cast<size_t>(slash - name) == g_dir_length &&
                             std::strncmp(name, g_rgpu_paths[i], g_dir_length) == 0;
    if (i >= kFirstNccl && g_nccl_native) return in_rgpu_dir ? nullptr : const_cast<char*>(name);
    return in_rgpu_dir ? const_cast<char*>(name) : g_rgpu_paths[i];
  }
  return const_cast<char*>(name);
}
