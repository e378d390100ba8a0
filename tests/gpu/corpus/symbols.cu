// __constant__ and __device__ variables: to/from-symbol copies (sync and
// async, with offsets), symbol address and size, and static initializers.
#include "corpus.h"

__constant__ float c_coeffs[16];
__constant__ int c_scale = 3;          // statically initialized constant
__device__ int d_counter = 1000;       // statically initialized global
__device__ unsigned d_table[256];
__device__ double d_result[4];

__global__ void apply(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = c_coeffs[i % 16] * in[i] * c_scale;
  if (i < 256) d_table[i] = d_table[i] * 2 + 1;
  if (i == 0) {
    d_result[0] = c_coeffs[0];
    d_result[3] = c_coeffs[15];
  }
  if (i < n) atomicAdd(&d_counter, 1);
}

int main() {
  const int n = 4096;
  float coeffs[16];
  for (int i = 0; i < 16; ++i) coeffs[i] = 0.5f * (i + 1);
  int scale = 0;
  CK(cudaMemcpyFromSymbol(&scale, c_scale, sizeof(int)));
  printf("c_scale initial=%d\n", scale);
  EXPECT(scale == 3, "static initializer of __constant__ lost");
  // Write the constant array in two halves; the second with an offset.
  CK(cudaMemcpyToSymbol(c_coeffs, coeffs, 8 * sizeof(float)));
  CK(cudaMemcpyToSymbol(c_coeffs, coeffs + 8, 8 * sizeof(float), 8 * sizeof(float),
                        cudaMemcpyHostToDevice));

  unsigned table[256];
  for (int i = 0; i < 256; ++i) table[i] = i;
  cudaStream_t s;
  CK(cudaStreamCreate(&s));
  CK(cudaMemcpyToSymbolAsync(d_table, table, sizeof table, 0, cudaMemcpyHostToDevice, s));
  CK(cudaStreamSynchronize(s));

  size_t sz_coeffs, sz_table, sz_counter;
  CK(cudaGetSymbolSize(&sz_coeffs, c_coeffs));
  CK(cudaGetSymbolSize(&sz_table, d_table));
  CK(cudaGetSymbolSize(&sz_counter, d_counter));
  printf("symbol sizes: c_coeffs=%zu d_table=%zu d_counter=%zu\n", sz_coeffs, sz_table, sz_counter);
  EXPECT(sz_coeffs == 64 && sz_table == 1024 && sz_counter == 4, "symbol sizes");

  float *din, *dout;
  CK(cudaMalloc(&din, n * 4));
  CK(cudaMalloc(&dout, n * 4));
  float in[n], out[n];
  for (int i = 0; i < n; ++i) in[i] = float(i % 100);
  CK(cudaMemcpy(din, in, sizeof in, cudaMemcpyHostToDevice));
  apply<<<n / 256, 256, 0, s>>>(din, dout, n);
  CK(cudaGetLastError());
  CK(cudaMemcpy(out, dout, sizeof out, cudaMemcpyDeviceToHost));
  int bad = 0;
  for (int i = 0; i < n; ++i) bad += out[i] != coeffs[i % 16] * in[i] * 3;
  EXPECT(bad == 0, "%d wrong outputs", bad);

  int counter = 0;
  CK(cudaMemcpyFromSymbol(&counter, d_counter, sizeof counter));
  EXPECT(counter == 1000 + n, "counter %d", counter);
  unsigned back[256];
  CK(cudaMemcpyFromSymbolAsync(back, d_table, sizeof back, 0, cudaMemcpyDeviceToHost, s));
  CK(cudaStreamSynchronize(s));
  for (int i = 0; i < 256; ++i) bad += back[i] != 2u * i + 1;
  double res[4] = {};
  // Offset read of the last element only.
  CK(cudaMemcpyFromSymbol(&res[3], d_result, sizeof(double), 3 * sizeof(double)));
  CK(cudaMemcpyFromSymbol(&res[0], d_result, sizeof(double)));

  // The symbol's device address is a plain device pointer: cudaMemcpy and
  // cudaMemset work on it directly.
  unsigned* table_ptr = nullptr;
  CK(cudaGetSymbolAddress((void**)&table_ptr, d_table));
  CK(cudaMemset(table_ptr + 128, 0, 128 * sizeof(unsigned)));
  CK(cudaMemcpy(back, table_ptr, sizeof back, cudaMemcpyDeviceToHost));
  for (int i = 0; i < 256; ++i) bad += back[i] != (i < 128 ? 2u * i + 1 : 0u);
  // Device-to-symbol copy from a cudaMalloc buffer.
  CK(cudaMemcpyToSymbol(d_table, din, 64 * sizeof(float), 0, cudaMemcpyDeviceToDevice));
  float chk[64];
  CK(cudaMemcpyFromSymbol(chk, d_table, sizeof chk));
  for (int i = 0; i < 64; ++i) bad += chk[i] != in[i];

  EXPECT(bad == 0, "%d wrong", bad);
  printf("counter=%d result=[%.2f %.2f] mismatches=%d checksum=%016llx\n", counter, res[0], res[3],
         bad, (unsigned long long)fnv1a(out, sizeof out));
  CK(cudaStreamDestroy(s));
  CK(cudaFree(din));
  CK(cudaFree(dout));
  return finish();
}
