#include "cli/sanitizer_runtime.hpp"

#include <dlfcn.h>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#include <sanitizer/common_interface_defs.h>
#endif

namespace rgpu::cli {

std::string sanitizer_runtime() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  // Every sanitizer runtime defines this function: the object holding it is the runtime.
  Dl_info runtime{};
  Dl_info self{};
  if (dladdr(reinterpret_cast<void*>(&__sanitizer_print_stack_trace), &runtime) && runtime.dli_fname &&
      dladdr(reinterpret_cast<void*>(&sanitizer_runtime), &self) && runtime.dli_fbase != self.dli_fbase)
    return runtime.dli_fname;
#endif
  return {};
}

std::string sanitizer_tunables() {
#if defined(__SANITIZE_THREAD__)
  return "glibc.rtld.optional_static_tls=4194304";
#else
  return {};
#endif
}

}  // namespace rgpu::cli
