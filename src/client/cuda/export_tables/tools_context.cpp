// The tools context table (CU_ETID_ToolsContext): facts about a context for
// NVIDIA's libraries and tools. Slot 4 is the context's unique id, as
// cuCtxGetId gives it (seen on the H100: 1 for the primary context, which
// cuBLAS asks on every call).
#include <cstdint>

#include "client/cuda/export_tables/export_tables.hpp"

namespace rgpu::client {

namespace {

CUresult CUDAAPI context_id(CUcontext ctx, unsigned long long* id) {
  if (!id) return CUDA_ERROR_INVALID_VALUE;
  return cuCtxGetId(ctx, id);
}

}  // namespace

const void* tools_context_table() {
  static const ExportTable<ExportTableId::tools_context, 93> table(true, {{4, slot_fn(context_id)}});
  return table.data();
}

}  // namespace rgpu::client
