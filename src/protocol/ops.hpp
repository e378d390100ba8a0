// Operation numbers. Hand-written calls (those whose semantics need code:
// memory, copies, streams, modules, launches) live below 1000; the generated
// forwarding calls are numbered from 1000 by codegen in ops_generated.hpp.
#pragma once
#include <cstdint>

namespace rgpu::proto {

enum Op : uint16_t {
  kOpReply = 1,
  kOpHello = 2,
  kOpChallenge = 3,
  kOpJoin = 4,  // another connection of an application joins its session
  kOpHostCallback = 5,  // on the callback connection: run callback n / it ran
  kOpDeviceOutput = 6,  // ahead of a reply: what kernels printed (args: fd; payload: text)

  kOpMalloc = 10,
  kOpFree = 11,
  kOpMallocPitch = 12,
  kOpMemcpyHtoD = 13,
  kOpMemcpyDtoH = 14,
  kOpMemcpyDtoD = 15,
  kOpMemset = 16,
  kOpMemcpy2DHtoD = 17,
  kOpMemcpy2DDtoH = 18,
  kOpMemcpy2DDtoD = 19,
  kOpMemset2D = 20,
  kOpMemGetInfo = 21,
  kOpHostRegisterShared = 23,    // shm: a client memfd (passed with the frame) to map and pin
  kOpHostUnregisterShared = 24,
  kOpMemcpyShared = 25,          // shm: copy between device memory and registered shared memory

  kOpStreamCreate = 30,
  kOpStreamDestroy = 31,
  kOpStreamSynchronize = 32,
  kOpStreamQuery = 33,
  kOpStreamWaitEvent = 34,
  kOpStreamSetAttribute = 35,
  kOpStreamGetAttribute = 36,
  kOpEventCreate = 40,
  kOpEventDestroy = 41,
  kOpEventRecord = 42,
  kOpEventSynchronize = 43,
  kOpEventQuery = 44,
  kOpEventElapsedTime = 45,

  kOpModuleLoad = 51,
  kOpLaunchKernel = 52,
  kOpFuncGetAttributes = 53,
  kOpFuncSetAttribute = 54,
  kOpFuncSetCacheConfig = 55,
  kOpOccupancyMaxActiveBlocks = 56,
  kOpGetErrorString = 57,
  kOpLaunchCooperativeKernel = 58,  // as kOpLaunchKernel; answered (its errors are the launch's own)

  kOpLaunchHostFunc = 46,  // a host callback in stream order (cudaLaunchHostFunc, cudaStreamAddCallback)

  // Stream-ordered allocation and memory pools.
  kOpMallocAsync = 80,
  kOpFreeAsync = 81,
  kOpMemPoolCreate = 82,
  kOpMemPoolDestroy = 83,
  kOpMemPoolSetAttribute = 84,
  kOpMemPoolGetAttribute = 85,
  kOpMemPoolTrimTo = 86,
  kOpDeviceGetDefaultMemPool = 87,
  kOpDeviceGetMemPool = 88,
  kOpDeviceSetMemPool = 89,

  kOpDeviceSynchronize = 60,
  kOpDeviceReset = 61,
  kOpGetDeviceProperties = 62,

  // Driver API (libcuda.so.1): 100-199.
  kOpModuleLoadImage = 100,      // a whole image (fat binary, cubin, PTX) -> module handle
  kOpModuleGetFunction = 101,    // module handle + kernel name -> function and layout
  kOpModuleGetGlobal = 102,      // module handle + variable name -> address and size

  // Driver API breadth: 400-499.
  kOpStreamMemOps = 400,  // cuStreamBatchMemOp and the wait/write-value calls: posted
  kOpLink = 401,          // JIT-link inputs (payload) -> the linked image

  kOpFirstGenerated = 1000,
};

}  // namespace rgpu::proto
