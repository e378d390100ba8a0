#include <string_view>

#include "fatbin/fatbin_container.hpp"
#include "fatbin/kernel_params.hpp"
#include "fuzz_targets.hpp"

namespace rgpu::fuzz {

int fatbin(const uint8_t* data, size_t size) {
  std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  try {
    if (size >= 16) fatbin::fatbin_total_size(data);
  } catch (const fatbin::FormatError&) {
  }
  try {
    fatbin::FatBinary fb = fatbin::parse_fatbin(bytes);
    fatbin::kernels_in(fb);
    fatbin::variables_in(fb);
  } catch (const fatbin::FormatError&) {
  }
  // The image parsers on their own too, so an input need not be a whole
  // container to reach them.
  try {
    fatbin::kernels_in_cubin(bytes);
    fatbin::variables_in_cubin(bytes);
  } catch (const fatbin::FormatError&) {
  }
  try {
    fatbin::kernels_in_ptx({reinterpret_cast<const char*>(data), size});
  } catch (const fatbin::FormatError&) {
  }
  return 0;
}

}  // namespace rgpu::fuzz
