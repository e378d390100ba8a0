// Modules (fat binaries), kernels and launches.
#include "protocol/ops.hpp"
#include "protocol/wire_enum.hpp"
#include "server/worker/dispatcher.hpp"
#include "server/worker/launch_config.hpp"
#include "server/worker/module_cache.hpp"
#include "server/worker/module_functions.hpp"
#include "server/worker/payload_blocks.hpp"
#include "server/worker/session_context.hpp"

namespace rgpu::server {
namespace {

// Bounds on what one module load may name; larger is a malformed request.
constexpr uint32_t kMaxNames = 1u << 20;

}  // namespace

int32_t load_module(SessionContext& s, Request& req, const std::string& hash, bool with_image, Handle* module,
                    bool* missing, std::string* verified) {
  *missing = false;
  if (!with_image && !verified)
    if ((*module = s.preloaded_modules.take(hash))) return cudaSuccess;
  if (!s.modules.room_for_one_more()) return cudaErrorMemoryAllocation;
  ModuleCache cache(s.module_cache_dir(), s.bounds().module_cache_max);
  MemoryHold held(s.host_memory);
  std::vector<uint8_t> image;
  if (with_image) {
    const uint64_t n = req.payload_left();
    if (n == 0) return cudaErrorInvalidValue;
    if (!s.fits_module(n) || !held.take(n, "module image")) return cudaErrorMemoryAllocation;
    append_payload(req, n, &image);
  } else {
    auto cached = cache.find(hash, [&](uint64_t n) { return s.fits_module(n) && held.take(n, "module image"); });
    if (!cached) {
      *missing = true;
      return cudaSuccess;
    }
    image = std::move(*cached);
  }
  if (int32_t e = s.backend().module_load(image, module)) return e;
  s.modules.add(*module);
  const std::string stored = with_image ? cache.store(image) : hash;
  if (verified) *verified = stored;
  return cudaSuccess;
}

namespace {

// A module load's head: the image's hash, whether the image comes with the
// request, and the kernels to look up; false when it names too many.
bool get_module_head(proto::Reader& r, std::string* hash, bool* with_image, std::vector<std::string>* kernels) {
  *hash = r.get_string();
  *with_image = r.get<uint8_t>();
  auto n = r.get<uint32_t>();
  if (n > kMaxNames) return false;
  kernels->resize(n);
  for (auto& k : *kernels) k = r.get_string();
  return true;
}

int32_t module_load(SessionContext& s, Request& req, proto::Writer& out) {
  std::string hash;
  bool with_image;
  std::vector<std::string> kernels;
  if (!get_module_head(req.args, &hash, &with_image, &kernels)) return cudaErrorInvalidValue;
  auto nv = req.args.get<uint32_t>();
  if (nv > kMaxNames) return cudaErrorInvalidValue;
  std::vector<std::pair<std::string, uint64_t>> vars(nv);
  for (auto& v : vars) {
    v.first = req.args.get_string();
    v.second = req.args.get<uint64_t>();
  }
  req.args.expect_end();

  Handle module = 0;
  bool missing = false;
  if (int32_t e = load_module(s, req, hash, with_image, &module, &missing)) return e;
  if (missing) {
    out.put<uint8_t>(1);  // not cached here: send the image
    return cudaSuccess;
  }
  out.put<uint8_t>(0);
  for (const auto& name : kernels)
    if (put_function(s, module, name, out) != cudaSuccess) out.put<uint64_t>(0).put<int32_t>(0).put<uint32_t>(0);
  for (const auto& [name, size_hint] : vars) {
    DevPtr ptr = 0;
    size_t size = 0;
    if (s.backend().module_get_global(module, name, size_hint, &ptr, &size) != cudaSuccess) ptr = size = 0;
    put_variable(s, module, name, ptr, size, out);
  }
  return cudaSuccess;
}

// A module loaded ahead of a session moving here (docs/migration.md): hash,
// with_image, count, then each kernel the session used of it -> needs_image.
// The kernels are looked up too: the driver loads each kernel's code at its
// first lookup, which would otherwise fall in the session's pause. The
// session's next load of that image by hash takes the module (PreloadedModules).
int32_t module_preload(SessionContext& s, Request& req, proto::Writer& out) {
  std::string hash;
  bool with_image;
  std::vector<std::string> kernels;
  if (!get_module_head(req.args, &hash, &with_image, &kernels)) return cudaErrorInvalidValue;
  req.args.expect_end();
  Handle module = 0;
  bool missing = false;
  std::string verified;
  if (int32_t e = load_module(s, req, hash, with_image, &module, &missing, &verified)) return e;
  out.put<uint8_t>(missing);
  if (missing) return cudaSuccess;
  for (const auto& name : kernels) {
    Handle fn = 0;
    std::vector<KernelParam> params;
    s.backend().module_get_function(module, name, &fn, &params);
  }
  s.preloaded_modules.put(verified, module);
  return cudaSuccess;
}

enum class LaunchKind { plain, cooperative, with_attributes };

template <LaunchKind kKind>
int32_t launch_kernel(SessionContext& s, Request& req, proto::Writer&) {
  auto fn = req.args.get<uint64_t>();
  LaunchConfig cfg;
  cfg.cooperative = kKind == LaunchKind::cooperative;
  if (int32_t e = read_launch_config(s, req.args, &cfg)) return e;
  if constexpr (kKind == LaunchKind::with_attributes)
    if (int32_t e = read_launch_attributes(s, req.args, &cfg)) return e;
  auto packed = req.args.get_bytes();
  req.args.expect_end();
  const FunctionInfo* info = s.functions.find(fn);
  if (!info) return cudaErrorInvalidResourceHandle;
  // The layout came from the driver: any other size cannot be this kernel's.
  if (packed.size() != info->args_size) return cudaErrorInvalidValue;
  std::vector<uint8_t> args(packed.begin(), packed.end());
  return s.backend().launch(fn, cfg, args);
}

int32_t func_get_attributes(SessionContext& s, Request& req, proto::Writer& out) {
  auto fn = req.args.get<uint64_t>();
  req.args.expect_end();
  if (!s.functions.find(fn)) return cudaErrorInvalidDeviceFunction;
  cudaFuncAttributes attr{};
  if (int32_t e = s.backend().func_get_attributes(&attr, fn)) return e;
  out.put(attr);
  return cudaSuccess;
}

int32_t func_set_attribute(SessionContext& s, Request& req, proto::Writer&) {
  auto fn = req.args.get<uint64_t>();
  auto attr = req.args.get<proto::EnumNumber<cudaFuncAttribute>>();
  auto value = req.args.get<int32_t>();
  req.args.expect_end();
  if (!s.functions.find(fn)) return cudaErrorInvalidDeviceFunction;
  // Numbers become enums once checked (wire_enum.hpp).
  if (!proto::enum_in_range(attr, cudaFuncAttributeMaxDynamicSharedMemorySize,
                            cudaFuncAttributeClusterSchedulingPolicyPreference))
    return cudaErrorInvalidValue;
  return s.backend().func_set_attribute(fn, static_cast<cudaFuncAttribute>(attr), value);
}

int32_t func_set_cache_config(SessionContext& s, Request& req, proto::Writer&) {
  auto fn = req.args.get<uint64_t>();
  auto config = req.args.get<proto::EnumNumber<cudaFuncCache>>();
  req.args.expect_end();
  if (!s.functions.find(fn)) return cudaErrorInvalidDeviceFunction;
  if (!proto::enum_in_range(config, cudaFuncCachePreferNone, cudaFuncCachePreferEqual)) return cudaErrorInvalidValue;
  return s.backend().func_set_cache_config(fn, static_cast<cudaFuncCache>(config));
}

int32_t func_set_shared_mem_config(SessionContext& s, Request& req, proto::Writer&) {
  auto fn = req.args.get<uint64_t>();
  auto config = req.args.get<proto::EnumNumber<cudaSharedMemConfig>>();
  req.args.expect_end();
  if (!s.functions.find(fn)) return cudaErrorInvalidDeviceFunction;
  if (!proto::enum_in_range(config, cudaSharedMemBankSizeDefault, cudaSharedMemBankSizeEightByte))
    return cudaErrorInvalidValue;
  return s.backend().func_set_shared_mem_config(fn, static_cast<cudaSharedMemConfig>(config));
}

int32_t occupancy_max_active_blocks(SessionContext& s, Request& req, proto::Writer& out) {
  auto fn = req.args.get<uint64_t>();
  auto block = req.args.get<int32_t>();
  auto smem = req.args.get<uint64_t>();
  auto flags = req.args.get<uint32_t>();
  req.args.expect_end();
  if (!s.functions.find(fn)) return cudaErrorInvalidDeviceFunction;
  int blocks = 0;
  if (int32_t e = s.backend().occupancy_max_active_blocks(&blocks, fn, block, smem, flags)) return e;
  out.put<int32_t>(blocks);
  return cudaSuccess;
}

}  // namespace

int32_t put_function(SessionContext& s, Handle module, const std::string& name, proto::Writer& out) {
  Handle fn = 0;
  FunctionInfo info;
  if (int32_t e = s.backend().module_get_function(module, name, &fn, &info.params)) return e;
  for (const auto& p : info.params) info.args_size = std::max(info.args_size, p.offset + p.size);
  // The client checks launches against this limit, as the local runtime
  // does before launching.
  cudaFuncAttributes attr{};
  s.backend().func_get_attributes(&attr, fn);
  out.put<uint64_t>(fn).put<int32_t>(attr.maxDynamicSharedSizeBytes).put<uint32_t>(info.params.size());
  for (const auto& p : info.params) out.put(p.offset).put(p.size);
  s.functions.put(fn, std::move(info));
  return cudaSuccess;
}

void put_variable(SessionContext& s, Handle module, const std::string& name, DevPtr ptr, size_t size,
                  proto::Writer& out) {
  DevPtr managed_ptr = 0;
  size_t managed_size = 0;
  bool managed = ptr && s.backend().module_get_managed(module, name, &managed_ptr, &managed_size) == cudaSuccess;
  if (ptr) s.globals.add(ptr, size);
  out.put<uint64_t>(ptr).put<uint64_t>(size).put<uint8_t>(managed);
}

void register_module_handlers(Dispatcher& d) {
  d.add(proto::kOpModuleLoad, module_load);
  d.add(proto::kOpModulePreload, module_preload);
  d.add(proto::kOpLaunchKernel, launch_kernel<LaunchKind::plain>);
  d.add(proto::kOpLaunchCooperativeKernel, launch_kernel<LaunchKind::cooperative>);
  d.add(proto::kOpLaunchKernelEx, launch_kernel<LaunchKind::with_attributes>);
  d.add(proto::kOpFuncGetAttributes, func_get_attributes);
  d.add(proto::kOpFuncSetAttribute, func_set_attribute);
  d.add(proto::kOpFuncSetCacheConfig, func_set_cache_config);
  d.add(proto::kOpFuncSetSharedMemConfig, func_set_shared_mem_config);
  d.add(proto::kOpOccupancyMaxActiveBlocks, occupancy_max_active_blocks);
}

}  // namespace rgpu::server
