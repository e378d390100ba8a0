// __managed__ variables of the application's own fat binary: the host
// reaches them by name (nvcc's host code goes through a pointer the runtime
// sets when the module loads), kernels change them, copies to and from
// their symbols agree with what the host sees.
#include "corpus.h"

__managed__ int counter = 5;
__managed__ float weights[4] = {0.5f, 1.5f, 2.5f, 3.5f};

__global__ void step(int by) {
  counter += by;
  for (int i = 0; i < 4; ++i) weights[i] *= 2.0f;
}

int main() {
  printf("initial: counter %d, weights %.1f %.1f %.1f %.1f\n", counter, weights[0], weights[1], weights[2],
         weights[3]);
  EXPECT(counter == 5 && weights[3] == 3.5f, "initial values");
  counter = 10;
  weights[0] = 4.0f;
  step<<<1, 1>>>(7);
  CK(cudaDeviceSynchronize());
  printf("after the kernel: counter %d, weights %.1f %.1f %.1f %.1f\n", counter, weights[0], weights[1], weights[2],
         weights[3]);
  EXPECT(counter == 17 && weights[0] == 8.0f && weights[3] == 7.0f, "kernel results");

  int from_symbol = 0;
  CK(cudaMemcpyFromSymbol(&from_symbol, counter, sizeof from_symbol));
  int seventy = 70;
  CK(cudaMemcpyToSymbol(counter, &seventy, sizeof seventy));
  void* address = nullptr;
  CK(cudaGetSymbolAddress(&address, counter));
  cudaPointerAttributes attributes;
  CK(cudaPointerGetAttributes(&attributes, address));
  printf("from the symbol %d, after a copy to it %d, same address %d, managed %d\n", from_symbol, counter,
         int(address == &counter), int(attributes.type == cudaMemoryTypeManaged));
  EXPECT(from_symbol == 17 && counter == 70 && address == &counter, "symbol copies");
  return finish();
}
