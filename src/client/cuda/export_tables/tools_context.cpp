// The tools context table (CU_ETID_ToolsContext): facts about a context for
// NVIDIA's libraries and tools. Slot 4 is the context's unique id, as
// cuCtxGetId gives it (seen on the H100: 1 for the primary context, which
// cuBLAS asks on every call). Slots 51 and 39 are what cuBLAS asks CuPy's
// context for: an object of the context's (seen: a zeroed block whose first
// word is 1 and third the context) and a value of that object's (seen: 7 for
// query 6; other queries get 0, as the LUPINE project answers all of them).
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>

#include "client/cuda/export_tables/export_tables.hpp"

namespace rgpu::client {

namespace {

CUresult CUDAAPI context_id(CUcontext ctx, unsigned long long* id) {
  if (!id) return CUDA_ERROR_INVALID_VALUE;
  return cuCtxGetId(ctx, id);
}

// Larger than any use seen: what the libraries keep in it is not known.
struct ContextObject {
  uint64_t words[512];
};

CUresult CUDAAPI context_object(CUcontext ctx, uint64_t, ContextObject** out) {
  if (!out) return CUDA_ERROR_INVALID_VALUE;
  if (!ctx && cuCtxGetCurrent(&ctx)) return CUDA_ERROR_INVALID_CONTEXT;
  // Never destroyed: libraries may ask from their exit handlers.
  static auto* mutex = new std::mutex;
  static auto* objects = new std::map<CUcontext, std::unique_ptr<ContextObject>>;
  std::lock_guard lock(*mutex);
  auto& o = (*objects)[ctx];
  if (!o) {
    o = std::make_unique<ContextObject>();
    o->words[0] = 1;
    o->words[2] = reinterpret_cast<uint64_t>(ctx);
  }
  *out = o.get();
  return CUDA_SUCCESS;
}

CUresult CUDAAPI context_object_value(CUcontext, const ContextObject* object, uint64_t* value, uint64_t query) {
  if (!object || !value) return CUDA_ERROR_INVALID_VALUE;
  *value = query == 6 ? 7 : 0;
  return CUDA_SUCCESS;
}

}  // namespace

const void* tools_context_table() {
  static const ExportTable<ExportTableId::tools_context, 93> table(
      true, {{4, slot_fn(context_id)}, {39, slot_fn(context_object_value)}, {51, slot_fn(context_object)}});
  return table.data();
}

}  // namespace rgpu::client
