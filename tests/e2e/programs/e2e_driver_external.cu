// Driver-API external memory and semaphores on the host-test backend (memfds
// stand for exported memory and semaphores, see e2e_external_memory.cu; a
// cuMemCreate allocation is exported as a descriptor and imported back):
// import, a mapped buffer read and written, a mipmapped array over it, a
// timeline semaphore signalled and waited on in stream order and as graph
// nodes, and errors.
// Over tcp the imports are not supported.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "driver_check.h"

static int make_file(size_t n, unsigned char** view) {
  // Sealed at its size, as the server requires of memory it maps.
  int fd = memfd_create("e2e-driver-external", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0 || ftruncate(fd, static_cast<off_t>(n)) != 0) return -1;
  if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) != 0) return -1;
  void* p = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) return -1;
  *view = static_cast<unsigned char*>(p);
  for (size_t i = 0; i < n; ++i) (*view)[i] = static_cast<unsigned char>(i * 5 + 1);
  return fd;
}

int main() {
  CU_OK(cuInit(0));
  if (g_failures) return finish();
  CUcontext ctx;
  CU_OK(cuDevicePrimaryCtxRetain(&ctx, 0));
  CU_OK(cuCtxSetCurrent(ctx));
  const char* transport = std::getenv("RGPU_TRANSPORT");
  bool shm = transport && std::strcmp(transport, "shm") == 0;

  const size_t n = 65536;
  unsigned char* view = nullptr;
  CUDA_EXTERNAL_MEMORY_HANDLE_DESC desc{};
  desc.type = CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD;
  desc.handle.fd = make_file(n, &view);
  desc.size = n;
  CUexternalMemory mem = nullptr;
  unsigned char* counter_view = nullptr;
  CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC sdesc{};
  sdesc.type = CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_TIMELINE_SEMAPHORE_FD;
  sdesc.handle.fd = make_file(4096, &counter_view);
  auto* counter = reinterpret_cast<volatile unsigned long long*>(counter_view);
  CUexternalSemaphore sem = nullptr;
  // A physical allocation exported as a descriptor (cuMemExportToShareableHandle).
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = 0;
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  size_t granularity = 0;
  CU_OK(cuMemGetAllocationGranularity(&granularity, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  CUmemGenericAllocationHandle physical = 0;
  CU_OK(cuMemCreate(&physical, granularity, &prop, 0));
  int exported = -1;
  if (!shm) {
    // The export is rgpu's stand-in (a shareable handle for another
    // process's cuMemImportFromShareableHandle); external memory takes
    // descriptors over shm only, this one too.
    CU_OK(cuMemExportToShareableHandle(&exported, physical, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
    CUDA_EXTERNAL_MEMORY_HANDLE_DESC stand_in{};
    stand_in.type = CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD;
    stand_in.handle.fd = exported;
    stand_in.size = granularity;
    EXPECT_CU(CUDA_ERROR_NOT_SUPPORTED, cuImportExternalMemory(&mem, &stand_in));
    close(exported);
    CU_OK(cuMemRelease(physical));
    EXPECT_CU(CUDA_ERROR_NOT_SUPPORTED, cuImportExternalMemory(&mem, &desc));
    EXPECT_CU(CUDA_ERROR_NOT_SUPPORTED, cuImportExternalSemaphore(&sem, &sdesc));
    return finish();
  }
  EXPECT_CU(CUDA_ERROR_NOT_SUPPORTED,
            cuMemExportToShareableHandle(&exported, physical, CU_MEM_HANDLE_TYPE_FABRIC, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
            cuMemExportToShareableHandle(&exported, physical + 1000, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  CU_OK(cuMemExportToShareableHandle(&exported, physical, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  CHECK(exported >= 0);
  {
    // What is written to the allocation (mapped here) is what the import of its descriptor reads.
    CUdeviceptr va = 0;
    CU_OK(cuMemAddressReserve(&va, granularity, 0, 0, 0));
    CU_OK(cuMemMap(va, granularity, 0, physical, 0));
    CUmemAccessDesc access{};
    access.location = prop.location;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    CU_OK(cuMemSetAccess(va, granularity, &access, 1));
    CU_OK(cuMemsetD8(va + 100, 0x5e, 8));
    CU_OK(cuCtxSynchronize());
    CUDA_EXTERNAL_MEMORY_HANDLE_DESC vdesc{};
    vdesc.type = CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD;
    vdesc.handle.fd = exported;
    vdesc.size = granularity;
    CUexternalMemory vmem = nullptr;
    CU_OK(cuImportExternalMemory(&vmem, &vdesc));
    CUDA_EXTERNAL_MEMORY_BUFFER_DESC vbuf{};
    vbuf.size = granularity;
    CUdeviceptr alias = 0;
    CU_OK(cuExternalMemoryGetMappedBuffer(&alias, vmem, &vbuf));
    unsigned char seen[8] = {};
    CU_OK(cuMemcpyDtoH(seen, alias + 100, 8));
    CHECK(seen[0] == 0x5e && seen[7] == 0x5e);
    CU_OK(cuMemFree(alias));
    CU_OK(cuDestroyExternalMemory(vmem));
    CU_OK(cuMemUnmap(va, granularity));
    CU_OK(cuMemAddressFree(va, granularity));
  }
  CU_OK(cuMemRelease(physical));
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_NONE;
  CU_OK(cuMemCreate(&physical, granularity, &prop, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
            cuMemExportToShareableHandle(&exported, physical, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  CU_OK(cuMemRelease(physical));

  CUDA_EXTERNAL_MEMORY_HANDLE_DESC bad = desc;
  bad.type = CU_EXTERNAL_MEMORY_HANDLE_TYPE_D3D11_RESOURCE;
  EXPECT_CU(CUDA_ERROR_NOT_SUPPORTED, cuImportExternalMemory(&mem, &bad));
  bad = desc;
  bad.flags = 0x80;
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuImportExternalMemory(&mem, &bad));
  CU_OK(cuImportExternalMemory(&mem, &desc));

  CUDA_EXTERNAL_MEMORY_BUFFER_DESC buf{};
  buf.offset = 1000;
  buf.size = 2000;
  CUdeviceptr d = 0;
  CU_OK(cuExternalMemoryGetMappedBuffer(&d, mem, &buf));
  std::vector<unsigned char> back(buf.size);
  CU_OK(cuMemcpyDtoH(back.data(), d, back.size()));
  CHECK(back[0] == static_cast<unsigned char>(1000 * 5 + 1) && back[1999] == view[2999]);
  CU_OK(cuMemsetD8(d + 10, 0x7c, 5));
  CU_OK(cuCtxSynchronize());
  CHECK(view[1010] == 0x7c && view[1014] == 0x7c && view[1015] != 0x7c);
  buf.size = n;
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuExternalMemoryGetMappedBuffer(&d, mem, &buf));

  CUDA_EXTERNAL_MEMORY_MIPMAPPED_ARRAY_DESC mdesc{};
  mdesc.offset = 4096;
  mdesc.arrayDesc.Width = 32;
  mdesc.arrayDesc.Height = 8;
  mdesc.arrayDesc.Format = CU_AD_FORMAT_UNSIGNED_INT32;
  mdesc.arrayDesc.NumChannels = 1;
  mdesc.numLevels = 2;
  CUmipmappedArray mip = nullptr;
  CU_OK(cuExternalMemoryGetMappedMipmappedArray(&mip, mem, &mdesc));
  CUarray level0 = nullptr;
  CU_OK(cuMipmappedArrayGetLevel(&level0, mip, 0));
  std::vector<unsigned int> first_row(32);
  CU_OK(cuMemcpyAtoH(first_row.data(), level0, 0, 32 * sizeof(unsigned int)));
  unsigned int expected;
  std::memcpy(&expected, view + 4096 + 4, 4);
  CHECK(first_row[1] == expected);
  mdesc.arrayDesc.NumChannels = 3;
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuExternalMemoryGetMappedMipmappedArray(&mip, mem, &mdesc));
  CU_OK(cuMipmappedArrayDestroy(mip));

  CU_OK(cuImportExternalSemaphore(&sem, &sdesc));
  CUstream stream;
  CU_OK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS sp{};
  sp.params.fence.value = 42;
  CU_OK(cuMemsetD8Async(d, 0x41, 4, stream));
  CU_OK(cuSignalExternalSemaphoresAsync(&sem, &sp, 1, stream));
  CU_OK(cuStreamSynchronize(stream));
  CHECK(*counter == 42 && view[1000] == 0x41);
  CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS wp{};
  wp.params.fence.value = 42;
  CU_OK(cuWaitExternalSemaphoresAsync(&sem, &wp, 1, stream));
  CU_OK(cuStreamSynchronize(stream));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuWaitExternalSemaphoresAsync(&sem, nullptr, 1, stream));

  // Graph nodes: a wait (generic API) then a signal.
  CUgraph graph;
  CU_OK(cuGraphCreate(&graph, 0));
  CUgraphNodeParams gp{};
  gp.type = CU_GRAPH_NODE_TYPE_EXT_SEMAS_WAIT;
  gp.extSemWait = {&sem, &wp, 1};
  CUgraphNode wait_node, signal_node;
  CU_OK(cuGraphAddNode(&wait_node, graph, nullptr, nullptr, 0, &gp));
  sp.params.fence.value = 43;
  CUDA_EXT_SEM_SIGNAL_NODE_PARAMS snode{&sem, &sp, 1};
  CU_OK(cuGraphAddExternalSemaphoresSignalNode(&signal_node, graph, &wait_node, 1, &snode));
  CUDA_EXT_SEM_WAIT_NODE_PARAMS got{};
  CU_OK(cuGraphExternalSemaphoresWaitNodeGetParams(wait_node, &got));
  CHECK(got.numExtSems == 1 && got.extSemArray[0] == sem && got.paramsArray[0].params.fence.value == 42);
  CUgraphExec exec;
  CU_OK(cuGraphInstantiate(&exec, graph, 0));
  CU_OK(cuGraphLaunch(exec, stream));
  CU_OK(cuStreamSynchronize(stream));
  CHECK(*counter == 43);
  sp.params.fence.value = 44;
  CU_OK(cuGraphExecExternalSemaphoresSignalNodeSetParams(exec, signal_node, &snode));
  CU_OK(cuGraphLaunch(exec, stream));
  CU_OK(cuStreamSynchronize(stream));
  CHECK(*counter == 44);
  CU_OK(cuGraphExecDestroy(exec));
  CU_OK(cuGraphDestroy(graph));

  CU_OK(cuDestroyExternalSemaphore(sem));
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cuDestroyExternalSemaphore(sem));
  CU_OK(cuDestroyExternalMemory(mem));
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cuDestroyExternalMemory(mem));
  CU_OK(cuMemFree(d));
  CU_OK(cuStreamDestroy(stream));
  return finish();
}
