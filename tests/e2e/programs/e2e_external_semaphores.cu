// External semaphores, on the host-test backend: a memfd holding a 64-bit
// counter stands for a semaphore another API exported (host-test keeps the
// semaphore's value there, so this program sees and moves it as that API
// would). Over shm: signals and waits happen in stream order; a wait holds
// its stream until the application signals from the host; the same as graph
// nodes (added one by one, through the generic API, captured). Over tcp the
// import is not supported.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "check.h"

// A semaphore file, its counter mapped here at *counter.
static int make_semaphore_file(std::atomic<unsigned long long>** counter) {
  // Sealed at its size, as the server requires of memory it maps.
  int fd = memfd_create("e2e-external-semaphore", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0 || ftruncate(fd, 4096) != 0) return -1;
  if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) != 0) return -1;
  void* p = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) return -1;
  *counter = static_cast<std::atomic<unsigned long long>*>(p);
  return fd;
}

static cudaExternalSemaphoreSignalParams signal_value(unsigned long long v) {
  cudaExternalSemaphoreSignalParams p{};
  p.params.fence.value = v;
  return p;
}

static cudaExternalSemaphoreWaitParams wait_value(unsigned long long v) {
  cudaExternalSemaphoreWaitParams p{};
  p.params.fence.value = v;
  return p;
}

int main() {
  const char* transport = std::getenv("RGPU_TRANSPORT");
  bool shm = transport && std::strcmp(transport, "shm") == 0;
  std::atomic<unsigned long long>* timeline = nullptr;
  int fd = make_semaphore_file(&timeline);
  CHECK(fd >= 0);
  cudaExternalSemaphoreHandleDesc desc{};
  desc.type = cudaExternalSemaphoreHandleTypeTimelineSemaphoreFd;
  desc.handle.fd = fd;
  cudaExternalSemaphore_t sem = nullptr;
  if (!shm) {
    EXPECT_STATUS(cudaErrorNotSupported, cudaImportExternalSemaphore(&sem, &desc));
    return finish();
  }
  cudaExternalSemaphoreHandleDesc bad = desc;
  bad.type = cudaExternalSemaphoreHandleTypeD3D12Fence;
  EXPECT_STATUS(cudaErrorNotSupported, cudaImportExternalSemaphore(&sem, &bad));
  bad = desc;
  bad.handle.fd = -1;
  EXPECT_STATUS(cudaErrorInvalidValue, cudaImportExternalSemaphore(&sem, &bad));
  OK(cudaImportExternalSemaphore(&sem, &desc));
  CHECK(fcntl(fd, F_GETFD) == -1);  // CUDA owns it now

  // A signal comes after the work queued before it on its stream.
  cudaStream_t s1, s2;
  OK(cudaStreamCreate(&s1));
  OK(cudaStreamCreate(&s2));
  unsigned char* d = nullptr;
  OK(cudaMalloc(&d, 4096));
  OK(cudaMemsetAsync(d, 0x11, 4096, s1));
  auto five = signal_value(5);
  OK(cudaSignalExternalSemaphoresAsync(&sem, &five, 1, s1));
  OK(cudaStreamSynchronize(s1));
  CHECK(timeline->load() == 5);

  // A wait for a value reached already lets its stream go on.
  auto wait5 = wait_value(5);
  OK(cudaWaitExternalSemaphoresAsync(&sem, &wait5, 1, s2));
  OK(cudaMemsetAsync(d, 0x22, 16, s2));
  OK(cudaStreamSynchronize(s2));
  CHECK(read_back(d, 16)[15] == 0x22);

  // A wait for a later value holds its stream until the host signals it.
  auto wait9 = wait_value(9);
  auto started = std::chrono::steady_clock::now();
  std::thread host_signal([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    timeline->store(9);
  });
  OK(cudaWaitExternalSemaphoresAsync(&sem, &wait9, 1, s2));
  OK(cudaMemsetAsync(d, 0x33, 16, s2));
  OK(cudaStreamSynchronize(s2));
  auto waited = std::chrono::steady_clock::now() - started;
  host_signal.join();
  CHECK(waited >= std::chrono::milliseconds(250));
  CHECK(read_back(d, 16)[0] == 0x33);

  // A binary semaphore: a signal sets it, a wait takes it.
  std::atomic<unsigned long long>* binary = nullptr;
  cudaExternalSemaphoreHandleDesc bdesc{};
  bdesc.type = cudaExternalSemaphoreHandleTypeOpaqueFd;
  bdesc.handle.fd = make_semaphore_file(&binary);
  cudaExternalSemaphore_t bsem = nullptr;
  OK(cudaImportExternalSemaphore(&bsem, &bdesc));
  auto any = signal_value(0);
  OK(cudaSignalExternalSemaphoresAsync(&bsem, &any, 1, s1));
  OK(cudaStreamSynchronize(s1));
  CHECK(binary->load() == 1);
  auto take = wait_value(0);
  cudaExternalSemaphore_t both[2] = {bsem, sem};
  cudaExternalSemaphoreWaitParams both_params[2] = {take, wait5};
  OK(cudaWaitExternalSemaphoresAsync(both, both_params, 2, s1));
  OK(cudaStreamSynchronize(s1));
  CHECK(binary->load() == 0);

  // The per-thread default stream and the legacy one take them too.
  auto seven = signal_value(11);
  OK(cudaSignalExternalSemaphoresAsync(&sem, &seven, 1, cudaStreamPerThread));
  OK(cudaStreamSynchronize(cudaStreamPerThread));
  CHECK(timeline->load() == 11);

  // Bad handles, flags, arrays.
  int not_a_handle = 0;
  auto bogus = reinterpret_cast<cudaExternalSemaphore_t>(&not_a_handle);
  EXPECT_STATUS(cudaErrorInvalidResourceHandle, cudaSignalExternalSemaphoresAsync(&bogus, &five, 1, s1));
  EXPECT_STATUS(cudaErrorInvalidValue, cudaSignalExternalSemaphoresAsync(nullptr, &five, 1, s1));
  auto flagged = signal_value(1);
  flagged.flags = cudaExternalSemaphoreSignalSkipNvSciBufMemSync;
  OK(cudaSignalExternalSemaphoresAsync(&sem, &flagged, 1, s1));  // queued: its error comes at the next sync
  EXPECT_STATUS(cudaErrorInvalidValue, cudaStreamSynchronize(s1));
  CHECK(timeline->load() == 11);
  EXPECT_STATUS(cudaErrorInvalidResourceHandle, cudaDestroyExternalSemaphore(bogus));

  // As graph nodes: a wait for the host's signal, then a memset, then a signal.
  cudaGraph_t graph;
  OK(cudaGraphCreate(&graph, 0));
  auto wait20 = wait_value(20);
  cudaExternalSemaphoreWaitNodeParams wnode{&sem, &wait20, 1};
  cudaGraphNode_t wait_node, memset_node, signal_node;
  OK(cudaGraphAddExternalSemaphoresWaitNode(&wait_node, graph, nullptr, 0, &wnode));
  cudaMemsetParams ms{};
  ms.dst = d;
  ms.value = 0x44;
  ms.elementSize = 1;
  ms.width = 16;
  ms.height = 1;
  OK(cudaGraphAddMemsetNode(&memset_node, graph, &wait_node, 1, &ms));
  auto sig21 = signal_value(21);
  cudaExternalSemaphoreSignalNodeParams snode{&sem, &sig21, 1};
  OK(cudaGraphAddExternalSemaphoresSignalNode(&signal_node, graph, &memset_node, 1, &snode));
  cudaExternalSemaphoreSignalNodeParams got{};
  OK(cudaGraphExternalSemaphoresSignalNodeGetParams(signal_node, &got));
  CHECK(got.numExtSems == 1 && got.extSemArray[0] == sem && got.paramsArray[0].params.fence.value == 21);
  cudaExternalSemaphoreWaitNodeParams got_wait{};
  EXPECT_STATUS(cudaErrorInvalidValue, cudaGraphExternalSemaphoresWaitNodeGetParams(signal_node, &got_wait));
  OK(cudaGraphExternalSemaphoresWaitNodeGetParams(wait_node, &got_wait));
  CHECK(got_wait.numExtSems == 1 && got_wait.paramsArray[0].params.fence.value == 20);
  cudaExternalSemaphoreSignalNodeParams bad_node{&bogus, &sig21, 1};
  cudaGraphNode_t unused;
  EXPECT_STATUS(cudaErrorInvalidResourceHandle,
                cudaGraphAddExternalSemaphoresSignalNode(&unused, graph, nullptr, 0, &bad_node));
  cudaGraphExec_t exec;
  OK(cudaGraphInstantiate(&exec, graph, 0));
  OK(cudaMemset(d, 0, 16));
  timeline->store(12);
  started = std::chrono::steady_clock::now();
  std::thread host_signal20([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    timeline->store(20);
  });
  OK(cudaGraphLaunch(exec, s1));
  OK(cudaStreamSynchronize(s1));
  waited = std::chrono::steady_clock::now() - started;
  host_signal20.join();
  CHECK(waited >= std::chrono::milliseconds(250));
  CHECK(read_back(d, 16)[15] == 0x44 && timeline->load() == 21);

  // New values for the executable graph; the graph's own node changes apart from it.
  auto sig25 = signal_value(25);
  cudaExternalSemaphoreSignalNodeParams snode25{&sem, &sig25, 1};
  OK(cudaGraphExecExternalSemaphoresSignalNodeSetParams(exec, signal_node, &snode25));
  auto sig30 = signal_value(30);
  cudaExternalSemaphoreSignalNodeParams snode30{&sem, &sig30, 1};
  OK(cudaGraphExternalSemaphoresSignalNodeSetParams(signal_node, &snode30));
  OK(cudaGraphLaunch(exec, s1));
  OK(cudaStreamSynchronize(s1));
  CHECK(timeline->load() == 25);
  OK(cudaGraphExternalSemaphoresSignalNodeGetParams(signal_node, &got));
  CHECK(got.paramsArray[0].params.fence.value == 30);
  OK(cudaGraphExecDestroy(exec));

  // Through the generic node API, and captured from a stream.
  cudaGraph_t generic_graph;
  OK(cudaGraphCreate(&generic_graph, 0));
  auto sig40 = signal_value(40);
  cudaGraphNodeParams gp{};
  gp.type = cudaGraphNodeTypeExtSemaphoreSignal;
  gp.extSemSignal = {&sem, &sig40, 1};
  cudaGraphNode_t generic_node;
  OK(cudaGraphAddNode(&generic_node, generic_graph, nullptr, nullptr, 0, &gp));
  cudaGraphNodeType type;
  OK(cudaGraphNodeGetType(generic_node, &type));
  CHECK(type == cudaGraphNodeTypeExtSemaphoreSignal);
  OK(cudaGraphInstantiate(&exec, generic_graph, 0));
  OK(cudaGraphLaunch(exec, s1));
  OK(cudaStreamSynchronize(s1));
  CHECK(timeline->load() == 40);
  auto sig45 = signal_value(45);
  gp.extSemSignal = {&sem, &sig45, 1};
  OK(cudaGraphExecNodeSetParams(exec, generic_node, &gp));
  OK(cudaGraphLaunch(exec, s1));
  OK(cudaStreamSynchronize(s1));
  CHECK(timeline->load() == 45);
  OK(cudaGraphExecDestroy(exec));
  OK(cudaGraphDestroy(generic_graph));

  cudaGraph_t captured;
  OK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal));
  auto sig50 = signal_value(50);
  OK(cudaSignalExternalSemaphoresAsync(&sem, &sig50, 1, s1));
  OK(cudaStreamEndCapture(s1, &captured));
  CHECK(timeline->load() == 45);  // captured, not run
  size_t count = 0;
  OK(cudaGraphGetNodes(captured, nullptr, &count));
  CHECK(count == 1);
  OK(cudaGraphInstantiate(&exec, captured, 0));
  OK(cudaGraphLaunch(exec, s1));
  OK(cudaStreamSynchronize(s1));
  CHECK(timeline->load() == 50);
  OK(cudaGraphExecDestroy(exec));
  OK(cudaGraphDestroy(captured));
  OK(cudaGraphDestroy(graph));
  OK(cudaDestroyExternalSemaphore(sem));
  OK(cudaDestroyExternalSemaphore(bsem));
  EXPECT_STATUS(cudaErrorInvalidResourceHandle, cudaSignalExternalSemaphoresAsync(&sem, &five, 1, s1));
  OK(cudaFree(d));
  return finish();
}
