// What the driver does with a fixed address (issue 25, docs/migration.md):
// can a fresh process, as a migration's target worker would be, map device
// memory at exactly the addresses another process's cudaMalloc returned?
// cuMemAddressReserve takes the address only as a hint.
//   address_probe source FILE [GPU]   cudaMalloc's a mix of sizes (PyTorch
//       blocks of 2 and 20 MB, small buffers that share a page, one of 1 GB),
//       fills each with a pattern, writes "address size" lines to FILE, then
//       holds them until stdin closes (so both processes live at once)
//   address_probe target FILE [GPU] [ranges|span] [FIRST]   in a new context: the
//       pages that hold each allocation, merged, reserved at their own
//       address (hint) and mapped; "ranges" reserves each merged range
//       apart, "span" one range from the lowest to the highest; says how
//       many hints were honoured, then the same with a range it already
//       holds (must not be granted twice), and a kernel writes and checks
//       every allocation at its old address; FIRST (malloc or hostalloc)
//       makes 2 MB of device memory or 64 MB of page-locked memory before
// Prints PROBE lines and RESULT PASS when every address was kept.
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#define CHECK_CU(call)                                                                      \
  do {                                                                                      \
    CUresult r_ = (call);                                                                   \
    if (r_ != CUDA_SUCCESS) {                                                               \
      const char* name_ = nullptr;                                                          \
      cuGetErrorName(r_, &name_);                                                           \
      std::printf("RESULT FAIL: %s: %s (line %d)\n", #call, name_ ? name_ : "?", __LINE__); \
      std::exit(1);                                                                         \
    }                                                                                       \
  } while (0)

__global__ void fill(uint32_t* p, size_t n, uint32_t seed) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += size_t{gridDim.x} * blockDim.x)
    p[i] = seed ^ static_cast<uint32_t>(i);
}

__global__ void verify(const uint32_t* p, size_t n, uint32_t seed, unsigned long long* bad) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += size_t{gridDim.x} * blockDim.x)
    if (p[i] != (seed ^ static_cast<uint32_t>(i))) atomicAdd(bad, 1ull);
}

struct Range {
  uint64_t base, size;
};

int source(const char* file, int gpu) {
  cudaSetDevice(gpu);
  const std::vector<size_t> sizes = {2u << 20, 20u << 20, 4096, 4096, 512, 1u << 20, 1ull << 30, 2u << 20, 100000};
  std::ofstream out(file);
  for (size_t i = 0; i < sizes.size(); ++i) {
    void* p = nullptr;
    if (cudaMalloc(&p, sizes[i]) != cudaSuccess) {
      std::printf("RESULT FAIL: cudaMalloc %zu\n", sizes[i]);
      return 1;
    }
    fill<<<256, 256>>>(static_cast<uint32_t*>(p), sizes[i] / 4, static_cast<uint32_t>(i));
    out << reinterpret_cast<uint64_t>(p) << " " << sizes[i] << "\n";
    std::printf("PROBE source allocation %zu at 0x%llx, %zu bytes\n", i, static_cast<unsigned long long>(
                reinterpret_cast<uint64_t>(p)), sizes[i]);
  }
  out.close();
  cudaDeviceSynchronize();
  std::printf("PROBE source holding\n");
  std::fflush(stdout);
  std::string line;
  while (std::getline(std::cin, line)) {
  }
  return 0;
}

int target(const char* file, int gpu, bool span, const char* first) {
  CHECK_CU(cuInit(0));
  CUdevice dev;
  CHECK_CU(cuDeviceGet(&dev, gpu));
  CUcontext ctx;
  CHECK_CU(cuDevicePrimaryCtxRetain(&ctx, dev));
  CHECK_CU(cuCtxSetCurrent(ctx));
  // What a worker may have done before a move reaches it.
  void* before = nullptr;
  if (!std::strcmp(first, "malloc")) cudaMalloc(&before, 2u << 20);
  if (!std::strcmp(first, "hostalloc")) cudaHostAlloc(&before, 64u << 20, cudaHostAllocDefault);
  if (before) std::printf("PROBE target made %s first, at 0x%llx\n", first, static_cast<unsigned long long>(reinterpret_cast<uint64_t>(before)));
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = gpu;
  size_t gran = 0;
  CHECK_CU(cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  std::vector<std::pair<uint64_t, uint64_t>> allocations;
  std::ifstream in(file);
  for (uint64_t a, s; in >> a >> s;) allocations.push_back({a, s});
  // The pages that hold the allocations, merged: small allocations share a
  // page, which must be mapped once, at its own address.
  std::vector<Range> pages;
  for (auto [a, s] : allocations) {
    uint64_t lo = a / gran * gran, hi = (a + s + gran - 1) / gran * gran;
    pages.push_back({lo, hi - lo});
  }
  std::sort(pages.begin(), pages.end(), [](const Range& x, const Range& y) { return x.base < y.base; });
  std::vector<Range> merged;
  for (const Range& r : pages) {
    if (!merged.empty() && r.base <= merged.back().base + merged.back().size)
      merged.back().size = std::max(merged.back().base + merged.back().size, r.base + r.size) - merged.back().base;
    else
      merged.push_back(r);
  }
  std::printf("PROBE target granularity %zu, %zu allocations in %zu page ranges, %s\n", gran, allocations.size(),
              merged.size(), span ? "one span reserved" : "each range reserved");
  std::vector<Range> reserved = merged;
  if (span) reserved = {{merged.front().base, merged.back().base + merged.back().size - merged.front().base}};
  int honoured = 0;
  uint64_t bytes = 0;
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<uint64_t> moved_by;
  for (const Range& r : reserved) {
    CUdeviceptr got = 0;
    CHECK_CU(cuMemAddressReserve(&got, r.size, gran, r.base, 0));
    const bool same = got == r.base;
    honoured += same;
    moved_by.push_back(got - r.base);
    std::printf("PROBE target reserve 0x%llx + %llu -> 0x%llx %s\n", static_cast<unsigned long long>(r.base),
                static_cast<unsigned long long>(r.size), static_cast<unsigned long long>(got),
                same ? "kept" : "MOVED");
  }
  for (size_t i = 0; i < merged.size(); ++i) {
    const Range& r = merged[i];
    const CUdeviceptr got = r.base + moved_by[span ? 0 : i];
    CUmemGenericAllocationHandle h;
    CHECK_CU(cuMemCreate(&h, r.size, &prop, 0));
    CHECK_CU(cuMemMap(got, r.size, 0, h, 0));
    CUmemAccessDesc access{};
    access.location = prop.location;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    CHECK_CU(cuMemSetAccess(got, r.size, &access, 1));
    CHECK_CU(cuMemRelease(h));
    bytes += r.size;
  }
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::printf("PROBE target %d of %zu hints honoured; reserving and mapping %.1f MB took %.2f ms\n", honoured,
              reserved.size(), bytes / 1e6, ms);
  // A range already held is not granted again: a taken address shows as
  // a different one (or an error), which is how a migration finds it.
  CUdeviceptr again = 0;
  CUresult twice = cuMemAddressReserve(&again, reserved[0].size, gran, reserved[0].base, 0);
  std::printf("PROBE target the same hint again -> %s 0x%llx\n", twice == CUDA_SUCCESS ? "granted" : "refused",
              static_cast<unsigned long long>(again));
  if (twice == CUDA_SUCCESS && again == reserved[0].base) {
    std::printf("RESULT FAIL: one address granted twice\n");
    return 1;
  }
  if (twice == CUDA_SUCCESS) cuMemAddressFree(again, reserved[0].size);
  if (honoured != static_cast<int>(reserved.size())) {
    std::printf("RESULT FAIL: addresses moved\n");
    return 1;
  }
  // Every allocation usable at its old address.
  unsigned long long* bad = nullptr;
  cudaMalloc(&bad, sizeof *bad);
  cudaMemset(bad, 0, sizeof *bad);
  for (size_t i = 0; i < allocations.size(); ++i) {
    auto* p = reinterpret_cast<uint32_t*>(allocations[i].first);
    fill<<<256, 256>>>(p, allocations[i].second / 4, static_cast<uint32_t>(i));
    verify<<<256, 256>>>(p, allocations[i].second / 4, static_cast<uint32_t>(i), bad);
  }
  unsigned long long wrong = 0;
  if (cudaMemcpy(&wrong, bad, sizeof wrong, cudaMemcpyDeviceToHost) != cudaSuccess || wrong != 0) {
    std::printf("RESULT FAIL: %llu wrong words (%s)\n", wrong, cudaGetErrorString(cudaGetLastError()));
    return 1;
  }
  std::printf("RESULT PASS\n");
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: address_probe source|target FILE [GPU] [ranges|span]\n");
    return 2;
  }
  const int gpu = argc > 3 ? std::atoi(argv[3]) : 0;
  if (!std::strcmp(argv[1], "source")) return source(argv[2], gpu);
  if (!std::strcmp(argv[1], "target"))
    return target(argv[2], gpu, argc > 4 && !std::strcmp(argv[4], "span"), argc > 5 ? argv[5] : "nothing");
  std::fprintf(stderr, "usage: address_probe source|target FILE [GPU] [ranges|span]\n");
  return 2;
}
