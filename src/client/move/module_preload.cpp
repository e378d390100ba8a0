#include "client/move/module_preload.hpp"

#include <sys/uio.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "client/core/module_registry.hpp"
#include "client/core/session.hpp"
#include "client/cuda/module_handles.hpp"
#include "common/log.hpp"
#include "fatbin/fatbin_hash.hpp"
#include "protocol/codec.hpp"
#include "protocol/ops.hpp"

namespace rgpu::client {
namespace {

// By hash first (the target may have it cached), with the image if it asks.
bool preload(Session& to, int gpu, const void* image, size_t size, const std::vector<std::string>& kernels,
             size_t* sent) {
  const std::string hash = fatbin::fatbin_hash({static_cast<const std::byte*>(image), size});
  for (uint8_t with_image = 0; with_image < 2; ++with_image) {
    proto::Writer w;
    w.put_string(hash).put(with_image).put<uint32_t>(static_cast<uint32_t>(kernels.size()));
    for (const auto& k : kernels) w.put_string(k);
    iovec payload{const_cast<void*>(image), size};
    std::vector<uint8_t> reply;
    if (cudaError_t e = to.call(proto::kOpModulePreload, static_cast<uint16_t>(gpu), w.bytes(),
                                with_image ? std::span<const iovec>(&payload, 1) : std::span<const iovec>(), reply)) {
      RGPU_LOG(info, "moving session: a module was not loaded ahead on the target (%s); it loads at its next use",
               cudaGetErrorName(e));
      return false;
    }
    if (proto::Reader(reply).get<uint8_t>() == 0) {
      if (with_image) *sent += size;
      return true;
    }
  }
  return false;
}

}  // namespace

PreloadOutcome preload_modules(Session& to, int gpu, int device) {
  const auto start = std::chrono::steady_clock::now();
  PreloadOutcome outcome;
  for (const auto& m : ModuleRegistry::get().loaded_images(device))
    outcome.modules += preload(to, gpu, m.image, m.size, m.kernels, &outcome.bytes_sent);
  for (const auto& m : DriverHandles::get().images_on(device))
    outcome.modules += preload(to, gpu, m.image->data(), m.image->size(), m.functions, &outcome.bytes_sent);
  outcome.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return outcome;
}

}  // namespace rgpu::client
