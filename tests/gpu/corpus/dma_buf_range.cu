// A dma-buf descriptor of device memory (cuMemGetHandleForAddressRange),
// where the GPU's driver offers it: the attribute and the call's result are
// printed, whichever they are. Through rgpu the descriptor is the server's,
// so over shm only.
#include <unistd.h>

#include "driver_corpus.h"

int main() {
  CU(cuInit(0));
  CUcontext ctx;
  CU(cuDevicePrimaryCtxRetain(&ctx, 0));
  CU(cuCtxSetCurrent(ctx));
  int dma_buf = 0;
  CU(cuDeviceGetAttribute(&dma_buf, CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, 0));
  CUdeviceptr linear;
  CU(cuMemAlloc(&linear, 2 << 20));
  int dma_fd = -1;
  CUresult got = dma_buf ? cuMemGetHandleForAddressRange(&dma_fd, linear, 2 << 20, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0)
                         : CUDA_ERROR_NOT_SUPPORTED;
  printf("dma-buf: attribute %d, handle %s, descriptor %s\n", dma_buf, cu_error_name(got),
         got != CUDA_SUCCESS ? "none" : dma_fd >= 0 ? "open" : "missing");
  if (dma_fd >= 0) close(dma_fd);
  CU(cuMemFree(linear));
  CU(cuDevicePrimaryCtxRelease(0));
  return finish();
}
