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
  // On the callback connection: run callback n (its request's sequence, the
  // bytes a staged upload asks for; payload: a staged download's bytes) / it
  // ran (payload: the bytes asked for).
  kOpHostCallback = 5,
  kOpDeviceOutput = 6,  // ahead of a reply: what kernels printed (args: fd; payload: text)
  kOpGoodbye = 7,       // the worker ends the session (a limit): args: why
  kOpHeartbeat = 8,     // on the heartbeat connection: the client lives / the worker answers (its peer timeout, ms)

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
  // Device memory at the addresses named (a session moved here keeps its
  // device addresses: docs/migration.md): args: count, then each base and
  // size, in address order; all made or none; each freed by kOpFree.
  kOpMallocAt = 26,
  // Why the session cannot move (docs/migration.md) and what it holds: reply:
  // count, then each reason (none: it can move); count, then each
  // allocation's base and size, in address order.
  kOpMoveCheck = 27,
  // A module loaded ahead of a session that moves here: hash, with_image,
  // the kernels to look up (payload: the image) -> whether the image is
  // needed. The session's next load of that image by hash takes it.
  kOpModulePreload = 28,
  // A virtual memory reservation at the address named, for a session moved
  // here: base, size; cudaErrorAlreadyMapped where it cannot be there.
  kOpVmmReserveAt = 29,

  kOpStreamCreate = 30,
  kOpStreamDestroy = 31,
  kOpStreamSynchronize = 32,
  kOpStreamQuery = 33,
  kOpStreamWaitEvent = 34,
  kOpStreamSetAttribute = 35,
  kOpStreamGetAttribute = 36,
  kOpEventCreate = 40,  // args: flags, count (1..kMaxEventBatch); reply: made (>= 1), then each
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
  kOpDeviceGetAttribute = 63,

  // Driver API (libcuda.so.1): 100-199.
  kOpModuleLoadImage = 100,      // a whole image (fat binary, cubin, PTX) -> module handle
  kOpModuleGetFunction = 101,    // module handle + kernel name -> function and layout
  kOpModuleGetGlobal = 102,      // module handle + variable name -> address, size, managed

  // CUDA arrays, mipmapped arrays, 3-D copies, texture and surface objects: 300-399.
  kOpArrayCreate = 300,               // format, extent, flags -> array handle
  kOpArrayDestroy = 301,
  kOpMipmappedArrayCreate = 302,      // format, extent, levels, flags -> mipmapped array handle
  kOpMipmappedArrayDestroy = 303,
  kOpMipmappedArrayGetLevel = 304,    // mipmapped array, level -> array handle (owned by the mipmap)
  kOpMemcpy3DHtoD = 305,              // packed rows (payload) into an array or pitched device memory
  kOpMemcpy3DDtoH = 306,              // an array or pitched device region -> packed rows
  kOpMemcpy3DDtoD = 307,              // between arrays and pitched device memory of one session
  kOpTextureObjectCreate = 308,       // resource, texture (and view) descriptors -> the GPU's object value
  kOpTextureObjectDestroy = 309,
  kOpSurfaceObjectCreate = 310,       // resource descriptor (an array) -> the GPU's object value
  kOpSurfaceObjectDestroy = 311,
  // Legacy texture and surface references (texture_reference_wire.hpp).
  kOpTexRefCreate = 312,
  kOpTexRefDestroy = 313,
  kOpModuleGetReference = 314,  // module, name, surface? -> reference handle
  kOpReferenceSet = 315,        // reference, RefAttr, RefValue -> RefValue
  kOpReferenceGet = 316,        // reference, RefAttr, RefValue (the dimension asked) -> RefValue
  // Launch attributes, libraries, runtime odds and ends: 600-699.
  kOpLaunchKernelEx = 600,                 // as kOpLaunchKernel, then the launch attributes
  kOpOccupancyMaxActiveClusters = 601,     // function + launch configuration -> clusters
  kOpOccupancyMaxPotentialClusterSize = 602,
  kOpOccupancyAvailableDynamicSMem = 603,  // function, blocks per SM, block size -> bytes
  kOpModuleEnumerateFunctions = 604,       // module -> each kernel's name and description
  kOpEventRecordWithFlags = 605,
  kOpStreamCopyAttributes = 606,
  kOpFuncSetSharedMemConfig = 607,
  // Peers, mapped host memory, IPC, virtual memory management: 500-599.
  kOpDeviceCanAccessPeer = 500,
  kOpDeviceEnablePeerAccess = 501,  // from the frame's device
  kOpDeviceDisablePeerAccess = 502,
  kOpDeviceGetP2PAttribute = 503,
  kOpDeviceGetP2PAtomicCapabilities = 504,
  kOpDeviceGetHostAtomicCapabilities = 505,
  kOpHostGetDevicePointer = 506,    // shm: device address of shared page-locked memory
  kOpMemPoolSetAccess = 507,
  kOpMemPoolGetAccess = 508,
  kOpManagedMap = 509,              // shm: a client memfd (with the frame) to map at the client's address
  kOpManagedUnmap = 510,
  kOpVmmGranularity = 511,          // virtual memory management (cuMemCreate & co.)
  kOpVmmCreate = 512,
  kOpVmmRelease = 513,
  kOpVmmReserve = 514,
  kOpVmmFree = 515,
  kOpVmmMap = 516,
  kOpVmmUnmap = 517,
  kOpVmmSetAccess = 518,
  kOpVmmGetAccess = 519,
  kOpIpcGetMemHandle = 520,         // IPC between application processes of one server
  kOpIpcOpenMemHandle = 521,
  kOpIpcCloseMemHandle = 522,
  kOpIpcGetEventHandle = 523,
  kOpIpcOpenEventHandle = 524,
  // Graphs and stream capture (runtime and driver API): 200-299. Graphs,
  // nodes and executable graphs are server handles checked per session.
  kOpGraphCreate = 200,
  kOpGraphDestroy = 201,
  kOpGraphClone = 202,
  kOpGraphAddNode = 203,          // graph, dependencies, node params -> node
  kOpGraphNodeGetParams = 204,
  kOpGraphNodeSetParams = 205,
  kOpGraphNodeGetType = 206,
  kOpGraphDestroyNode = 207,
  kOpGraphGetNodes = 208,
  kOpGraphGetRootNodes = 209,
  kOpGraphGetEdges = 210,
  kOpGraphNodeGetDependencies = 211,
  kOpGraphNodeGetDependentNodes = 212,
  kOpGraphAddDependencies = 213,
  kOpGraphRemoveDependencies = 214,
  kOpGraphNodeFindInClone = 215,
  kOpGraphChildGraphNodeGetGraph = 216,
  kOpGraphInstantiate = 217,
  kOpGraphExecDestroy = 218,
  kOpGraphLaunch = 219,
  kOpGraphUpload = 220,
  kOpGraphExecUpdate = 221,
  kOpGraphExecNodeSetParams = 222,
  kOpGraphNodeSetEnabled = 223,
  kOpGraphNodeGetEnabled = 224,
  kOpGraphExecGetFlags = 225,
  kOpGraphDebugDotPrint = 226,    // -> the DOT text; the client writes the file
  kOpStreamBeginCapture = 230,
  kOpStreamBeginCaptureToGraph = 231,
  kOpStreamEndCapture = 232,
  kOpStreamGetCaptureInfo = 233,
  kOpStreamUpdateCaptureDependencies = 234,
  kOpThreadExchangeStreamCaptureMode = 235,
  kOpDeviceGetGraphMemAttribute = 236,
  kOpDeviceSetGraphMemAttribute = 237,
  kOpUserObjectCreate = 240,      // callback number of its destructor, references, flags -> object
  kOpUserObjectRetain = 241,
  kOpUserObjectRelease = 242,
  kOpGraphRetainUserObject = 243,
  kOpGraphReleaseUserObject = 244,
  kOpGraphKernelNodeGetAttribute = 245,
  kOpGraphKernelNodeSetAttribute = 246,
  kOpGraphKernelNodeCopyAttributes = 247,
  // bytes -> the worker's address of a slab of its page-locked memory, where
  // graph copies of pageable application memory are staged (tcp, ucx)
  kOpGraphStagingAlloc = 248,
  // A session's graphs as a move carries them (docs/migration.md): reply:
  // count, then each reason they cannot move; count, then each graph or
  // executable graph with its image (protocol/graph_image.hpp); count, then
  // each kernel they launch with the attributes set of it.
  kOpMoveGraphs = 249,
  // A moved graph built from its image: args: whether it is an executable
  // graph, its flags, its source graph, the image -> the handle, its nodes.
  kOpGraphBuild = 250,
  // Driver API breadth: 400-499.
  kOpStreamMemOps = 400,  // cuStreamBatchMemOp and the wait/write-value calls: posted
  kOpLink = 401,          // JIT-link inputs (payload) -> the linked image
  // Shareable handles (cuMemExportToShareableHandle & co.). A POSIX file
  // descriptor travels beside the frame (shm only); a fabric handle and
  // pool pointer export data travel as their bytes.
  kOpVmmExport = 430,               // allocation, handle type -> descriptor or fabric handle
  kOpVmmImport = 431,               // handle type, descriptor or fabric handle -> allocation, its properties
  kOpMemPoolExport = 432,           // pool, handle type -> descriptor or fabric handle
  kOpMemPoolImport = 433,           // handle type, descriptor or fabric handle -> pool
  kOpMemPoolExportPointer = 434,    // pointer -> CUmemPoolPtrExportData
  kOpMemPoolImportPointer = 435,    // pool, CUmemPoolPtrExportData -> pointer, its size
  kOpMemGetHandleForAddressRange = 436,  // range, handle type, flags -> dma-buf descriptor
  // Green contexts (490-509). A resource travels as the CUdevResource the
  // client holds, its token in the driver's private bytes (green_context_table.hpp);
  // a green context as its session slot (u16).
  kOpDeviceGetDevResource = 490,    // type -> resource of the header's device
  kOpGreenCtxGetDevResource = 491,  // slot, type -> resource
  kOpDevSmResourceSplit = 492,      // token, groups, want result (u8), want remaining (u8), flags, min count
                                    //   -> groups made, the groups, the remaining one
  kOpDevResourceGenerateDesc = 493, // count, tokens -> descriptor
  kOpGreenCtxCreate = 494,          // descriptor, flags -> slot, id
  kOpGreenCtxDestroy = 495,         // slot
  kOpGreenCtxRecordEvent = 496,     // slot, event: posted
  kOpGreenCtxWaitEvent = 497,       // slot, event: posted
  kOpGreenCtxStreamCreate = 498,    // slot, flags, priority -> stream
  kOpStreamGetGreenCtx = 499,       // stream -> slot (0: none)
  // External memory and semaphores (runtime and driver API): 450-469. Their
  // file descriptors travel with the frame (shm only).
  kOpExternalMemoryImport = 450,     // handle type, size, flags (+ fd) -> external memory
  kOpExternalMemoryDestroy = 451,
  kOpExternalMemoryMapBuffer = 452,  // memory, offset, size, flags -> device address
  kOpExternalMemoryMapMipmap = 453,  // memory, offset, format, extent, flags, levels -> mipmapped array
  kOpExternalSemaphoreImport = 454,  // handle type, flags (+ fd) -> external semaphore
  kOpExternalSemaphoreDestroy = 455,
  kOpExternalSemaphoresSignal = 456,  // stream, operations (external_wire.hpp): posted
  kOpExternalSemaphoresWait = 457,    // stream, operations: posted
  kOpGraphConditionalHandleCreate = 470,  // graph, default value, flags -> the driver's handle
  kOpModuleGetManaged = 471,              // module, name -> address, size, managed (1) of its managed variable
  kOpDeviceRegisterAsyncNotification = 472,    // device, client callback number -> registration
  kOpDeviceUnregisterAsyncNotification = 473,  // device, registration
  kOpAsyncNotification = 474,  // on the callback connection: callback number, cudaAsyncNotificationInfo_t / it ran
  kOpMulticastCreate = 410,  // CUmulticastObjectProp -> multicast object (a VMM allocation handle)
  kOpMemBatchDecompress = 411,  // stream, flags, operations -> the driver's result, the index it concerns

  // NCCL's API (rgpu's libnccl.so.2, nccl_wire.hpp): 700-719. Every reply
  // starts with the call's ncclResult_t.
  kOpNcclGetUniqueId = 700,      // -> the id (NcclUniqueIdWire), made by the worker's NCCL
  kOpNcclCommInitRank = 701,     // NcclInitWire -> communicator
  kOpNcclCommSplit = 702,        // communicator, color, key, NcclConfigWire -> communicator (0: none)
  kOpNcclCommFinalize = 703,     // communicator
  kOpNcclCommDestroy = 704,      // communicator
  kOpNcclCommAbort = 705,        // communicator
  kOpNcclCommGetAsyncError = 706,  // communicator -> its asynchronous error
  kOpNcclGetLastError = 707,     // communicator (0: none) -> the last error's text
  kOpNcclCollective = 708,       // NcclCollectiveWire: enqueued on its stream
  kOpNcclGroup = 709,            // inits (NcclInitWire), collectives: one NCCL group -> the inits' communicators
  kOpNcclRedOpCreatePreMulSum = 710,  // communicator, datatype, residence, scalar -> the op
  kOpNcclRedOpDestroy = 711,     // communicator, op
  kOpNcclCommRegister = 712,     // communicator, address, size -> registration
  kOpNcclCommDeregister = 713,   // communicator, registration

  kOpFirstGenerated = 1000,
};

}  // namespace rgpu::proto
