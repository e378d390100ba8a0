// The tools TLS table: thread-local state NVIDIA's profiling tools (CUPTI)
// share with the runtime. Asked for, never seen called: each slot logs.
#include "client/cuda/export_tables/export_tables.hpp"

namespace rgpu::client {

const void* tools_tls_table() {
  static const ExportTable<ExportTableId::tools_tls, 3> table(true, {});
  return table.data();
}

}  // namespace rgpu::client
