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

namespace {

// Slot 1 reports a runtime error as a message (reported elsewhere to be
// cuDNN's path for launch errors): nothing to do with it here, and its
// arguments are not relied on.
void CUDAAPI runtime_message() {}

}  // namespace

// Asked for by NVIDIA's runtime before cuInit.
const void* runtime_startup_table() {
  static const ExportTable<ExportTableId::runtime_startup, 3> table(true, {{1, slot_fn(runtime_message)}});
  return table.data();
}

// Asked for once by one of PyTorch's libraries (slots 4 and 13 called).
const void* library_support_table() {
  static const ExportTable<ExportTableId::library_support, 17> table(true, {});
  return table.data();
}

// Asked for by XLA (JAX) right after cuInit, and by PyTorch's libraries.
const void* compiler_support_table() {
  static const ExportTable<ExportTableId::compiler_support, 34> table(true, {});
  return table.data();
}

}  // namespace rgpu::client
