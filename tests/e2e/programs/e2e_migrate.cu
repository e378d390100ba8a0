// A session moved to another server while the application runs (`rgpu
// migrate`, docs/migration.md), driven by tests/e2e/migrate_test.sh: the
// program makes device memory of several sizes, pitched memory, streams with
// flags and a priority, events with flags (timed ones keep their times),
// stream-ordered memory, the default pool's setting and a pool of its own,
// page-locked memory (mapped too), a module variable and context settings
// (a limit, the cache preference), then keeps two threads calling until
// SIGNAL_FILE appears (the script has moved the session by then). Everything
// must hold its contents and keep working on the new server: the
// application's pointers and handles are the same.
// The program also holds its module variable's address, which must still
// name the variable after the move, though the module loads elsewhere.
// Its graphs move too: a captured step instantiated and its graph destroyed
// (as PyTorch does), and a graph it keeps, with a child graph, a host node,
// a node it updates in the executable graph after the move and one disabled
// there. Its virtual memory (cuMemCreate & co., as XLA and PyTorch's
// expandable segments use it) keeps its addresses and contents. With `array`
// it also holds a CUDA array and a graph with a memory node, which a move
// refuses: the session stays and keeps working.
//   usage: e2e_migrate SIGNAL_FILE [array]
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "driver_check.h"

__device__ int g_values[4];
__device__ int g_graph_values[2];

__global__ void bump(int* p) { p[0] += 1; }

namespace {

unsigned char pattern(size_t buffer, size_t i) { return static_cast<unsigned char>(buffer * 37 + i * 7 + i / 4096); }

std::vector<unsigned char> expected(size_t buffer, size_t n) {
  std::vector<unsigned char> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = pattern(buffer, i);
  return v;
}

bool signalled(const char* path) { return access(path, F_OK) == 0; }

constexpr size_t kGraphBytes = 1 << 16;

std::atomic<int> g_host_runs{0};
void count_run(void*) { ++g_host_runs; }

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  const char* signal = argv[1];
  const bool hold_array = argc > 2 && std::string(argv[2]) == "array";

  const std::vector<size_t> sizes = {512, 4096, size_t{1} << 20, (size_t{3} << 20) + 17, size_t{16} << 20};
  std::vector<void*> buffers(sizes.size());
  for (size_t b = 0; b < sizes.size(); ++b) {
    OK(cudaMalloc(&buffers[b], sizes[b]));
    OK(cudaMemcpy(buffers[b], expected(b, sizes[b]).data(), sizes[b], cudaMemcpyHostToDevice));
  }
  void* pitched = nullptr;
  size_t pitch = 0;
  OK(cudaMallocPitch(&pitched, &pitch, 1000, 30));
  OK(cudaMemset2D(pitched, pitch, 0x5a, 1000, 30));
  int least = 0, greatest = 0;
  OK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  cudaStream_t nonblocking, urgent;
  OK(cudaStreamCreateWithFlags(&nonblocking, cudaStreamNonBlocking));
  OK(cudaStreamCreateWithPriority(&urgent, cudaStreamDefault, greatest));
  cudaEvent_t timed, untimed;
  OK(cudaEventCreate(&timed));
  OK(cudaEventCreateWithFlags(&untimed, cudaEventDisableTiming));
  // Events recorded before the move keep their times: elapsed times with
  // them hold across it.
  cudaEvent_t started, also_before;
  OK(cudaEventCreate(&started));
  OK(cudaEventCreate(&also_before));
  const auto started_at = std::chrono::steady_clock::now();
  OK(cudaEventRecord(started, nonblocking));
  usleep(20000);
  OK(cudaEventRecord(also_before, nonblocking));
  OK(cudaEventSynchronize(also_before));
  float between_before = -1;
  OK(cudaEventElapsedTime(&between_before, started, also_before));
  const int values[4] = {7, 8, 9, 10};
  OK(cudaMemcpyToSymbol(g_values, values, sizeof values));
  // Page-locked memory (shared with the server over shm), used after the move.
  unsigned char* pinned = nullptr;
  OK(cudaMallocHost(&pinned, sizes[3]));
  // Mapped page-locked memory whose device address the application keeps:
  // the GPU must reach it there after the move.
  unsigned char* mapped = nullptr;
  void* mapped_on_device = nullptr;
  OK(cudaHostAlloc(&mapped, 1 << 20, cudaHostAllocMapped));
  OK(cudaHostGetDevicePointer(&mapped_on_device, mapped, 0));
  // Context settings the application changed.
  size_t stack = 0;
  OK(cudaDeviceGetLimit(&stack, cudaLimitStackSize));
  OK(cudaDeviceSetLimit(cudaLimitStackSize, stack + 4096));
  OK(cudaDeviceSetCacheConfig(cudaFuncCachePreferShared));
  int* counter = nullptr;
  OK(cudaMalloc(&counter, sizeof(int)));
  // The GPU's default pool, named and given a release threshold: the
  // target's stands in for it, with the same handle and setting.
  cudaMemPool_t pool = nullptr;
  OK(cudaDeviceGetDefaultMemPool(&pool, 0));
  uint64_t threshold = uint64_t{64} << 20;
  OK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));
  // Stream-ordered memory, freed in stream order after the move.
  void* ordered = nullptr;
  OK(cudaMallocAsync(&ordered, 3 << 20, nonblocking));
  OK(cudaMemsetAsync(ordered, 0x77, 3 << 20, nonblocking));
  OK(cudaStreamSynchronize(nonblocking));
  // A pool of its own, with a threshold, memory from it, and the GPU's
  // current pool: made again on the target.
  cudaMemPoolProps own_props{};
  own_props.allocType = cudaMemAllocationTypePinned;
  own_props.location.type = cudaMemLocationTypeDevice;
  own_props.location.id = 0;
  cudaMemPool_t own_pool = nullptr;
  OK(cudaMemPoolCreate(&own_pool, &own_props));
  uint64_t own_threshold = uint64_t{8} << 20;
  OK(cudaMemPoolSetAttribute(own_pool, cudaMemPoolAttrReleaseThreshold, &own_threshold));
  void* pooled = nullptr;
  OK(cudaMallocFromPoolAsync(&pooled, 1 << 20, own_pool, nonblocking));
  OK(cudaMemsetAsync(pooled, 0x19, 1 << 20, nonblocking));
  OK(cudaStreamSynchronize(nonblocking));
  OK(cudaDeviceSetMemPool(0, own_pool));
  bump<<<1, 1, 0, nonblocking>>>(counter);
  OK(cudaGetLastError());
  cudaArray_t array = nullptr;
  int* symbol_address = nullptr;
  OK(cudaGetSymbolAddress(reinterpret_cast<void**>(&symbol_address), g_values));
  cudaGraph_t with_memory_node = nullptr;
  if (hold_array) {
    cudaChannelFormatDesc desc = cudaCreateChannelDesc<float>();
    OK(cudaMallocArray(&array, &desc, 64, 4));
    cudaMemAllocNodeParams alloc{};
    alloc.poolProps.allocType = cudaMemAllocationTypePinned;
    alloc.poolProps.location = {cudaMemLocationTypeDevice, 0};
    alloc.bytesize = 1 << 20;
    cudaGraphNode_t alloc_node;
    OK(cudaGraphCreate(&with_memory_node, 0));
    OK(cudaGraphAddMemAllocNode(&alloc_node, with_memory_node, nullptr, 0, &alloc));
  }
  // Virtual memory: two physical allocations mapped back to back in one
  // reservation, open for reading and writing.
  CUmemAllocationProp vm_prop{};
  vm_prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  vm_prop.location = {CU_MEM_LOCATION_TYPE_DEVICE, 0};
  size_t granularity = 0;
  CU_OK(cuMemGetAllocationGranularity(&granularity, &vm_prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  CUdeviceptr vm_base = 0;
  CU_OK(cuMemAddressReserve(&vm_base, 4 * granularity, 0, 0, 0));
  CUmemGenericAllocationHandle vm_chunks[3] = {};
  for (int i = 0; i < 2; ++i) {
    CU_OK(cuMemCreate(&vm_chunks[i], granularity, &vm_prop, 0));
    CU_OK(cuMemMap(vm_base + i * granularity, granularity, 0, vm_chunks[i], 0));
  }
  const CUmemAccessDesc vm_access{{CU_MEM_LOCATION_TYPE_DEVICE, 0}, CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
  CU_OK(cuMemSetAccess(vm_base, 2 * granularity, &vm_access, 1));
  void* vm = reinterpret_cast<void*>(vm_base);
  OK(cudaMemcpy(vm, expected(9, 2 * granularity).data(), 2 * granularity, cudaMemcpyHostToDevice));
  // A step captured, instantiated and its graph destroyed, as PyTorch does.
  unsigned char *graph_in = nullptr, *graph_out = nullptr;
  OK(cudaMalloc(&graph_in, kGraphBytes));
  OK(cudaMalloc(&graph_out, kGraphBytes));
  cudaEvent_t graph_done;
  OK(cudaEventCreateWithFlags(&graph_done, cudaEventDisableTiming));
  cudaGraph_t captured = nullptr;
  cudaGraphExec_t step = nullptr;
  OK(cudaStreamBeginCapture(nonblocking, cudaStreamCaptureModeThreadLocal));
  OK(cudaMemsetAsync(graph_in, 0x11, kGraphBytes, nonblocking));
  bump<<<1, 1, 0, nonblocking>>>(counter);
  OK(cudaMemcpyAsync(graph_out, graph_in, kGraphBytes, cudaMemcpyDeviceToDevice, nonblocking));
  OK(cudaMemcpyToSymbolAsync(g_graph_values, graph_in, sizeof(int) * 2, 0, cudaMemcpyDeviceToDevice, nonblocking));
  OK(cudaEventRecordWithFlags(graph_done, nonblocking, cudaEventRecordExternal));
  OK(cudaStreamEndCapture(nonblocking, &captured));
  OK(cudaGraphInstantiate(&step, captured, 0));
  OK(cudaGraphDestroy(captured));
  OK(cudaGraphLaunch(step, nonblocking));
  OK(cudaStreamSynchronize(nonblocking));
  CHECK(all(read_back(graph_out, kGraphBytes), 0x11));
  // A graph it keeps: a fill, a child graph copying, a host node counting
  // its runs, and a fill disabled in the executable graph.
  cudaGraph_t kept = nullptr, child = nullptr;
  OK(cudaGraphCreate(&kept, 0));
  OK(cudaGraphCreate(&child, 0));
  cudaGraphNode_t fill, child_copy, child_node, skipped;
  cudaMemsetParams fill_with = byte_memset(graph_in, 0x22, kGraphBytes);
  OK(cudaGraphAddMemsetNode(&fill, kept, nullptr, 0, &fill_with));
  OK(cudaGraphAddMemcpyNode1D(&child_copy, child, nullptr, 0, graph_out, graph_in, kGraphBytes,
                              cudaMemcpyDeviceToDevice));
  OK(cudaGraphAddChildGraphNode(&child_node, kept, &fill, 1, child));
  const cudaMemsetParams skip_with = byte_memset(graph_out, 0xee, 16);
  OK(cudaGraphAddMemsetNode(&skipped, kept, &child_node, 1, &skip_with));
  cudaGraphNode_t counted;
  const cudaHostNodeParams count_with{count_run, nullptr};
  OK(cudaGraphAddHostNode(&counted, kept, &skipped, 1, &count_with));
  cudaGraphExec_t kept_exec = nullptr;
  OK(cudaGraphInstantiate(&kept_exec, kept, 0));
  OK(cudaGraphNodeSetEnabled(kept_exec, skipped, 0));
  OK(cudaGraphLaunch(kept_exec, nonblocking));
  OK(cudaStreamSynchronize(nonblocking));
  CHECK(all(read_back(graph_out, kGraphBytes), 0x22));
  CHECK(g_host_runs == 1);

  // A second thread keeps copying through its own buffer while the session moves.
  std::atomic<bool> thread_ok{true};
  std::atomic<long> rounds{0};
  std::thread worker([&] {
    void* own = nullptr;
    if (cudaMalloc(&own, 1 << 16) != cudaSuccess) {
      thread_ok = false;
      return;
    }
    std::vector<unsigned char> out(1 << 16), in(1 << 16);
    // It also makes and frees memory, a stream and an event every round, so
    // the session's memory and objects change while the move gets ready.
    void* latest = nullptr;
    unsigned char mark = 0;
    for (long r = 0; !signalled(signal); ++r) {
      std::memset(out.data(), static_cast<int>(r & 0xff), out.size());
      void* fresh = nullptr;
      cudaStream_t passing = nullptr;
      cudaEvent_t passed = nullptr;
      if (cudaStreamCreateWithFlags(&passing, (r & 1) ? cudaStreamNonBlocking : cudaStreamDefault) != cudaSuccess ||
          cudaEventCreateWithFlags(&passed, (r & 1) ? cudaEventDisableTiming : cudaEventDefault) != cudaSuccess ||
          cudaEventRecord(passed, passing) != cudaSuccess || cudaEventSynchronize(passed) != cudaSuccess ||
          cudaEventDestroy(passed) != cudaSuccess || cudaStreamDestroy(passing) != cudaSuccess ||
          cudaMemcpy(own, out.data(), out.size(), cudaMemcpyHostToDevice) != cudaSuccess ||
          cudaMemcpy(in.data(), own, in.size(), cudaMemcpyDeviceToHost) != cudaSuccess || in != out ||
          cudaMalloc(&fresh, 4096 + (r % 7) * 512) != cudaSuccess ||
          cudaMemset(fresh, static_cast<int>(r & 0xff), 4096) != cudaSuccess ||
          (latest && cudaFree(latest) != cudaSuccess)) {
        thread_ok = false;
        break;
      }
      latest = fresh;
      mark = static_cast<unsigned char>(r & 0xff);
      rounds = r + 1;
    }
    if (latest && (read_back(latest, 4096) != std::vector<unsigned char>(4096, mark) || cudaFree(latest) != cudaSuccess))
      thread_ok = false;
    if (cudaFree(own) != cudaSuccess) thread_ok = false;
  });
  std::printf("READY %d\n", static_cast<int>(getpid()));
  std::fflush(stdout);
  while (!signalled(signal)) {
    OK(cudaEventRecord(timed, nonblocking));
    OK(cudaEventSynchronize(timed));
    usleep(1000);
  }
  worker.join();
  CHECK(thread_ok);
  std::printf("the second thread copied %ld rounds\n", rounds.load());

  // Contents and handles, as they were.
  for (size_t b = 0; b < sizes.size(); ++b) CHECK(read_back(buffers[b], sizes[b]) == expected(b, sizes[b]));
  std::vector<unsigned char> rows(1000 * 30);
  OK(cudaMemcpy2D(rows.data(), 1000, pitched, pitch, 1000, 30, cudaMemcpyDeviceToHost));
  CHECK(all(rows, 0x5a));
  int now[4] = {};
  OK(cudaMemcpyFromSymbol(now, g_values, sizeof now));
  CHECK(std::memcmp(now, values, sizeof now) == 0);
  size_t stack_now = 0;
  OK(cudaDeviceGetLimit(&stack_now, cudaLimitStackSize));
  CHECK(stack_now >= stack + 4096);  // a device may round it up
  cudaFuncCache cache = cudaFuncCachePreferNone;
  OK(cudaDeviceGetCacheConfig(&cache));
  CHECK(cache == cudaFuncCachePreferShared);
  unsigned flags = 0;
  int priority = 0;
  OK(cudaStreamGetFlags(nonblocking, &flags));
  CHECK(flags == cudaStreamNonBlocking);
  OK(cudaStreamGetPriority(urgent, &priority));
  CHECK(priority == greatest);

  // Everything still works.
  std::vector<unsigned char> fresh(sizes[2], 0xc3), back(sizes[2]);
  OK(cudaMemcpyAsync(buffers[2], fresh.data(), fresh.size(), cudaMemcpyHostToDevice, urgent));
  OK(cudaEventRecord(untimed, urgent));
  OK(cudaStreamWaitEvent(nonblocking, untimed, 0));
  OK(cudaMemcpyAsync(back.data(), buffers[2], back.size(), cudaMemcpyDeviceToHost, nonblocking));
  OK(cudaStreamSynchronize(nonblocking));
  CHECK(back == fresh);
  cudaEvent_t after;
  OK(cudaEventCreate(&after));
  OK(cudaEventRecord(timed, urgent));
  OK(cudaEventRecord(after, urgent));
  OK(cudaEventSynchronize(after));
  float ms = -1;
  OK(cudaEventElapsedTime(&ms, timed, after));
  CHECK(ms >= 0);
  OK(cudaEventQuery(untimed));
  cudaEvent_t finished;
  OK(cudaEventCreate(&finished));
  OK(cudaEventRecord(finished, nonblocking));
  OK(cudaEventSynchronize(finished));
  const double wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started_at).count();
  float across = -1, between = -1;
  OK(cudaEventElapsedTime(&across, started, finished));
  OK(cudaEventElapsedTime(&between, started, also_before));
  std::printf("elapsed across the move %.1f ms (wall %.1f ms), between two earlier events %.1f ms\n", across, wall_ms,
              between);
  CHECK(across > 0.5 * wall_ms && across < wall_ms + 200);
  CHECK(std::fabs(between - between_before) < 0.1f);  // the old server's measure, kept
  std::memset(pinned, 0x6b, sizes[3]);
  OK(cudaMemcpyAsync(buffers[3], pinned, sizes[3], cudaMemcpyHostToDevice, nonblocking));
  OK(cudaMemsetAsync(buffers[3], 0x2e, 100, nonblocking));
  OK(cudaMemcpyAsync(pinned, buffers[3], sizes[3], cudaMemcpyDeviceToHost, nonblocking));
  OK(cudaStreamSynchronize(nonblocking));
  CHECK(pinned[0] == 0x2e && pinned[99] == 0x2e && pinned[100] == 0x6b && pinned[sizes[3] - 1] == 0x6b);
  OK(cudaFreeHost(pinned));
  void* mapped_now = nullptr;
  OK(cudaHostGetDevicePointer(&mapped_now, mapped, 0));
  CHECK(mapped_now == mapped_on_device);
  std::memset(mapped, 0x3c, 1 << 20);
  OK(cudaMemcpy(buffers[4], mapped_on_device, 1 << 20, cudaMemcpyDeviceToDevice));
  OK(cudaMemsetAsync(mapped_on_device, 0x4d, 64, nonblocking));
  OK(cudaStreamSynchronize(nonblocking));
  CHECK(read_back(buffers[4], 1 << 20) == std::vector<unsigned char>(1 << 20, 0x3c));
  CHECK(mapped[0] == 0x4d && mapped[63] == 0x4d && mapped[64] == 0x3c);
  OK(cudaFreeHost(mapped));
  CHECK(read_back(ordered, 3 << 20) == std::vector<unsigned char>(3 << 20, 0x77));
  OK(cudaFreeAsync(ordered, nonblocking));
  OK(cudaStreamSynchronize(nonblocking));
  cudaMemPool_t pool_now = nullptr;
  OK(cudaDeviceGetDefaultMemPool(&pool_now, 0));
  CHECK(pool_now == pool);
  uint64_t threshold_now = 0;
  OK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold_now));
  CHECK(threshold_now == threshold);
  void* from_pool = nullptr;
  OK(cudaMallocFromPoolAsync(&from_pool, 1 << 20, pool, nonblocking));
  OK(cudaFreeAsync(from_pool, nonblocking));
  OK(cudaStreamSynchronize(nonblocking));
  CHECK(read_back(pooled, 1 << 20) == std::vector<unsigned char>(1 << 20, 0x19));
  OK(cudaFreeAsync(pooled, nonblocking));
  cudaMemPool_t current = nullptr;
  OK(cudaDeviceGetMemPool(&current, 0));
  CHECK(current == own_pool);
  uint64_t own_threshold_now = 0;
  OK(cudaMemPoolGetAttribute(own_pool, cudaMemPoolAttrReleaseThreshold, &own_threshold_now));
  CHECK(own_threshold_now == own_threshold);
  void* again_pooled = nullptr;
  OK(cudaMallocAsync(&again_pooled, 1 << 20, nonblocking));  // from the current pool: its own
  OK(cudaFreeAsync(again_pooled, nonblocking));
  OK(cudaStreamSynchronize(nonblocking));
  OK(cudaDeviceSetMemPool(0, pool));
  OK(cudaMemPoolDestroy(own_pool));
  bump<<<1, 1, 0, urgent>>>(counter);
  OK(cudaGetLastError());
  OK(cudaDeviceSynchronize());
  // The variable's address as the application held it before the move.
  int through_address[4] = {};
  OK(cudaMemcpy(through_address, symbol_address, sizeof through_address, cudaMemcpyDeviceToHost));
  CHECK(std::memcmp(through_address, values, sizeof values) == 0);
  const int written[4] = {21, 22, 23, 24};
  OK(cudaMemcpy(symbol_address, written, sizeof written, cudaMemcpyHostToDevice));
  OK(cudaMemsetAsync(symbol_address + 3, 0, sizeof(int), nonblocking));
  OK(cudaStreamSynchronize(nonblocking));
  OK(cudaMemcpyFromSymbol(now, g_values, sizeof now));
  CHECK(now[0] == 21 && now[2] == 23 && now[3] == 0);
  // The virtual memory, at its addresses with its contents; a third chunk
  // mapped into its reservation after the move; then all of it undone.
  CHECK(read_back(vm, 2 * granularity) == expected(9, 2 * granularity));
  OK(cudaMemset(static_cast<char*>(vm) + granularity - 32, 0x61, 64));  // across the two chunks
  std::vector<unsigned char> vm_now = read_back(vm, 2 * granularity);
  CHECK(vm_now[granularity - 33] == expected(9, granularity)[granularity - 33] && vm_now[granularity - 32] == 0x61 &&
        vm_now[granularity + 31] == 0x61);
  CU_OK(cuMemCreate(&vm_chunks[2], granularity, &vm_prop, 0));
  CU_OK(cuMemMap(vm_base + 2 * granularity, granularity, 0, vm_chunks[2], 0));
  CU_OK(cuMemSetAccess(vm_base + 2 * granularity, granularity, &vm_access, 1));
  OK(cudaMemset(reinterpret_cast<void*>(vm_base + 2 * granularity), 0x62, granularity));
  CHECK(all(read_back(reinterpret_cast<void*>(vm_base + 2 * granularity), granularity), 0x62));
  CU_OK(cuMemUnmap(vm_base, 3 * granularity));
  for (auto chunk : vm_chunks) CU_OK(cuMemRelease(chunk));
  CU_OK(cuMemAddressFree(vm_base, 4 * granularity));
  // The graphs, made again on the new server: each runs there, on memory
  // and a module variable reset after the move.
  const int graph_values_reset[2] = {};
  OK(cudaMemcpyToSymbol(g_graph_values, graph_values_reset, sizeof graph_values_reset));
  OK(cudaMemset(graph_in, 0, kGraphBytes));
  OK(cudaMemset(graph_out, 0, kGraphBytes));
  OK(cudaGraphLaunch(step, urgent));
  OK(cudaEventSynchronize(graph_done));
  OK(cudaStreamSynchronize(urgent));
  CHECK(all(read_back(graph_out, kGraphBytes), 0x11));
  int graph_values[2] = {};
  OK(cudaMemcpyFromSymbol(graph_values, g_graph_values, sizeof graph_values));
  CHECK(graph_values[0] == 0x11111111 && graph_values[1] == 0x11111111);
  cudaMemsetParams fill_now{};
  OK(cudaGraphMemsetNodeGetParams(fill, &fill_now));
  CHECK(fill_now.dst == graph_in && fill_now.value == 0x22);
  fill_with.value = 0x33;
  OK(cudaGraphExecMemsetNodeSetParams(kept_exec, fill, &fill_with));
  OK(cudaGraphLaunch(kept_exec, urgent));
  OK(cudaStreamSynchronize(urgent));
  CHECK(all(read_back(graph_out, kGraphBytes), 0x33));  // the disabled fill still is
  CHECK(g_host_runs == 2);  // the host node runs on the new server too
  unsigned enabled = 1;
  OK(cudaGraphNodeGetEnabled(kept_exec, skipped, &enabled));
  CHECK(enabled == 0);
  cudaGraphExec_t kept_again = nullptr;  // the kept graph, as it was: its own fill, the skipped one too
  OK(cudaGraphInstantiate(&kept_again, kept, 0));
  OK(cudaGraphLaunch(kept_again, urgent));
  OK(cudaStreamSynchronize(urgent));
  std::vector<unsigned char> graph_result = read_back(graph_out, kGraphBytes);
  CHECK(graph_result[0] == 0xee && graph_result[15] == 0xee && graph_result[16] == 0x22);
  CHECK(g_host_runs == 3);
  OK(cudaGraphExecDestroy(kept_again));
  OK(cudaGraphExecDestroy(kept_exec));
  OK(cudaGraphExecDestroy(step));
  OK(cudaGraphDestroy(kept));
  OK(cudaGraphDestroy(child));
  OK(cudaEventDestroy(graph_done));
  OK(cudaFree(graph_in));
  OK(cudaFree(graph_out));
  if (hold_array) {
    OK(cudaGraphDestroy(with_memory_node));
    std::vector<float> cells(64 * 4, 2.5f), got(64 * 4);
    OK(cudaMemcpy2DToArray(array, 0, 0, cells.data(), 64 * sizeof(float), 64 * sizeof(float), 4, cudaMemcpyHostToDevice));
    OK(cudaMemcpy2DFromArray(got.data(), 64 * sizeof(float), array, 0, 0, 64 * sizeof(float), 4, cudaMemcpyDeviceToHost));
    CHECK(got == cells);
    OK(cudaFreeArray(array));
  }
  for (void* b : buffers) OK(cudaFree(b));
  OK(cudaFree(pitched));
  OK(cudaFree(counter));
  void* again = nullptr;
  OK(cudaMalloc(&again, 1 << 20));
  OK(cudaFree(again));
  OK(cudaStreamDestroy(nonblocking));
  OK(cudaStreamDestroy(urgent));
  OK(cudaEventDestroy(timed));
  OK(cudaEventDestroy(untimed));
  OK(cudaEventDestroy(after));
  OK(cudaEventDestroy(started));
  OK(cudaEventDestroy(also_before));
  OK(cudaEventDestroy(finished));
  std::printf("RESULT %s\n", g_failures ? "FAIL" : "PASS");
  return g_failures ? 1 : 0;
}
