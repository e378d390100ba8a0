// Driver-API graph copies on pageable host memory: explicit nodes (2-D,
// parameters read back, set on the executable graph) and copies and
// differing-bytes memsets (1-D and 2-D) captured from a stream. Over every
// transport each launch reads and writes the host memory as it is then.
#include <cstring>
#include <vector>

#include "driver_check.h"

namespace {

const size_t width = 300, height = 5, host_pitch = 320;

CUDA_MEMCPY3D pitched(bool upload, void* host, CUdeviceptr dev, size_t dev_pitch) {
  CUDA_MEMCPY3D m{};
  CUmemorytype& host_type = upload ? m.srcMemoryType : m.dstMemoryType;
  CUmemorytype& dev_type = upload ? m.dstMemoryType : m.srcMemoryType;
  host_type = CU_MEMORYTYPE_HOST;
  dev_type = CU_MEMORYTYPE_DEVICE;
  if (upload) {
    m.srcHost = host;
    m.srcPitch = host_pitch;
    m.dstDevice = dev;
    m.dstPitch = dev_pitch;
  } else {
    m.dstHost = host;
    m.dstPitch = host_pitch;
    m.srcDevice = dev;
    m.srcPitch = dev_pitch;
  }
  m.WidthInBytes = width;
  m.Height = height;
  m.Depth = 1;
  return m;
}

bool rows_equal(const std::vector<unsigned char>& a, const std::vector<unsigned char>& b) {
  for (size_t r = 0; r < height; ++r)
    if (std::memcmp(&a[r * host_pitch], &b[r * host_pitch], width) != 0) return false;
  return true;
}

}  // namespace

int main() {
  CU_OK(cuInit(0));
  if (g_failures) return finish();
  CUdevice device;
  CU_OK(cuDeviceGet(&device, 0));
  CUcontext ctx;
  CU_OK(cuDevicePrimaryCtxRetain(&ctx, device));
  CU_OK(cuCtxSetCurrent(ctx));
  CUstream s;
  CU_OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  CUdeviceptr dev;
  size_t dev_pitch;
  CU_OK(cuMemAllocPitch(&dev, &dev_pitch, width, height, 4));
  std::vector<unsigned char> in(host_pitch * height), out(host_pitch * height), in2(host_pitch * height);

  CUgraph g;
  CU_OK(cuGraphCreate(&g, 0));
  CUgraphNode up, down;
  CUDA_MEMCPY3D m = pitched(true, in.data(), dev, dev_pitch);
  CU_OK(cuGraphAddMemcpyNode(&up, g, nullptr, 0, &m, ctx));
  m = pitched(false, out.data(), dev, dev_pitch);
  CU_OK(cuGraphAddMemcpyNode(&down, g, &up, 1, &m, ctx));

  CUgraphNodeType type;
  CU_OK(cuGraphNodeGetType(down, &type));
  CHECK(type == CU_GRAPH_NODE_TYPE_MEMCPY);
  CUDA_MEMCPY3D got{};
  CU_OK(cuGraphMemcpyNodeGetParams(up, &got));
  CHECK(got.srcMemoryType == CU_MEMORYTYPE_HOST && got.srcHost == in.data() && got.srcPitch == host_pitch);
  CHECK(got.dstMemoryType == CU_MEMORYTYPE_DEVICE && got.dstDevice == dev && got.Height == height);

  CUgraphExec x;
  CU_OK(cuGraphInstantiate(&x, g, 0));
  for (unsigned char v : {0x11, 0x99}) {
    for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<unsigned char>(v + i);
    std::fill(out.begin(), out.end(), 0);
    CU_OK(cuGraphLaunch(x, s));
    CU_OK(cuStreamSynchronize(s));
    CHECK(rows_equal(in, out));
  }
  // The executable graph's upload from another buffer.
  std::fill(in2.begin(), in2.end(), 0x2f);
  m = pitched(true, in2.data(), dev, dev_pitch);
  CU_OK(cuGraphExecMemcpyNodeSetParams(x, up, &m, ctx));
  CU_OK(cuGraphLaunch(x, s));
  CU_OK(cuStreamSynchronize(s));
  CHECK(rows_equal(in2, out));
  CU_OK(cuGraphExecDestroy(x));
  CU_OK(cuGraphDestroy(g));

  // Captured: an upload, a memset whose bytes differ, a download.
  const size_t count = 1000;
  std::vector<uint32_t> words(count), back(count);
  CUdeviceptr d;
  CU_OK(cuMemAlloc(&d, 2 * count * sizeof(uint32_t)));
  CU_OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
  CU_OK(cuMemcpyHtoDAsync(d, words.data(), count * sizeof(uint32_t), s));
  CU_OK(cuMemsetD32Async(d + count * sizeof(uint32_t), 0x01020304u, count, s));
  CU_OK(cuMemcpyDtoHAsync(back.data(), d + sizeof(uint32_t), count * sizeof(uint32_t), s));
  CU_OK(cuStreamEndCapture(s, &g));
  size_t nodes = 0;
  CU_OK(cuGraphGetNodes(g, nullptr, &nodes));
  CHECK(nodes == 3);
  CU_OK(cuGraphInstantiate(&x, g, 0));
  for (uint32_t v : {7u, 9u}) {
    for (size_t i = 0; i < count; ++i) words[i] = v * 1000 + static_cast<uint32_t>(i);
    CU_OK(cuGraphLaunch(x, s));
    CU_OK(cuStreamSynchronize(s));
    // Shifted by one word: the last comes from the memset.
    CHECK(back[0] == words[1] && back[count - 2] == words[count - 1] && back[count - 1] == 0x01020304u);
  }
  CU_OK(cuGraphExecDestroy(x));
  CU_OK(cuGraphDestroy(g));

  // A 2-D memset whose bytes differ, captured, read back by a captured download.
  uint32_t corner[2] = {};
  CU_OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
  CU_OK(cuMemsetD2D32Async(dev, dev_pitch, 0x0a0b0c0du, width / 4, height, s));
  CU_OK(cuMemcpyDtoHAsync(&corner[0], dev, sizeof(uint32_t), s));
  CU_OK(cuMemcpyDtoHAsync(&corner[1], dev + (height - 1) * dev_pitch + width - 4, sizeof(uint32_t), s));
  CU_OK(cuStreamEndCapture(s, &g));
  CU_OK(cuGraphInstantiate(&x, g, 0));
  CU_OK(cuGraphLaunch(x, s));
  CU_OK(cuStreamSynchronize(s));
  CHECK(corner[0] == 0x0a0b0c0du && corner[1] == 0x0a0b0c0du);
  CU_OK(cuGraphExecDestroy(x));
  CU_OK(cuGraphDestroy(g));
  CU_OK(cuMemFree(d));
  CU_OK(cuMemFree(dev));
  CU_OK(cuStreamDestroy(s));
  return finish();
}
