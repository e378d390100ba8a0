// Graph copy nodes with CUDA arrays: 1-D, 2-D and 3-D arrays and a level of
// a mipmapped array, to and from device memory, other arrays, page-locked and
// pageable host memory, made with cudaGraphAddMemcpyNode, cudaGraphAddNode,
// cuGraphAddMemcpyNode and by stream capture of the array copies of both
// APIs. Each launch is checked by the bytes it moves (the whole array read
// back), each node by its parameters read back (the application's own array
// handles); new parameters through set-params, exec set-params, exec update
// and a clone. Bad array handles and regions past an array are refused.
#include <cuda.h>

#include <cstring>
#include <vector>

#include "check.h"

#define DRV(call) CHECK((call) == CUDA_SUCCESS)

namespace {

constexpr size_t kElement = 4;  // an unsigned int per element

// Bytes laid out row by row, slice by slice, and a box of them.
struct Image {
  std::vector<unsigned char> bytes;
  size_t pitch, rows;  // bytes per row, rows per slice
};

struct Region {
  size_t x, y, z;  // x in bytes
};

// Copies `width` bytes x height x depth from src at `from` to dst at `to`.
void copy_region(Image& dst, Region to, const Image& src, Region from, size_t width, size_t height, size_t depth) {
  for (size_t z = 0; z < depth; ++z)
    for (size_t y = 0; y < height; ++y)
      std::memcpy(&dst.bytes[((to.z + z) * dst.rows + to.y + y) * dst.pitch + to.x],
                  &src.bytes[((from.z + z) * src.rows + from.y + y) * src.pitch + from.x], width);
}

void fill(Image& m, unsigned seed) {
  for (size_t i = 0; i < m.bytes.size(); ++i) m.bytes[i] = static_cast<unsigned char>(seed + i * 7 + i / 11);
}

// An array with what it should hold.
struct Array {
  cudaArray_t a = nullptr;
  cudaExtent extent{};  // as made (0 height or depth where absent)
  Image model;

  size_t height() const { return extent.height ? extent.height : 1; }
  size_t depth() const { return extent.depth ? extent.depth : 1; }
  cudaMemcpy3DParms whole() const {
    cudaMemcpy3DParms m{};
    m.extent = make_cudaExtent(extent.width, height(), depth());
    return m;
  }
  void upload() {
    cudaMemcpy3DParms m = whole();
    m.srcPtr = make_cudaPitchedPtr(model.bytes.data(), model.pitch, extent.width, height());
    m.dstArray = a;
    m.kind = cudaMemcpyHostToDevice;
    OK(cudaMemcpy3D(&m));
  }
  bool holds_model() const {
    std::vector<unsigned char> got(model.bytes.size());
    cudaMemcpy3DParms m = whole();
    m.srcArray = a;
    m.dstPtr = make_cudaPitchedPtr(got.data(), model.pitch, extent.width, height());
    m.kind = cudaMemcpyDeviceToHost;
    OK(cudaMemcpy3D(&m));
    return got == model.bytes;
  }
};

Image image_of(size_t pitch, size_t rows, size_t slices) { return Image{std::vector<unsigned char>(pitch * rows * slices), pitch, rows}; }

Array make_array(cudaExtent e, unsigned seed) {
  Array r;
  cudaChannelFormatDesc desc = cudaCreateChannelDesc<unsigned>();
  OK(cudaMalloc3DArray(&r.a, &desc, e, 0));
  r.extent = e;
  r.model = image_of(e.width * kElement, r.height(), r.depth());
  fill(r.model, seed);
  r.upload();
  return r;
}

// Pitched memory with what it should hold: device memory (dev) or host
// memory (host: the bytes themselves).
constexpr size_t kPitch = 96, kRows = 7, kSlices = 5;
struct Memory {
  Image model = image_of(kPitch, kRows, kSlices);
  void* dev = nullptr;
  unsigned char* host = nullptr;
  void* ptr() const { return dev ? dev : host; }
  void sync_to() {
    if (dev) OK(cudaMemcpy(dev, model.bytes.data(), model.bytes.size(), cudaMemcpyHostToDevice));
    else std::memcpy(host, model.bytes.data(), model.bytes.size());
  }
  bool holds_model() const {
    std::vector<unsigned char> got(model.bytes.size());
    if (dev) OK(cudaMemcpy(got.data(), dev, got.size(), cudaMemcpyDeviceToHost));
    else std::memcpy(got.data(), host, got.size());
    return got == model.bytes;
  }
};

cudaPitchedPtr pitched(const Memory& m) { return make_cudaPitchedPtr(m.ptr(), kPitch, kPitch, kRows); }

// One launch of a graph on s, waited for.
void launch(cudaGraphExec_t x, cudaStream_t s) {
  OK(cudaGraphLaunch(x, s));
  OK(cudaStreamSynchronize(s));
}

// A graph of one copy node made by `add`, launched once.
template <typename Add>
cudaGraphNode_t one_node_graph(cudaGraph_t* g, cudaGraphExec_t* x, Add&& add) {
  OK(cudaGraphCreate(g, 0));
  cudaGraphNode_t node = nullptr;
  add(*g, &node);
  cudaGraphNodeType type;
  OK(cudaGraphNodeGetType(node, &type));
  CHECK(type == cudaGraphNodeTypeMemcpy);
  OK(cudaGraphInstantiate(x, *g, 0));
  return node;
}

void done(cudaGraph_t g, cudaGraphExec_t x) {
  OK(cudaGraphExecDestroy(x));
  OK(cudaGraphDestroy(g));
}

// Memory (at element x 3, row 2, slice 1) into an array (at 2, 1, z) and
// back out to other memory, 5 x 3 x depth elements each way.
void memory_and_array(const char* what, cudaStream_t s, Memory& from, Array& arr, Memory& to, size_t z, size_t depth) {
  const size_t height = arr.extent.height ? 3 : 1;
  cudaMemcpy3DParms in{};
  in.srcPtr = pitched(from);
  in.srcPos = make_cudaPos(3, 2, 1);
  in.dstArray = arr.a;
  in.dstPos = make_cudaPos(2, arr.extent.height ? 1 : 0, z);
  in.extent = make_cudaExtent(5, height, depth);
  in.kind = cudaMemcpyDefault;
  cudaMemcpy3DParms out{};
  out.srcArray = arr.a;
  out.srcPos = in.dstPos;
  out.dstPtr = pitched(to);
  out.dstPos = make_cudaPos(1, 1, 0);
  out.extent = in.extent;
  out.kind = cudaMemcpyDefault;
  for (unsigned seed : {5u, 91u}) {
    fill(from.model, seed);
    from.sync_to();
    to.sync_to();
    cudaGraph_t g;
    cudaGraphExec_t x;
    cudaGraphNode_t up = one_node_graph(&g, &x, [&](cudaGraph_t g, cudaGraphNode_t* n) {
      OK(cudaGraphAddMemcpyNode(n, g, nullptr, 0, &in));
      cudaGraphNode_t down;
      OK(cudaGraphAddMemcpyNode(&down, g, n, 1, &out));
    });
    cudaMemcpy3DParms back{};
    OK(cudaGraphMemcpyNodeGetParams(up, &back));
    CHECK(back.dstArray == arr.a && back.srcArray == nullptr && back.dstPos.x == 2 && back.dstPos.z == z &&
          back.extent.width == 5 && back.extent.height == height && back.extent.depth == depth);
    launch(x, s);
    copy_region(arr.model, {2 * kElement, in.dstPos.y, z}, from.model, {3 * kElement, 2, 1}, 5 * kElement, height,
                depth);
    copy_region(to.model, {kElement, 1, 0}, arr.model, {2 * kElement, in.dstPos.y, z}, 5 * kElement, height, depth);
    if (!arr.holds_model() || !to.holds_model()) {
      std::printf("FAILED %s: seed %u moved the wrong bytes\n", what, seed);
      ++g_failures;
    }
    done(g, x);
  }
}

// Array to array, a node whose parameters change: in its graph, in the
// executable graph, through an update from another graph, and in a clone.
void array_to_array(cudaStream_t s, Array& a, Array& b, Array& c) {
  auto params = [](Array& dst, Array& src, size_t x) {
    cudaMemcpy3DParms m{};
    m.srcArray = src.a;
    m.srcPos = make_cudaPos(x, 1, 1);
    m.dstArray = dst.a;
    m.dstPos = make_cudaPos(0, 2, 0);
    m.extent = make_cudaExtent(6, 4, 3);
    m.kind = cudaMemcpyDeviceToDevice;
    return m;
  };
  auto apply = [](Array& dst, Array& src, size_t x) {
    copy_region(dst.model, {0, 2, 0}, src.model, {x * kElement, 1, 1}, 6 * kElement, 4, 3);
  };
  cudaMemcpy3DParms ab = params(b, a, 3);
  cudaGraph_t g;
  cudaGraphExec_t x;
  cudaGraphNode_t node = one_node_graph(&g, &x, [&](cudaGraph_t g, cudaGraphNode_t* n) {
    OK(cudaGraphAddMemcpyNode(n, g, nullptr, 0, &ab));
  });
  launch(x, s);
  apply(b, a, 3);
  CHECK(b.holds_model());
  // An executable copy node takes new 1-D memory only (CUDA's rule): arrays
  // reach it through an update from its graph, here set to copy into c.
  cudaMemcpy3DParms ac = params(c, a, 5);
  EXPECT_STATUS(cudaErrorInvalidValue, cudaGraphExecMemcpyNodeSetParams(x, node, &ac));
  cudaGetLastError();
  OK(cudaGraphMemcpyNodeSetParams(node, &ac));
  cudaMemcpy3DParms back{};
  OK(cudaGraphMemcpyNodeGetParams(node, &back));
  CHECK(back.dstArray == c.a && back.srcArray == a.a && back.srcPos.x == 5 && back.extent.width == 6);
  fill(a.model, 40);
  a.upload();
  launch(x, s);  // still a into b
  apply(b, a, 3);
  CHECK(b.holds_model() && c.holds_model());
  cudaGraphExecUpdateResultInfo info{};
  OK(cudaGraphExecUpdate(x, g, &info));
  CHECK(info.result == cudaGraphExecUpdateSuccess);
  launch(x, s);
  apply(c, a, 5);
  CHECK(c.holds_model() && b.holds_model());
  // The node set to copy c into a, cloned, and the executable graph updated from the clone.
  cudaMemcpy3DParms ca = params(a, c, 2);
  OK(cudaGraphMemcpyNodeSetParams(node, &ca));
  cudaGraph_t clone;
  OK(cudaGraphClone(&clone, g));
  cudaGraphNode_t cloned;
  OK(cudaGraphNodeFindInClone(&cloned, node, clone));
  OK(cudaGraphMemcpyNodeGetParams(cloned, &back));
  CHECK(back.dstArray == a.a && back.srcArray == c.a && back.srcPos.x == 2);
  OK(cudaGraphExecUpdate(x, clone, &info));
  CHECK(info.result == cudaGraphExecUpdateSuccess);
  launch(x, s);
  apply(a, c, 2);
  CHECK(a.holds_model());
  OK(cudaGraphDestroy(clone));
  // cudaGraphAddNode's union, and cudaGraphNodeSetParams, with arrays.
  cudaGraphNodeParams generic{};
  generic.type = cudaGraphNodeTypeMemcpy;
  generic.memcpy.copyParams = params(b, c, 1);
  cudaGraphNode_t added;
  OK(cudaGraphAddNode(&added, g, &node, nullptr, 1, &generic));
  generic.memcpy.copyParams = params(c, b, 4);
  OK(cudaGraphNodeSetParams(added, &generic));
  OK(cudaGraphMemcpyNodeGetParams(added, &back));
  CHECK(back.dstArray == c.a && back.srcArray == b.a && back.srcPos.x == 4);
  cudaGraphExec_t x2;
  OK(cudaGraphInstantiate(&x2, g, 0));
  launch(x2, s);
  apply(a, c, 2);
  apply(c, b, 4);
  CHECK(a.holds_model() && c.holds_model());
  OK(cudaGraphExecDestroy(x2));
  done(g, x);
}

// Array copies queued on a capturing stream become copy nodes of its graph.
void captured(cudaStream_t s, Array& a2, Array& a3, Memory& dev, std::vector<unsigned char>& pageable,
              unsigned char* pinned) {
  constexpr size_t n = 8 * kElement;
  for (size_t i = 0; i < n; ++i) pageable[i] = static_cast<unsigned char>(i + 100), pinned[i] = static_cast<unsigned char>(i + 7);
  fill(dev.model, 12);
  dev.sync_to();
  OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  // Pageable rows into the 2-D array, page-locked ones out of it.
  OK(cudaMemcpy2DToArrayAsync(a2.a, 4 * kElement, 1, pageable.data(), 4 * kElement, 4 * kElement, 2,
                              cudaMemcpyHostToDevice, s));
  OK(cudaMemcpy2DFromArrayAsync(pinned + n, 4 * kElement, a2.a, 4 * kElement, 1, 4 * kElement, 2,
                                cudaMemcpyDeviceToHost, s));
  // Device memory into the 3-D array, the driver's 3-D copy back out to pageable memory.
  cudaMemcpy3DParms m{};
  m.srcPtr = pitched(dev);
  m.dstArray = a3.a;
  m.dstPos = make_cudaPos(1, 1, 1);
  m.extent = make_cudaExtent(4, 2, 2);
  m.kind = cudaMemcpyDeviceToDevice;
  OK(cudaMemcpy3DAsync(&m, s));
  CUDA_MEMCPY3D d{};
  d.srcMemoryType = CU_MEMORYTYPE_ARRAY;
  d.srcArray = reinterpret_cast<CUarray>(a3.a);
  d.srcXInBytes = kElement;
  d.srcY = 1;
  d.srcZ = 1;
  d.dstMemoryType = CU_MEMORYTYPE_HOST;
  d.dstHost = pageable.data() + n;
  d.dstPitch = 4 * kElement;
  d.dstHeight = 2;
  d.WidthInBytes = 4 * kElement;
  d.Height = 2;
  d.Depth = 2;
  DRV(cuMemcpy3DAsync(&d, reinterpret_cast<CUstream>(s)));
  // The driver's linear copies: page-locked bytes into the 1-row start of the 3-D array, out again.
  DRV(cuMemcpyHtoAAsync(reinterpret_cast<CUarray>(a2.a), 0, pinned, 2 * kElement, reinterpret_cast<CUstream>(s)));
  DRV(cuMemcpyAtoHAsync(pinned + 3 * n, reinterpret_cast<CUarray>(a2.a), 0, 2 * kElement,
                        reinterpret_cast<CUstream>(s)));
  cudaGraph_t g;
  OK(cudaStreamEndCapture(s, &g));
  size_t count = 0;
  OK(cudaGraphGetNodes(g, nullptr, &count));
  CHECK(count == 6);
  std::vector<cudaGraphNode_t> nodes(count);
  OK(cudaGraphGetNodes(g, nodes.data(), &count));
  size_t with_arrays = 0;
  for (cudaGraphNode_t node : nodes) {
    cudaGraphNodeType type;
    OK(cudaGraphNodeGetType(node, &type));
    CHECK(type == cudaGraphNodeTypeMemcpy);
    cudaMemcpy3DParms back{};
    OK(cudaGraphMemcpyNodeGetParams(node, &back));
    with_arrays += back.srcArray == a2.a || back.dstArray == a2.a || back.srcArray == a3.a || back.dstArray == a3.a;
  }
  CHECK(with_arrays == 6);
  // Nothing moved while capturing.
  CHECK(a2.holds_model() && a3.holds_model());
  cudaGraphExec_t x;
  OK(cudaGraphInstantiate(&x, g, 0));
  launch(x, s);
  Image rows{std::vector<unsigned char>(pageable.begin(), pageable.begin() + n), 4 * kElement, 2};
  copy_region(a2.model, {4 * kElement, 1, 0}, rows, {0, 0, 0}, 4 * kElement, 2, 1);
  CHECK(std::memcmp(pinned + n, pageable.data(), n) == 0);
  copy_region(a3.model, {kElement, 1, 1}, dev.model, {0, 0, 0}, 4 * kElement, 2, 2);
  Image out = image_of(4 * kElement, 2, 2);
  copy_region(out, {0, 0, 0}, a3.model, {kElement, 1, 1}, 4 * kElement, 2, 2);
  CHECK(std::memcmp(pageable.data() + n, out.bytes.data(), out.bytes.size()) == 0);
  std::memcpy(a2.model.bytes.data(), pinned, 2 * kElement);
  CHECK(std::memcmp(pinned + 3 * n, pinned, 2 * kElement) == 0);
  CHECK(a2.holds_model() && a3.holds_model());
  done(g, x);
}

// The driver's node: CUDA_MEMCPY3D with arrays, read back as arrays, new
// parameters in the graph and the executable graph.
void driver_nodes(cudaStream_t s, Array& a, Array& b, Memory& dev) {
  CUDA_MEMCPY3D m{};
  m.srcMemoryType = CU_MEMORYTYPE_DEVICE;
  m.srcDevice = reinterpret_cast<CUdeviceptr>(dev.dev);
  m.srcPitch = kPitch;
  m.srcHeight = kRows;
  m.srcXInBytes = 8;
  m.dstMemoryType = CU_MEMORYTYPE_ARRAY;
  m.dstArray = reinterpret_cast<CUarray>(a.a);
  m.dstXInBytes = 3 * kElement;
  m.dstY = 2;
  m.dstZ = 1;
  m.WidthInBytes = 4 * kElement;
  m.Height = 3;
  m.Depth = 2;
  fill(dev.model, 77);
  dev.sync_to();
  CUcontext ctx;
  DRV(cuCtxGetCurrent(&ctx));
  CUgraph g;
  DRV(cuGraphCreate(&g, 0));
  CUgraphNode node;
  DRV(cuGraphAddMemcpyNode(&node, g, nullptr, 0, &m, ctx));
  CUDA_MEMCPY3D back{};
  DRV(cuGraphMemcpyNodeGetParams(node, &back));
  CHECK(back.dstMemoryType == CU_MEMORYTYPE_ARRAY && back.dstArray == m.dstArray && back.dstXInBytes == 3 * kElement &&
        back.dstY == 2 && back.dstZ == 1 && back.srcMemoryType == CU_MEMORYTYPE_DEVICE &&
        back.WidthInBytes == 4 * kElement && back.Depth == 2);
  CUgraphExec x;
  DRV(cuGraphInstantiate(&x, g, 0));
  DRV(cuGraphLaunch(x, reinterpret_cast<CUstream>(s)));
  OK(cudaStreamSynchronize(s));
  copy_region(a.model, {3 * kElement, 2, 1}, dev.model, {8, 0, 0}, 4 * kElement, 3, 2);
  CHECK(a.holds_model());
  // Array to array: refused in the executable graph alone (CUDA's rule), set
  // in the graph and updated into the executable graph.
  CUDA_MEMCPY3D ab{};
  ab.srcMemoryType = CU_MEMORYTYPE_ARRAY;
  ab.srcArray = reinterpret_cast<CUarray>(a.a);
  ab.dstMemoryType = CU_MEMORYTYPE_ARRAY;
  ab.dstArray = reinterpret_cast<CUarray>(b.a);
  ab.WidthInBytes = 16 * kElement;
  ab.Height = 6;
  ab.Depth = 4;
  CHECK(cuGraphExecMemcpyNodeSetParams(x, node, &ab, ctx) == CUDA_ERROR_INVALID_VALUE);
  DRV(cuGraphMemcpyNodeSetParams(node, &ab));
  DRV(cuGraphMemcpyNodeGetParams(node, &back));
  CHECK(back.srcMemoryType == CU_MEMORYTYPE_ARRAY && back.srcArray == ab.srcArray && back.dstArray == ab.dstArray);
  // From memory to an array side: not an update CUDA makes.
  CUgraphExecUpdateResultInfo info{};
  CHECK(cuGraphExecUpdate(x, g, &info) == CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE);
  CHECK(info.result == CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED);
  DRV(cuGraphExecDestroy(x));
  DRV(cuGraphInstantiate(&x, g, 0));
  DRV(cuGraphLaunch(x, reinterpret_cast<CUstream>(s)));
  OK(cudaStreamSynchronize(s));
  b.model = a.model;
  CHECK(b.holds_model());
  DRV(cuGraphExecDestroy(x));
  DRV(cuGraphDestroy(g));
}

// What CUDA refuses: an array of no one's, one freed, a region past an array's end.
void refused(Array& a, Memory& dev) {
  cudaGraph_t g;
  OK(cudaGraphCreate(&g, 0));
  cudaGraphNode_t node;
  cudaMemcpy3DParms m{};
  m.srcPtr = pitched(dev);
  m.dstArray = reinterpret_cast<cudaArray_t>(&m);
  m.extent = make_cudaExtent(4, 2, 1);
  m.kind = cudaMemcpyDeviceToDevice;
  EXPECT_STATUS(cudaErrorInvalidResourceHandle, cudaGraphAddMemcpyNode(&node, g, nullptr, 0, &m));
  cudaArray_t gone;
  cudaChannelFormatDesc desc = cudaCreateChannelDesc<unsigned>();
  OK(cudaMallocArray(&gone, &desc, 8, 8));
  OK(cudaFreeArray(gone));
  m.dstArray = gone;
  EXPECT_STATUS(cudaErrorInvalidResourceHandle, cudaGraphAddMemcpyNode(&node, g, nullptr, 0, &m));
  m.dstArray = a.a;
  m.dstPos = make_cudaPos(13, 0, 0);  // 13 + 4 elements past a row of 16
  EXPECT_STATUS(cudaErrorInvalidValue, cudaGraphAddMemcpyNode(&node, g, nullptr, 0, &m));
  m.dstPos = make_cudaPos(0, 5, 0);  // rows 5 and 6 of 6
  EXPECT_STATUS(cudaErrorInvalidValue, cudaGraphAddMemcpyNode(&node, g, nullptr, 0, &m));
  m.dstPos = make_cudaPos(0, 0, 3);
  m.extent.depth = 2;  // slices 3 and 4 of 4
  EXPECT_STATUS(cudaErrorInvalidValue, cudaGraphAddMemcpyNode(&node, g, nullptr, 0, &m));
  // Both a pointer and an array on one side.
  m = cudaMemcpy3DParms{};
  m.srcPtr = pitched(dev);
  m.srcArray = a.a;
  m.dstArray = a.a;
  m.extent = make_cudaExtent(1, 1, 1);
  EXPECT_STATUS(cudaErrorInvalidValue, cudaGraphAddMemcpyNode(&node, g, nullptr, 0, &m));
  // A good node cannot be set past the array either, and keeps its parameters.
  m = cudaMemcpy3DParms{};
  m.srcPtr = pitched(dev);
  m.dstArray = a.a;
  m.extent = make_cudaExtent(4, 2, 1);
  m.kind = cudaMemcpyDeviceToDevice;
  OK(cudaGraphAddMemcpyNode(&node, g, nullptr, 0, &m));
  cudaMemcpy3DParms bad = m;
  bad.extent.width = 17;
  EXPECT_STATUS(cudaErrorInvalidValue, cudaGraphMemcpyNodeSetParams(node, &bad));
  cudaMemcpy3DParms back{};
  OK(cudaGraphMemcpyNodeGetParams(node, &back));
  CHECK(back.extent.width == 4 && back.dstArray == a.a);
  // The driver's node, its width not whole elements.
  CUDA_MEMCPY3D d{};
  d.srcMemoryType = CU_MEMORYTYPE_DEVICE;
  d.srcDevice = reinterpret_cast<CUdeviceptr>(dev.dev);
  d.srcPitch = kPitch;
  d.dstMemoryType = CU_MEMORYTYPE_ARRAY;
  d.dstArray = reinterpret_cast<CUarray>(a.a);
  d.WidthInBytes = 6;
  d.Height = 1;
  d.Depth = 1;
  CUcontext ctx;
  DRV(cuCtxGetCurrent(&ctx));
  CUgraphNode dn;
  CHECK(cuGraphAddMemcpyNode(&dn, reinterpret_cast<CUgraph>(g), nullptr, 0, &d, ctx) == CUDA_ERROR_INVALID_VALUE);
  OK(cudaGraphDestroy(g));
  cudaGetLastError();
}

}  // namespace

int main() {
  cudaStream_t s;
  OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  Array a1 = make_array(make_cudaExtent(64, 0, 0), 1);
  Array a2 = make_array(make_cudaExtent(16, 6, 0), 2);
  Array a3 = make_array(make_cudaExtent(16, 6, 4), 3);
  Array b3 = make_array(make_cudaExtent(16, 6, 4), 4);
  Array c3 = make_array(make_cudaExtent(16, 6, 4), 5);

  Memory dev_in, dev_out, pinned_in, pinned_out, pageable_in, pageable_out;
  OK(cudaMalloc(&dev_in.dev, dev_in.model.bytes.size()));
  OK(cudaMalloc(&dev_out.dev, dev_out.model.bytes.size()));
  OK(cudaMallocHost(&pinned_in.host, pinned_in.model.bytes.size()));
  OK(cudaMallocHost(&pinned_out.host, pinned_out.model.bytes.size()));
  std::vector<unsigned char> pageable_a(pageable_in.model.bytes.size()), pageable_b(pageable_in.model.bytes.size());
  pageable_in.host = pageable_a.data();
  pageable_out.host = pageable_b.data();

  memory_and_array("device through a 3-D array", s, dev_in, a3, dev_out, 1, 3);
  memory_and_array("page-locked through a 3-D array", s, pinned_in, a3, pinned_out, 0, 4);
  memory_and_array("pageable through a 3-D array", s, pageable_in, a3, pageable_out, 2, 2);
  memory_and_array("device through a 2-D array", s, dev_in, a2, dev_out, 0, 1);
  memory_and_array("pageable through a 2-D array", s, pageable_in, a2, pinned_out, 0, 1);
  memory_and_array("page-locked through a 1-D array", s, pinned_in, a1, pageable_out, 0, 1);
  memory_and_array("device through a 1-D array", s, dev_in, a1, dev_out, 0, 1);

  // A level of a mipmapped array (level 1 of 16 x 8 is 8 x 4).
  {
    cudaMipmappedArray_t mip;
    cudaChannelFormatDesc desc = cudaCreateChannelDesc<unsigned>();
    OK(cudaMallocMipmappedArray(&mip, &desc, make_cudaExtent(16, 8, 0), 2, 0));
    Array level;
    OK(cudaGetMipmappedArrayLevel(&level.a, mip, 1));
    level.extent = make_cudaExtent(8, 4, 0);
    level.model = image_of(8 * kElement, 4, 1);
    fill(level.model, 6);
    level.upload();
    memory_and_array("pageable through a mipmapped array's level", s, pageable_in, level, dev_out, 0, 1);
    OK(cudaFreeMipmappedArray(mip));
  }

  array_to_array(s, a3, b3, c3);
  captured(s, a2, a3, dev_in, pageable_a, pinned_in.host);
  driver_nodes(s, a3, b3, dev_in);
  refused(a3, dev_in);

  for (Array* a : {&a1, &a2, &a3, &b3, &c3}) OK(cudaFreeArray(a->a));
  OK(cudaFree(dev_in.dev));
  OK(cudaFree(dev_out.dev));
  OK(cudaFreeHost(pinned_in.host));
  OK(cudaFreeHost(pinned_out.host));
  OK(cudaStreamDestroy(s));
  return finish();
}
