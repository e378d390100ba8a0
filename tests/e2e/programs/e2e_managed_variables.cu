// __managed__ variables of the application's fat binary: nvcc's host code
// reaches them through a pointer the runtime sets when their module loads
// (__cudaInitModule); host accesses, symbol copies and the symbol's address
// agree. The host-test backend zero-fills module variables and runs no
// kernel, so the values checked are the host's and the copies'.
#include "check.h"

__managed__ int counter = 5;
__managed__ float weights[4] = {0.5f, 1.5f, 2.5f, 3.5f};
__device__ int plain;

__global__ void step(int by) {
  counter += by + plain;
  for (int i = 0; i < 4; ++i) weights[i] *= 2.0f;
}

int main() {
  counter = 10;
  weights[2] = 4.0f;
  int from_symbol = 0;
  OK(cudaMemcpyFromSymbol(&from_symbol, counter, sizeof from_symbol));
  CHECK(from_symbol == 10);
  float weight = 0;
  OK(cudaMemcpyFromSymbol(&weight, weights, sizeof weight, 2 * sizeof(float)));
  CHECK(weight == 4.0f);
  int seventy = 70;
  OK(cudaMemcpyToSymbol(counter, &seventy, sizeof seventy));
  CHECK(counter == 70);

  void* address = nullptr;
  OK(cudaGetSymbolAddress(&address, counter));
  CHECK(address == &counter);
  size_t size = 0;
  OK(cudaGetSymbolSize(&size, weights));
  CHECK(size == sizeof weights);
  cudaPointerAttributes attributes;
  OK(cudaPointerGetAttributes(&attributes, address));
  CHECK(attributes.type == cudaMemoryTypeManaged && attributes.hostPointer == address);
  // The runtime's managed memory is not the application's to free.
  EXPECT_STATUS(cudaErrorInvalidValue, cudaFree(address));
  CHECK(counter == 70);

  step<<<1, 1>>>(7);
  OK(cudaDeviceSynchronize());
  weights[0] = 8.0f;
  float all[4] = {};
  OK(cudaMemcpyFromSymbol(all, weights, sizeof all));
  CHECK(all[0] == 8.0f && all[2] == 4.0f && counter == 70);
  return finish();
}
