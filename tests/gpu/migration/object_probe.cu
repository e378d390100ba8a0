// Open questions of docs/migration.md, measured: in a fresh process, do the
// same module images loaded in the same order give their __device__
// variables the same addresses, and do texture and surface objects made in
// the same order get the same values? A migration's target worker would
// load and make them anew, and a kernel argument or a pointer the
// application kept would hold the source's values.
//   object_probe [ALLOCATE_FIRST_MB]   loads two PTX images (cuModuleLoadData,
//       as rgpu's workers load them), prints each global's address, then
//       makes 3 texture objects over linear memory and 2 surface objects over
//       an array and prints their values, then destroys the second texture
//       object and prints the value a new one gets (is a value handed out
//       again?); ALLOCATE_FIRST_MB > 0 first holds
//       that much device memory (a target whose history differs)
// Prints PROBE lines; the runner compares two processes' lines.
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#define CHECK_CU(call)                                                               \
  do {                                                                               \
    CUresult r_ = (call);                                                            \
    if (r_ != CUDA_SUCCESS) {                                                        \
      std::printf("RESULT FAIL: %s: %d (line %d)\n", #call, static_cast<int>(r_), __LINE__); \
      std::exit(1);                                                                  \
    }                                                                                \
  } while (0)

namespace {

const char* kImages[] = {
    ".version 7.0\n.target sm_50\n.address_size 64\n"
    ".visible .global .align 4 .u32 counter;\n"
    ".visible .global .align 8 .b8 table[4096];\n"
    ".visible .entry touch() { ret; }\n",
    ".version 7.0\n.target sm_50\n.address_size 64\n"
    ".visible .global .align 8 .u64 pointer;\n"
    ".visible .global .align 16 .b8 big[1048576];\n"
    ".visible .entry touch2() { ret; }\n",
};
const char* kGlobals[][2] = {{"counter", "table"}, {"pointer", "big"}};

}  // namespace

int main(int argc, char** argv) {
  const long allocate_first_mb = argc > 1 ? std::atol(argv[1]) : 0;
  CHECK_CU(cuInit(0));
  CUdevice dev;
  CHECK_CU(cuDeviceGet(&dev, 0));
  CUcontext ctx;
  CHECK_CU(cuDevicePrimaryCtxRetain(&ctx, dev));
  CHECK_CU(cuCtxSetCurrent(ctx));
  if (allocate_first_mb > 0) {
    CUdeviceptr held;
    CHECK_CU(cuMemAlloc(&held, static_cast<size_t>(allocate_first_mb) << 20));
  }
  for (int m = 0; m < 2; ++m) {
    CUmodule module;
    CHECK_CU(cuModuleLoadData(&module, kImages[m]));
    for (const char* name : kGlobals[m]) {
      CUdeviceptr p;
      size_t bytes;
      CHECK_CU(cuModuleGetGlobal(&p, &bytes, module, name));
      std::printf("PROBE global %s 0x%llx\n", name, static_cast<unsigned long long>(p));
    }
  }
  void* linear = nullptr;
  cudaMalloc(&linear, 1 << 20);
  auto texture = [&](int i) {
    cudaResourceDesc res{};
    res.resType = cudaResourceTypeLinear;
    res.res.linear.devPtr = static_cast<char*>(linear) + i * 4096;
    res.res.linear.desc = cudaCreateChannelDesc<float>();
    res.res.linear.sizeInBytes = 4096;
    cudaTextureDesc tex{};
    tex.readMode = cudaReadModeElementType;
    cudaTextureObject_t t = 0;
    if (cudaCreateTextureObject(&t, &res, &tex, nullptr) != cudaSuccess) {
      std::printf("RESULT FAIL: cudaCreateTextureObject\n");
      std::exit(1);
    }
    return t;
  };
  cudaTextureObject_t textures[3];
  for (int i = 0; i < 3; ++i) {
    textures[i] = texture(i);
    std::printf("PROBE texture %d %llu\n", i, static_cast<unsigned long long>(textures[i]));
  }
  cudaChannelFormatDesc desc = cudaCreateChannelDesc<float>();
  cudaArray_t array;
  cudaMallocArray(&array, &desc, 64, 64, cudaArraySurfaceLoadStore);
  for (int i = 0; i < 2; ++i) {
    cudaResourceDesc res{};
    res.resType = cudaResourceTypeArray;
    res.res.array.array = array;
    cudaSurfaceObject_t s = 0;
    if (cudaCreateSurfaceObject(&s, &res) != cudaSuccess) {
      std::printf("RESULT FAIL: cudaCreateSurfaceObject\n");
      return 1;
    }
    std::printf("PROBE surface %d %llu\n", i, static_cast<unsigned long long>(s));
  }
  cudaDestroyTextureObject(textures[1]);
  std::printf("PROBE texture after-destroying-1 %llu\n", static_cast<unsigned long long>(texture(3)));
  std::fflush(stdout);
  // Held until stdin closes, so that two processes live at once.
  while (std::getchar() != EOF) {
  }
  return 0;
}
