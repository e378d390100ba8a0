// Driver-API graphs as XLA's command buffers build them, on a real GPU:
// kernel nodes whose arguments come as one `extra` buffer (add, executable
// set, exec update, generic cuGraphAddNode), and copy nodes of odd 3-D
// shapes (slices taller than the copied rows, offsets in x, y and z) between
// device memory and pageable host memory, plus host-to-host copies with a
// pageable side. Every result is checked on the host and printed.
#include <cstddef>
#include <cstring>
#include <vector>

#include "driver_corpus.h"
#include "driver_kernels_ptx.h"

static const int kN = (1 << 16) + 17;

// affine(Affine p, const int* in, int* out, int n), laid out as its parameters.
struct AffineArgs {
  Affine p;
  CUdeviceptr in, out;
  int n;
};
static size_t g_args_size = offsetof(AffineArgs, n) + sizeof(int);

struct Extra {
  AffineArgs args;
  void* list[5];
  explicit Extra(AffineArgs a) : args(a) {
    list[0] = CU_LAUNCH_PARAM_BUFFER_POINTER;
    list[1] = &args;
    list[2] = CU_LAUNCH_PARAM_BUFFER_SIZE;
    list[3] = &g_args_size;
    list[4] = CU_LAUNCH_PARAM_END;
  }
};

static CUDA_KERNEL_NODE_PARAMS kernel_params(CUfunction f, void** extra) {
  CUDA_KERNEL_NODE_PARAMS kp{};
  kp.func = f;
  kp.gridDimX = (kN + 255) / 256;
  kp.gridDimY = kp.gridDimZ = 1;
  kp.blockDimX = 256;
  kp.blockDimY = kp.blockDimZ = 1;
  kp.extra = extra;
  return kp;
}

// out[i] must be (i % 1000 - 300) * scale + shift.
static void check_affine(CUdeviceptr d, double scale, int shift, const char* what) {
  std::vector<int> h(kN);
  CU(cuMemcpyDtoH(h.data(), d, kN * sizeof(int)));
  int bad = 0;
  for (int i = 0; i < kN; ++i)
    if (h[i] != static_cast<int>((i % 1000 - 300) * scale) + shift) ++bad;
  EXPECT(bad == 0, "%s: %d wrong elements", what, bad);
  printf("%s: out[777]=%d checksum=%016llx\n", what, h[777],
         static_cast<unsigned long long>(fnv1a(h.data(), h.size() * sizeof(int))));
}

// A pitched 3-D buffer: kPitch bytes a row, kRows rows a slice; the copy
// moves 40 x 3 x 4 from (5, 2, 1) to (11, 3, 0).
static const size_t kPitch = 96, kRows = 7, kSlices = 5, kBytes = kPitch * kRows * kSlices;

static void fill(std::vector<unsigned char>& v, unsigned seed) {
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<unsigned char>(seed + i * 13 + i / 7);
}

static std::vector<unsigned char> expected(const std::vector<unsigned char>& src, std::vector<unsigned char> dst) {
  for (size_t z = 0; z < 4; ++z)
    for (size_t y = 0; y < 3; ++y)
      memcpy(&dst[(z * kRows + 3 + y) * kPitch + 11], &src[((1 + z) * kRows + 2 + y) * kPitch + 5], 40);
  return dst;
}

static CUDA_MEMCPY3D box() {
  CUDA_MEMCPY3D m{};
  m.srcXInBytes = 5, m.srcY = 2, m.srcZ = 1;
  m.dstXInBytes = 11, m.dstY = 3, m.dstZ = 0;
  m.srcPitch = m.dstPitch = kPitch;
  m.srcHeight = m.dstHeight = kRows;
  m.WidthInBytes = 40, m.Height = 3, m.Depth = 4;
  return m;
}

// Launches a one-node copy graph twice, the source rewritten in between.
static void copy_twice(const char* what, CUstream s, const CUDA_MEMCPY3D& m, std::vector<unsigned char>& src,
                       CUdeviceptr src_dev, CUdeviceptr dst_dev, std::vector<unsigned char>& dst_host) {
  CUgraph g;
  CU(cuGraphCreate(&g, 0));
  CUgraphNode node;
  CUcontext ctx;
  CU(cuCtxGetCurrent(&ctx));
  CU(cuGraphAddMemcpyNode(&node, g, nullptr, 0, &m, ctx));
  CUgraphExec x;
  CU(cuGraphInstantiateWithFlags(&x, g, 0));
  std::vector<unsigned char> before(kBytes);
  fill(before, 200);
  for (unsigned seed : {3u, 77u}) {
    fill(src, seed);
    if (src_dev) CU(cuMemcpyHtoD(src_dev, src.data(), kBytes));
    if (dst_dev)
      CU(cuMemcpyHtoD(dst_dev, before.data(), kBytes));
    else
      dst_host = before;
    CU(cuGraphLaunch(x, s));
    CU(cuStreamSynchronize(s));
    std::vector<unsigned char> got(kBytes);
    if (dst_dev)
      CU(cuMemcpyDtoH(got.data(), dst_dev, kBytes));
    else
      got = dst_host;
    EXPECT(got == expected(src, before), "%s: seed %u moved the wrong bytes", what, seed);
    printf("%s: seed %u checksum=%016llx\n", what, seed, static_cast<unsigned long long>(fnv1a(got.data(), kBytes)));
  }
  CU(cuGraphExecDestroy(x));
  CU(cuGraphDestroy(g));
}

int main() {
  CU(cuInit(0));
  CUdevice dev;
  CU(cuDeviceGet(&dev, 0));
  CUcontext ctx;
  CU(cuDevicePrimaryCtxRetain(&ctx, dev));
  CU(cuCtxSetCurrent(ctx));
  CUmodule module;
  CU(cuModuleLoadData(&module, kDriverKernelsPtx));
  CUfunction affine;
  CU(cuModuleGetFunction(&affine, module, "affine"));
  std::vector<int> in(kN);
  for (int i = 0; i < kN; ++i) in[i] = i % 1000 - 300;
  CUdeviceptr src, out;
  CU(cuMemAlloc(&src, kN * sizeof(int)));
  CU(cuMemAlloc(&out, kN * sizeof(int)));
  CU(cuMemcpyHtoD(src, in.data(), kN * sizeof(int)));
  CUstream s;
  CU(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));

  // A kernel node with an `extra` buffer; then new arguments in the executable graph.
  Extra first({{2.0, 11}, src, out, kN});
  CUgraph g;
  CU(cuGraphCreate(&g, 0));
  CUgraphNode node;
  CUDA_KERNEL_NODE_PARAMS kp = kernel_params(affine, first.list);
  CU(cuGraphAddKernelNode(&node, g, nullptr, 0, &kp));
  CUDA_KERNEL_NODE_PARAMS back{};
  CU(cuGraphKernelNodeGetParams(node, &back));
  // What CUDA hands back for a node made with `extra` (printed, so the runs compare).
  std::printf("extra kernel node read back: kernelParams %s, extra %s\n", back.kernelParams ? "given" : "null",
              back.extra ? "given" : "null");
  CUgraphExec gx;
  CU(cuGraphInstantiateWithFlags(&gx, g, 0));
  CU(cuGraphLaunch(gx, s));
  CU(cuStreamSynchronize(s));
  check_affine(out, 2.0, 11, "extra kernel node");
  Extra second({{-1.5, 4}, src, out, kN});
  kp = kernel_params(affine, second.list);
  CU(cuGraphExecKernelNodeSetParams(gx, node, &kp));
  CU(cuGraphLaunch(gx, s));
  CU(cuStreamSynchronize(s));
  check_affine(out, -1.5, 4, "extra kernel node, executable set");

  // Exec update from a graph of the same shape, its node made by cuGraphAddNode.
  Extra third({{3.0, -7}, src, out, kN});
  CUgraph g2;
  CU(cuGraphCreate(&g2, 0));
  CUgraphNodeParams gp{};
  gp.type = CU_GRAPH_NODE_TYPE_KERNEL;
  gp.kernel.func = affine;
  gp.kernel.gridDimX = (kN + 255) / 256;
  gp.kernel.gridDimY = gp.kernel.gridDimZ = 1;
  gp.kernel.blockDimX = 256;
  gp.kernel.blockDimY = gp.kernel.blockDimZ = 1;
  gp.kernel.extra = third.list;
  CUgraphNode node2;
  CU(cuGraphAddNode(&node2, g2, nullptr, nullptr, 0, &gp));
  CUgraphExecUpdateResultInfo info{};
  CU(cuGraphExecUpdate(gx, g2, &info));
  EXPECT(info.result == CU_GRAPH_EXEC_UPDATE_SUCCESS, "exec update result %d", static_cast<int>(info.result));
  CU(cuGraphLaunch(gx, s));
  CU(cuStreamSynchronize(s));
  check_affine(out, 3.0, -7, "extra kernel node, exec update");

  // Odd 3-D copy nodes: device to device, pageable up and down, host to host.
  CUdeviceptr a, b;
  CU(cuMemAlloc(&a, kBytes));
  CU(cuMemAlloc(&b, kBytes));
  std::vector<unsigned char> host_src(kBytes), host_dst(kBytes);
  CUDA_MEMCPY3D m = box();
  m.srcMemoryType = m.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  m.srcDevice = a, m.dstDevice = b;
  copy_twice("3-D device to device", s, m, host_src, a, b, host_dst);
  m.srcMemoryType = CU_MEMORYTYPE_HOST;
  m.srcHost = host_src.data();
  copy_twice("3-D pageable to device", s, m, host_src, 0, b, host_dst);
  m = box();
  m.srcMemoryType = CU_MEMORYTYPE_DEVICE;
  m.srcDevice = a;
  m.dstMemoryType = CU_MEMORYTYPE_HOST;
  m.dstHost = host_dst.data();
  copy_twice("3-D device to pageable", s, m, host_src, a, 0, host_dst);
  m.srcMemoryType = CU_MEMORYTYPE_HOST;
  m.srcHost = host_src.data();
  copy_twice("3-D pageable to pageable", s, m, host_src, 0, 0, host_dst);

  CU(cuGraphExecDestroy(gx));
  CU(cuGraphDestroy(g2));
  CU(cuGraphDestroy(g));
  CU(cuMemFree(a));
  CU(cuMemFree(b));
  CU(cuMemFree(src));
  CU(cuMemFree(out));
  CU(cuModuleUnload(module));
  CU(cuDevicePrimaryCtxRelease(dev));
  return finish();
}
