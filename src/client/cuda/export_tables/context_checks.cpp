// The context checks table: flags of a context that NVIDIA's runtime looks
// at; on every context NVIDIA's driver was seen to answer 0.
#include <cstdint>

#include "client/cuda/export_tables/export_tables.hpp"

namespace rgpu::client {

namespace {

CUresult CUDAAPI context_flags(CUcontext, uint32_t* flags, const void** extra) {
  if (flags) *flags = 0;
  if (extra) *extra = nullptr;
  return CUDA_SUCCESS;
}

uint32_t CUDAAPI no_pending_checks() { return 0; }

}  // namespace

const void* context_checks_table() {
  static const ExportTable<ExportTableId::context_checks, 15> table(
      true, {{2, slot_fn(context_flags)}, {3, slot_fn(no_pending_checks)}});
  return table.data();
}

}  // namespace rgpu::client
