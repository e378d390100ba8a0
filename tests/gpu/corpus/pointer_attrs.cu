// cudaPointerGetAttributes on every kind of pointer the runtime knows about.
// Only the classification and self-consistency are printed, never addresses.
#include <cstdlib>

#include "corpus.h"

__device__ int g_sym[64];

static void show(const char* what, const void* p) {
  cudaPointerAttributes a;
  cudaError_t e = cudaPointerGetAttributes(&a, p);
  if (e != cudaSuccess) {
    printf("%-22s error %s\n", what, cudaGetErrorName(e));
    cudaGetLastError();
    return;
  }
  // Host memory's device pointer is left out: locally the GPU maps page-locked
  // memory (devicePointer == the host pointer), while a remote GPU cannot
  // reach client memory, so rgpu reports none rather than a pointer that
  // would not work.
  printf("%-22s type=%-12s device=%d devicePointer=%s hostPointer=%s\n", what, type_name(a.type),
         a.type == cudaMemoryTypeUnregistered ? -1 : a.device,
         a.type == cudaMemoryTypeHost ? "-" : a.devicePointer == nullptr ? "null" : a.devicePointer == p ? "self" : "other",
         a.hostPointer == nullptr ? "null" : a.hostPointer == p ? "self" : "other");
}

int main() {
  char* d;
  CK(cudaMalloc(&d, 4096));
  void *mh, *ha;
  CK(cudaMallocHost(&mh, 4096));
  CK(cudaHostAlloc(&ha, 4096, cudaHostAllocPortable));
  void* pageable = malloc(4096);
  void* reg = malloc(8192);
  CK(cudaHostRegister(reg, 8192, cudaHostRegisterDefault));
  void* sym = nullptr;
  CK(cudaGetSymbolAddress(&sym, g_sym));
  int on_stack = 0;

  show("cudaMalloc", d);
  show("cudaMalloc interior", d + 100);
  show("symbol address", sym);
  show("cudaMallocHost", mh);
  show("cudaHostAlloc portable", ha);
  show("cudaHostRegister", reg);
  show("malloc (pageable)", pageable);
  show("stack", &on_stack);
  show("nullptr", nullptr);

  cudaPointerAttributes a;
  CK(cudaPointerGetAttributes(&a, d));
  EXPECT(a.type == cudaMemoryTypeDevice && a.device == 0 && a.devicePointer == d && a.hostPointer == nullptr,
         "device pointer attributes");
  CK(cudaPointerGetAttributes(&a, mh));
  EXPECT(a.type == cudaMemoryTypeHost && a.hostPointer == mh, "pinned pointer attributes");
  CK(cudaPointerGetAttributes(&a, pageable));
  EXPECT(a.type == cudaMemoryTypeUnregistered, "pageable pointer attributes");

  CK(cudaHostUnregister(reg));
  free(reg);
  free(pageable);
  CK(cudaFreeHost(mh));
  CK(cudaFreeHost(ha));
  CK(cudaFree(d));
  return finish();
}
