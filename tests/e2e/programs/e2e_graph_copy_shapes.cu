// Graph copy nodes of any 3-D shape (slices taller than the copied height,
// offsets in x, y and z) between device memory, pageable and page-locked
// host memory, and host-to-host copies with a pageable side (a host node in
// this process, in stream order). Checked by the data each launch moves, and
// by the parameters read back. Malformed shapes are refused.
#include <cstring>
#include <vector>

#include "check.h"

namespace {

// A pitched 3-D buffer's shape: pitch bytes a row, `rows` rows a slice.
constexpr size_t kPitch = 96, kRows = 7, kSlices = 5, kBytes = kPitch * kRows * kSlices;
// The copy: 40 bytes x 3 rows x 4 slices, from (5, 2, 1) to (11, 3, 0).
constexpr cudaExtent kExtent{40, 3, 4};
constexpr cudaPos kFrom{5, 2, 1}, kTo{11, 3, 0};

void fill(std::vector<unsigned char>& v, unsigned seed) {
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<unsigned char>(seed + i * 13 + i / 7);
}

// What dst holds after the copy from src, the rest of it as it was.
std::vector<unsigned char> expected(const std::vector<unsigned char>& src, std::vector<unsigned char> dst) {
  for (size_t z = 0; z < kExtent.depth; ++z)
    for (size_t y = 0; y < kExtent.height; ++y)
      std::memcpy(&dst[((kTo.z + z) * kRows + kTo.y + y) * kPitch + kTo.x],
                  &src[((kFrom.z + z) * kRows + kFrom.y + y) * kPitch + kFrom.x], kExtent.width);
  return dst;
}

cudaMemcpy3DParms box(void* dst, const void* src, cudaMemcpyKind kind) {
  cudaMemcpy3DParms m{};
  m.srcPtr = make_cudaPitchedPtr(const_cast<void*>(src), kPitch, kPitch, kRows);
  m.dstPtr = make_cudaPitchedPtr(dst, kPitch, kPitch, kRows);
  m.srcPos = kFrom;
  m.dstPos = kTo;
  m.extent = kExtent;
  m.kind = kind;
  return m;
}

// Runs a one-node graph copying `m` twice, `src` rewritten in between: each
// launch must copy the bytes as they are then.
void run_twice(const char* what, cudaStream_t s, const cudaMemcpy3DParms& m, std::vector<unsigned char>& src,
               const std::vector<unsigned char>& dst_before, void* src_dev, void* dst_dev,
               std::vector<unsigned char>& dst_host) {
  cudaGraph_t g;
  OK(cudaGraphCreate(&g, 0));
  cudaGraphNode_t node;
  OK(cudaGraphAddMemcpyNode(&node, g, nullptr, 0, &m));
  cudaGraphNodeType type;
  OK(cudaGraphNodeGetType(node, &type));
  CHECK(type == cudaGraphNodeTypeMemcpy);
  cudaMemcpy3DParms back{};
  OK(cudaGraphMemcpyNodeGetParams(node, &back));
  CHECK(back.extent.width == kExtent.width && back.extent.height == kExtent.height &&
        back.extent.depth == kExtent.depth && back.dstPtr.pitch == kPitch && back.dstPtr.ysize == kRows &&
        back.srcPtr.ysize == kRows);
  cudaGraphExec_t x;
  OK(cudaGraphInstantiate(&x, g, 0));
  for (unsigned seed : {3u, 77u}) {
    fill(src, seed);
    if (src_dev) OK(cudaMemcpy(src_dev, src.data(), kBytes, cudaMemcpyHostToDevice));
    if (dst_dev) OK(cudaMemcpy(dst_dev, dst_before.data(), kBytes, cudaMemcpyHostToDevice));
    else std::memcpy(dst_host.data(), dst_before.data(), kBytes);
    OK(cudaGraphLaunch(x, s));
    OK(cudaStreamSynchronize(s));
    std::vector<unsigned char> got(kBytes);
    if (dst_dev) OK(cudaMemcpy(got.data(), dst_dev, kBytes, cudaMemcpyDeviceToHost));
    else got.assign(dst_host.begin(), dst_host.end());
    if (got != expected(src, dst_before)) {
      std::printf("FAILED %s: launch with seed %u moved the wrong bytes\n", what, seed);
      ++g_failures;
    }
  }
  OK(cudaGraphExecDestroy(x));
  OK(cudaGraphDestroy(g));
}

}  // namespace

int main() {
  cudaStream_t s;
  OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  void *a, *b;
  OK(cudaMalloc(&a, kBytes));
  OK(cudaMalloc(&b, kBytes));
  std::vector<unsigned char> src(kBytes), before(kBytes), host_dst(kBytes);
  fill(before, 200);
  unsigned char* pinned;
  OK(cudaMallocHost(&pinned, kBytes));

  // Device to device, pageable up and down, page-locked up.
  run_twice("3-D device to device", s, box(b, a, cudaMemcpyDeviceToDevice), src, before, a, b, host_dst);
  run_twice("3-D pageable to device", s, box(b, src.data(), cudaMemcpyHostToDevice), src, before, nullptr, b,
            host_dst);
  run_twice("3-D device to pageable", s, box(host_dst.data(), a, cudaMemcpyDeviceToHost), src, before, a, nullptr,
            host_dst);
  // Host to host with a pageable side: in this process, each launch.
  run_twice("3-D pageable to pageable", s, box(host_dst.data(), src.data(), cudaMemcpyHostToHost), src, before,
            nullptr, nullptr, host_dst);
  run_twice("3-D pageable to pageable, default kind", s, box(host_dst.data(), src.data(), cudaMemcpyDefault), src,
            before, nullptr, nullptr, host_dst);

  // A 1-D host-to-host node from pageable memory into page-locked memory, in
  // stream order after a download into that pageable memory.
  {
    cudaGraph_t g;
    OK(cudaGraphCreate(&g, 0));
    cudaGraphNode_t down, across;
    fill(src, 9);
    OK(cudaMemcpy(a, src.data(), kBytes, cudaMemcpyHostToDevice));
    std::vector<unsigned char> bounce(kBytes, 0);
    OK(cudaGraphAddMemcpyNode1D(&down, g, nullptr, 0, bounce.data(), a, kBytes, cudaMemcpyDeviceToHost));
    OK(cudaGraphAddMemcpyNode1D(&across, g, &down, 1, pinned, bounce.data(), kBytes, cudaMemcpyHostToHost));
    std::memset(pinned, 0, kBytes);
    cudaGraphExec_t x;
    OK(cudaGraphInstantiate(&x, g, 0));
    OK(cudaGraphLaunch(x, s));
    OK(cudaStreamSynchronize(s));
    CHECK(std::memcmp(pinned, src.data(), kBytes) == 0);
    // New parameters for the host-to-host node, in the graph and the executable graph.
    std::vector<unsigned char> other(kBytes, 0x5a);
    cudaMemcpy3DParms m{};
    m.srcPtr = make_cudaPitchedPtr(other.data(), kBytes, kBytes, 1);
    m.dstPtr = make_cudaPitchedPtr(pinned, kBytes, kBytes, 1);
    m.extent = make_cudaExtent(kBytes, 1, 1);
    m.kind = cudaMemcpyHostToHost;
    OK(cudaGraphExecMemcpyNodeSetParams(x, across, &m));
    OK(cudaGraphLaunch(x, s));
    OK(cudaStreamSynchronize(s));
    CHECK(pinned[0] == 0x5a && pinned[kBytes - 1] == 0x5a);
    OK(cudaGraphMemcpyNodeSetParams(across, &m));
    cudaMemcpy3DParms back{};
    OK(cudaGraphMemcpyNodeGetParams(across, &back));
    CHECK(back.srcPtr.ptr == other.data() && back.dstPtr.ptr == pinned && back.kind == cudaMemcpyHostToHost);
    // Device memory on one side cannot replace a host-to-host node's host side.
    m.srcPtr.ptr = a;
    m.kind = cudaMemcpyDeviceToHost;
    EXPECT_STATUS(cudaErrorNotSupported, cudaGraphMemcpyNodeSetParams(across, &m));
    OK(cudaGraphExecDestroy(x));
    OK(cudaGraphDestroy(g));
  }

  // Malformed shapes: slices shorter than the copied height, rows wider than the pitch.
  {
    cudaGraph_t g;
    OK(cudaGraphCreate(&g, 0));
    cudaGraphNode_t bad;
    cudaMemcpy3DParms m = box(b, a, cudaMemcpyDeviceToDevice);
    m.srcPtr.ysize = 2;
    EXPECT_STATUS(cudaErrorInvalidPitchValue, cudaGraphAddMemcpyNode(&bad, g, nullptr, 0, &m));
    m = box(b, a, cudaMemcpyDeviceToDevice);
    m.extent.width = kPitch + 1;
    m.dstPos = m.srcPos = cudaPos{0, 0, 0};
    EXPECT_STATUS(cudaErrorInvalidPitchValue, cudaGraphAddMemcpyNode(&bad, g, nullptr, 0, &m));
    OK(cudaGraphDestroy(g));
  }

  OK(cudaFreeHost(pinned));
  OK(cudaFree(a));
  OK(cudaFree(b));
  OK(cudaStreamDestroy(s));
  return finish();
}
