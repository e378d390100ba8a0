// Stream attributes: an L2 access policy window over the application's own
// memory and a synchronisation policy are set and read back; a window over
// memory that is not the application's, or an attribute streams do not
// take, is refused.
#include "check.h"

int main() {
  cudaStream_t s;
  OK(cudaStreamCreate(&s));
  char* d;
  OK(cudaMalloc(&d, 1 << 20));
  cudaStreamAttrValue v = {};
  v.accessPolicyWindow.base_ptr = d;
  v.accessPolicyWindow.num_bytes = 1 << 20;
  v.accessPolicyWindow.hitRatio = 0.5f;
  v.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
  v.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
  OK(cudaStreamSetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &v));
  cudaStreamAttrValue back = {};
  OK(cudaStreamGetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &back));
  CHECK(back.accessPolicyWindow.base_ptr == d && back.accessPolicyWindow.num_bytes == (1 << 20));
  CHECK(back.accessPolicyWindow.hitProp == cudaAccessPropertyPersisting);

  cudaStreamAttrValue sync = {};
  sync.syncPolicy = cudaSyncPolicyYield;
  OK(cudaStreamSetAttribute(s, cudaStreamAttributeSynchronizationPolicy, &sync));
  OK(cudaStreamGetAttribute(s, cudaStreamAttributeSynchronizationPolicy, &back));
  CHECK(back.syncPolicy == cudaSyncPolicyYield);

  cudaStreamAttrValue foreign = v;
  foreign.accessPolicyWindow.base_ptr = reinterpret_cast<void*>(0x1000);
  EXPECT_STATUS(cudaErrorInvalidValue, cudaStreamSetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &foreign));
  EXPECT_STATUS(cudaErrorInvalidValue, cudaStreamSetAttribute(s, cudaLaunchAttributeCooperative, &v));
  EXPECT_STATUS(cudaErrorInvalidValue, cudaStreamSetAttribute(s, cudaStreamAttributePriority, nullptr));
  OK(cudaFree(d));
  OK(cudaStreamDestroy(s));
  return finish();
}
