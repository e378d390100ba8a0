// The context-create bypass table: cuCtxCreate without the checks the public
// call makes. rgpu's contexts are the devices' primary ones either way.
#include "client/cuda/export_tables/export_tables.hpp"

namespace rgpu::client {

namespace {

CUresult CUDAAPI create(CUcontext* ctx, unsigned flags, CUdevice device) { return cuCtxCreate_v2(ctx, flags, device); }

}  // namespace

const void* ctx_create_bypass_table() {
  static const ExportTable<ExportTableId::ctx_create_bypass, 2> table(true, {{1, slot_fn(create)}});
  return table.data();
}

}  // namespace rgpu::client
