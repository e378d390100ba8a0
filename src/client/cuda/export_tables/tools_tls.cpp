// The tools TLS table: the thread's state as NVIDIA's profiling tools (CUPTI)
// see it. Slot 2 hands out the calling thread's current context (seen on the
// H100: the same handle the tools context table is then asked about); the
// math libraries call it on every operation.
#include "client/cuda/export_tables/export_tables.hpp"

namespace rgpu::client {

namespace {

CUresult CUDAAPI current_context(CUcontext* ctx) {
  if (!ctx) return CUDA_ERROR_INVALID_VALUE;
  return cuCtxGetCurrent(ctx);
}

}  // namespace

const void* tools_tls_table() {
  static const ExportTable<ExportTableId::tools_tls, 3> table(true, {{2, slot_fn(current_context)}});
  return table.data();
}

}  // namespace rgpu::client
