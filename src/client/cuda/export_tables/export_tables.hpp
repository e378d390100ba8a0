// NVIDIA's private driver tables (cuGetExportTable): what NVIDIA's own runtime
// (static in nvcc's default builds, inside cuBLAS, cuFFT, cuDNN..., CuPy,
// PyTorch's libcudart) asks the driver for besides the documented API. Each
// table is an array of words; most begin with their size in bytes. rgpu
// answers each on its own state; a slot whose use is unknown is a function
// that logs the table and slot and fails, so an unexpected call is seen,
// never silently wrong. Table names follow ZLUDA's, where it has one.
#pragma once
#include "client/cuda/cuda_api.hpp"

#include <array>
#include <cstddef>
#include <initializer_list>
#include <utility>

namespace rgpu::client {

enum class ExportTableId {
  cudart_interface,
  tools_tls,
  runtime_callback_hooks,
  context_local_storage,
  ctx_create_bypass,
  heap_access,
  device_extended_rt,
  integrity_check,
  context_checks,
  runtime_startup,   // {f8cff951-...}: asked for first by NVIDIA's runtime
  compiler_support,  // {69a28e9f-...}: asked for by XLA and PyTorch's libraries
  tools_context,     // {21318c60-...}: CU_ETID_ToolsContext
  tools_module,      // {6e163fbe-...}: CU_ETID_ToolsModule
  library_support,   // {1734dc26-...}: asked for by PyTorch's libraries
  front_end_bridge,  // rgpu's own: its library front-ends (libnccl.so.2)
};

const char* export_table_name(ExportTableId id);

// Logs a call to a slot rgpu does not implement; CUDA_ERROR_NOT_SUPPORTED.
CUresult unsupported_slot(ExportTableId table, int slot);

template <ExportTableId Table, int Slot>
CUresult CUDAAPI unsupported_slot_entry() {
  return unsupported_slot(Table, Slot);
}

// A table of N words: word 0 its size in bytes when `sized`, the given
// functions in their slots, every other slot an unsupported_slot_entry.
template <ExportTableId Table, size_t N>
class ExportTable {
 public:
  using Slot = std::pair<int, const void*>;
  ExportTable(bool sized, std::initializer_list<Slot> slots)
      : words_(defaults(std::make_index_sequence<N>())) {
    if (sized) words_[0] = reinterpret_cast<const void*>(N * sizeof(void*));
    for (const Slot& s : slots) words_[s.first] = s.second;
  }
  const void* data() const { return words_.data(); }

 private:
  template <size_t... I>
  static std::array<const void*, N> defaults(std::index_sequence<I...>) {
    return {reinterpret_cast<const void*>(&unsupported_slot_entry<Table, static_cast<int>(I)>)...};
  }
  std::array<const void*, N> words_;
};

template <typename F>
const void* slot_fn(F* f) {
  return reinterpret_cast<const void*>(f);
}

// Each table, made at its first use.
const void* cudart_interface_table();
const void* tools_tls_table();
const void* runtime_callback_hooks_table();
const void* context_local_storage_table();
const void* ctx_create_bypass_table();
const void* heap_access_table();
const void* device_extended_rt_table();
const void* integrity_check_table();
const void* context_checks_table();
const void* runtime_startup_table();
const void* compiler_support_table();
const void* tools_context_table();
const void* tools_module_table();
const void* library_support_table();
// rgpu's own: for its library front-ends (client/core/front_end_bridge.hpp).
const void* front_end_bridge_table();

// Runs and forgets the destructors NVIDIA's runtime registered with its
// context-local storage for `ctx`: the context is being reset.
void release_context_storage(CUcontext ctx);

}  // namespace rgpu::client
