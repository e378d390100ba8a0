// Tables NVIDIA's driver has and rgpu hands out with every slot logging and
// failing (CUDA_ERROR_NOT_SUPPORTED): none of their functions was seen called
// by NVIDIA's runtime, its libraries or the frameworks (tools/driver-trace.sh),
// or what they do is unknown. Their sizes are NVIDIA's driver's (CUDA 13.0).
#include "client/cuda/export_tables/export_tables.hpp"

namespace rgpu::client {

// Device-side heap records (device malloc bookkeeping).
const void* heap_access_table() {
  static const ExportTable<ExportTableId::heap_access, 3> table(true, {});
  return table.data();
}

// Device attributes beyond the public enumeration.
const void* device_extended_rt_table() {
  static const ExportTable<ExportTableId::device_extended_rt, 26> table(true, {});
  return table.data();
}

// Asked for by NVIDIA's runtime before cuInit.
const void* runtime_startup_table() {
  static const ExportTable<ExportTableId::runtime_startup, 3> table(true, {});
  return table.data();
}

// Asked for by XLA (JAX) right after cuInit.
const void* compiler_support_table() {
  static const ExportTable<ExportTableId::compiler_support, 34> table(true, {});
  return table.data();
}

}  // namespace rgpu::client
