// Device query: prints the properties that are fixed for a given GPU and
// driver (nothing that changes at run time, such as free memory or clocks
// currently applied), versions, and a few attributes cross-checked against
// cudaGetDeviceProperties.
#include "corpus.h"

int main() {
  int rt = 0, drv = 0, count = 0;
  CK(cudaRuntimeGetVersion(&rt));
  CK(cudaDriverGetVersion(&drv));
  CK(cudaGetDeviceCount(&count));
  printf("runtime=%d driver=%d devices=%d\n", rt, drv, count);
  EXPECT(count >= 1, "no device");
  EXPECT(rt >= 13000 && drv >= rt, "versions");
  for (int dev = 0; dev < count; ++dev) {
    CK(cudaSetDevice(dev));
    int cur = -1;
    CK(cudaGetDevice(&cur));
    EXPECT(cur == dev, "cudaGetDevice %d != %d", cur, dev);
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, dev));
    printf("device %d: %s\n", dev, p.name);
    printf("  compute capability  %d.%d\n", p.major, p.minor);
    printf("  SMs                 %d\n", p.multiProcessorCount);
    printf("  total global mem    %zu\n", p.totalGlobalMem);
    printf("  total const mem     %zu\n", p.totalConstMem);
    printf("  warp size           %d\n", p.warpSize);
    printf("  max threads/block   %d\n", p.maxThreadsPerBlock);
    printf("  max threads/SM      %d\n", p.maxThreadsPerMultiProcessor);
    printf("  max block dims      %d %d %d\n", p.maxThreadsDim[0], p.maxThreadsDim[1], p.maxThreadsDim[2]);
    printf("  max grid dims       %d %d %d\n", p.maxGridSize[0], p.maxGridSize[1], p.maxGridSize[2]);
    printf("  shared mem/block    %zu (opt-in %zu)\n", p.sharedMemPerBlock, p.sharedMemPerBlockOptin);
    printf("  shared mem/SM       %zu\n", p.sharedMemPerMultiprocessor);
    printf("  regs/block          %d (per SM %d)\n", p.regsPerBlock, p.regsPerMultiprocessor);
    printf("  L2 cache            %d\n", p.l2CacheSize);
    printf("  memory bus width    %d\n", p.memoryBusWidth);
    printf("  mem pitch           %zu\n", p.memPitch);
    printf("  texture alignment   %zu\n", p.textureAlignment);
    printf("  async engines       %d\n", p.asyncEngineCount);
    printf("  unified addressing  %d\n", p.unifiedAddressing);
    printf("  concurrent kernels  %d\n", p.concurrentKernels);
    printf("  ECC                 %d\n", p.ECCEnabled);
    printf("  PCI                 %04x:%02x:%02x\n", p.pciDomainID, p.pciBusID, p.pciDeviceID);
    printf("  cooperative launch  %d\n", p.cooperativeLaunch);
    printf("  max blocks/SM       %d\n", p.maxBlocksPerMultiProcessor);

    // Attributes: the same facts through cudaDeviceGetAttribute.
    struct {
      cudaDeviceAttr a;
      const char* name;
      int want;
    } attrs[] = {
        {cudaDevAttrComputeCapabilityMajor, "cc major", p.major},
        {cudaDevAttrComputeCapabilityMinor, "cc minor", p.minor},
        {cudaDevAttrMultiProcessorCount, "SMs", p.multiProcessorCount},
        {cudaDevAttrWarpSize, "warp", p.warpSize},
        {cudaDevAttrMaxThreadsPerBlock, "threads/block", p.maxThreadsPerBlock},
        {cudaDevAttrMaxSharedMemoryPerBlockOptin, "smem optin", int(p.sharedMemPerBlockOptin)},
        {cudaDevAttrL2CacheSize, "L2", p.l2CacheSize},
        {cudaDevAttrMaxGridDimX, "grid x", p.maxGridSize[0]},
        {cudaDevAttrUnifiedAddressing, "UVA", p.unifiedAddressing},
    };
    for (auto& a : attrs) {
      int v = -1;
      CK(cudaDeviceGetAttribute(&v, a.a, dev));
      EXPECT(v == a.want, "attribute %s: %d vs prop %d", a.name, v, a.want);
    }
    int clock = 0, memclock = 0;
    CK(cudaDeviceGetAttribute(&clock, cudaDevAttrClockRate, dev));
    CK(cudaDeviceGetAttribute(&memclock, cudaDevAttrMemoryClockRate, dev));
    printf("  max clock kHz       %d (memory %d)\n", clock, memclock);
  }
  CK(cudaSetDevice(0));
  size_t free_b = 0, total_b = 0;
  CK(cudaMemGetInfo(&free_b, &total_b));
  cudaDeviceProp p0;
  CK(cudaGetDeviceProperties(&p0, 0));
  EXPECT(free_b > 0 && free_b <= total_b && total_b == p0.totalGlobalMem, "cudaMemGetInfo");
  printf("cudaMemGetInfo total == totalGlobalMem: %s\n", total_b == p0.totalGlobalMem ? "yes" : "no");
  return finish();
}
