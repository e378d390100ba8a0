// The driver API's modules: images the application hands over itself (fat
// binary, cubin or PTX, which the GPU backend gives to cuModuleLoadData), and
// their kernels and variables looked up by name. Launches use the runtime's launch op.
#include "protocol/ops.hpp"
#include "server/worker/dispatcher.hpp"
#include "server/worker/module_functions.hpp"
#include "server/worker/session_context.hpp"

namespace rgpu::server {
namespace {

// Hash first (the image may be cached here), the image itself when asked:
// hash, with_image -> needs_image, module handle.
int32_t module_load_image(SessionContext& s, Request& req, proto::Writer& out) {
  std::string hash = req.args.get_string();
  bool with_image = req.args.get<uint8_t>();
  req.args.expect_end();
  Handle module = 0;
  bool missing = false;
  if (int32_t e = load_module(s, req, hash, with_image, &module, &missing)) return e;
  out.put<uint8_t>(missing);
  if (missing) return cudaSuccess;
  out.put<uint64_t>(module);
  return cudaSuccess;
}

int32_t module_get_function(SessionContext& s, Request& req, proto::Writer& out) {
  auto module = req.args.get<uint64_t>();
  std::string name = req.args.get_string();
  req.args.expect_end();
  if (!s.modules.contains(module)) return cudaErrorInvalidResourceHandle;
  return put_function(s, module, name, out);
}

// A module's variable by name (module handle, name -> address, size,
// managed), as `lookup` finds it.
template <typename Lookup>
int32_t module_variable(SessionContext& s, Request& req, proto::Writer& out, Lookup lookup) {
  auto module = req.args.get<uint64_t>();
  std::string name = req.args.get_string();
  req.args.expect_end();
  if (!s.modules.contains(module)) return cudaErrorInvalidResourceHandle;
  DevPtr ptr = 0;
  size_t size = 0;
  if (int32_t e = lookup(module, name, &ptr, &size)) return e;
  put_variable(s, module, name, ptr, size, out);
  return cudaSuccess;
}

// The size comes from the driver (the host test backend knows none: 0).
int32_t module_get_global(SessionContext& s, Request& req, proto::Writer& out) {
  return module_variable(s, req, out, [&](uint64_t module, const std::string& name, DevPtr* ptr, size_t* size) {
    return s.backend().module_get_global(module, name, 0, ptr, size);
  });
}

// The module's managed variable of that name (cudaErrorSymbolNotFound for
// any other): the client keeps it host-accessible, and copies name it.
int32_t module_get_managed(SessionContext& s, Request& req, proto::Writer& out) {
  return module_variable(s, req, out, [&](uint64_t module, const std::string& name, DevPtr* ptr, size_t* size) {
    return s.backend().module_get_managed(module, name, ptr, size);
  });
}

// Every kernel of a module, each described as module_get_function does
// (cuLibraryGetKernelCount, cuLibraryEnumerateKernels).
int32_t module_enumerate_functions(SessionContext& s, Request& req, proto::Writer& out) {
  auto module = req.args.get<uint64_t>();
  req.args.expect_end();
  if (!s.modules.contains(module)) return cudaErrorInvalidResourceHandle;
  std::vector<std::string> names;
  if (int32_t e = s.backend().module_function_names(module, &names)) return e;
  out.put<uint32_t>(names.size());
  for (const auto& name : names) {
    out.put_string(name);
    if (int32_t e = put_function(s, module, name, out)) return e;
  }
  return cudaSuccess;
}

}  // namespace

void register_driver_module_handlers(Dispatcher& d) {
  d.add(proto::kOpModuleLoadImage, module_load_image);
  d.add(proto::kOpModuleGetFunction, module_get_function);
  d.add(proto::kOpModuleGetGlobal, module_get_global);
  d.add(proto::kOpModuleGetManaged, module_get_managed);
  d.add(proto::kOpModuleEnumerateFunctions, module_enumerate_functions);
}

}  // namespace rgpu::server
