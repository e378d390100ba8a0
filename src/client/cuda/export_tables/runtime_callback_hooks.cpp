// The tools runtime callback hooks table: two buffers in which the runtime
// and profiling tools (CUPTI) exchange callback state. With no tool
// attached, what matters is that each is there, zeroed, of the size NVIDIA's
// driver reports (1024 and 14, seen on the H100).
#include <cstddef>
#include <cstdint>

#include "client/cuda/export_tables/export_tables.hpp"

namespace rgpu::client {

namespace {

// Entries of eight bytes each, whatever their size is: room to spare.
uint64_t g_hooks[1024];
uint64_t g_tool_flags[14];

void CUDAAPI hooks_buffer(void** buffer, size_t* size) {
  if (buffer) *buffer = g_hooks;
  if (size) *size = sizeof g_hooks / sizeof g_hooks[0];
}

void CUDAAPI tool_flags_buffer(void** buffer, size_t* size) {
  if (buffer) *buffer = g_tool_flags;
  if (size) *size = sizeof g_tool_flags / sizeof g_tool_flags[0];
}

}  // namespace

const void* runtime_callback_hooks_table() {
  static const ExportTable<ExportTableId::runtime_callback_hooks, 7> table(
      true, {{2, slot_fn(hooks_buffer)}, {6, slot_fn(tool_flags_buffer)}});
  return table.data();
}

}  // namespace rgpu::client
