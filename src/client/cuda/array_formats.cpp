#include "client/cuda/array_formats.hpp"

#include "protocol/channel_format.hpp"

namespace rgpu::client {
namespace {

struct Format {
  CUarray_format format;
  cudaChannelFormatKind kind;
  int bits;
};

constexpr Format kFormats[] = {
    {CU_AD_FORMAT_UNSIGNED_INT8, cudaChannelFormatKindUnsigned, 8},
    {CU_AD_FORMAT_UNSIGNED_INT16, cudaChannelFormatKindUnsigned, 16},
    {CU_AD_FORMAT_UNSIGNED_INT32, cudaChannelFormatKindUnsigned, 32},
    {CU_AD_FORMAT_SIGNED_INT8, cudaChannelFormatKindSigned, 8},
    {CU_AD_FORMAT_SIGNED_INT16, cudaChannelFormatKindSigned, 16},
    {CU_AD_FORMAT_SIGNED_INT32, cudaChannelFormatKindSigned, 32},
    {CU_AD_FORMAT_HALF, cudaChannelFormatKindFloat, 16},
    {CU_AD_FORMAT_FLOAT, cudaChannelFormatKindFloat, 32},
};

}  // namespace

bool to_channel_desc(CUarray_format format, unsigned channels, cudaChannelFormatDesc* out) {
  if (channels != 1 && channels != 2 && channels != 4) return false;
  for (const Format& f : kFormats)
    if (f.format == format) {
      int b = f.bits;
      *out = {b, channels > 1 ? b : 0, channels > 2 ? b : 0, channels > 2 ? b : 0, f.kind};
      return proto::channel_element_size(*out) != 0;
    }
  return false;
}

void to_array_format(const cudaChannelFormatDesc& desc, CUarray_format* format, unsigned* channels) {
  *channels = (desc.x > 0) + (desc.y > 0) + (desc.z > 0) + (desc.w > 0);
  for (const Format& f : kFormats)
    if (f.kind == desc.f && f.bits == desc.x) *format = f.format;
}

}  // namespace rgpu::client
