// A kernel with 20 parameters of mixed sizes and alignments, including
// structs by value: the parameter buffer layout (offsets, padding) must be
// reproduced exactly by whoever marshals the launch.
#include "corpus.h"

struct Small {  // 12 bytes, 4-aligned
  int a;
  short b;
  char c;
  float d;
};
struct alignas(16) Vec4 {  // 16-aligned
  float x, y, z, w;
};
struct Mixed {  // 8-aligned with internal padding
  char tag;
  double value;
  int count;
};

__global__ void many(char p0, short p1, int p2, long long p3, float p4, double p5, bool p6,
                     unsigned char p7, Small p8, Vec4 p9, Mixed p10, unsigned p11, char p12,
                     double p13, int* p14, float p15, short p16, Vec4 p17, long long p18,
                     double* out) {
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  double v[] = {double(p0), double(p1), double(p2), double(p3), double(p4), p5, double(p6),
                double(p7), double(p8.a), double(p8.b), double(p8.c), double(p8.d), double(p9.x),
                double(p9.y), double(p9.z), double(p9.w), double(p10.tag), p10.value,
                double(p10.count), double(p11), double(p12), p13, double(p15), double(p16),
                double(p17.x), double(p17.w), double(p18)};
  for (int i = 0; i < 27; ++i) out[i] = v[i];
  *p14 = 0x5eed;  // the pointer parameter must arrive intact too
}

int main() {
  double* dout;
  int* dflag;
  CK(cudaMalloc(&dout, 27 * sizeof(double)));
  CK(cudaMalloc(&dflag, sizeof(int)));
  CK(cudaMemset(dout, 0, 27 * sizeof(double)));
  Small s{-123456, -321, 'z', 2.5f};
  Vec4 v{1.f, -2.f, 3.5f, 1e6f};
  Mixed m{'q', -9.75e100, 77};
  Vec4 v2{-0.5f, 0.f, 0.f, 1024.f};
  many<<<2, 64>>>('A', short(-30000), 2000000000, -(1LL << 60) + 5, 3.25f, 1.0 / 3, true, 250, s, v,
                  m, 4000000000u, -7, -2.5e-300, dflag, -1e-3f, short(12345), v2,
                  0x123456789abcdefLL, dout);
  CK(cudaGetLastError());
  double got[27];
  int flag = 0;
  CK(cudaMemcpy(got, dout, sizeof got, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(&flag, dflag, sizeof flag, cudaMemcpyDeviceToHost));
  const double want[27] = {65, -30000, 2000000000, double(-(1LL << 60) + 5), 3.25, 1.0 / 3, 1, 250,
                           -123456, -321, 'z', 2.5, 1, -2, 3.5, 1e6, 'q', -9.75e100, 77, 4000000000.0,
                           -7, -2.5e-300, double(-1e-3f), 12345, -0.5, 1024,
                           double(0x123456789abcdefLL)};
  int bad = 0;
  for (int i = 0; i < 27; ++i)
    if (got[i] != want[i]) {
      ++bad;
      printf("param value %d: got %.17g want %.17g\n", i, got[i], want[i]);
    }
  EXPECT(bad == 0, "%d parameters wrong", bad);
  EXPECT(flag == 0x5eed, "pointer parameter");
  printf("many_params sizeof(Small)=%zu sizeof(Vec4)=%zu sizeof(Mixed)=%zu wrong=%d flag=%x checksum=%016llx\n",
         sizeof(Small), sizeof(Vec4), sizeof(Mixed), bad, flag,
         (unsigned long long)fnv1a(got, sizeof got));
  CK(cudaFree(dout));
  CK(cudaFree(dflag));
  return finish();
}
