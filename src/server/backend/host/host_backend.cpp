#include "server/backend/host/host_backend.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "fatbin/fatbin_container.hpp"
#include "fatbin/kernel_params.hpp"
#include "protocol/channel_format.hpp"
#include "protocol/wire_enum.hpp"
#include "server/backend/graph_array_copy.hpp"
#include "server/backend/host/host_arrays.hpp"
#include "server/backend/host/host_coredump.hpp"
#include "server/backend/host/host_device_attributes.hpp"
#include "server/backend/host/host_external.hpp"
#include "server/backend/host/host_graphs.hpp"
#include "server/backend/host/host_context_delay.hpp"
#include "server/backend/host/host_green_contexts.hpp"
#include "server/backend/host/host_nccl.hpp"
#include "server/backend/host/host_node_fence.hpp"
#include "server/backend/host/host_tensor_maps.hpp"
#include "server/worker/ipc_records.hpp"

namespace rgpu::server {
namespace {

constexpr int kDevices = 2;
constexpr int kMultiprocessors = 4;
constexpr size_t kDeviceMemory = 4ull << 30;
constexpr int kMaxThreadsPerBlock = 1024;
constexpr int kSharedMemOptin = 227 * 1024;
constexpr int kMaxPortableClusterSize = 8;
constexpr size_t kVmmGranularity = 2ull << 20;
constexpr size_t kPage = 4096;
constexpr size_t kSharedMemPerMultiprocessor = 228 * 1024;

// A stream: work on it runs at once; it remembers the green context it was
// created in (0: none).
struct StreamState {
  uint64_t green;
  unsigned flags = 0;
  int priority = 0;
};

struct Kernel {
  std::vector<KernelParam> params;
  int max_dynamic_shared = 48 * 1024;
};

struct Module {
  std::unordered_map<std::string, Kernel> kernels;
  std::unordered_map<std::string, std::vector<uint8_t>> globals;
  std::unordered_map<std::string, size_t> declared_sizes;  // the image's variables (PTX or cubin)
  std::unordered_set<std::string> managed;                 // those of them declared .managed
  // The managed ones live packed in pages of their own, as a driver gives a
  // module's managed variables managed memory: name -> offset there.
  std::unordered_map<std::string, size_t> managed_offsets;
  void* managed_memory = nullptr;
  size_t managed_bytes = 0;
};

// A memory pool: host-test allocates from the device's memory at once, so
// what a pool has reserved is what it has in use.
struct Pool {
  int device;
  std::map<int, uint64_t> settings{};  // cudaMemPoolAttr -> value
  size_t used = 0, high = 0;
  std::map<int, cudaMemAccessFlags> access{};  // of devices other than its own
  // A pool shareable through a POSIX descriptor keeps its memory in this
  // memfd, each allocation a page-aligned stretch of it (`end` bytes handed
  // out), so an importing worker maps the same pages. An imported pool holds
  // the exporter's memfd and lends pointers, never allocates.
  int fd = -1;
  size_t end = 0;
  bool imported = false;
};

// What pool pointer export data holds on this backend: the allocation's
// place in its pool's memfd.
struct PoolPointerExport {
  char tag[8];  // kPoolPointerTag
  uint64_t offset;
  uint64_t size;
};
constexpr char kPoolPointerTag[8] = {'r', 'g', 'p', 'u', 'p', 'o', 'o', 'l'};
static_assert(sizeof(PoolPointerExport) <= sizeof(CUmemPoolPtrExportData));

// Only memfds sealed against shrinking (this backend's exports) are accepted
// as shareable handles: a file its sender could shrink under our mapping
// would kill this worker with SIGBUS.
bool sealed_memfd(int fd) {
  const int seals = fcntl(fd, F_GET_SEALS);
  return seals >= 0 && (seals & F_SEAL_SHRINK);
}

size_t whole_pages(size_t n) { return (n + kPage - 1) / kPage * kPage; }

// A physical allocation of the virtual memory management API.
struct VmmAllocation {
  int fd;
  size_t size;
  int device;
  uint64_t handle_types;  // what it may be exported as (CUmemAllocationHandleType bits)
  bool imported = false;  // its memory counts where it was created
};

struct Event {
  bool timing;
  bool recorded = false;
  std::chrono::steady_clock::time_point at;
};

// What the test backend knows of an image, whatever cuModuleLoadData takes
// (a fat binary, a cubin or PTX text): its kernels, and the variables its
// cubins define with their sizes. A fat binary is parsed once for both.
struct ImageContents {
  std::vector<fatbin::KernelInfo> kernels;
  std::map<std::string, size_t> variables;
  std::set<std::string> managed;  // of the variables
};

ImageContents image_contents(std::span<const std::byte> image) {
  if (image.size() >= 4 && fatbin::read_at<uint32_t>(image, 0) == fatbin::kFatbinMagic) {
    fatbin::FatBinary fb = fatbin::parse_fatbin(image);
    return {fatbin::kernels_in(fb), fatbin::variables_in(fb), fatbin::managed_variables_in(fb)};
  }
  if (image.size() >= 4 && std::memcmp(image.data(), "\x7f" "ELF", 4) == 0)
    return {fatbin::kernels_in_cubin(image), fatbin::variables_in_cubin(image),
            fatbin::managed_variables_in_cubin(image)};
  std::string_view text(reinterpret_cast<const char*>(image.data()), image.size());
  text = text.substr(0, text.find('\0'));
  if (text.find(".version") == std::string_view::npos || text.find(".target") == std::string_view::npos)
    throw fatbin::FormatError("neither a fat binary, a cubin nor PTX");
  return {fatbin::kernels_in_ptx(text), {}, {}};
}

// The leading decimal number of `text` (0 when there is none).
size_t leading_number(std::string_view text) {
  size_t n = 0;
  std::from_chars(text.data(), text.data() + text.size(), n);
  return n;
}

// The bytes one PTX declaration (what follows ".global" up to ';' or '=')
// declares, and its name: "[.align n] [.vN] .type name[count]...".
std::pair<std::string, size_t> ptx_variable(std::string_view decl) {
  std::string name;
  size_t element = 0, count = 1;
  constexpr std::string_view kSpace = " \t\r\n";
  for (size_t i = decl.find_first_not_of(kSpace); i != decl.npos; i = decl.find_first_not_of(kSpace, i)) {
    std::string_view word = decl.substr(i, decl.find_first_of(kSpace, i) - i);
    i += word.size();
    if (word == ".align") continue;  // its number is skipped as a number below
    if (word == ".v2" || word == ".v4") {
      count *= leading_number(word.substr(2));
    } else if (word[0] == '.') {
      size_t digits = word.find_first_of("0123456789");
      if (digits != word.npos) element = leading_number(word.substr(digits)) / 8;  // .u32, .f64, .b8...
    } else if (name.empty() && !std::isdigit(static_cast<unsigned char>(word[0]))) {
      size_t bracket = word.find('[');
      name = word.substr(0, bracket);
      for (; bracket != word.npos && count <= kDeviceMemory; bracket = word.find('[', bracket + 1))
        count *= leading_number(word.substr(bracket + 1));
    }
  }
  // A size no device could hold (or that overflowed) is not believed.
  if (count > kDeviceMemory || element * count > kDeviceMemory) return {name, 0};
  return {name, element * count};
}

// The sizes a PTX image declares for its module-scope variables, and which
// of them are managed; none for other images.
std::unordered_map<std::string, size_t> ptx_global_sizes(std::span<const uint8_t> image,
                                                         std::unordered_set<std::string>* managed) {
  std::unordered_map<std::string, size_t> sizes;
  std::string_view text(reinterpret_cast<const char*>(image.data()), image.size());
  text = text.substr(0, text.find('\0'));
  if (text.find(".version") == std::string_view::npos) return sizes;
  constexpr std::string_view kGlobal = ".global";
  for (size_t at = text.find(kGlobal); at != text.npos; at = text.find(kGlobal, at + kGlobal.size())) {
    if (at > 0 && !std::isspace(static_cast<unsigned char>(text[at - 1]))) continue;  // ld.global and the like
    std::string_view decl = text.substr(at + kGlobal.size());
    decl = decl.substr(0, std::min(decl.find(';'), decl.find('=')));
    constexpr std::string_view kManaged = ".attribute(.managed)";
    bool is_managed = decl.find(kManaged) != decl.npos;
    if (is_managed) decl.remove_prefix(decl.find(kManaged) + kManaged.size());
    auto [name, size] = ptx_variable(decl);
    if (!name.empty() && size) sizes[name] = size;
    if (!name.empty() && is_managed) managed->insert(std::string(name));
  }
  return sizes;
}

const cudaLaunchAttribute* find_attribute(const LaunchConfig& c, cudaLaunchAttributeID id) {
  for (const auto& a : c.attributes)
    if (a.id == id) return &a;
  return nullptr;
}

bool cooperative(const LaunchConfig& c) {
  const cudaLaunchAttribute* a = find_attribute(c, cudaLaunchAttributeCooperative);
  return c.cooperative || (a && a->val.cooperative);
}

// As the GPU: a cluster divides the grid and holds at most 8 blocks.
int32_t check_clusters(const LaunchConfig& c) {
  const cudaLaunchAttribute* a = find_attribute(c, cudaLaunchAttributeClusterDimension);
  if (!a) return cudaSuccess;
  const auto& d = a->val.clusterDim;
  if (d.x == 0 || d.y == 0 || d.z == 0) return cudaErrorInvalidValue;
  if (c.grid.x % d.x || c.grid.y % d.y || c.grid.z % d.z) return cudaErrorInvalidValue;
  if (uint64_t{d.x} * d.y * d.z > kMaxPortableClusterSize) return cudaErrorInvalidClusterSize;
  return cudaSuccess;
}

template <typename T>
T* as(Handle h) {
  return reinterpret_cast<T*>(h);
}

// The worker serves each connection of a session on its own thread: the
// current device is per thread, as in CUDA, and the tables below are locked.
thread_local int t_device = 0;

class HostTestBackend final : public Backend, private HostGraphHooks, private HostGreenHooks {
 public:
  std::string name() const override { return "host-test"; }
  transport::MemoryKind device_memory() const override { return transport::MemoryKind::host; }
  // Contexts as the cuda backend creates them: the first GPU's at start,
  // another's when it is first made current.
  int32_t init(const std::vector<int>& gpus) override {
    if (gpus.empty()) return cudaErrorNoDevice;
    for (int g : gpus)
      if (g < 0 || g >= kDevices) return cudaErrorInvalidDevice;
    std::call_once(contexts_[gpus.front()], host_test_context_delay);
    return cudaSuccess;
  }
  int32_t set_device(int ordinal) override {
    if (ordinal < 0 || ordinal >= kDevices) return cudaErrorInvalidDevice;
    std::call_once(contexts_[ordinal], host_test_context_delay);
    t_device = ordinal;
    // As in CUDA: the device's primary context replaces a green one.
    HostGreenContexts::leave_current();
    return cudaSuccess;
  }
  int32_t versions(int* driver, int* runtime) override {
    *driver = *runtime = CUDART_VERSION;
    return cudaSuccess;
  }
  int32_t device_count(int* count) override {
    *count = kDevices;
    return cudaSuccess;
  }
  int32_t get_device_properties(cudaDeviceProp* p, int ordinal) override {
    if (ordinal < 0 || ordinal >= kDevices) return cudaErrorInvalidDevice;
    std::memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "rgpu host-memory test backend %d", ordinal);
    p->totalGlobalMem = kDeviceMemory;
    p->sharedMemPerBlock = 48 * 1024;
    p->sharedMemPerBlockOptin = kSharedMemOptin;
    p->sharedMemPerMultiprocessor = kSharedMemPerMultiprocessor;
    p->regsPerBlock = p->regsPerMultiprocessor = 65536;
    p->warpSize = 32;
    p->memPitch = SIZE_MAX;
    p->maxThreadsPerBlock = kMaxThreadsPerBlock;
    p->maxThreadsDim[0] = p->maxThreadsDim[1] = 1024;
    p->maxThreadsDim[2] = 64;
    p->maxGridSize[0] = 0x7fffffff;
    p->maxGridSize[1] = p->maxGridSize[2] = 65535;
    p->totalConstMem = 64 * 1024;
    p->major = 9;
    p->minor = 0;
    p->textureAlignment = 512;
    p->texturePitchAlignment = 32;
    p->multiProcessorCount = kMultiprocessors;
    p->maxThreadsPerMultiProcessor = 2048;
    p->maxBlocksPerMultiProcessor = 32;
    p->l2CacheSize = 4 << 20;
    p->unifiedAddressing = 1;
    p->concurrentKernels = 1;
    p->asyncEngineCount = 2;
    // As a GPU on a host with HMM reports them: the client answers these
    // for the application's host instead.
    p->canMapHostMemory = p->managedMemory = p->concurrentManagedAccess = 1;
    p->pageableMemoryAccess = 1;
    p->pciDeviceID = ordinal;
    p->pciBusID = ordinal + 1;
    return cudaSuccess;
  }
  int32_t device_synchronize() override {
    fence_.await(t_device);
    return cudaSuccess;
  }
  int32_t device_reset() override {
    std::lock_guard lock(mutex_);
    for (auto& [p, size] : memory_[t_device]) {
      release_from_pool(p);
      release_memory(p, size);
    }
    memory_[t_device].clear();
    used_[t_device] = 0;
    return cudaSuccess;
  }
  std::string error_string(int32_t error) override {
    return "host-test backend error " + std::to_string(error);
  }

  int32_t malloc(DevPtr* ptr, size_t size) override {
    std::lock_guard lock(mutex_);
    if (int32_t e = map_device_memory(nullptr, size, ptr)) return e;
    notify_over_budget(t_device);
    return cudaSuccess;
  }
  int32_t malloc_pitch(DevPtr* ptr, size_t* pitch, size_t width, size_t height) override {
    *pitch = (width + 511) / 512 * 512;
    return malloc(ptr, *pitch * height);
  }
  int32_t free(DevPtr ptr) override {
    fence_.await(t_device);
    std::lock_guard lock(mutex_);
    // An imported pool pointer goes from this process only.
    if (auto imported = pool_imports_.find(ptr); imported != pool_imports_.end()) {
      munmap(reinterpret_cast<void*>(ptr), imported->second);
      pool_imports_.erase(imported);
      return cudaSuccess;
    }
    release_from_pool(ptr);
    for (auto& m : memory_) {
      auto it = m.find(ptr);
      if (it == m.end()) continue;
      used_[&m - memory_] -= it->second;
      release_memory(ptr, it->second);
      if (auto ex = ipc_exports_.find(ptr); ex != ipc_exports_.end()) {
        unlink((ipc_directory() + "/" + ex->second).c_str());
        ipc_exports_.erase(ex);
      }
      m.erase(it);
      return cudaSuccess;
    }
    return external_.release_buffer(ptr) ? cudaSuccess : cudaErrorInvalidValue;
  }
  int32_t mem_get_info(size_t* free, size_t* total) override {
    std::lock_guard lock(mutex_);
    *total = kDeviceMemory;
    *free = kDeviceMemory - used_[t_device];
    return cudaSuccess;
  }
  // Captured, they become a graph's allocation and free nodes; the memory is
  // there from the capture on, as for allocation nodes (host_graphs.hpp).
  int32_t malloc_async(DevPtr* ptr, size_t size, Handle pool, Handle stream) override {
    Pool* p = pool ? as<Pool>(pool) : current_pool(t_device);
    if (p->imported) return cudaErrorInvalidValue;  // imported pools lend pointers, never allocate
    if (int32_t e = p->fd >= 0 ? malloc_shareable(ptr, size, p) : malloc(ptr, size)) return e;
    {
      std::lock_guard lock(mutex_);
      p->used += size;
      p->high = std::max(p->high, p->used);
      pool_allocations_[*ptr] = {p, size};
    }
    if (!graphs_.capturing(stream)) return cudaSuccess;
    GraphNodeParams node;
    node.type = cudaGraphNodeTypeMemAlloc;
    node.dst = *ptr;
    node.width = size;
    node.value = static_cast<uint32_t>(t_device);
    return graphs_.record(stream, node);
  }
  int32_t free_async(DevPtr ptr, Handle stream) override {
    if (!graphs_.capturing(stream)) return free(ptr);
    GraphNodeParams node;
    node.type = cudaGraphNodeTypeMemFree;
    node.dst = ptr;
    return graphs_.record(stream, node);
  }
  // Pools shareable through POSIX descriptors are memfd-backed; fabric
  // handles need a GPU fabric this backend does not model.
  int32_t mem_pool_create(Handle* pool, const cudaMemPoolProps& props) override {
    if (props.allocType != cudaMemAllocationTypePinned || props.location.type != cudaMemLocationTypeDevice ||
        props.location.id < 0 || props.location.id >= kDevices)
      return cudaErrorInvalidValue;
    if (props.handleTypes & cudaMemHandleTypeFabric) return cudaErrorNotSupported;
    if (props.handleTypes & ~cudaMemHandleTypePosixFileDescriptor) return cudaErrorInvalidValue;
    auto* p = new Pool{props.location.id, {}};
    if (props.handleTypes == cudaMemHandleTypePosixFileDescriptor) {
      // It grows with the pool's allocations, never shrinks.
      p->fd = memfd_create("rgpu-host-test-pool", MFD_CLOEXEC | MFD_ALLOW_SEALING);
      if (p->fd >= 0 && fcntl(p->fd, F_ADD_SEALS, F_SEAL_SHRINK) != 0) {
        close(p->fd);
        p->fd = -1;
      }
      if (p->fd < 0) {
        delete p;
        return cudaErrorMemoryAllocation;
      }
    }
    *pool = reinterpret_cast<Handle>(p);
    return cudaSuccess;
  }
  int32_t mem_pool_destroy(Handle pool) override {
    std::lock_guard lock(mutex_);
    Pool* p = as<Pool>(pool);
    if (p == &default_pools_[p->device]) return cudaErrorInvalidValue;
    if (current_pools_[p->device] == p) current_pools_[p->device] = nullptr;
    for (auto& [ptr, a] : pool_allocations_)
      if (a.pool == p) a.pool = nullptr;
    if (p->fd >= 0) close(p->fd);  // mapped allocations keep their pages
    delete p;
    return cudaSuccess;
  }
  int32_t mem_pool_set_attribute(Handle pool, cudaMemPoolAttr attr, uint64_t value) override {
    std::lock_guard lock(mutex_);
    Pool* p = as<Pool>(pool);
    switch (attr) {
      case cudaMemPoolAttrUsedMemHigh:
      case cudaMemPoolAttrReservedMemHigh:
        if (value != 0) return cudaErrorInvalidValue;
        p->high = p->used;
        return cudaSuccess;
      case cudaMemPoolAttrUsedMemCurrent:
      case cudaMemPoolAttrReservedMemCurrent:
        return cudaErrorInvalidValue;
      default:
        p->settings[attr] = value;
        return cudaSuccess;
    }
  }
  int32_t mem_pool_get_attribute(Handle pool, cudaMemPoolAttr attr, uint64_t* value) override {
    std::lock_guard lock(mutex_);
    Pool* p = as<Pool>(pool);
    switch (attr) {
      case cudaMemPoolAttrUsedMemCurrent:
      case cudaMemPoolAttrReservedMemCurrent:
        *value = p->used;
        return cudaSuccess;
      case cudaMemPoolAttrUsedMemHigh:
      case cudaMemPoolAttrReservedMemHigh:
        *value = p->high;
        return cudaSuccess;
      default: {
        auto it = p->settings.find(attr);
        // The reuse policies are on by default, the release threshold 0.
        *value = it != p->settings.end() ? it->second : attr != cudaMemPoolAttrReleaseThreshold;
        return cudaSuccess;
      }
    }
  }
  int32_t mem_pool_trim_to(Handle, size_t) override { return cudaSuccess; }
  int32_t device_get_default_mem_pool(Handle* pool, int ordinal) override {
    if (ordinal < 0 || ordinal >= kDevices) return cudaErrorInvalidDevice;
    *pool = reinterpret_cast<Handle>(&default_pools_[ordinal]);
    return cudaSuccess;
  }
  int32_t device_get_mem_pool(Handle* pool, int ordinal) override {
    if (ordinal < 0 || ordinal >= kDevices) return cudaErrorInvalidDevice;
    std::lock_guard lock(mutex_);
    *pool = reinterpret_cast<Handle>(current_pool(ordinal));
    return cudaSuccess;
  }
  int32_t device_set_mem_pool(int ordinal, Handle pool) override {
    if (ordinal < 0 || ordinal >= kDevices) return cudaErrorInvalidDevice;
    std::lock_guard lock(mutex_);
    if (as<Pool>(pool)->device != ordinal || as<Pool>(pool)->imported) return cudaErrorInvalidValue;
    current_pools_[ordinal] = as<Pool>(pool);
    return cudaSuccess;
  }

  // Page-locked as far as graph replays can tell; as with cudaHostAlloc, no
  // more than the host's memory.
  int32_t alloc_staging(size_t size, void** p) override {
    if (size / sysconf(_SC_PAGESIZE) >= static_cast<size_t>(sysconf(_SC_PHYS_PAGES))) return cudaErrorMemoryAllocation;
    *p = std::malloc(size);
    if (!*p) return cudaErrorMemoryAllocation;
    std::lock_guard lock(mutex_);
    staging_[reinterpret_cast<DevPtr>(*p)] = size;
    return cudaSuccess;
  }
  void free_staging(void* p) override {
    {
      std::lock_guard lock(mutex_);
      staging_.erase(reinterpret_cast<DevPtr>(p));
    }
    std::free(p);
  }
  // Registered host memory is remembered only so that graph replays can
  // tell it is still there.
  int32_t host_register(void* p, size_t size) override {
    std::lock_guard lock(mutex_);
    registered_[reinterpret_cast<DevPtr>(p)] = size;
    return cudaSuccess;
  }
  int32_t host_unregister(void* p) override {
    std::lock_guard lock(mutex_);
    registered_.erase(reinterpret_cast<DevPtr>(p));
    return cudaSuccess;
  }

  // Work runs when queued, so every stream is always idle and in order.
  // On a capturing stream it becomes a graph node instead.
  int32_t memcpy_async(void* dst, const void* src, size_t n, cudaMemcpyKind kind, Handle stream) override {
    if (graphs_.capturing(stream)) return capture_copy(dst, n, src, n, n, 1, kind, stream);
    fence_.await(t_device);
    std::memmove(dst, src, n);
    return cudaSuccess;
  }
  int32_t memcpy_shared_async(void* dst, const void* src, size_t n, cudaMemcpyKind kind, Handle stream) override {
    if (graphs_.capturing(stream)) {
      GraphNodeParams p;
      p.type = cudaGraphNodeTypeMemcpy;
      p.dst = reinterpret_cast<uint64_t>(dst);
      p.src = reinterpret_cast<uint64_t>(src);
      p.dst_pitch = p.src_pitch = p.width = n;
      p.height = 1;
      p.host_sides = kind == cudaMemcpyHostToDevice ? proto::kHostSrc : proto::kHostDst;
      return graphs_.record(stream, p);
    }
    return memcpy_async(dst, src, n, kind, stream);
  }
  int32_t memcpy2d_async(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,
                         cudaMemcpyKind kind, Handle stream) override {
    if (graphs_.capturing(stream)) return capture_copy(dst, dpitch, src, spitch, width, height, kind, stream);
    fence_.await(t_device);
    for (size_t r = 0; r < height; ++r)
      std::memmove(static_cast<char*>(dst) + r * dpitch, static_cast<const char*>(src) + r * spitch, width);
    return cudaSuccess;
  }
  int32_t memset_async(DevPtr ptr, int value, size_t n, Handle stream) override {
    if (graphs_.capturing(stream)) return capture_memset(ptr, n, value, n, 1, stream);
    fence_.await(t_device);
    std::memset(reinterpret_cast<void*>(ptr), value, n);
    return cudaSuccess;
  }
  int32_t memset2d_async(DevPtr ptr, size_t pitch, int value, size_t width, size_t height, Handle stream) override {
    if (graphs_.capturing(stream)) return capture_memset(ptr, pitch, value, width, height, stream);
    fence_.await(t_device);
    for (size_t r = 0; r < height; ++r) std::memset(reinterpret_cast<char*>(ptr) + r * pitch, value, width);
    return cudaSuccess;
  }

  int32_t stream_create(Handle* stream, unsigned flags, int priority) override {
    if (flags & ~cudaStreamNonBlocking) return cudaErrorInvalidValue;
    return create_stream(stream, flags, priority, HostGreenContexts::current());
  }
  int32_t stream_destroy(Handle stream) override {
    delete as<StreamState>(stream);
    return cudaSuccess;
  }
  // Waiting for a capturing stream is not allowed: it ends the capture.
  int32_t stream_synchronize(Handle stream) override {
    if (graphs_.capturing(stream)) return graphs_.refuse(stream);
    fence_.await(t_device);
    return cudaSuccess;
  }
  int32_t stream_query(Handle stream) override { return stream_synchronize(stream); }
  int32_t stream_wait_event(Handle stream, Handle event, unsigned flags) override {
    int32_t e = cudaSuccess;
    graphs_.capture_event_wait(stream, event, flags, &e);
    return e;
  }
  int32_t stream_set_attribute(Handle stream, cudaLaunchAttributeID attr,
                               const cudaLaunchAttributeValue& value) override {
    std::lock_guard lock(mutex_);
    stream_attributes_[{stream, attr}] = value;
    return cudaSuccess;
  }
  int32_t stream_get_attribute(Handle stream, cudaLaunchAttributeID attr, cudaLaunchAttributeValue* value) override {
    std::lock_guard lock(mutex_);
    auto it = stream_attributes_.find({stream, attr});
    *value = it != stream_attributes_.end() ? it->second : cudaLaunchAttributeValue{};
    return cudaSuccess;
  }
  int32_t event_create(Handle* event, unsigned flags) override {
    *event = reinterpret_cast<Handle>(new Event{!(flags & cudaEventDisableTiming), false, {}});
    std::lock_guard lock(mutex_);
    live_events_.insert(*event);
    return cudaSuccess;
  }
  int32_t event_destroy(Handle event) override {
    {
      std::lock_guard lock(mutex_);
      live_events_.erase(event);
    }
    delete as<Event>(event);
    return cudaSuccess;
  }
  int32_t event_record(Handle event, Handle stream) override {
    if (!graphs_.capture_event_record(event, stream)) record_event(event);
    return cudaSuccess;
  }
  // A queued host function runs once: a graph could not run it again.
  int32_t launch_host_func(Handle stream, void (*fn)(void*), void* arg) override {
    if (graphs_.capturing(stream)) return graphs_.refuse(stream);
    fn(arg);
    return cudaSuccess;
  }
  int32_t event_synchronize(Handle) override { return cudaSuccess; }
  int32_t event_query(Handle) override { return cudaSuccess; }
  int32_t event_elapsed_time(float* ms, Handle start, Handle end) override {
    Event *a = as<Event>(start), *b = as<Event>(end);
    if (!a->timing || !b->timing) return cudaErrorInvalidResourceHandle;
    if (!a->recorded || !b->recorded) return cudaErrorInvalidResourceHandle;
    *ms = std::chrono::duration<float, std::milli>(b->at - a->at).count();
    return cudaSuccess;
  }

  int32_t module_load(std::span<const uint8_t> image, Handle* module) override {
    auto m = std::make_unique<Module>();
    ImageContents contents;
    try {
      contents = image_contents({reinterpret_cast<const std::byte*>(image.data()), image.size()});
    } catch (const std::exception&) {
      return cudaErrorInvalidKernelImage;
    }
    for (const auto& k : contents.kernels) {
      Kernel kernel;
      for (const auto& p : k.params) kernel.params.push_back({p.offset, p.size});
      m->kernels[k.name] = std::move(kernel);
    }
    m->declared_sizes = ptx_global_sizes(image, &m->managed);
    for (auto& [name, size] : contents.variables) m->declared_sizes.emplace(name, size);
    m->managed.insert(contents.managed.begin(), contents.managed.end());
    if (!place_managed(*m)) return cudaErrorMemoryAllocation;
    *module = reinterpret_cast<Handle>(m.release());
    return cudaSuccess;
  }
  // Lays the module's managed variables out, 16-byte aligned, in pages of
  // their own; false when they cannot be mapped.
  static bool place_managed(Module& m) {
    size_t end = 0;
    for (const auto& name : m.managed) {
      auto size = m.declared_sizes.find(name);
      m.managed_offsets[name] = end;
      end += ((size == m.declared_sizes.end() ? 1 : std::max<size_t>(size->second, 1)) + 15) & ~size_t{15};
    }
    if (!end) return true;
    m.managed_bytes = whole_pages(end);
    void* p = mmap(nullptr, m.managed_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return false;
    m.managed_memory = p;
    return true;
  }
  int32_t module_unload(Handle module) override {
    {
      std::lock_guard lock(mutex_);
      Module* m = as<Module>(module);
      for (const auto& [name, g] : m->globals) globals_.erase(reinterpret_cast<DevPtr>(g.data()));
      for (const auto& [name, offset] : m->managed_offsets)
        globals_.erase(reinterpret_cast<DevPtr>(m->managed_memory) + offset);
      for (const auto& [name, k] : m->kernels) live_kernels_.erase(reinterpret_cast<Handle>(&k));
      if (m->managed_memory) munmap(m->managed_memory, m->managed_bytes);
    }
    delete as<Module>(module);
    return cudaSuccess;
  }
  int32_t module_get_function(Handle module, const std::string& name, Handle* function,
                              std::vector<KernelParam>* params) override {
    std::unique_lock lock(mutex_);
    auto& kernels = as<Module>(module)->kernels;
    auto it = kernels.find(name);
    if (it == kernels.end()) return cudaErrorInvalidDeviceFunction;
    *params = it->second.params;
    *function = reinterpret_cast<Handle>(&it->second);
    if (!live_kernels_.count(*function)) {
      // Its first use loads it, as CUDA's lazy loading does: a context-wide wait.
      lock.unlock();
      fence_.await(t_device);
      lock.lock();
    }
    live_kernels_.insert(*function);
    return cudaSuccess;
  }
  int32_t module_get_global(Handle module, const std::string& name, size_t size_hint, DevPtr* ptr,
                            size_t* size) override {
    std::lock_guard lock(mutex_);
    // The fat binary's data sections are not modelled: each variable gets the
    // size its host code registered (or its PTX or cubin declares), zero-filled.
    Module* m = as<Module>(module);
    if (!size_hint)
      if (auto it = m->declared_sizes.find(name); it != m->declared_sizes.end()) size_hint = it->second;
    if (auto managed = m->managed_offsets.find(name); managed != m->managed_offsets.end()) {
      *ptr = reinterpret_cast<DevPtr>(m->managed_memory) + managed->second;
      *size = size_hint;
      globals_[*ptr] = std::max<size_t>(size_hint, 1);
      return cudaSuccess;
    }
    auto& g = m->globals[name];
    if (g.empty()) g.resize(size_hint ? size_hint : 1);
    globals_[reinterpret_cast<DevPtr>(g.data())] = g.size();
    *ptr = reinterpret_cast<DevPtr>(g.data());
    *size = size_hint;
    return cudaSuccess;
  }
  int32_t register_async_notification(int ordinal, AsyncNotificationSink* sink, Handle* registration) override {
    if (ordinal < 0 || ordinal >= kDevices || !sink) return cudaErrorInvalidValue;
    std::lock_guard lock(mutex_);
    *registration = reinterpret_cast<Handle>(sink);
    notification_sinks_[*registration] = {ordinal, sink};
    return cudaSuccess;
  }
  int32_t unregister_async_notification(int ordinal, Handle registration) override {
    std::lock_guard lock(mutex_);
    auto it = notification_sinks_.find(registration);
    if (it == notification_sinks_.end() || it->second.first != ordinal) return cudaErrorInvalidValue;
    notification_sinks_.erase(it);
    return cudaSuccess;
  }
  int32_t module_get_managed(Handle module, const std::string& name, DevPtr* ptr, size_t* size) override {
    if (!as<Module>(module)->managed.count(name)) return cudaErrorSymbolNotFound;
    return module_get_global(module, name, 0, ptr, size);
  }
  int32_t launch(Handle function, const LaunchConfig& c, std::span<uint8_t> args) override {
    if (int32_t e = check_launch(function, c)) return e;
    if (graphs_.capturing(c.stream)) {
      GraphNodeParams p;
      p.type = cudaGraphNodeTypeKernel;
      p.function = function;
      p.grid = c.grid;
      p.block = c.block;
      p.shared_mem = c.shared_mem;
      p.args.assign(args.begin(), args.end());
      return graphs_.record(c.stream, p);
    }
    fence_.await(t_device);
    std::lock_guard lock(mutex_);
    ++launches_;
    return cudaSuccess;
  }
  int32_t check_launch(uint64_t function, const LaunchConfig& c) override {
    std::lock_guard lock(mutex_);
    // A graph's kernel node may outlive its module.
    if (!live_kernels_.count(function)) return cudaErrorInvalidResourceHandle;
    const Kernel* k = as<Kernel>(function);
    uint64_t threads = uint64_t{c.block.x} * c.block.y * c.block.z;
    if (threads == 0 || threads > kMaxThreadsPerBlock || c.grid.x == 0 || c.grid.y == 0 || c.grid.z == 0)
      return cudaErrorInvalidValue;
    if (c.shared_mem > static_cast<uint32_t>(k->max_dynamic_shared)) return cudaErrorInvalidValue;
    if (int32_t e = check_clusters(c)) return e;
    // All blocks of a cooperative grid must fit on the device at once.
    uint64_t blocks = uint64_t{c.grid.x} * c.grid.y * c.grid.z;
    if (cooperative(c) && blocks > kMultiprocessors * std::min<uint64_t>(32, 2048 / threads))
      return cudaErrorCooperativeLaunchTooLarge;
    return cudaSuccess;
  }
  int32_t func_get_attributes(cudaFuncAttributes* a, Handle function) override {
    std::lock_guard lock(mutex_);
    *a = cudaFuncAttributes{};
    a->maxThreadsPerBlock = kMaxThreadsPerBlock;
    a->numRegs = 32;
    a->ptxVersion = a->binaryVersion = 90;
    a->maxDynamicSharedSizeBytes = as<Kernel>(function)->max_dynamic_shared;
    return cudaSuccess;
  }
  int32_t func_set_attribute(Handle function, cudaFuncAttribute attr, int value) override {
    std::lock_guard lock(mutex_);
    if (attr != cudaFuncAttributeMaxDynamicSharedMemorySize) return cudaSuccess;
    if (value < 0 || value > kSharedMemOptin) return cudaErrorInvalidValue;
    as<Kernel>(function)->max_dynamic_shared = value;
    return cudaSuccess;
  }
  int32_t func_set_cache_config(Handle, cudaFuncCache) override { return cudaSuccess; }
  int32_t occupancy_max_active_blocks(int* blocks, Handle, int block_size, size_t, unsigned) override {
    if (block_size <= 0) return cudaErrorInvalidValue;
    *blocks = std::min(32, 2048 / block_size);
    return cudaSuccess;
  }

  int32_t occupancy_max_active_clusters(int* clusters, Handle, const LaunchConfig& c) override {
    uint64_t threads = uint64_t{c.block.x} * c.block.y * c.block.z;
    if (threads == 0 || threads > kMaxThreadsPerBlock) return cudaErrorInvalidValue;
    const cudaLaunchAttribute* dim = find_attribute(c, cudaLaunchAttributeClusterDimension);
    if (!dim) return cudaErrorInvalidClusterSize;
    uint64_t size = uint64_t{dim->val.clusterDim.x} * dim->val.clusterDim.y * dim->val.clusterDim.z;
    if (size == 0 || size > kMaxPortableClusterSize) return cudaErrorInvalidClusterSize;
    *clusters = static_cast<int>(kMultiprocessors * std::min<uint64_t>(32, 2048 / threads) / size);
    return cudaSuccess;
  }
  int32_t occupancy_max_potential_cluster_size(int* size, Handle, const LaunchConfig& c) override {
    uint64_t threads = uint64_t{c.block.x} * c.block.y * c.block.z;
    if (threads == 0 || threads > kMaxThreadsPerBlock) return cudaErrorInvalidValue;
    *size = kMaxPortableClusterSize;
    return cudaSuccess;
  }
  int32_t occupancy_available_dynamic_smem(size_t* bytes, Handle, int blocks, int block_size) override {
    if (blocks <= 0 || block_size <= 0 || block_size > kMaxThreadsPerBlock) return cudaErrorInvalidValue;
    // Each block keeps 1 KiB of the multiprocessor's 228 KiB for the system.
    size_t per_block = 228 * 1024 / static_cast<size_t>(blocks);
    *bytes = per_block > 1024 ? std::min<size_t>(per_block - 1024, kSharedMemOptin) : 0;
    return cudaSuccess;
  }
  int32_t module_function_names(Handle module, std::vector<std::string>* names) override {
    std::lock_guard lock(mutex_);
    names->clear();
    for (const auto& [name, kernel] : as<Module>(module)->kernels) names->push_back(name);
    std::sort(names->begin(), names->end());
    return cudaSuccess;
  }
  int32_t event_record_with_flags(Handle event, Handle stream, unsigned flags) override {
    if (flags & ~cudaEventRecordExternal) return cudaErrorInvalidValue;
    return event_record(event, stream);
  }
  int32_t func_set_shared_mem_config(Handle, cudaSharedMemConfig config) override {
    return config >= cudaSharedMemBankSizeDefault && config <= cudaSharedMemBankSizeEightByte ? cudaSuccess
                                                                                             : cudaErrorInvalidValue;
  }
  int32_t stream_copy_attributes(Handle dst, Handle src) override {
    std::lock_guard lock(mutex_);
    std::map<std::pair<Handle, int>, cudaLaunchAttributeValue> copied;
    for (const auto& [key, value] : stream_attributes_)
      if (key.first == src) copied[{dst, key.second}] = value;
    std::erase_if(stream_attributes_, [&](const auto& a) { return a.first.first == dst; });
    stream_attributes_.merge(copied);
    return cudaSuccess;
  }

  int32_t device_attribute(int* value, cudaDeviceAttr attr, int device) override {
    cudaDeviceProp p;
    if (int32_t e = get_device_properties(&p, device)) return e;
    switch (attr) {
      case cudaDevAttrMaxThreadsPerBlock: *value = p.maxThreadsPerBlock; break;
      case cudaDevAttrMultiProcessorCount: *value = p.multiProcessorCount; break;
      case cudaDevAttrWarpSize: *value = p.warpSize; break;
      case cudaDevAttrComputeCapabilityMajor: *value = p.major; break;
      case cudaDevAttrComputeCapabilityMinor: *value = p.minor; break;
      case cudaDevAttrMaxSharedMemoryPerBlock: *value = static_cast<int>(p.sharedMemPerBlock); break;
      case cudaDevAttrMaxSharedMemoryPerBlockOptin: *value = static_cast<int>(p.sharedMemPerBlockOptin); break;
      case cudaDevAttrMaxThreadsPerMultiProcessor: *value = p.maxThreadsPerMultiProcessor; break;
      case cudaDevAttrMaxRegistersPerBlock: *value = p.regsPerBlock; break;
      case cudaDevAttrCooperativeLaunch: *value = 1; break;
      case cudaDevAttrClusterLaunch: *value = 1; break;
      case cudaDevAttrCanMapHostMemory: *value = p.canMapHostMemory; break;
      case cudaDevAttrManagedMemory: *value = p.managedMemory; break;
      case cudaDevAttrConcurrentManagedAccess: *value = p.concurrentManagedAccess; break;
      case cudaDevAttrPageableMemoryAccess: *value = p.pageableMemoryAccess; break;
      // Shareable handles: POSIX descriptors only (no fabric, no dma-buf).
      case cudaDevAttrMemoryPoolSupportedHandleTypes: *value = cudaMemHandleTypePosixFileDescriptor; break;
      default:
        switch (static_cast<int>(attr)) {
          case CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED: *value = 1; break;
          case CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED:
          case CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED: *value = 0; break;
          default:
            if (!host_device_attribute(p, attr, value)) return cudaErrorInvalidValue;
        }
    }
    return cudaSuccess;
  }
  int32_t cudaDeviceGetLimit(size_t* value, proto::EnumNumber<cudaLimit> limit) override {
    std::lock_guard lock(mutex_);
    auto it = limits_.find(limit);
    *value = it == limits_.end() ? 1024 : it->second;
    return cudaSuccess;
  }
  int32_t cudaDeviceSetLimit(proto::EnumNumber<cudaLimit> limit, size_t value) override {
    std::lock_guard lock(mutex_);
    limits_[limit] = value;
    return cudaSuccess;
  }
  int32_t cudaDeviceGetCacheConfig(cudaFuncCache* config) override {
    std::lock_guard lock(mutex_);
    *config = cache_config_;
    return cudaSuccess;
  }
  int32_t cudaDeviceSetCacheConfig(proto::EnumNumber<cudaFuncCache> config) override {
    if (!proto::enum_in_range(config, cudaFuncCachePreferNone, cudaFuncCachePreferEqual))
      return cudaErrorInvalidValue;
    std::lock_guard lock(mutex_);
    cache_config_ = static_cast<cudaFuncCache>(config);
    return cudaSuccess;
  }
  int32_t cudaDeviceGetStreamPriorityRange(int* least, int* greatest) override {
    *least = 0;
    *greatest = -5;
    return cudaSuccess;
  }
  // As an H100: 2^27 elements of any format rgpu takes.
  int32_t cudaDeviceGetTexture1DLinearMaxWidth(size_t* width, const cudaChannelFormatDesc* format,
                                               int ordinal) override {
    if (ordinal < 0 || ordinal >= kDevices) return cudaErrorInvalidDevice;
    if (!proto::channel_element_size(*format)) return cudaErrorInvalidValue;
    *width = size_t{1} << 27;
    return cudaSuccess;
  }
  ArrayApi& arrays() override { return arrays_; }

  // Both test devices are host memory, so each reaches the other; without
  // kernels no atomic operation is claimed.
  int32_t device_can_access_peer(int* can, int device, int peer) override {
    if (device < 0 || device >= kDevices || peer < 0 || peer >= kDevices) return cudaErrorInvalidDevice;
    *can = device != peer;
    return cudaSuccess;
  }
  int32_t device_enable_peer_access(int peer, unsigned flags) override {
    if (peer < 0 || peer >= kDevices || peer == t_device) return cudaErrorInvalidDevice;
    if (flags) return cudaErrorInvalidValue;
    std::lock_guard lock(mutex_);
    return peer_access_.insert({t_device, peer}).second ? cudaSuccess : cudaErrorPeerAccessAlreadyEnabled;
  }
  int32_t device_disable_peer_access(int peer) override {
    if (peer < 0 || peer >= kDevices || peer == t_device) return cudaErrorInvalidDevice;
    std::lock_guard lock(mutex_);
    return peer_access_.erase({t_device, peer}) ? cudaSuccess : cudaErrorPeerAccessNotEnabled;
  }
  int32_t device_get_p2p_attribute(int* value, cudaDeviceP2PAttr attr, int src, int dst) override {
    if (src < 0 || src >= kDevices || dst < 0 || dst >= kDevices || src == dst) return cudaErrorInvalidDevice;
    switch (attr) {
      case cudaDevP2PAttrAccessSupported: *value = 1; return cudaSuccess;
      case cudaDevP2PAttrPerformanceRank:
      case cudaDevP2PAttrNativeAtomicSupported:
      case cudaDevP2PAttrCudaArrayAccessSupported:
      case cudaDevP2PAttrOnlyPartialNativeAtomicSupported: *value = 0; return cudaSuccess;
    }
    return cudaErrorInvalidValue;
  }
  int32_t device_get_p2p_atomic_capabilities(unsigned* caps, const cudaAtomicOperation*, unsigned count, int src,
                                             int dst) override {
    if (src < 0 || src >= kDevices || dst < 0 || dst >= kDevices || src == dst) return cudaErrorInvalidDevice;
    std::fill(caps, caps + count, 0u);
    return cudaSuccess;
  }
  int32_t device_get_host_atomic_capabilities(unsigned* caps, const cudaAtomicOperation*, unsigned count,
                                              int device) override {
    if (device < 0 || device >= kDevices) return cudaErrorInvalidDevice;
    std::fill(caps, caps + count, 0u);
    return cudaSuccess;
  }
  // The owning device always has read-write access; others have what was set.
  int32_t mem_pool_set_access(Handle pool, int device, cudaMemAccessFlags flags) override {
    if (device < 0 || device >= kDevices) return cudaErrorInvalidDevice;
    if (flags != cudaMemAccessFlagsProtNone && flags != cudaMemAccessFlagsProtRead &&
        flags != cudaMemAccessFlagsProtReadWrite)
      return cudaErrorInvalidValue;
    std::lock_guard lock(mutex_);
    Pool* p = as<Pool>(pool);
    if (device == p->device) return flags == cudaMemAccessFlagsProtReadWrite ? cudaSuccess : cudaErrorInvalidDevice;
    p->access[device] = flags;
    return cudaSuccess;
  }
  int32_t mem_pool_get_access(cudaMemAccessFlags* flags, Handle pool, int device) override {
    if (device < 0 || device >= kDevices) return cudaErrorInvalidDevice;
    std::lock_guard lock(mutex_);
    Pool* p = as<Pool>(pool);
    auto it = p->access.find(device);
    *flags = device == p->device ? cudaMemAccessFlagsProtReadWrite
             : it == p->access.end() ? cudaMemAccessFlagsProtNone
                                     : it->second;
    return cudaSuccess;
  }
  // Physical allocations are memfds; a reservation is inaccessible address
  // space that maps them in place and mprotect opens.
  int32_t vmm_granularity(size_t* granularity, const CUmemAllocationProp& prop,
                          CUmemAllocationGranularity_flags) override {
    if (!vmm_prop_ok(prop)) return cudaErrorInvalidValue;
    *granularity = kVmmGranularity;
    return cudaSuccess;
  }
  int32_t vmm_create(Handle* allocation, size_t size, const CUmemAllocationProp& prop) override {
    if (!vmm_prop_ok(prop) || size == 0 || size % kVmmGranularity) return cudaErrorInvalidValue;
    std::lock_guard lock(mutex_);
    if (size > kDeviceMemory - used_[prop.location.id]) return cudaErrorMemoryAllocation;
    int fd = memfd_create("rgpu-host-test-vmm", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0) return cudaErrorMemoryAllocation;
    if (ftruncate(fd, static_cast<off_t>(size)) != 0 ||
        fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
      close(fd);
      return cudaErrorMemoryAllocation;
    }
    used_[prop.location.id] += size;
    *allocation = reinterpret_cast<Handle>(new VmmAllocation{fd, size, prop.location.id, prop.requestedHandleTypes});
    return cudaSuccess;
  }
  int32_t vmm_release(Handle allocation) override {
    auto* a = as<VmmAllocation>(allocation);
    std::lock_guard lock(mutex_);
    if (!a->imported) used_[a->device] -= a->size;
    close(a->fd);  // mappings (and other processes' imports) keep the memory until they go
    delete a;
    return cudaSuccess;
  }
  // The GPUs this backend stands for are joined by no NVLink switch: as
  // their driver does, it has no multicast objects.
  int32_t multicast_create(Handle*, const CUmulticastObjectProp&) override { return cudaErrorNotSupported; }
  int32_t vmm_reserve(DevPtr* ptr, size_t size, size_t alignment, DevPtr hint) override {
    if (size == 0 || size % kVmmGranularity) return cudaErrorInvalidValue;
    if (alignment < kVmmGranularity) alignment = kVmmGranularity;
    if (alignment & (alignment - 1)) return cudaErrorInvalidValue;
    if (hint && hint % alignment == 0) {
      void* p = mmap(reinterpret_cast<void*>(hint), size, PROT_NONE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
      if (p == reinterpret_cast<void*>(hint)) {
        *ptr = hint;
        return cudaSuccess;
      }
      if (p != MAP_FAILED) munmap(p, size);  // a kernel without MAP_FIXED_NOREPLACE took it as a hint
    }
    size_t span = size + alignment;
    void* p = mmap(nullptr, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) return cudaErrorMemoryAllocation;
    uint64_t start = reinterpret_cast<uint64_t>(p), aligned = (start + alignment - 1) / alignment * alignment;
    if (aligned > start) munmap(p, aligned - start);
    if (start + span > aligned + size) munmap(reinterpret_cast<void*>(aligned + size), start + span - aligned - size);
    *ptr = aligned;
    return cudaSuccess;
  }
  int32_t vmm_free(DevPtr ptr, size_t size) override {
    return munmap(reinterpret_cast<void*>(ptr), size) == 0 ? cudaSuccess : cudaErrorInvalidValue;
  }
  int32_t vmm_map(DevPtr ptr, size_t size, size_t offset, Handle allocation) override {
    auto* a = as<VmmAllocation>(allocation);
    if (size % kVmmGranularity || offset % kVmmGranularity || offset > a->size || size > a->size - offset)
      return cudaErrorInvalidValue;
    void* p = mmap(reinterpret_cast<void*>(ptr), size, PROT_NONE, MAP_SHARED | MAP_FIXED, a->fd,
                   static_cast<off_t>(offset));
    return p == MAP_FAILED ? cudaErrorInvalidValue : cudaSuccess;
  }
  int32_t vmm_unmap(DevPtr ptr, size_t size) override {
    void* p = mmap(reinterpret_cast<void*>(ptr), size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE,
                   -1, 0);
    std::lock_guard lock(mutex_);
    vmm_access_.erase(ptr);
    return p == MAP_FAILED ? cudaErrorInvalidValue : cudaSuccess;
  }
  int32_t vmm_set_access(DevPtr ptr, size_t size, int device, CUmemAccess_flags flags) override {
    if (device < 0 || device >= kDevices) return cudaErrorInvalidDevice;
    // One mapping serves both test devices: it opens as far as any allows.
    std::lock_guard lock(mutex_);
    auto& access = vmm_access_[ptr];
    access.first = size;
    access.second[device] = flags;
    int prot = PROT_NONE;
    for (auto [d, f] : access.second)
      prot |= f == CU_MEM_ACCESS_FLAGS_PROT_READWRITE ? PROT_READ | PROT_WRITE
              : f == CU_MEM_ACCESS_FLAGS_PROT_READ    ? PROT_READ
                                                      : PROT_NONE;
    return mprotect(reinterpret_cast<void*>(ptr), size, prot) == 0 ? cudaSuccess : cudaErrorInvalidValue;
  }
  int32_t vmm_get_access(unsigned long long* flags, int device, DevPtr ptr) override {
    if (device < 0 || device >= kDevices) return cudaErrorInvalidDevice;
    std::lock_guard lock(mutex_);
    auto it = vmm_access_.upper_bound(ptr);
    *flags = CU_MEM_ACCESS_FLAGS_PROT_NONE;
    if (it != vmm_access_.begin() && ptr - (--it)->first < it->second.first) {
      auto f = it->second.second.find(device);
      if (f != it->second.second.end()) *flags = f->second;
    }
    return cudaSuccess;
  }
  // An exported allocation moves, in place, into named shared memory that
  // an importing worker maps (the name goes when the allocation is freed);
  // test events are always complete, so an imported one is a new event.
  int32_t ipc_export_memory(DevPtr base, size_t size, std::vector<uint8_t>* blob) override {
    size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    if (base % page) return cudaErrorInvalidValue;
    std::lock_guard lock(mutex_);
    auto known = ipc_exports_.find(base);
    if (known == ipc_exports_.end()) {
      // In the server's private IPC directory, beside the records.
      if (ipc_directory().empty()) return cudaErrorNotSupported;
      std::string name = ipc_name_prefix(getpid()) + "host-test-" + std::to_string(ipc_export_count_++);
      std::string path = ipc_directory() + "/" + name;
      size_t bytes = (size + page - 1) / page * page;
      int fd = open(path.c_str(), O_CREAT | O_EXCL | O_RDWR | O_NOFOLLOW | O_CLOEXEC, 0600);
      if (fd < 0) return cudaErrorMemoryAllocation;
      bool ok = ftruncate(fd, static_cast<off_t>(bytes)) == 0 &&
                pwrite(fd, reinterpret_cast<void*>(base), bytes, 0) == static_cast<ssize_t>(bytes) &&
                mmap(reinterpret_cast<void*>(base), bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) !=
                    MAP_FAILED;
      close(fd);
      if (!ok) {
        unlink(path.c_str());
        return cudaErrorMemoryAllocation;
      }
      known = ipc_exports_.emplace(base, name).first;
    }
    blob->assign(known->second.begin(), known->second.end());
    return cudaSuccess;
  }
  int32_t ipc_import_memory(std::span<const uint8_t> blob, size_t size, DevPtr* ptr) override {
    std::string name(blob.begin(), blob.end());
    if (name.empty() || name.find('/') != std::string::npos || ipc_directory().empty())
      return cudaErrorInvalidResourceHandle;
    int fd = open((ipc_directory() + "/" + name).c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return cudaErrorInvalidResourceHandle;
    struct stat st;
    void* p = fstat(fd, &st) == 0 && static_cast<size_t>(st.st_size) >= size
                  ? mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
                  : MAP_FAILED;
    close(fd);
    if (p == MAP_FAILED) return cudaErrorInvalidResourceHandle;
    std::lock_guard lock(mutex_);
    ipc_imports_[reinterpret_cast<DevPtr>(p)] = size;
    *ptr = reinterpret_cast<DevPtr>(p);
    return cudaSuccess;
  }
  int32_t ipc_close_memory(DevPtr ptr) override {
    std::lock_guard lock(mutex_);
    auto it = ipc_imports_.find(ptr);
    if (it == ipc_imports_.end()) return cudaErrorInvalidValue;
    munmap(reinterpret_cast<void*>(ptr), it->second);
    ipc_imports_.erase(it);
    return cudaSuccess;
  }
  int32_t ipc_export_event(Handle, std::vector<uint8_t>* blob) override {
    blob->clear();
    return cudaSuccess;
  }
  int32_t ipc_import_event(std::span<const uint8_t>, Handle* event) override {
    return event_create(event, cudaEventDisableTiming | cudaEventInterprocess);
  }
  // Shareable handles: POSIX descriptors are dups of the memfds behind
  // allocations and pools; an importer maps the same pages. Imports count
  // as the importing thread's current device (a memfd says nothing of it).
  int32_t vmm_export(Handle allocation, ShareableHandle* handle) override {
    auto* a = as<VmmAllocation>(allocation);
    if (handle->type == CU_MEM_HANDLE_TYPE_FABRIC) return cudaErrorNotSupported;
    if (handle->type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR || !(a->handle_types & handle->type))
      return cudaErrorInvalidValue;  // not asked for at cuMemCreate
    handle->fd = fcntl(a->fd, F_DUPFD_CLOEXEC, 0);
    return handle->fd >= 0 ? cudaSuccess : cudaErrorMemoryAllocation;
  }
  int32_t vmm_import(const ShareableHandle& handle, Handle* allocation, size_t* size,
                     CUmemAllocationProp* prop) override {
    if (handle.type == CU_MEM_HANDLE_TYPE_FABRIC) return cudaErrorNotSupported;
    if (handle.type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR || !sealed_memfd(handle.fd))
      return cudaErrorInvalidValue;
    struct stat st;
    if (fstat(handle.fd, &st) != 0 || st.st_size <= 0 || st.st_size % kVmmGranularity) return cudaErrorInvalidValue;
    int fd = fcntl(handle.fd, F_DUPFD_CLOEXEC, 0);
    if (fd < 0) return cudaErrorMemoryAllocation;
    *size = static_cast<size_t>(st.st_size);
    *allocation = reinterpret_cast<Handle>(
        new VmmAllocation{fd, *size, t_device, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, true});
    *prop = CUmemAllocationProp{};
    prop->type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop->requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    prop->location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop->location.id = t_device;
    return cudaSuccess;
  }
  int32_t mem_pool_export(Handle pool, ShareableHandle* handle) override {
    std::lock_guard lock(mutex_);
    Pool* p = as<Pool>(pool);
    if (handle->type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR || p->fd < 0 || p->imported)
      return cudaErrorInvalidValue;  // made without that handle type
    handle->fd = fcntl(p->fd, F_DUPFD_CLOEXEC, 0);
    return handle->fd >= 0 ? cudaSuccess : cudaErrorMemoryAllocation;
  }
  int32_t mem_pool_import(const ShareableHandle& handle, Handle* pool) override {
    if (handle.type == CU_MEM_HANDLE_TYPE_FABRIC) return cudaErrorNotSupported;
    if (handle.type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR || !sealed_memfd(handle.fd))
      return cudaErrorInvalidValue;
    int fd = fcntl(handle.fd, F_DUPFD_CLOEXEC, 0);
    if (fd < 0) return cudaErrorMemoryAllocation;
    auto* p = new Pool{t_device, {}};
    p->fd = fd;
    p->imported = true;
    *pool = reinterpret_cast<Handle>(p);
    return cudaSuccess;
  }
  int32_t mem_pool_export_pointer(DevPtr ptr, CUmemPoolPtrExportData* data) override {
    std::lock_guard lock(mutex_);
    auto a = pool_allocations_.find(ptr);
    auto view = pool_views_.find(ptr);
    if (a == pool_allocations_.end() || view == pool_views_.end() || !a->second.pool) return cudaErrorInvalidValue;
    PoolPointerExport e{};
    std::memcpy(e.tag, kPoolPointerTag, sizeof e.tag);
    e.offset = view->second.offset;
    e.size = a->second.size;
    *data = CUmemPoolPtrExportData{};
    std::memcpy(data, &e, sizeof e);
    return cudaSuccess;
  }
  int32_t mem_pool_import_pointer(Handle pool, const CUmemPoolPtrExportData& data, DevPtr* ptr,
                                  size_t* size) override {
    Pool* p = as<Pool>(pool);
    PoolPointerExport e;
    std::memcpy(&e, &data, sizeof e);
    if (!p->imported || std::memcmp(e.tag, kPoolPointerTag, sizeof e.tag) != 0 || e.size == 0 ||
        e.offset % kPage || e.size > kDeviceMemory)
      return cudaErrorInvalidValue;
    size_t bytes = whole_pages(e.size);
    struct stat st;
    if (fstat(p->fd, &st) != 0 || e.offset > static_cast<uint64_t>(st.st_size) ||
        bytes > static_cast<uint64_t>(st.st_size) - e.offset)
      return cudaErrorInvalidValue;  // not memory of that pool
    void* m = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, p->fd, static_cast<off_t>(e.offset));
    if (m == MAP_FAILED) return cudaErrorMemoryAllocation;
    std::lock_guard lock(mutex_);
    pool_imports_[reinterpret_cast<DevPtr>(m)] = bytes;
    *ptr = reinterpret_cast<DevPtr>(m);
    *size = e.size;
    return cudaSuccess;
  }
  // As a GPU without dma-buf support answers.
  int32_t mem_range_handle(DevPtr, size_t, CUmemRangeHandleType, unsigned long long, int*) override {
    return cudaErrorNotSupported;
  }
  // Test devices address host memory directly.
  int32_t host_get_device_pointer(DevPtr* ptr, void* p) override {
    *ptr = reinterpret_cast<DevPtr>(p);
    return cudaSuccess;
  }

  GraphBackend& graphs() override { return graphs_; }
  GreenContextApi& green_contexts() override { return green_contexts_; }
  NcclApi& nccl() override { return nccl_; }
  ExternalApi& external() override { return external_; }
  int32_t cudaDeviceGraphMemTrim(int) override { return cudaSuccess; }  // graphs hold no memory here

  // Driver API. Work runs at once, so a wait no earlier work satisfied would
  // wait forever: it fails (CUDA_ERROR_NOT_READY) instead.
  // Each test GPU sits on a bus of its own, as the ordinal says.
  int32_t cudaDeviceGetPCIBusId(char* id, int len, int device) override {
    if (device < 0 || device >= kDevices || len <= 0) return cudaErrorInvalidValue;
    snprintf(id, static_cast<size_t>(len), "0000:%02x:00.0", device + 1);
    return cudaSuccess;
  }
  int32_t stream_mem_ops(Handle, std::span<const StreamMemOp> ops, unsigned flags) override {
    if (flags != 0) return cudaErrorInvalidValue;
    for (const auto& op : ops) {
      auto* p32 = reinterpret_cast<uint32_t*>(op.address);
      auto* p64 = reinterpret_cast<uint64_t*>(op.address);
      switch (op.type) {
        case CU_STREAM_MEM_OP_WRITE_VALUE_32: *p32 = static_cast<uint32_t>(op.value); break;
        case CU_STREAM_MEM_OP_WRITE_VALUE_64: *p64 = op.value; break;
        case CU_STREAM_MEM_OP_WAIT_VALUE_32:
          if (!wait_satisfied<int32_t>(*p32, static_cast<uint32_t>(op.value), op.flags)) return CUDA_ERROR_NOT_READY;
          break;
        case CU_STREAM_MEM_OP_WAIT_VALUE_64:
          if (!wait_satisfied<int64_t>(*p64, op.value, op.flags)) return CUDA_ERROR_NOT_READY;
          break;
        default: break;  // barriers and flushes: host memory is coherent
      }
    }
    return cudaSuccess;
  }
  // The GPUs this backend stands for have no decompression engine (it came
  // with Blackwell): their driver refuses the batch as a whole.
  int32_t mem_batch_decompress(Handle, std::span<CUmemDecompressParams>, unsigned, size_t* failed) override {
    *failed = SIZE_MAX;
    return cudaErrorNotSupported;
  }
  // Its loader reads kernel entries only, so PTX inputs link by joining their
  // texts; other kinds of input need the real linker.
  int32_t link(std::span<const LinkInput> inputs, std::vector<uint8_t>* image) override {
    image->clear();
    for (const auto& in : inputs) {
      if (in.type != CU_JIT_INPUT_PTX) return CUDA_ERROR_NOT_SUPPORTED;
      auto end = std::find(in.data.begin(), in.data.end(), uint8_t{0});
      image->insert(image->end(), in.data.begin(), end);
      image->push_back('\n');
    }
    image->push_back(0);
    return cudaSuccess;
  }
  int32_t cuCtxGetSharedMemConfig(CUsharedconfig* config) override {
    *config = CU_SHARED_MEM_CONFIG_FOUR_BYTE_BANK_SIZE;
    return cudaSuccess;
  }
  // Bank sizes are fixed on the GPUs host-test stands for: a no-op, as there.
  int32_t cuCtxSetSharedMemConfig(proto::EnumNumber<CUsharedconfig> config) override {
    return config <= CU_SHARED_MEM_CONFIG_EIGHT_BYTE_BANK_SIZE ? cudaSuccess : cudaErrorInvalidValue;
  }
  int32_t cuCtxGetApiVersion(CUcontext, unsigned* version) override {
    *version = 3020;
    return cudaSuccess;
  }
  int32_t cuCtxGetId(CUcontext, unsigned long long* id) override {
    *id = static_cast<unsigned long long>(t_device) + 1;
    return cudaSuccess;
  }
  int32_t cuCtxGetExecAffinity(CUexecAffinityParam* param, proto::EnumNumber<CUexecAffinityType> type) override {
    if (type != CU_EXEC_AFFINITY_TYPE_SM_COUNT) return cudaErrorInvalidValue;
    param->type = CU_EXEC_AFFINITY_TYPE_SM_COUNT;
    param->param.smCount.val = kMultiprocessors;
    return cudaSuccess;
  }
  int32_t cuCtxRecordEvent(CUcontext, CUevent event) override { return event_record(reinterpret_cast<Handle>(event), 0); }
  int32_t cuCtxWaitEvent(CUcontext, CUevent) override { return cudaSuccess; }
  int32_t cuDeviceGetExecAffinitySupport(int* supported, proto::EnumNumber<CUexecAffinityType> type,
                                         CUdevice) override {
    if (type != CU_EXEC_AFFINITY_TYPE_SM_COUNT) return cudaErrorInvalidValue;
    *supported = 0;  // execution affinity is an MPS feature
    return cudaSuccess;
  }
  int32_t cuDeviceGetProperties(CUdevprop* prop, CUdevice dev) override {
    cudaDeviceProp p;
    if (int32_t e = get_device_properties(&p, dev)) return e;
    prop->maxThreadsPerBlock = p.maxThreadsPerBlock;
    for (int i = 0; i < 3; ++i) {
      prop->maxThreadsDim[i] = p.maxThreadsDim[i];
      prop->maxGridSize[i] = p.maxGridSize[i];
    }
    prop->sharedMemPerBlock = static_cast<int>(p.sharedMemPerBlock);
    prop->totalConstantMemory = static_cast<int>(p.totalConstMem);
    prop->SIMDWidth = p.warpSize;
    prop->memPitch = INT_MAX;
    prop->regsPerBlock = p.regsPerBlock;
    prop->clockRate = 1'980'000;
    prop->textureAlign = static_cast<int>(p.textureAlignment);
    return cudaSuccess;
  }
  int32_t cuFlushGPUDirectRDMAWrites(proto::EnumNumber<CUflushGPUDirectRDMAWritesTarget> target,
                                     proto::EnumNumber<CUflushGPUDirectRDMAWritesScope> scope) override {
    if (target != CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TARGET_CURRENT_CTX) return cudaErrorInvalidValue;
    if (scope != CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TO_OWNER && scope != CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TO_ALL_DEVICES)
      return cudaErrorInvalidValue;
    return cudaSuccess;
  }
  int32_t cuProfilerStart() override { return cudaSuccess; }
  int32_t cuProfilerStop() override { return cudaSuccess; }
  int32_t cuTensorMapEncodeTiled(CUtensorMap* map, proto::EnumNumber<CUtensorMapDataType> type, cuuint32_t rank,
                                 void* address, const cuuint64_t* dims, const cuuint64_t* strides,
                                 const cuuint32_t* box, const cuuint32_t* element_strides,
                                 proto::EnumNumber<CUtensorMapInterleave> interleave,
                                 proto::EnumNumber<CUtensorMapSwizzle> swizzle,
                                 proto::EnumNumber<CUtensorMapL2promotion> l2,
                                 proto::EnumNumber<CUtensorMapFloatOOBfill> oob) override {
    return host_tensor_maps::encode_tiled(
        map, {type, rank, address, dims, strides, element_strides, interleave, swizzle, l2, oob}, box);
  }
  int32_t cuTensorMapEncodeIm2col(CUtensorMap* map, proto::EnumNumber<CUtensorMapDataType> type, cuuint32_t rank,
                                  void* address, const cuuint64_t* dims, const cuuint64_t* strides, const int* lower,
                                  const int* upper, cuuint32_t channels, cuuint32_t pixels,
                                  const cuuint32_t* element_strides,
                                  proto::EnumNumber<CUtensorMapInterleave> interleave,
                                  proto::EnumNumber<CUtensorMapSwizzle> swizzle,
                                  proto::EnumNumber<CUtensorMapL2promotion> l2,
                                  proto::EnumNumber<CUtensorMapFloatOOBfill> oob) override {
    return host_tensor_maps::encode_im2col(
        map, {type, rank, address, dims, strides, element_strides, interleave, swizzle, l2, oob}, lower, upper,
        channels, pixels);
  }
  int32_t cuTensorMapEncodeIm2colWide(CUtensorMap* map, proto::EnumNumber<CUtensorMapDataType> type, cuuint32_t rank,
                                      void* address, const cuuint64_t* dims, const cuuint64_t* strides, int lower_w,
                                      int upper_w, cuuint32_t channels, cuuint32_t pixels,
                                      const cuuint32_t* element_strides,
                                      proto::EnumNumber<CUtensorMapInterleave> interleave,
                                      proto::EnumNumber<CUtensorMapIm2ColWideMode> mode,
                                      proto::EnumNumber<CUtensorMapSwizzle> swizzle,
                                      proto::EnumNumber<CUtensorMapL2promotion> l2,
                                      proto::EnumNumber<CUtensorMapFloatOOBfill> oob) override {
    return host_tensor_maps::encode_im2col_wide(
        map, {type, rank, address, dims, strides, element_strides, interleave, swizzle, l2, oob}, lower_w, upper_w,
        channels, pixels, mode);
  }
  int32_t cuTensorMapReplaceAddress(CUtensorMap* map, void* address) override {
    return host_tensor_maps::replace_address(map, address);
  }
  // Host memory is coherent and every copy here synchronous: the one settable
  // attribute changes nothing, but only it is accepted, as by CUDA.
  int32_t cuPointerSetAttribute(const void*, proto::EnumNumber<CUpointer_attribute> attribute,
                                CUdeviceptr) override {
    return attribute == CU_POINTER_ATTRIBUTE_SYNC_MEMOPS ? cudaSuccess : cudaErrorInvalidValue;
  }
  int32_t cuCoredumpGetAttribute(CoredumpSetting attrib, void* value, size_t* size) override {
    return coredump_.get(t_device, attrib, value, size);
  }
  int32_t cuCoredumpGetAttributeGlobal(CoredumpSetting attrib, void* value, size_t* size) override {
    return coredump_.get(-1, attrib, value, size);
  }
  int32_t cuCoredumpSetAttribute(CoredumpSetting attrib, void* value, size_t* size) override {
    return coredump_.set(t_device, attrib, value, size);
  }
  int32_t cuCoredumpSetAttributeGlobal(CoredumpSetting attrib, void* value, size_t* size) override {
    return coredump_.set(-1, attrib, value, size);
  }
  // Modules are parsed whole when loaded.
  int32_t cuModuleGetLoadingMode(CUmoduleLoadingMode* mode) override {
    *mode = CU_MODULE_EAGER_LOADING;
    return cudaSuccess;
  }

 private:
  static bool vmm_prop_ok(const CUmemAllocationProp& prop) {
    return prop.type == CU_MEM_ALLOCATION_TYPE_PINNED && prop.location.type == CU_MEM_LOCATION_TYPE_DEVICE &&
           prop.location.id >= 0 && prop.location.id < kDevices;
  }
  // Only device-to-device copies can be captured: the host side of any other
  // is a worker buffer the graph could not read again.
  int32_t capture_copy(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,
                       cudaMemcpyKind kind, Handle stream) {
    if (kind != cudaMemcpyDeviceToDevice) return graphs_.refuse(stream);
    GraphNodeParams p;
    p.type = cudaGraphNodeTypeMemcpy;
    p.dst = reinterpret_cast<uint64_t>(dst);
    p.src = reinterpret_cast<uint64_t>(src);
    p.dst_pitch = dpitch;
    p.src_pitch = spitch;
    p.width = width;
    p.height = height;
    return graphs_.record(stream, p);
  }
  int32_t capture_memset(DevPtr ptr, size_t pitch, int value, size_t width, size_t height, Handle stream) {
    GraphNodeParams p;
    p.type = cudaGraphNodeTypeMemset;
    p.dst = ptr;
    p.dst_pitch = pitch;
    p.value = static_cast<uint8_t>(value);
    p.element_size = 1;
    p.width = width;
    p.height = height;
    return graphs_.record(stream, p);
  }
  // HostGreenHooks: what green contexts need.
  void enter_device(int device) override { t_device = device; }
  int32_t create_stream(uint64_t* stream, unsigned flags, int priority, uint64_t green) override {
    if (flags & ~cudaStreamNonBlocking) return cudaErrorInvalidValue;
    // As CUDA, a priority outside the device's range is clamped into it.
    int least = 0, greatest = 0;
    cudaDeviceGetStreamPriorityRange(&least, &greatest);
    *stream = reinterpret_cast<Handle>(new StreamState{green, flags, std::clamp(priority, greatest, least)});
    return cudaSuccess;
  }
  int32_t cudaStreamGetFlags(cudaStream_t stream, unsigned* flags) override {
    *flags = made_with(stream).flags;
    return cudaSuccess;
  }
  int32_t cudaStreamGetPriority(cudaStream_t stream, int* priority) override {
    *priority = made_with(stream).priority;
    return cudaSuccess;
  }
  // What a stream was made with; the default streams (handles 0 to 2) have
  // the default flags and priority.
  static const StreamState& made_with(cudaStream_t stream) {
    static const StreamState kDefault{};
    const auto h = reinterpret_cast<Handle>(stream);
    return h <= 2 ? kDefault : *as<StreamState>(h);
  }
  uint64_t stream_context(uint64_t stream) override { return as<StreamState>(stream)->green; }
  int32_t record_event_now(uint64_t event) override {
    record_event(event);
    return cudaSuccess;
  }
  // HostGraphHooks: what replaying a graph needs.
  // (A graph's event node may outlive its event: then there is nothing to record.)
  void record_event(uint64_t event) override {
    std::lock_guard lock(mutex_);
    if (!live_events_.count(event)) return;
    as<Event>(event)->recorded = true;
    as<Event>(event)->at = std::chrono::steady_clock::now();
  }
  int32_t array_copy(const GraphNodeParams& p) override {
    size_t element = arrays_.element_of(p.dst_array ? p.dst_array : p.src_array);
    // Both arrays of an array-to-array copy must still be there.
    if (!element || (p.dst_array && p.src_array && !arrays_.element_of(p.src_array))) return cudaErrorIllegalAddress;
    ArrayCopy c = array_copy_of(p, element);
    return arrays_.memcpy3d_async(c.dst, c.src, c.extent, proto::copy_kind(p), 0);
  }
  int32_t allocate(uint64_t* ptr, size_t size) override { return malloc(ptr, size); }
  int32_t allocate_at(uint64_t ptr, size_t size) override {
    std::lock_guard lock(mutex_);
    DevPtr got = 0;
    return map_device_memory(reinterpret_cast<void*>(ptr), size, &got);
  }
  int32_t run_semaphores(int32_t type, std::span<const proto::ExternalSemaphoreOp> ops) override {
    return type == cudaGraphNodeTypeExtSemaphoreSignal ? external_.run_signal(ops) : external_.run_wait(ops);
  }
  // With mutex_ held; sinks only queue the notification.
  void notify_over_budget(int device) {
    if (!budget_ || used_[device] <= budget_) return;
    cudaAsyncNotificationInfo_t info{};
    info.type = cudaAsyncNotificationTypeOverBudget;
    info.info.overBudget.bytesOverBudget = used_[device] - budget_;
    for (const auto& [registration, sink] : notification_sinks_)
      if (sink.first == device) sink.second->notify(info);
  }
  int32_t mem_ops(std::span<const StreamMemOp> ops, unsigned flags) override { return stream_mem_ops(0, ops, flags); }
  bool live(uint64_t ptr, size_t n) override {
    std::lock_guard lock(mutex_);
    for (const auto& memory : memory_)
      if (inside(memory, ptr, n)) return true;
    if (inside(globals_, ptr, n) || inside(pool_imports_, ptr, n) || external_.holds_buffer(ptr, n)) return true;
    // Virtual memory mapped with access (a moved session's memory is).
    auto it = vmm_access_.upper_bound(ptr);
    if (it == vmm_access_.begin()) return false;
    --it;
    return ptr - it->first <= it->second.first && n <= it->second.first - (ptr - it->first);
  }
  void host_node_running(bool running) override { running ? fence_.began(t_device) : fence_.ended(t_device); }
  bool host_live(uint64_t ptr, size_t n) override {
    std::lock_guard lock(mutex_);
    return inside(registered_, ptr, n) || inside(staging_, ptr, n);
  }
  static bool inside(const std::map<DevPtr, size_t>& ranges, uint64_t ptr, size_t n) {
    auto it = ranges.upper_bound(ptr);
    if (it == ranges.begin()) return false;
    --it;
    return ptr - it->first <= it->second && n <= it->second - (ptr - it->first);
  }

  template <typename Signed, typename T>
  static bool wait_satisfied(T current, T value, uint32_t flags) {
    switch (flags & ~CU_STREAM_WAIT_VALUE_FLUSH) {
      case CU_STREAM_WAIT_VALUE_GEQ: return static_cast<Signed>(current - value) >= 0;
      case CU_STREAM_WAIT_VALUE_EQ: return current == value;
      case CU_STREAM_WAIT_VALUE_AND: return (current & value) != 0;
      case CU_STREAM_WAIT_VALUE_NOR: return ~(current | value) != 0;
      default: return false;
    }
  }
  Pool* current_pool(int ordinal) {
    return current_pools_[ordinal] ? current_pools_[ordinal] : &default_pools_[ordinal];
  }
  // A stretch of a shareable pool's memfd, mapped here.
  int32_t malloc_shareable(DevPtr* ptr, size_t size, Pool* p) {
    std::lock_guard lock(mutex_);
    if (size > kDeviceMemory - used_[t_device]) return cudaErrorMemoryAllocation;
    size_t bytes = whole_pages(std::max<size_t>(size, 1));
    if (ftruncate(p->fd, static_cast<off_t>(p->end + bytes)) != 0) return cudaErrorMemoryAllocation;
    void* m = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, p->fd, static_cast<off_t>(p->end));
    if (m == MAP_FAILED) return cudaErrorMemoryAllocation;
    *ptr = reinterpret_cast<DevPtr>(m);
    pool_views_[*ptr] = {p->end, bytes};
    p->end += bytes;
    memory_[t_device][*ptr] = size;
    used_[t_device] += size;
    return cudaSuccess;
  }
  // With mutex_ held: gives back the memory of an allocation of memory_.
  // A shareable pool's stretch is only unmapped: importers may still map
  // its pages, which stay in the memfd (never handed out again) until the
  // pool and every mapping of it are gone.
  // Device memory of the current device at `want` (anywhere when null), with
  // mutex_ held. Whole pages: an IPC export moves them into shared memory in
  // place. Mapped, not committed: only the pages a test touches take memory,
  // and whatever the device's amount, the worker's own heap stays small.
  int32_t map_device_memory(void* want, size_t size, DevPtr* ptr) {
    if (size > kDeviceMemory - used_[t_device]) return cudaErrorMemoryAllocation;
    size_t bytes = whole_pages(std::max<size_t>(size, 1));
    int fixed = want ? MAP_FIXED_NOREPLACE : 0;
    void* p = mmap(want, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | fixed, -1, 0);
    if (p == MAP_FAILED) return cudaErrorMemoryAllocation;
    if (want && p != want) {  // a kernel without MAP_FIXED_NOREPLACE took it as a hint
      munmap(p, bytes);
      return cudaErrorMemoryAllocation;
    }
    memory_[t_device][reinterpret_cast<DevPtr>(p)] = size;
    used_[t_device] += size;
    *ptr = reinterpret_cast<DevPtr>(p);
    return cudaSuccess;
  }
  void release_memory(DevPtr ptr, size_t size) {
    auto view = pool_views_.find(ptr);
    if (view == pool_views_.end()) {
      munmap(reinterpret_cast<void*>(ptr), whole_pages(std::max<size_t>(size, 1)));
      return;
    }
    munmap(reinterpret_cast<void*>(ptr), view->second.bytes);
    pool_views_.erase(view);
  }
  // With mutex_ held: a freed pointer no longer counts in its pool.
  void release_from_pool(DevPtr ptr) {
    auto it = pool_allocations_.find(ptr);
    if (it == pool_allocations_.end()) return;
    if (it->second.pool) it->second.pool->used -= it->second.size;
    pool_allocations_.erase(it);
  }

  struct PoolAllocation {
    Pool* pool;  // null once the pool is destroyed
    size_t size;
  };
  // Where an allocation of a shareable pool lies in the pool's memfd.
  struct PoolView {
    size_t offset, bytes;
  };
  std::once_flag contexts_[kDevices];  // each device's context, created once
  std::mutex mutex_;
  Pool default_pools_[kDevices] = {{0, {}}, {1, {}}};
  Pool* current_pools_[kDevices] = {};
  std::map<DevPtr, PoolAllocation> pool_allocations_;
  std::map<DevPtr, PoolView> pool_views_;   // allocations of shareable pools
  std::map<DevPtr, size_t> pool_imports_;   // pool pointers of other processes: mapped bytes
  std::map<std::pair<Handle, int>, cudaLaunchAttributeValue> stream_attributes_;
  std::map<DevPtr, size_t> memory_[kDevices];
  std::map<DevPtr, size_t> globals_;  // module variables, for graph replays
  std::map<DevPtr, size_t> registered_;  // page-locked host memory, for graph replays
  std::map<DevPtr, size_t> staging_;     // so is staging memory
  HostNodeFence fence_;
  std::unordered_set<Handle> live_kernels_, live_events_;  // what graph replays may still touch
  size_t used_[kDevices] = {};
  // The device memory budget the server's environment sets
  // (RGPU_HOST_TEST_MEMORY_BUDGET, bytes; none: no budget): an allocation
  // beyond it raises an over-budget notification, as the driver does.
  size_t budget_ = [] {
    const char* b = std::getenv("RGPU_HOST_TEST_MEMORY_BUDGET");
    return b ? static_cast<size_t>(std::strtoull(b, nullptr, 0)) : 0;
  }();
  std::map<Handle, std::pair<int, AsyncNotificationSink*>> notification_sinks_;  // by registration
  std::map<int, size_t> limits_;
  std::set<std::pair<int, int>> peer_access_;  // (device, peer) enabled
  std::map<DevPtr, std::string> ipc_exports_;  // names in the IPC directory, by allocation
  std::map<DevPtr, size_t> ipc_imports_;
  uint64_t ipc_export_count_ = 0;
  // Access set on mapped ranges, by range start: size, flags by device.
  std::map<DevPtr, std::pair<size_t, std::map<int, CUmemAccess_flags>>> vmm_access_;
  cudaFuncCache cache_config_ = cudaFuncCachePreferNone;
  uint64_t launches_ = 0;
  HostArrays arrays_;
  HostCoredump coredump_;
  HostGraphs graphs_{*this};
  HostGreenContexts green_contexts_{*this, kDevices};
  HostNccl nccl_;
  HostExternal external_{arrays_, graphs_};
};

}  // namespace

std::unique_ptr<Backend> make_host_test_backend() { return std::make_unique<HostTestBackend>(); }

}  // namespace rgpu::server
