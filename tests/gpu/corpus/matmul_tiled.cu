// Tiled matrix multiply with static shared memory tiles; sizes not multiples
// of the tile so the boundary handling is exercised.
#include <vector>

#include "corpus.h"

constexpr int TILE = 16;

__global__ void matmul(const float* A, const float* B, float* C, int M, int N, int K) {
  __shared__ float As[TILE][TILE];
  __shared__ float Bs[TILE][TILE];
  int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
  float acc = 0.f;
  for (int t = 0; t < (K + TILE - 1) / TILE; ++t) {
    int ka = t * TILE + threadIdx.x, kb = t * TILE + threadIdx.y;
    As[threadIdx.y][threadIdx.x] = (row < M && ka < K) ? A[row * K + ka] : 0.f;
    Bs[threadIdx.y][threadIdx.x] = (kb < K && col < N) ? B[kb * N + col] : 0.f;
    __syncthreads();
    for (int k = 0; k < TILE; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
    __syncthreads();
  }
  if (row < M && col < N) C[row * N + col] = acc;
}

int main() {
  const int M = 300, N = 257, K = 190;
  std::vector<float> A(M * K), B(K * N), C(M * N), ref(M * N);
  uint32_t s = 12345;
  // Values in [-4,4]: every product and partial sum is an exact float, so the
  // GPU result must equal the CPU result bit for bit.
  for (auto& x : A) x = float(int(lcg(s) >> 28) - 8) / 2;
  for (auto& x : B) x = float(int(lcg(s) >> 28) - 8) / 2;
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      float acc = 0;
      for (int k = 0; k < K; ++k) acc += A[i * K + k] * B[k * N + j];
      ref[i * N + j] = acc;
    }
  float *dA, *dB, *dC;
  CK(cudaMalloc(&dA, A.size() * 4));
  CK(cudaMalloc(&dB, B.size() * 4));
  CK(cudaMalloc(&dC, C.size() * 4));
  CK(cudaMemcpy(dA, A.data(), A.size() * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dB, B.data(), B.size() * 4, cudaMemcpyHostToDevice));
  dim3 block(TILE, TILE), grid((N + TILE - 1) / TILE, (M + TILE - 1) / TILE);
  matmul<<<grid, block>>>(dA, dB, dC, M, N, K);
  CK(cudaGetLastError());
  CK(cudaMemcpy(C.data(), dC, C.size() * 4, cudaMemcpyDeviceToHost));
  int bad = 0;
  for (size_t i = 0; i < C.size(); ++i) bad += C[i] != ref[i];
  EXPECT(bad == 0, "%d wrong elements", bad);
  printf("matmul %dx%dx%d mismatches=%d checksum=%016llx C[0]=%.1f C[last]=%.1f\n", M, N, K,
         bad, (unsigned long long)fnv1a(C.data(), C.size() * 4), C[0], C.back());
  CK(cudaFree(dA));
  CK(cudaFree(dB));
  CK(cudaFree(dC));
  return finish();
}
