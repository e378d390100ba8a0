// Kernel names and parameter layouts read from a fat binary: from cubin
// metadata (.nv.info.<kernel>, EIATTR_KPARAM_INFO), else from PTX .entry
// signatures. The GPU backend asks the driver instead; the host test backend
// uses this to validate launches without a GPU.
#pragma once
#include <cstdint>
#include <map>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fatbin/fatbin_container.hpp"

namespace rgpu::fatbin {

struct KernelParam {
  uint32_t offset;  // in the kernel's parameter buffer
  uint32_t size;
  bool operator==(const KernelParam&) const = default;
};

struct KernelInfo {
  std::string name;                 // mangled, as the host code registers it
  std::vector<KernelParam> params;  // in declaration order
};

// Each kernel once, the cubin's layout preferred over the PTX one; throws
// FormatError for malformed images.
std::vector<KernelInfo> kernels_in(const FatBinary& fb);

std::vector<KernelInfo> kernels_in_cubin(std::span<const std::byte> elf);
// The sizes of the variables (__device__, __constant__) the cubins define,
// by name: what the driver reports for them (cuModuleGetGlobal).
std::map<std::string, size_t> variables_in(const FatBinary& fb);
std::map<std::string, size_t> variables_in_cubin(std::span<const std::byte> elf);
// Which of them are managed (__managed__, .attribute(.managed)): nvcc marks
// their symbols with STO_CUDA_MANAGED in st_other.
std::set<std::string> managed_variables_in(const FatBinary& fb);
std::set<std::string> managed_variables_in_cubin(std::span<const std::byte> elf);
std::vector<KernelInfo> kernels_in_ptx(std::string_view ptx);

}  // namespace rgpu::fatbin
