// Tables NVIDIA's driver has and rgpu hands out with every slot logging and
// failing (CUDA_ERROR_NOT_SUPPORTED): what their functions do is not known,
// or none was seen called by NVIDIA's runtime, its libraries or the
// frameworks (tools/driver-trace.sh). Two slots seen called get functions
// that fail with defined outputs or none. Sizes are NVIDIA's driver's (CUDA
// 13.0).
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

namespace {

// Slot 4 makes two objects (seen: two heap pointers written through its
// first two arguments) that slot 13 then works on; what they are is not
// known. rgpu refuses, and leaves both outputs null, so that a caller that
// goes on regardless frees nothing it was not given.
CUresult CUDAAPI make_objects(void** first, void** second) {
  if (first) *first = nullptr;
  if (second) *second = nullptr;
  return unsupported_slot(ExportTableId::library_support, 4);
}

}  // namespace

// Asked for once by one of PyTorch's libraries (slots 4 and 13 called).
const void* library_support_table() {
  static const ExportTable<ExportTableId::library_support, 17> table(true, {{4, slot_fn(make_objects)}});
  return table.data();
}

// Asked for by XLA (JAX) right after cuInit, and by PyTorch's libraries.
const void* compiler_support_table() {
  static const ExportTable<ExportTableId::compiler_support, 34> table(true, {});
  return table.data();
}

}  // namespace rgpu::client
