// Thread block clusters (sm_90): cudaLaunchKernelExC with a cluster
// dimension attribute, each block reading its neighbour's shared memory
// (distributed shared memory) within the cluster; a kernel with compile-time
// cluster dimensions launched with <<<>>>; cluster occupancy queries; a
// programmatic dependent launch (programmatic stream serialization and
// priority attributes); a launch completion event; a cluster that does not
// divide the grid refused.
// Every result checked on the host.
#include <cooperative_groups.h>

#include <cstring>
#include <vector>

#include "corpus.h"

namespace cg = cooperative_groups;

// out[i] = in[i] + the same thread's element of the next block in the cluster.
__global__ void neighbour_sum(const int* in, int* out) {
  extern __shared__ int tile[];
  cg::cluster_group cluster = cg::this_cluster();
  unsigned rank = cluster.block_rank();
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  tile[threadIdx.x] = in[i];
  cluster.sync();
  const int* next = cluster.map_shared_rank(tile, (rank + 1) % cluster.num_blocks());
  out[i] = tile[threadIdx.x] + next[threadIdx.x];
  cluster.sync();  // keep this block's tile alive until its neighbour has read it
}

// Pairs of blocks swap their first elements through shared memory.
__global__ void __cluster_dims__(2, 1, 1) pair_swap(const int* in, int* out) {
  __shared__ int first;
  cg::cluster_group cluster = cg::this_cluster();
  if (threadIdx.x == 0) first = in[blockIdx.x * blockDim.x];
  cluster.sync();
  if (threadIdx.x == 0) out[blockIdx.x] = *cluster.map_shared_rank(&first, cluster.block_rank() ^ 1);
  cluster.sync();
}

__global__ void produce(int* data, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] = 3 * i + 1;
  cudaTriggerProgrammaticLaunchCompletion();
}

// Launched while produce may still run: waits for its results first.
__global__ void consume(const int* data, int* out, int n) {
  cudaGridDependencySynchronize();
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = data[i] * 2;
}

static cudaLaunchAttribute attribute(cudaLaunchAttributeID id) {
  cudaLaunchAttribute a;
  std::memset(&a, 0, sizeof a);
  a.id = id;
  return a;
}

// A launch's error, whether the launch itself or the next synchronisation
// reports it (rgpu posts launches without waiting for them).
static cudaError_t launch_error(cudaError_t launched, cudaStream_t stream) {
  cudaError_t e = launched != cudaSuccess ? launched : cudaStreamSynchronize(stream);
  cudaGetLastError();
  return e;
}

int main() {
  int major = 0;
  CK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
  int cluster_launch = 0;
  CK(cudaDeviceGetAttribute(&cluster_launch, cudaDevAttrClusterLaunch, 0));
  EXPECT(major >= 9 && cluster_launch == 1, "no cluster launch (compute capability %d)", major);

  const int threads = 256, blocks = 64, n = threads * blocks;
  std::vector<int> in(n), out(n);
  for (int i = 0; i < n; ++i) in[i] = (i * 7919) % 10007;
  int *d_in, *d_out;
  CK(cudaMalloc(&d_in, n * sizeof(int)));
  CK(cudaMalloc(&d_out, n * sizeof(int)));
  CK(cudaMemcpy(d_in, in.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  cudaStream_t stream;
  CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

  cudaLaunchAttribute cluster = attribute(cudaLaunchAttributeClusterDimension);
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(blocks);
  config.blockDim = dim3(threads);
  config.dynamicSmemBytes = threads * sizeof(int);
  config.stream = stream;
  config.attrs = &cluster;
  config.numAttrs = 1;
  for (unsigned size : {2u, 4u, 8u}) {
    cluster.val.clusterDim.x = size;
    cluster.val.clusterDim.y = cluster.val.clusterDim.z = 1;
    int active = 0;
    CK(cudaOccupancyMaxActiveClusters(&active, reinterpret_cast<void*>(neighbour_sum), &config));
    EXPECT(active > 0, "no cluster of %u fits", size);
    CK(cudaMemsetAsync(d_out, 0, n * sizeof(int), stream));
    void* args[] = {&d_in, &d_out};
    CK(cudaLaunchKernelExC(&config, reinterpret_cast<void*>(neighbour_sum), args));
    CK(cudaMemcpyAsync(out.data(), d_out, n * sizeof(int), cudaMemcpyDeviceToHost, stream));
    CK(cudaStreamSynchronize(stream));
    int bad = 0;
    for (int i = 0; i < n; ++i) {
      int b = i / threads, t = i % threads;
      int next = (b / size) * size + (b % size + 1) % size;
      bad += out[i] != in[i] + in[next * threads + t];
    }
    EXPECT(bad == 0, "%d wrong sums with clusters of %u", bad, size);
    printf("clusters of %u: %d neighbour sums checked, clusters fit at once: %s\n", size, n,
           active > 0 ? "yes" : "no");
  }
  int potential = 0;
  CK(cudaOccupancyMaxPotentialClusterSize(&potential, reinterpret_cast<void*>(neighbour_sum), &config));
  EXPECT(potential >= 8, "largest portable cluster %d", potential);
  printf("largest cluster for neighbour_sum: at least 8: %s\n", potential >= 8 ? "yes" : "no");

  // Compile-time cluster dimensions, launched the ordinary way.
  pair_swap<<<blocks, threads, 0, stream>>>(d_in, d_out);
  CK(cudaGetLastError());
  CK(cudaMemcpyAsync(out.data(), d_out, blocks * sizeof(int), cudaMemcpyDeviceToHost, stream));
  CK(cudaStreamSynchronize(stream));
  int bad = 0;
  for (int b = 0; b < blocks; ++b) bad += out[b] != in[(b ^ 1) * threads];
  EXPECT(bad == 0, "%d wrong swaps", bad);
  printf("compile-time clusters of 2: %d swaps checked\n", blocks);

  // A cluster that does not divide the grid.
  cluster.val.clusterDim.x = 3;
  void* args[] = {&d_in, &d_out};
  cudaError_t e = launch_error(cudaLaunchKernelExC(&config, reinterpret_cast<void*>(neighbour_sum), args), stream);
  printf("cluster of 3 over 64 blocks: %s\n", cudaGetErrorName(e));
  EXPECT(e != cudaSuccess, "an uneven cluster was launched");

  // Programmatic dependent launch: consume may start before produce ends and
  // waits in cudaGridDependencySynchronize; a priority rides along.
  int* d_mid;
  CK(cudaMalloc(&d_mid, n * sizeof(int)));
  int nn = n;
  produce<<<blocks, threads, 0, stream>>>(d_mid, nn);
  cudaLaunchAttribute pdl[2] = {attribute(cudaLaunchAttributeProgrammaticStreamSerialization),
                                attribute(cudaLaunchAttributePriority)};
  pdl[0].val.programmaticStreamSerializationAllowed = 1;
  int least = 0, greatest = 0;
  CK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  pdl[1].val.priority = greatest;
  config.dynamicSmemBytes = 0;
  config.attrs = pdl;
  config.numAttrs = 2;
  void* consume_args[] = {&d_mid, &d_out, &nn};
  CK(cudaLaunchKernelExC(&config, reinterpret_cast<void*>(consume), consume_args));
  CK(cudaMemcpyAsync(out.data(), d_out, n * sizeof(int), cudaMemcpyDeviceToHost, stream));
  CK(cudaStreamSynchronize(stream));
  bad = 0;
  for (int i = 0; i < n; ++i) bad += out[i] != 2 * (3 * i + 1);
  EXPECT(bad == 0, "%d wrong values after the dependent launch", bad);
  printf("programmatic dependent launch: %d values checked\n", n);

  // A launch completion event: it fires once every block has started; the
  // stream then finishes the kernel.
  cudaEvent_t started;
  CK(cudaEventCreateWithFlags(&started, cudaEventDisableTiming));
  cudaLaunchAttribute completion = attribute(cudaLaunchAttributeLaunchCompletionEvent);
  completion.val.launchCompletionEvent.event = started;
  config.attrs = &completion;
  config.numAttrs = 1;
  CK(cudaMemsetAsync(d_out, 0, n * sizeof(int), stream));
  CK(cudaLaunchKernelExC(&config, reinterpret_cast<void*>(consume), consume_args));
  CK(cudaEventSynchronize(started));
  CK(cudaMemcpyAsync(out.data(), d_out, n * sizeof(int), cudaMemcpyDeviceToHost, stream));
  CK(cudaStreamSynchronize(stream));
  bad = 0;
  for (int i = 0; i < n; ++i) bad += out[i] != 2 * (3 * i + 1);
  EXPECT(bad == 0, "%d wrong values after the launch with a completion event", bad);
  printf("launch completion event fired, %d values checked\n", n);
  CK(cudaEventDestroy(started));

  CK(cudaFree(d_mid));
  CK(cudaStreamDestroy(stream));
  CK(cudaFree(d_in));
  CK(cudaFree(d_out));
  return finish();
}
