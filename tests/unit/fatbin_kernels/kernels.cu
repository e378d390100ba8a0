// Kernels with known parameter layouts, for the fat binary parser's tests
// (tests/unit/fatbin_test.cpp states the expected offsets and sizes).
struct Padded {
  double a;
  char b;
};
struct Arrays {
  int v[5];
  char tag;
};
struct Tiny {
  char c[3];
};

__global__ void mixed(int* p, float f, Padded s, char c, double* d) {}
__global__ void no_params() {}
extern "C" __global__ void plain_c(int a, short b) {}
template <typename T>
__global__ void templated(T* out, T value) {}
template __global__ void templated<float>(float*, float);
template __global__ void templated<double>(double*, double);
__global__ void by_value(Arrays a, long long x) {}
__global__ void twenty(int a0, int a1, int a2, int a3, int a4, int a5, int a6, int a7, int a8, int a9, char a10,
                       char a11, double a12, int a13, int a14, int a15, int a16, int a17, int a18, float* a19) {}
namespace ns {
__global__ void aligned(float4 v, char c, Tiny t, bool b, unsigned short u, float4* out) {}
}  // namespace ns
