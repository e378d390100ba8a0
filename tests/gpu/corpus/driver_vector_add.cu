// Driver API only: a PTX module JIT-compiled by the driver, kernels launched
// with kernelParams and with the `extra` parameter buffer, D32/D16 memsets,
// async copies on a stream, events, a module variable; every result checked
// on the host.
#include <cstddef>
#include <cstring>
#include <vector>

#include "driver_corpus.h"
#include "driver_kernels_ptx.h"

int main() {
  CU(cuInit(0));
  CUdevice dev;
  CU(cuDeviceGet(&dev, 0));
  int major = 0;
  CU(cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev));
  EXPECT(major >= 7, "compute capability %d", major);
  CUcontext ctx;
  CU(cuDevicePrimaryCtxRetain(&ctx, dev));
  CU(cuCtxSetCurrent(ctx));

  CUmodule module;
  CU(cuModuleLoadData(&module, kDriverKernelsPtx));
  CUfunction vadd, affine;
  CU(cuModuleGetFunction(&vadd, module, "vadd"));
  CU(cuModuleGetFunction(&affine, module, "affine"));

  for (size_t i = 0; i < 4; ++i) {
    size_t offset = 0, size = 0;
    CU(cuFuncGetParamInfo(affine, i, &offset, &size));
    printf("affine parameter %zu: offset %zu, %zu bytes\n", i, offset, size);
  }

  const int n = (1 << 20) + 77;
  std::vector<float> a(n), b(n), c(n, -1.f);
  for (int i = 0; i < n; ++i) {
    a[i] = float(i % 1000);
    b[i] = float((i * 7) % 513);
  }
  size_t bytes = n * sizeof(float);
  CUdeviceptr da, db, dc;
  CU(cuMemAlloc(&da, bytes));
  CU(cuMemAlloc(&db, bytes));
  CU(cuMemAlloc(&dc, bytes));
  CU(cuMemcpyHtoD(da, a.data(), bytes));
  CU(cuMemcpyHtoD(db, b.data(), bytes));
  int nn = n;
  unsigned grid = (n + 255) / 256;
  void* args[] = {&da, &db, &dc, &nn};
  CU(cuLaunchKernel(vadd, grid, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr));
  CU(cuCtxSynchronize());
  CU(cuMemcpyDtoH(c.data(), dc, bytes));
  int bad = 0;
  for (int i = 0; i < n; ++i) bad += c[i] != a[i] + b[i];
  EXPECT(bad == 0, "%d wrong sums (kernelParams)", bad);
  printf("vadd kernelParams: %d elements checked\n", n);

  // Integers through a struct parameter, packed by the caller itself.
  std::vector<int> in(n), out(n, 0);
  for (int i = 0; i < n; ++i) in[i] = i % 4099 - 2000;
  CUdeviceptr din = da, dout = db;
  CUstream stream;
  CU(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  CU(cuMemcpyHtoDAsync(din, in.data(), n * sizeof(int), stream));
  struct {
    Affine p;
    CUdeviceptr in, out;
    int n;
  } buffer{{3.0, -7}, din, dout, n};
  // Exactly the kernel's parameters: the driver refuses a longer buffer.
  size_t buffer_size = offsetof(decltype(buffer), n) + sizeof(int);
  void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &buffer, CU_LAUNCH_PARAM_BUFFER_SIZE, &buffer_size,
                   CU_LAUNCH_PARAM_END};
  CUevent start, stop;
  CU(cuEventCreate(&start, CU_EVENT_DEFAULT));
  CU(cuEventCreate(&stop, CU_EVENT_DEFAULT));
  CU(cuEventRecord(start, stream));
  CU(cuLaunchKernel(affine, grid, 1, 1, 256, 1, 1, 0, stream, nullptr, extra));
  CU(cuEventRecord(stop, stream));
  CU(cuMemcpyDtoHAsync(out.data(), dout, n * sizeof(int), stream));
  CU(cuStreamSynchronize(stream));
  float ms = -1;
  CU(cuEventElapsedTime(&ms, start, stop));
  EXPECT(ms >= 0, "elapsed %f", ms);
  bad = 0;
  for (int i = 0; i < n; ++i) bad += out[i] != in[i] * 3 - 7;
  EXPECT(bad == 0, "%d wrong results (extra buffer)", bad);
  printf("affine extra buffer: %d elements checked\n", n);

  // Stream priorities, function settings, unified copies and address ranges.
  int least = 0, greatest = 0;
  CU(cuCtxGetStreamPriorityRange(&least, &greatest));
  CUstream urgent;
  CU(cuStreamCreateWithPriority(&urgent, CU_STREAM_NON_BLOCKING, greatest));
  int priority = 1;
  unsigned flags = 0;
  CU(cuStreamGetPriority(urgent, &priority));
  CU(cuStreamGetFlags(urgent, &flags));
  EXPECT(priority == greatest && flags == CU_STREAM_NON_BLOCKING, "priority %d flags %u", priority, flags);
  CU(cuFuncSetAttribute(vadd, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 64 * 1024));
  int blocks = 0;
  CU(cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, vadd, 256, 64 * 1024));
  EXPECT(blocks > 0, "occupancy %d", blocks);
  CU(cuMemcpyHtoD(da, a.data(), bytes));  // the affine step reused da and db
  CU(cuMemcpyHtoD(db, b.data(), bytes));
  // A copy from pageable memory may still be landing when it returns, and
  // the urgent stream does not wait for the default one.
  CU(cuCtxSynchronize());
  CU(cuLaunchKernel(vadd, grid, 1, 1, 256, 1, 1, 64 * 1024, urgent, args, nullptr));
  std::vector<float> c2(n, -1.f);
  CU(cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(c2.data()), dc, bytes, urgent));
  CU(cuStreamSynchronize(urgent));
  EXPECT(c2 == c, "second vadd on a priority stream differs");
  CUdeviceptr base = 0;
  size_t range = 0;
  CU(cuMemGetAddressRange(&base, &range, dc + 100));
  EXPECT(base == dc && range == bytes, "address range %zu bytes", range);
  CU(cuStreamDestroy(urgent));
  printf("priority stream, dynamic shared memory and address range checked\n");

  // A module variable read by a kernel.
  CUdeviceptr bias;
  size_t bias_size = 0;
  CU(cuModuleGetGlobal(&bias, &bias_size, module, "bias"));
  EXPECT(bias_size == sizeof(int), "bias is %zu bytes", bias_size);
  int bias_value = 1000;
  CU(cuMemcpyHtoD(bias, &bias_value, sizeof bias_value));
  CUfunction add_bias;
  CU(cuModuleGetFunction(&add_bias, module, "add_bias"));
  CU(cuMemcpyHtoD(dout, out.data(), n * sizeof(int)));  // dout was reused above
  void* bias_args[] = {&dout, &nn};
  CU(cuLaunchKernel(add_bias, grid, 1, 1, 256, 1, 1, 0, nullptr, bias_args, nullptr));
  std::vector<int> biased(n);
  CU(cuMemcpyDtoH(biased.data(), dout, n * sizeof(int)));
  bad = 0;
  for (int i = 0; i < n; ++i) bad += biased[i] != out[i] + 1000;
  EXPECT(bad == 0, "%d values without the module variable's bias", bad);
  CUresult missing = cuModuleGetGlobal(&bias, &bias_size, module, "no_such_variable");
  printf("module variable checked; unknown variable: %s\n", cu_error_name(missing));

  std::vector<uint32_t> words(n);
  CU(cuMemsetD32(dc, 0x12345678u, n));
  CU(cuMemcpyDtoH(words.data(), dc, n * sizeof(uint32_t)));
  bad = 0;
  for (uint32_t w : words) bad += w != 0x12345678u;
  EXPECT(bad == 0, "%d words not set by cuMemsetD32", bad);
  std::vector<uint16_t> halves(n);
  CU(cuMemsetD16Async(dc, 0xabcd, n, stream));
  CU(cuMemcpyDtoHAsync(halves.data(), dc, n * sizeof(uint16_t), stream));
  CU(cuStreamSynchronize(stream));
  bad = 0;
  for (uint16_t h : halves) bad += h != 0xabcd;
  EXPECT(bad == 0, "%d halves not set by cuMemsetD16Async", bad);
  printf("memsets checked\n");

  CU(cuEventDestroy(start));
  CU(cuEventDestroy(stop));
  CU(cuStreamDestroy(stream));
  CU(cuMemFree(da));
  CU(cuMemFree(db));
  CU(cuMemFree(dc));
  CU(cuModuleUnload(module));
  CU(cuDevicePrimaryCtxRelease(dev));
  return finish();
}
