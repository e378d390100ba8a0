// The integrity check table: NVIDIA's runtime asks the driver to prove it is
// the driver the runtime expects (integrity_hash.hpp) and refuses to run on
// any other. rgpu answers from its own view of the devices, which is what
// the runtime itself sees through rgpu.
#include "client/cuda/export_tables/export_tables.hpp"
#include "client/cuda/export_tables/integrity_hash.hpp"

namespace rgpu::client {

namespace {

CUresult CUDAAPI check(uint32_t version, uint64_t unix_seconds, uint64_t* result) {
  static constexpr DriverQueries kRgpu{cuDriverGetVersion, cuDeviceGetCount, cuDeviceGetUuid_v2, cuDeviceGetAttribute};
  return integrity_answer(kRgpu, version, unix_seconds, cudart_interface_table(), integrity_check_table(),
                          reinterpret_cast<const void*>(&check), result);
}

}  // namespace

const void* integrity_check_table() {
  static const ExportTable<ExportTableId::integrity_check, 3> table(true, {{1, slot_fn(check)}});
  return table.data();
}

}  // namespace rgpu::client
