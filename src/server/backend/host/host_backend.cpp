#include "server/backend/host/host_backend.hpp"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <unordered_map>

#include "fatbin/fatbin_container.hpp"
#include "fatbin/kernel_params.hpp"

namespace rgpu::server {
namespace {

constexpr int kDevices = 2;
constexpr int kMultiprocessors = 4;
constexpr size_t kDeviceMemory = 4ull << 30;
constexpr int kMaxThreadsPerBlock = 1024;
constexpr int kSharedMemOptin = 227 * 1024;
constexpr size_t kSharedMemPerMultiprocessor = 228 * 1024;

struct Kernel {
  std::vector<KernelParam> params;
  int max_dynamic_shared = 48 * 1024;
};

struct Module {
  std::unordered_map<std::string, Kernel> kernels;
  std::unordered_map<std::string, std::vector<uint8_t>> globals;
};

// A memory pool: host-test allocates from the device's memory at once, so
// what a pool has reserved is what it has in use.
struct Pool {
  int device;
  std::map<int, uint64_t> settings;  // cudaMemPoolAttr -> value
  size_t used = 0, high = 0;
};

struct Event {
  bool timing;
  bool recorded = false;
  std::chrono::steady_clock::time_point at;
};

// Whatever cuModuleLoadData takes: a fat binary, a cubin (ELF) or PTX text.
std::vector<fatbin::KernelInfo> kernels_in_image(std::span<const std::byte> image) {
  if (image.size() >= 4 && fatbin::read_at<uint32_t>(image, 0) == fatbin::kFatbinMagic)
    return fatbin::kernels_in(fatbin::parse_fatbin(image));
  if (image.size() >= 4 && std::memcmp(image.data(), "\x7f" "ELF", 4) == 0) return fatbin::kernels_in_cubin(image);
  std::string_view text(reinterpret_cast<const char*>(image.data()), image.size());
  text = text.substr(0, text.find('\0'));
  if (text.find(".version") == std::string_view::npos || text.find(".target") == std::string_view::npos)
    throw fatbin::FormatError("neither a fat binary, a cubin nor PTX");
  return fatbin::kernels_in_ptx(text);
}

template <typename T>
T* as(Handle h) {
  return reinterpret_cast<T*>(h);
}

// The worker serves each connection of a session on its own thread: the
// current device is per thread, as in CUDA, and the tables below are locked.
thread_local int t_device = 0;

class HostTestBackend final : public Backend {
 public:
  std::string name() const override { return "host-test"; }
  int32_t init(const std::vector<int>& gpus) override {
    for (int g : gpus)
      if (g < 0 || g >= kDevices) return cudaErrorInvalidDevice;
    return cudaSuccess;
  }
  int32_t set_device(int ordinal) override {
    if (ordinal < 0 || ordinal >= kDevices) return cudaErrorInvalidDevice;
    t_device = ordinal;
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
    p->pciDeviceID = ordinal;
    p->pciBusID = ordinal + 1;
    return cudaSuccess;
  }
  int32_t device_synchronize() override { return cudaSuccess; }
  int32_t device_reset() override {
    std::lock_guard lock(mutex_);
    for (auto& [p, size] : memory_[t_device]) {
      release_from_pool(p);
      std::free(reinterpret_cast<void*>(p));
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
    if (size > kDeviceMemory - used_[t_device]) return cudaErrorMemoryAllocation;
    void* p = std::aligned_alloc(256, (size + 255) / 256 * 256);
    if (!p) return cudaErrorMemoryAllocation;
    memory_[t_device][reinterpret_cast<DevPtr>(p)] = size;
    used_[t_device] += size;
    *ptr = reinterpret_cast<DevPtr>(p);
    return cudaSuccess;
  }
  int32_t malloc_pitch(DevPtr* ptr, size_t* pitch, size_t width, size_t height) override {
    *pitch = (width + 511) / 512 * 512;
    return malloc(ptr, *pitch * height);
  }
  int32_t free(DevPtr ptr) override {
    std::lock_guard lock(mutex_);
    release_from_pool(ptr);
    for (auto& m : memory_) {
      auto it = m.find(ptr);
      if (it == m.end()) continue;
      used_[&m - memory_] -= it->second;
      std::free(reinterpret_cast<void*>(ptr));
      m.erase(it);
      return cudaSuccess;
    }
    return cudaErrorInvalidValue;
  }
  int32_t mem_get_info(size_t* free, size_t* total) override {
    std::lock_guard lock(mutex_);
    *total = kDeviceMemory;
    *free = kDeviceMemory - used_[t_device];
    return cudaSuccess;
  }
  int32_t malloc_async(DevPtr* ptr, size_t size, Handle pool, Handle) override {
    Pool* p = pool ? as<Pool>(pool) : current_pool(t_device);
    if (int32_t e = malloc(ptr, size)) return e;
    std::lock_guard lock(mutex_);
    p->used += size;
    p->high = std::max(p->high, p->used);
    pool_allocations_[*ptr] = {p, size};
    return cudaSuccess;
  }
  int32_t free_async(DevPtr ptr, Handle) override { return free(ptr); }
  int32_t mem_pool_create(Handle* pool, const cudaMemPoolProps& props) override {
    if (props.allocType != cudaMemAllocationTypePinned || props.location.type != cudaMemLocationTypeDevice ||
        props.location.id < 0 || props.location.id >= kDevices)
      return cudaErrorInvalidValue;
    *pool = reinterpret_cast<Handle>(new Pool{props.location.id, {}});
    return cudaSuccess;
  }
  int32_t mem_pool_destroy(Handle pool) override {
    std::lock_guard lock(mutex_);
    Pool* p = as<Pool>(pool);
    if (p == &default_pools_[p->device]) return cudaErrorInvalidValue;
    if (current_pools_[p->device] == p) current_pools_[p->device] = nullptr;
    for (auto& [ptr, a] : pool_allocations_)
      if (a.pool == p) a.pool = nullptr;
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
    if (as<Pool>(pool)->device != ordinal) return cudaErrorInvalidValue;
    current_pools_[ordinal] = as<Pool>(pool);
    return cudaSuccess;
  }

  int32_t alloc_staging(size_t size, void** p) override {
    *p = std::malloc(size);
    return *p ? cudaSuccess : cudaErrorMemoryAllocation;
  }
  void free_staging(void* p) override { std::free(p); }
  int32_t host_register(void*, size_t) override { return cudaSuccess; }
  int32_t host_unregister(void*) override { return cudaSuccess; }

  // Work runs when queued, so every stream is always idle and in order.
  int32_t memcpy_async(void* dst, const void* src, size_t n, cudaMemcpyKind, Handle) override {
    std::memmove(dst, src, n);
    return cudaSuccess;
  }
  int32_t memcpy2d_async(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,
                         cudaMemcpyKind, Handle) override {
    for (size_t r = 0; r < height; ++r)
      std::memmove(static_cast<char*>(dst) + r * dpitch, static_cast<const char*>(src) + r * spitch, width);
    return cudaSuccess;
  }
  int32_t memset_async(DevPtr ptr, int value, size_t n, Handle) override {
    std::memset(reinterpret_cast<void*>(ptr), value, n);
    return cudaSuccess;
  }
  int32_t memset2d_async(DevPtr ptr, size_t pitch, int value, size_t width, size_t height, Handle) override {
    for (size_t r = 0; r < height; ++r) std::memset(reinterpret_cast<char*>(ptr) + r * pitch, value, width);
    return cudaSuccess;
  }

  int32_t stream_create(Handle* stream, unsigned flags, int priority) override {
    if (flags & ~cudaStreamNonBlocking) return cudaErrorInvalidValue;
    (void)priority;
    *stream = reinterpret_cast<Handle>(new int(0));
    return cudaSuccess;
  }
  int32_t stream_destroy(Handle stream) override {
    delete as<int>(stream);
    return cudaSuccess;
  }
  int32_t stream_synchronize(Handle) override { return cudaSuccess; }
  int32_t stream_query(Handle) override { return cudaSuccess; }
  int32_t stream_wait_event(Handle, Handle, unsigned) override { return cudaSuccess; }
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
    return cudaSuccess;
  }
  int32_t event_destroy(Handle event) override {
    delete as<Event>(event);
    return cudaSuccess;
  }
  int32_t event_record(Handle event, Handle) override {
    as<Event>(event)->recorded = true;
    as<Event>(event)->at = std::chrono::steady_clock::now();
    return cudaSuccess;
  }
  int32_t launch_host_func(Handle, void (*fn)(void*), void* arg) override {
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
    try {
      for (const auto& k : kernels_in_image({reinterpret_cast<const std::byte*>(image.data()), image.size()})) {
        Kernel kernel;
        for (const auto& p : k.params) kernel.params.push_back({p.offset, p.size});
        m->kernels[k.name] = std::move(kernel);
      }
    } catch (const std::exception&) {
      return cudaErrorInvalidKernelImage;
    }
    *module = reinterpret_cast<Handle>(m.release());
    return cudaSuccess;
  }
  int32_t module_unload(Handle module) override {
    delete as<Module>(module);
    return cudaSuccess;
  }
  int32_t module_get_function(Handle module, const std::string& name, Handle* function,
                              std::vector<KernelParam>* params) override {
    std::lock_guard lock(mutex_);
    auto& kernels = as<Module>(module)->kernels;
    auto it = kernels.find(name);
    if (it == kernels.end()) return cudaErrorInvalidDeviceFunction;
    *params = it->second.params;
    *function = reinterpret_cast<Handle>(&it->second);
    return cudaSuccess;
  }
  int32_t module_get_global(Handle module, const std::string& name, size_t size_hint, DevPtr* ptr,
                            size_t* size) override {
    std::lock_guard lock(mutex_);
    // The fat binary's data sections are not modelled: each variable gets the
    // size its host code registered, zero-filled.
    auto& g = as<Module>(module)->globals[name];
    if (g.empty()) g.resize(size_hint ? size_hint : 1);
    *ptr = reinterpret_cast<DevPtr>(g.data());
    *size = size_hint;
    return cudaSuccess;
  }
  int32_t launch(Handle function, const LaunchConfig& c, std::span<uint8_t>) override {
    std::lock_guard lock(mutex_);
    const Kernel* k = as<Kernel>(function);
    uint64_t threads = uint64_t{c.block.x} * c.block.y * c.block.z;
    if (threads == 0 || threads > kMaxThreadsPerBlock || c.grid.x == 0 || c.grid.y == 0 || c.grid.z == 0)
      return cudaErrorInvalidValue;
    if (c.shared_mem > static_cast<uint32_t>(k->max_dynamic_shared)) return cudaErrorInvalidValue;
    // All blocks of a cooperative grid must fit on the device at once.
    uint64_t blocks = uint64_t{c.grid.x} * c.grid.y * c.grid.z;
    if (c.cooperative && blocks > kMultiprocessors * std::min<uint64_t>(32, 2048 / threads))
      return cudaErrorCooperativeLaunchTooLarge;
    ++launches_;
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

  int32_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device) override {
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
      default: return cudaErrorInvalidValue;
    }
    return cudaSuccess;
  }
  int32_t cudaDeviceGetLimit(size_t* value, cudaLimit limit) override {
    std::lock_guard lock(mutex_);
    auto it = limits_.find(limit);
    *value = it == limits_.end() ? 1024 : it->second;
    return cudaSuccess;
  }
  int32_t cudaDeviceSetLimit(cudaLimit limit, size_t value) override {
    std::lock_guard lock(mutex_);
    limits_[limit] = value;
    return cudaSuccess;
  }
  int32_t cudaDeviceGetCacheConfig(cudaFuncCache* config) override {
    std::lock_guard lock(mutex_);
    *config = cache_config_;
    return cudaSuccess;
  }
  int32_t cudaDeviceSetCacheConfig(cudaFuncCache config) override {
    std::lock_guard lock(mutex_);
    cache_config_ = config;
    return cudaSuccess;
  }
  int32_t cudaDeviceGetStreamPriorityRange(int* least, int* greatest) override {
    *least = 0;
    *greatest = -5;
    return cudaSuccess;
  }

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
  int32_t cuCtxGetFlags(unsigned* flags) override {
    std::lock_guard lock(mutex_);
    *flags = ctx_flags_[t_device];
    return cudaSuccess;
  }
  int32_t cuCtxSetFlags(unsigned flags) override {
    std::lock_guard lock(mutex_);
    ctx_flags_[t_device] = flags;
    return cudaSuccess;
  }
  int32_t cuCtxGetSharedMemConfig(CUsharedconfig* config) override {
    *config = CU_SHARED_MEM_CONFIG_FOUR_BYTE_BANK_SIZE;
    return cudaSuccess;
  }
  // Bank sizes are fixed on the GPUs host-test stands for: a no-op, as there.
  int32_t cuCtxSetSharedMemConfig(CUsharedconfig config) override {
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
  int32_t cuCtxGetExecAffinity(CUexecAffinityParam* param, CUexecAffinityType type) override {
    if (type != CU_EXEC_AFFINITY_TYPE_SM_COUNT) return cudaErrorInvalidValue;
    param->type = type;
    param->param.smCount.val = kMultiprocessors;
    return cudaSuccess;
  }
  int32_t cuCtxRecordEvent(CUcontext, CUevent event) override { return event_record(reinterpret_cast<Handle>(event), 0); }
  int32_t cuCtxWaitEvent(CUcontext, CUevent) override { return cudaSuccess; }
  int32_t cuDeviceGetExecAffinitySupport(int* supported, CUexecAffinityType type, CUdevice) override {
    if (type != CU_EXEC_AFFINITY_TYPE_SM_COUNT) return cudaErrorInvalidValue;
    *supported = 0;  // execution affinity is an MPS feature
    return cudaSuccess;
  }
  int32_t cuDeviceGetTexture1DLinearMaxWidth(size_t* width, CUarray_format, unsigned channels, CUdevice) override {
    if (channels != 1 && channels != 2 && channels != 4) return cudaErrorInvalidValue;
    *width = size_t{1} << 27;
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
  int32_t cuFlushGPUDirectRDMAWrites(CUflushGPUDirectRDMAWritesTarget target,
                                     CUflushGPUDirectRDMAWritesScope scope) override {
    if (target != CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TARGET_CURRENT_CTX) return cudaErrorInvalidValue;
    if (scope != CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TO_OWNER && scope != CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TO_ALL_DEVICES)
      return cudaErrorInvalidValue;
    return cudaSuccess;
  }
  int32_t cuProfilerStart() override { return cudaSuccess; }
  int32_t cuProfilerStop() override { return cudaSuccess; }
  int32_t cuFuncSetSharedMemConfig(CUfunction, CUsharedconfig config) override {
    return cuCtxSetSharedMemConfig(config);
  }
  // Modules are parsed whole when loaded.
  int32_t cuModuleGetLoadingMode(CUmoduleLoadingMode* mode) override {
    *mode = CU_MODULE_EAGER_LOADING;
    return cudaSuccess;
  }
  int32_t cuModuleGetFunctionCount(unsigned* count, CUmodule module) override {
    std::lock_guard lock(mutex_);
    *count = static_cast<unsigned>(as<Module>(reinterpret_cast<Handle>(module))->kernels.size());
    return cudaSuccess;
  }
  // Kernels use no static shared memory here: each block may have its share.
  int32_t cuOccupancyAvailableDynamicSMemPerBlock(size_t* size, CUfunction, int blocks, int block_size) override {
    if (blocks <= 0 || block_size <= 0 || block_size > kMaxThreadsPerBlock) return cudaErrorInvalidValue;
    *size = std::min<size_t>(kSharedMemOptin, kSharedMemPerMultiprocessor / blocks);
    return cudaSuccess;
  }

 private:
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
  std::mutex mutex_;
  Pool default_pools_[kDevices] = {{0, {}}, {1, {}}};
  Pool* current_pools_[kDevices] = {};
  std::map<DevPtr, PoolAllocation> pool_allocations_;
  std::map<std::pair<Handle, int>, cudaLaunchAttributeValue> stream_attributes_;
  std::map<DevPtr, size_t> memory_[kDevices];
  size_t used_[kDevices] = {};
  std::map<int, size_t> limits_;
  cudaFuncCache cache_config_ = cudaFuncCachePreferNone;
  uint64_t launches_ = 0;
  unsigned ctx_flags_[kDevices] = {};
};

}  // namespace

std::unique_ptr<Backend> make_host_test_backend() { return std::make_unique<HostTestBackend>(); }

}  // namespace rgpu::server
