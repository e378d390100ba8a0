// The tools module table (CU_ETID_ToolsModule): module introspection for
// NVIDIA's libraries' kernel registries.
#include <cstdint>
#include <vector>

#include "client/cuda/export_tables/export_tables.hpp"

namespace rgpu::client {

namespace {

using FunctionVisitor = void(CUDAAPI*)(void* argument, CUfunction function, uint64_t owner);

// Slot 7 calls `visit` with each kernel of a module: cuFFT learns the
// kernels of the modules it loads so (seen on the H100: the function handles
// it then asks attributes of and launches appeared nowhere else), and NVIDIA's
// driver answered 1 for cuFFT's one-kernel modules. The visitor's arguments
// follow the LUPINE project's reading.
uint64_t CUDAAPI visit_functions(CUcontext, CUmodule module, FunctionVisitor visit, void* argument) {
  unsigned count = 0;
  if (!module || !visit || cuModuleGetFunctionCount(&count, module) != CUDA_SUCCESS) return 0;
  std::vector<CUfunction> functions(count);
  if (count && cuModuleEnumerateFunctions(functions.data(), count, module) != CUDA_SUCCESS) return 0;
  for (CUfunction f : functions) visit(argument, f, reinterpret_cast<uint64_t>(module));
  return count;
}

}  // namespace

const void* tools_module_table() {
  static const ExportTable<ExportTableId::tools_module, 99> table(true, {{7, slot_fn(visit_functions)}});
  return table.data();
}

}  // namespace rgpu::client
