// Kernels the driver-API programs load as PTX, cubin and fat binary (built by nvcc).
// extern "C" keeps their names unmangled for cuModuleGetFunction.
extern "C" __global__ void vadd(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

// A managed and a plain module-scope variable, for the library lookups.
__managed__ int managed_total;
__device__ int device_total;

struct Scale {
  double factor;
  char tag;
};

extern "C" __global__ void scale(Scale s, float* data, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] = static_cast<float>(data[i] * s.factor) + s.tag;
}
