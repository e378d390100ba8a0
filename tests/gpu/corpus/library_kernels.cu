// Libraries through both APIs over the same PTX: cudaLibraryLoadData,
// kernels counted, enumerated (names through cuKernelGetName) and looked up,
// a library kernel launched with cudaLaunchKernel and with
// cudaLaunchKernelExC, a library global written with cudaMemcpy;
// cuLibraryLoadData with a CUkernel launched by cuLaunchKernel, kernel
// attributes per device, cuLaunchKernelEx in clusters; the legacy
// cuParamSet*/cuLaunchGrid; a runtime kernel (cudaGetKernel) launched by
// cuLaunchKernel. Every result checked on the host.
#include <algorithm>
#include <string>
#include <vector>

#include "driver_corpus.h"
#include "driver_kernels_ptx.h"

__global__ void negate(int* data, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] = -data[i];
}

int main() {
  const int n = (1 << 18) + 5;
  const unsigned threads = 256, blocks = (n + threads - 1) / threads;
  std::vector<float> a(n), b(n), c(n);
  for (int i = 0; i < n; ++i) {
    a[i] = float(i % 977);
    b[i] = float((i * 13) % 301);
  }
  float *da, *db, *dc;
  CK(cudaMalloc(&da, n * sizeof(float)));
  CK(cudaMalloc(&db, n * sizeof(float)));
  CK(cudaMalloc(&dc, n * sizeof(float)));
  CK(cudaMemcpy(da, a.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(db, b.data(), n * sizeof(float), cudaMemcpyHostToDevice));

  cudaLibrary_t lib;
  CK(cudaLibraryLoadData(&lib, kDriverKernelsPtx, nullptr, nullptr, 0, nullptr, nullptr, 0));
  unsigned count = 0;
  CK(cudaLibraryGetKernelCount(&count, lib));
  std::vector<cudaKernel_t> kernels(count);
  CK(cudaLibraryEnumerateKernels(kernels.data(), count, lib));
  std::vector<std::string> names;
  for (cudaKernel_t k : kernels) {
    const char* name = nullptr;
    CU(cuKernelGetName(&name, reinterpret_cast<CUkernel>(k)));
    names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  printf("library kernels (%u):", count);
  for (const auto& name : names) printf(" %s", name.c_str());
  printf("\n");
  EXPECT(count == 3, "%u kernels", count);

  cudaKernel_t vadd;
  CK(cudaLibraryGetKernel(&vadd, lib, "vadd"));
  cudaError_t missing = cudaLibraryGetKernel(&vadd, lib, "no_such_kernel");
  printf("unknown kernel name: %s\n", cudaGetErrorName(missing));
  EXPECT(missing != cudaSuccess, "an unknown kernel was found");
  CK(cudaLibraryGetKernel(&vadd, lib, "vadd"));
  int nn = n;
  void* args[] = {&da, &db, &dc, &nn};
  CK(cudaLaunchKernel(reinterpret_cast<void*>(vadd), blocks, threads, args, 0, nullptr));
  CK(cudaMemcpy(c.data(), dc, n * sizeof(float), cudaMemcpyDeviceToHost));
  int bad = 0;
  for (int i = 0; i < n; ++i) bad += c[i] != a[i] + b[i];
  EXPECT(bad == 0, "%d wrong sums (cudaLaunchKernel)", bad);
  printf("library vadd through cudaLaunchKernel: %d sums checked\n", n);

  CK(cudaMemset(dc, 0, n * sizeof(float)));
  cudaLaunchAttribute priority = {};
  priority.id = cudaLaunchAttributePriority;
  priority.val.priority = 0;
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(blocks);
  config.blockDim = dim3(threads);
  config.attrs = &priority;
  config.numAttrs = 1;
  CK(cudaLaunchKernelExC(&config, reinterpret_cast<void*>(vadd), args));
  CK(cudaMemcpy(c.data(), dc, n * sizeof(float), cudaMemcpyDeviceToHost));
  bad = 0;
  for (int i = 0; i < n; ++i) bad += c[i] != a[i] + b[i];
  EXPECT(bad == 0, "%d wrong sums (cudaLaunchKernelExC)", bad);
  printf("library vadd through cudaLaunchKernelExC: %d sums checked\n", n);

  // The library's global, written by the host and read by add_bias.
  void* bias = nullptr;
  size_t bias_size = 0;
  CK(cudaLibraryGetGlobal(&bias, &bias_size, lib, "bias"));
  EXPECT(bias_size == sizeof(int), "bias is %zu bytes", bias_size);
  int bias_value = 40;
  CK(cudaMemcpy(bias, &bias_value, sizeof bias_value, cudaMemcpyHostToDevice));
  std::vector<int> data(n);
  for (int i = 0; i < n; ++i) data[i] = i % 1000;
  int* dd;
  CK(cudaMalloc(&dd, n * sizeof(int)));
  CK(cudaMemcpy(dd, data.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  cudaKernel_t add_bias;
  CK(cudaLibraryGetKernel(&add_bias, lib, "add_bias"));
  void* bias_args[] = {&dd, &nn};
  CK(cudaLaunchKernel(reinterpret_cast<void*>(add_bias), blocks, threads, bias_args, 0, nullptr));
  std::vector<int> biased(n);
  CK(cudaMemcpy(biased.data(), dd, n * sizeof(int), cudaMemcpyDeviceToHost));
  bad = 0;
  for (int i = 0; i < n; ++i) bad += biased[i] != data[i] + bias_value;
  EXPECT(bad == 0, "%d wrong biased values", bad);
  printf("library global bias = %d: %d values checked\n", bias_value, n);
  CK(cudaLibraryUnload(lib));

  // The driver's libraries: a CUkernel launched by cuLaunchKernel.
  CU(cuInit(0));
  CUlibrary library;
  CU(cuLibraryLoadData(&library, kDriverKernelsPtx, nullptr, nullptr, 0, nullptr, nullptr, 0));
  CUkernel affine;
  CU(cuLibraryGetKernel(&affine, library, "affine"));
  int max_threads = 0;
  CU(cuKernelGetAttribute(&max_threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, affine, 0));
  EXPECT(max_threads >= 256, "affine takes %d threads per block", max_threads);
  CU(cuKernelSetCacheConfig(affine, CU_FUNC_CACHE_PREFER_L1, 0));
  Affine p{0.5, 7};
  int* dout;
  CK(cudaMalloc(&dout, n * sizeof(int)));
  void* affine_args[] = {&p, &dd, &dout, &nn};
  CU(cuLaunchKernel(reinterpret_cast<CUfunction>(affine), blocks, 1, 1, threads, 1, 1, 0, nullptr, affine_args,
                    nullptr));
  std::vector<int> out(n);
  CK(cudaMemcpy(out.data(), dout, n * sizeof(int), cudaMemcpyDeviceToHost));
  bad = 0;
  for (int i = 0; i < n; ++i) bad += out[i] != static_cast<int>(biased[i] * 0.5) + 7;
  EXPECT(bad == 0, "%d wrong affine values", bad);
  printf("driver library affine through cuLaunchKernel: %d values checked\n", n);

  // cuLaunchKernelEx with clusters of two blocks (the grid rounded up to an
  // even count; vadd checks its bounds).
  CUkernel vadd_kernel;
  CU(cuLibraryGetKernel(&vadd_kernel, library, "vadd"));
  CK(cudaMemset(dc, 0, n * sizeof(float)));
  CUlaunchAttribute cluster = {};
  cluster.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  cluster.value.clusterDim.x = 2;
  cluster.value.clusterDim.y = cluster.value.clusterDim.z = 1;
  CUlaunchConfig cfg = {};
  cfg.gridDimX = (blocks + 1) / 2 * 2;
  cfg.gridDimY = cfg.gridDimZ = 1;
  cfg.blockDimX = threads;
  cfg.blockDimY = cfg.blockDimZ = 1;
  cfg.attrs = &cluster;
  cfg.numAttrs = 1;
  CU(cuLaunchKernelEx(&cfg, reinterpret_cast<CUfunction>(vadd_kernel), args, nullptr));
  CK(cudaMemcpy(c.data(), dc, n * sizeof(float), cudaMemcpyDeviceToHost));
  bad = 0;
  for (int i = 0; i < n; ++i) bad += c[i] != a[i] + b[i];
  EXPECT(bad == 0, "%d wrong sums (cuLaunchKernelEx, clusters)", bad);
  printf("library vadd through cuLaunchKernelEx in clusters of 2: %d sums checked\n", n);

  // The occupancy search over block sizes: its answer depends on the GPU,
  // so only its shape is printed.
  int min_grid = 0, best_block = 0;
  CU(cuOccupancyMaxPotentialBlockSize(&min_grid, &best_block, reinterpret_cast<CUfunction>(vadd_kernel), nullptr,
                                      0, 0));
  bool sane = best_block > 0 && best_block % 32 == 0 && min_grid > 0;
  EXPECT(sane, "block size %d, grid %d", best_block, min_grid);
  printf("potential block size: a positive multiple of 32: %s\n", sane ? "yes" : "no");
  CU(cuLibraryUnload(library));

  // The legacy execution control on a module's function: block shape and
  // parameters set one by one, then cuLaunchGrid.
  CUmodule module;
  CU(cuModuleLoadData(&module, kDriverKernelsPtx));
  CUfunction legacy;
  CU(cuModuleGetFunction(&legacy, module, "vadd"));
  CK(cudaMemset(dc, 0, n * sizeof(float)));
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"  // still exported
  CU(cuFuncSetBlockShape(legacy, threads, 1, 1));
  CU(cuParamSetv(legacy, 0, &da, sizeof da));
  CU(cuParamSetv(legacy, 8, &db, sizeof db));
  CU(cuParamSetv(legacy, 16, &dc, sizeof dc));
  CU(cuParamSeti(legacy, 24, n));
  CU(cuParamSetSize(legacy, 28));
  CU(cuLaunchGrid(legacy, blocks, 1));
#pragma GCC diagnostic pop
  CK(cudaMemcpy(c.data(), dc, n * sizeof(float), cudaMemcpyDeviceToHost));
  bad = 0;
  for (int i = 0; i < n; ++i) bad += c[i] != a[i] + b[i];
  EXPECT(bad == 0, "%d wrong sums (cuLaunchGrid)", bad);
  printf("module vadd through the legacy cuLaunchGrid: %d sums checked\n", n);
  CU(cuModuleUnload(module));

  // A runtime kernel handle launched through the driver.
  cudaKernel_t neg;
  CK(cudaGetKernel(&neg, reinterpret_cast<void*>(negate)));
  void* negate_args[] = {&dout, &nn};
  CU(cuLaunchKernel(reinterpret_cast<CUfunction>(neg), blocks, 1, 1, threads, 1, 1, 0, nullptr, negate_args,
                    nullptr));
  std::vector<int> negated(n);
  CK(cudaMemcpy(negated.data(), dout, n * sizeof(int), cudaMemcpyDeviceToHost));
  bad = 0;
  for (int i = 0; i < n; ++i) bad += negated[i] != -out[i];
  EXPECT(bad == 0, "%d wrong negations", bad);
  printf("runtime kernel through cuLaunchKernel: %d values checked\n", n);

  CK(cudaFree(da));
  CK(cudaFree(db));
  CK(cudaFree(dc));
  CK(cudaFree(dd));
  CK(cudaFree(dout));
  return finish();
}
