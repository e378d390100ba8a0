// Arrays, texture and surface objects on two devices of one server: each
// call goes to the device that owns the object, whichever is current; a
// graph copy node takes arrays of its graph's device.
#include <vector>

#include "check.h"

int main() {
  int count = 0;
  OK(cudaGetDeviceCount(&count));
  CHECK(count == 2);
  if (count != 2) return finish();
  cudaChannelFormatDesc f = cudaCreateChannelDesc<int>();
  cudaArray_t a[2];
  cudaTextureObject_t t[2];
  cudaSurfaceObject_t s[2];
  for (int d = 0; d < 2; ++d) {
    OK(cudaSetDevice(d));
    OK(cudaMallocArray(&a[d], &f, 8, 2, cudaArraySurfaceLoadStore));
    std::vector<int> v(16, 100 * (d + 1));
    OK(cudaMemcpy2DToArray(a[d], 0, 0, v.data(), 8 * sizeof(int), 8 * sizeof(int), 2, cudaMemcpyHostToDevice));
    cudaResourceDesc res{};
    res.resType = cudaResourceTypeArray;
    res.res.array.array = a[d];
    cudaTextureDesc tex{};
    OK(cudaCreateTextureObject(&t[d], &res, &tex, nullptr));
    OK(cudaCreateSurfaceObject(&s[d], &res));
  }
  // With device 1 current, device 0's objects are still reached.
  std::vector<int> back(16);
  OK(cudaMemcpy2DFromArray(back.data(), 8 * sizeof(int), a[0], 0, 0, 8 * sizeof(int), 2, cudaMemcpyDeviceToHost));
  CHECK(back[0] == 100 && back[15] == 100);
  cudaResourceDesc res_back;
  OK(cudaGetTextureObjectResourceDesc(&res_back, t[0]));
  CHECK(res_back.res.array.array == a[0]);
  OK(cudaDestroyTextureObject(t[0]));
  OK(cudaDestroySurfaceObject(s[0]));
  OK(cudaFreeArray(a[0]));
  OK(cudaSetDevice(0));
  OK(cudaMemcpy2DFromArray(back.data(), 8 * sizeof(int), a[1], 0, 0, 8 * sizeof(int), 2, cudaMemcpyDeviceToHost));
  CHECK(back[0] == 200 && back[15] == 200);
  // A texture on device 1's array made while device 0 is current goes to device 1.
  cudaResourceDesc res{};
  res.resType = cudaResourceTypeArray;
  res.res.array.array = a[1];
  cudaTextureDesc tex{};
  cudaTextureObject_t again;
  OK(cudaCreateTextureObject(&again, &res, &tex, nullptr));
  OK(cudaDestroyTextureObject(again));
  OK(cudaDestroyTextureObject(t[1]));
  OK(cudaDestroySurfaceObject(s[1]));
  EXPECT_STATUS(cudaErrorInvalidValue, cudaDestroySurfaceObject(s[1]));
  // A graph copy node names arrays of its graph's device: device 1's array
  // from a graph made on device 1, not from one made on device 0.
  {
    cudaMemcpy3DParms m{};
    m.srcArray = a[1];
    m.dstPtr = make_cudaPitchedPtr(back.data(), 8 * sizeof(int), 8, 2);
    m.extent = make_cudaExtent(8, 2, 1);
    m.kind = cudaMemcpyDeviceToHost;
    cudaGraph_t g;
    cudaGraphNode_t n;
    OK(cudaGraphCreate(&g, 0));
    EXPECT_STATUS(cudaErrorInvalidValue, cudaGraphAddMemcpyNode(&n, g, nullptr, 0, &m));
    OK(cudaGraphDestroy(g));
    OK(cudaSetDevice(1));
    OK(cudaGraphCreate(&g, 0));
    OK(cudaGraphAddMemcpyNode(&n, g, nullptr, 0, &m));
    cudaGraphExec_t x;
    OK(cudaGraphInstantiate(&x, g, 0));
    back.assign(16, 0);
    OK(cudaGraphLaunch(x, 0));
    OK(cudaStreamSynchronize(0));
    CHECK(back[0] == 200 && back[15] == 200);
    OK(cudaGraphExecDestroy(x));
    OK(cudaGraphDestroy(g));
  }
  OK(cudaFreeArray(a[1]));
  return finish();
}
