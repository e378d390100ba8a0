// TEST BACKEND part: see host_tensor_maps.hpp. The checks follow cuda.h's
// documentation of cuTensorMapEncodeTiled, cuTensorMapEncodeIm2col and
// cuTensorMapEncodeIm2colWide.
#include "server/backend/host/host_tensor_maps.hpp"

#include <cstring>

namespace rgpu::server::host_tensor_maps {
namespace {

constexpr int32_t kInvalid = CUDA_ERROR_INVALID_VALUE;

// The descriptor's words: what this backend records of a tensor.
enum Word {
  kAddress = 0,
  kShape = 1,          // kind, data type, rank, interleave, swizzle, L2 promotion, fill, wide mode
  kDims = 2,           // 5 words
  kStrides = 7,        // 4 words
  kBox = 11,           // boxDim, 12 bits each
  kElementStrides = 12,  // 4 bits each
  kPixels = 13,        // channels per pixel, pixels per column
  kLower = 14,         // pixel box corners, 16 bits each
  kUpper = 15,
};
enum Kind : uint64_t { kTiled = 1, kIm2col = 2, kIm2colWide = 3 };

bool packed_16b(proto::EnumNumber<CUtensorMapDataType> t) {
  return t == CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B || t == CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B;
}

// Bytes of one element; the packed types count 16 values as 8 (or 16) bytes,
// so their element is a fraction of a byte and boxes of them are checked in
// units of 16 values.
bool element_bits(proto::EnumNumber<CUtensorMapDataType> t, unsigned* bits) {
  switch (t) {
    case CU_TENSOR_MAP_DATA_TYPE_UINT8: *bits = 8; return true;
    case CU_TENSOR_MAP_DATA_TYPE_UINT16:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT16:
    case CU_TENSOR_MAP_DATA_TYPE_BFLOAT16: *bits = 16; return true;
    case CU_TENSOR_MAP_DATA_TYPE_UINT32:
    case CU_TENSOR_MAP_DATA_TYPE_INT32:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT32:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ:
    case CU_TENSOR_MAP_DATA_TYPE_TFLOAT32:
    case CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ: *bits = 32; return true;
    case CU_TENSOR_MAP_DATA_TYPE_UINT64:
    case CU_TENSOR_MAP_DATA_TYPE_INT64:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT64: *bits = 64; return true;
    case CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B: *bits = 4; return true;
    case CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B: *bits = 8; return true;   // 16 values in 16 bytes
    case CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B: *bits = 8; return true;
    default: return false;
  }
}

// FLOAT16 .. TFLOAT32_FTZ: the floating-point types (packed ones excluded).
bool floating(proto::EnumNumber<CUtensorMapDataType> t) {
  return t >= CU_TENSOR_MAP_DATA_TYPE_FLOAT16 && t <= CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ;
}

unsigned swizzle_bytes(proto::EnumNumber<CUtensorMapSwizzle> s) {
  switch (s) {
    case CU_TENSOR_MAP_SWIZZLE_NONE: return 0;
    case CU_TENSOR_MAP_SWIZZLE_32B: return 32;
    case CU_TENSOR_MAP_SWIZZLE_64B: return 64;
    default: return 128;
  }
}

bool address_ok(const void* address, proto::EnumNumber<CUtensorMapInterleave> interleave,
                proto::EnumNumber<CUtensorMapDataType> type) {
  auto a = reinterpret_cast<uintptr_t>(address);
  unsigned align = interleave == CU_TENSOR_MAP_INTERLEAVE_32B || packed_16b(type) ? 32 : 16;
  return a != 0 && a % align == 0;
}

// The requirements every kind shares; `inner_bytes` is the bounding box's
// inner dimension in bytes, which a swizzle pattern must hold.
int32_t check_common(const Tensor& t, unsigned min_rank, uint64_t inner_bytes) {
  unsigned bits;
  if (!element_bits(t.type, &bits)) return kInvalid;
  if (t.rank < min_rank || t.rank > 5) return kInvalid;
  // NVIDIA's driver refuses a null array even where it holds no element
  // (globalStrides at rank 1; seen with cuDNN's kernels on the H200).
  if (!t.dims || !t.strides || !t.element_strides) return kInvalid;
  if (t.interleave > CU_TENSOR_MAP_INTERLEAVE_32B || t.swizzle > CU_TENSOR_MAP_SWIZZLE_128B_ATOM_64B ||
      t.l2 > CU_TENSOR_MAP_L2_PROMOTION_L2_256B || t.oob > CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA)
    return kInvalid;
  if (t.interleave != CU_TENSOR_MAP_INTERLEAVE_NONE && t.rank < 3) return kInvalid;
  if (!address_ok(t.address, t.interleave, t.type)) return kInvalid;
  for (unsigned i = 0; i < t.rank; ++i)
    if (t.dims[i] == 0 || t.dims[i] > (uint64_t{1} << 32)) return kInvalid;
  if (packed_16b(t.type) && t.dims[0] % 128 != 0) return kInvalid;
  if (t.type == CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B && t.dims[0] % 2 != 0) return kInvalid;
  unsigned stride_align = t.interleave == CU_TENSOR_MAP_INTERLEAVE_32B || packed_16b(t.type) ? 32 : 16;
  for (unsigned i = 0; i + 1 < t.rank; ++i)
    if (t.strides[i] % stride_align != 0 || t.strides[i] >= (uint64_t{1} << 40)) return kInvalid;
  for (unsigned i = 0; i < t.rank; ++i)
    if (t.element_strides[i] == 0 || t.element_strides[i] > 8) return kInvalid;
  if (t.interleave == CU_TENSOR_MAP_INTERLEAVE_32B && t.swizzle != CU_TENSOR_MAP_SWIZZLE_32B) return kInvalid;
  if (t.interleave == CU_TENSOR_MAP_INTERLEAVE_NONE && t.swizzle != CU_TENSOR_MAP_SWIZZLE_NONE &&
      inner_bytes > swizzle_bytes(t.swizzle))
    return kInvalid;
  if (t.type == CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B && t.interleave != CU_TENSOR_MAP_INTERLEAVE_NONE)
    return kInvalid;
  if (t.oob == CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA && !floating(t.type)) return kInvalid;
  return CUDA_SUCCESS;
}

uint64_t inner_bytes(const Tensor& t, uint64_t elements) {
  unsigned bits = 8;
  element_bits(t.type, &bits);
  return elements * bits / 8;
}

void record(CUtensorMap* map, const Tensor& t, Kind kind, uint64_t mode) {
  std::memset(map, 0, sizeof *map);
  uint64_t* w = map->opaque;
  w[kAddress] = reinterpret_cast<uintptr_t>(t.address);
  w[kShape] = kind | uint64_t(t.type) << 8 | uint64_t(t.rank) << 16 | uint64_t(t.interleave) << 24 |
              uint64_t(t.swizzle) << 32 | uint64_t(t.l2) << 40 | uint64_t(t.oob) << 48 | mode << 56;
  for (unsigned i = 0; i < t.rank; ++i) {
    w[kDims + i] = t.dims[i];
    w[kElementStrides] |= uint64_t(t.element_strides[i]) << (4 * i);
  }
  for (unsigned i = 0; i + 1 < t.rank; ++i) w[kStrides + i] = t.strides[i];
}

uint64_t corners(const int* c, unsigned n) {
  uint64_t v = 0;
  for (unsigned i = 0; i < n; ++i) v |= uint64_t(uint16_t(c[i])) << (16 * i);
  return v;
}

}  // namespace

int32_t encode_tiled(CUtensorMap* map, const Tensor& t, const cuuint32_t* box) {
  if (t.rank == 0 || t.rank > 5 || !box) return kInvalid;
  for (unsigned i = 0; i < t.rank; ++i)
    if (box[i] == 0 || box[i] > 256) return kInvalid;
  if (t.interleave == CU_TENSOR_MAP_INTERLEAVE_NONE && inner_bytes(t, box[0]) % 16 != 0) return kInvalid;
  if (packed_16b(t.type) && box[0] != 128) return kInvalid;
  if (int32_t e = check_common(t, 1, inner_bytes(t, box[0]))) return e;
  record(map, t, kTiled, 0);
  for (unsigned i = 0; i < t.rank; ++i) map->opaque[kBox] |= uint64_t(box[i]) << (12 * i);
  return CUDA_SUCCESS;
}

int32_t encode_im2col(CUtensorMap* map, const Tensor& t, const int* lower, const int* upper,
                      cuuint32_t channels, cuuint32_t pixels) {
  if (t.rank < 3 || t.rank > 5) return kInvalid;
  // Offsets of {D, H, W} (as many as the rank has beyond N and C), narrower as there are more.
  unsigned n = t.rank - 2;
  int limit = n == 1 ? 32768 : n == 2 ? 128 : 16;
  for (unsigned i = 0; i < n; ++i) {
    if (lower[i] < -limit || lower[i] >= limit || upper[i] < -limit || upper[i] >= limit) return kInvalid;
  }
  if (channels == 0 || channels > 256 || pixels == 0 || pixels > 1024) return kInvalid;
  if (packed_16b(t.type) && channels != 128) return kInvalid;
  if (int32_t e = check_common(t, 3, inner_bytes(t, channels))) return e;
  record(map, t, kIm2col, 0);
  map->opaque[kPixels] = channels | uint64_t(pixels) << 16;
  map->opaque[kLower] = corners(lower, n);
  map->opaque[kUpper] = corners(upper, n);
  return CUDA_SUCCESS;
}

int32_t encode_im2col_wide(CUtensorMap* map, const Tensor& t, int lower_w, int upper_w, cuuint32_t channels,
                           cuuint32_t pixels, proto::EnumNumber<CUtensorMapIm2ColWideMode> mode) {
  if (t.rank < 3 || t.rank > 5) return kInvalid;
  if (mode != CU_TENSOR_MAP_IM2COL_WIDE_MODE_W && mode != CU_TENSOR_MAP_IM2COL_WIDE_MODE_W128) return kInvalid;
  if (channels == 0 || channels > 256) return kInvalid;
  if (mode == CU_TENSOR_MAP_IM2COL_WIDE_MODE_W && (pixels == 0 || pixels > 1024)) return kInvalid;
  if (packed_16b(t.type) && channels != 128) return kInvalid;
  // The wide modes swizzle 64 or 128 bytes (or not at all).
  if (t.swizzle != CU_TENSOR_MAP_SWIZZLE_NONE && t.swizzle != CU_TENSOR_MAP_SWIZZLE_64B &&
      t.swizzle != CU_TENSOR_MAP_SWIZZLE_128B && t.swizzle != CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B &&
      t.swizzle != CU_TENSOR_MAP_SWIZZLE_128B_ATOM_64B)
    return kInvalid;
  if (int32_t e = check_common(t, 3, inner_bytes(t, channels))) return e;
  record(map, t, kIm2colWide, mode);
  map->opaque[kPixels] = channels | uint64_t(pixels) << 16;
  map->opaque[kLower] = uint16_t(lower_w);
  map->opaque[kUpper] = uint16_t(upper_w);
  return CUDA_SUCCESS;
}

int32_t replace_address(CUtensorMap* map, void* address) {
  uint64_t shape = map->opaque[kShape];
  uint64_t kind = shape & 0xff;
  // Only a descriptor this backend encoded has a meaning here.
  if (kind < kTiled || kind > kIm2colWide) return kInvalid;
  proto::EnumNumber<CUtensorMapInterleave> interleave = (shape >> 24) & 0xff;
  proto::EnumNumber<CUtensorMapDataType> type = (shape >> 8) & 0xff;
  if (!address_ok(address, interleave, type)) return kInvalid;
  map->opaque[kAddress] = reinterpret_cast<uintptr_t>(address);
  return CUDA_SUCCESS;
}

}  // namespace rgpu::server::host_tensor_maps
