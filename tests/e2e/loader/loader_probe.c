/* Reports which file each way of reaching NVIDIA's driver libraries loads:
 * by RPATH (this program is linked against a fake libcuda.so.1 with an RPATH
 * to its directory), by absolute path (argv[1]), and a video-engine library by
 * name (argv[2]), and NCCL by absolute path (argv[3]) and by soname;
 * loader_audit_test.sh runs it with and without `rgpu run`. */
#include <dlfcn.h>
#include <stdio.h>

static const char* which(void* handle) {
  if (!handle) return "not-loaded";
  return dlsym(handle, "rgpu_test_fake_nvidia_library") ? "nvidia" : "rgpu";
}

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: loader_probe ABSOLUTE_LIBCUDA ENGINE_LIBRARY_NAME ABSOLUTE_LIBNCCL\n");
    return 2;
  }
  printf("rpath: %s\n", which(dlopen(NULL, RTLD_NOW)));
  printf("absolute: %s\n", which(dlopen(argv[1], RTLD_NOW)));
  printf("engine: %s\n", which(dlopen(argv[2], RTLD_NOW)));
  printf("nccl absolute: %s\n", which(dlopen(argv[3], RTLD_NOW)));
  printf("nccl soname: %s\n", which(dlopen("libnccl.so.2", RTLD_NOW)));
  return 0;
}
