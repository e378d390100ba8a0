// Graph copy nodes between page-locked host memory (cudaMallocHost) and
// device memory around a kernel: each launch reads the host input as it is
// then and writes the host output; the executable graph's copy node is
// then pointed at a second input buffer. The same copies captured from a
// stream replay alike. (Over rgpu's tcp they are staged as pageable copies are.)
#include <cstdio>

#include "corpus.h"

__global__ void square_plus(const int* in, int* out, int n, int add) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] * in[i] + add;
}

int main() {
  const int n = 1 << 16;
  const size_t bytes = n * sizeof(int);
  int *in, *in2, *out, *d_in, *d_out;
  CK(cudaMallocHost(&in, bytes));
  CK(cudaMallocHost(&in2, bytes));
  CK(cudaMallocHost(&out, bytes));
  CK(cudaMalloc(&d_in, bytes));
  CK(cudaMalloc(&d_out, bytes));
  cudaStream_t s;
  CK(cudaStreamCreate(&s));

  cudaGraph_t g;
  CK(cudaGraphCreate(&g, 0));
  cudaGraphNode_t up, kernel, down;
  CK(cudaGraphAddMemcpyNode1D(&up, g, nullptr, 0, d_in, in, bytes, cudaMemcpyHostToDevice));
  int count = n, add = 7;
  void* args[] = {&d_in, &d_out, &count, &add};
  cudaKernelNodeParams kp{};
  kp.func = reinterpret_cast<void*>(square_plus);
  kp.gridDim = dim3((n + 255) / 256);
  kp.blockDim = dim3(256);
  kp.kernelParams = args;
  CK(cudaGraphAddKernelNode(&kernel, g, &up, 1, &kp));
  cudaMemcpy3DParms m{};
  m.srcPtr = make_cudaPitchedPtr(d_out, bytes, bytes, 1);
  m.dstPtr = make_cudaPitchedPtr(out, bytes, bytes, 1);
  m.extent = make_cudaExtent(bytes, 1, 1);
  m.kind = cudaMemcpyDefault;
  CK(cudaGraphAddMemcpyNode(&down, g, &kernel, 1, &m));

  cudaMemcpy3DParms got{};
  CK(cudaGraphMemcpyNodeGetParams(up, &got));
  EXPECT(got.srcPtr.ptr == in && got.dstPtr.ptr == d_in, "copy node reads back other addresses");

  cudaGraphExec_t x;
  CK(cudaGraphInstantiate(&x, g, 0));
  uint32_t seed = 12345;
  for (int launch = 0; launch < 3; ++launch) {
    for (int i = 0; i < n; ++i) in[i] = static_cast<int>(lcg(seed) % 1000) - 500;
    CK(cudaGraphLaunch(x, s));
    CK(cudaStreamSynchronize(s));
    int bad = 0;
    for (int i = 0; i < n; ++i) bad += out[i] != in[i] * in[i] + add;
    printf("launch %d: out[0] %d out[n-1] %d checksum %016llx mismatches %d\n", launch, out[0], out[n - 1],
           static_cast<unsigned long long>(fnv1a(out, bytes)), bad);
    EXPECT(bad == 0, "launch %d: %d mismatches", launch, bad);
  }

  for (int i = 0; i < n; ++i) in2[i] = i % 100;
  CK(cudaGraphExecMemcpyNodeSetParams1D(x, up, d_in, in2, bytes, cudaMemcpyHostToDevice));
  CK(cudaGraphLaunch(x, s));
  CK(cudaStreamSynchronize(s));
  printf("second input: out[99] %d checksum %016llx\n", out[99], static_cast<unsigned long long>(fnv1a(out, bytes)));
  EXPECT(out[99] == 99 * 99 + add, "out[99] %d", out[99]);

  cudaGraph_t captured;
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  CK(cudaMemcpyAsync(d_in, in, bytes, cudaMemcpyHostToDevice, s));
  square_plus<<<(n + 255) / 256, 256, 0, s>>>(d_in, d_out, n, 1);
  CK(cudaMemcpyAsync(out, d_out, bytes, cudaMemcpyDeviceToHost, s));
  CK(cudaStreamEndCapture(s, &captured));
  cudaGraphExec_t cx;
  CK(cudaGraphInstantiate(&cx, captured, 0));
  for (int launch = 0; launch < 2; ++launch) {
    for (int i = 0; i < n; ++i) in[i] = (i * (launch + 3)) % 777;
    CK(cudaGraphLaunch(cx, s));
    CK(cudaStreamSynchronize(s));
    int bad = 0;
    for (int i = 0; i < n; ++i) bad += out[i] != in[i] * in[i] + 1;
    printf("captured launch %d: out[n-1] %d checksum %016llx mismatches %d\n", launch, out[n - 1],
           static_cast<unsigned long long>(fnv1a(out, bytes)), bad);
    EXPECT(bad == 0, "captured launch %d: %d mismatches", launch, bad);
  }
  CK(cudaGraphExecDestroy(cx));
  CK(cudaGraphDestroy(captured));

  CK(cudaGraphExecDestroy(x));
  CK(cudaGraphDestroy(g));
  CK(cudaStreamDestroy(s));
  CK(cudaFreeHost(in));
  CK(cudaFreeHost(in2));
  CK(cudaFreeHost(out));
  CK(cudaFree(d_in));
  CK(cudaFree(d_out));
  return finish();
}
