#include "cli/run_environment.hpp"

#include <unistd.h>

#include <cstdlib>

#include "cli/sanitizer_runtime.hpp"
#include "common/executable_dir.hpp"

namespace rgpu::cli {
namespace {

// Puts `value` before the variable's present value (a list separated by ':').
void prepend(const char* name, std::string value) {
  if (const char* old = getenv(name); old && *old) value += ":" + std::string(old);
  setenv(name, value.c_str(), 1);
}

}  // namespace

std::string library_dir() {
  std::string dir = rgpu::executable_dir();
  for (std::string candidate : {dir + "/lib", dir + "/../lib/rgpu"})
    if (access((candidate + "/libcudart.so.13").c_str(), R_OK) == 0) return candidate;
  return dir + "/lib";
}

void set_run_environment(const std::string& server, const std::string& gpus) {
  if (!server.empty()) {
    std::string devices;
    size_t start = 0;
    while (start <= gpus.size()) {
      size_t comma = gpus.find(',', start);
      if (!devices.empty()) devices += ",";
      devices += server + ":" + gpus.substr(start, comma - start);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    setenv("RGPU_DEVICES", devices.c_str(), 1);
  }
  const std::string dir = library_dir();
  prepend("LD_LIBRARY_PATH", dir);
  // Preloaded, rgpu's runtime is the libcudart.so.13 every library that
  // needs one gets, even one whose RPATH names NVIDIA's (PyTorch's does):
  // the loader matches a needed soname to a library already loaded first.
  // The library path still serves programs that open the driver by name.
  std::string preload = dir + "/libcudart.so.13";
  if (std::string runtime = sanitizer_runtime(); !runtime.empty()) preload = runtime + ":" + preload;
  prepend("LD_PRELOAD", preload);
  if (std::string tunables = sanitizer_tunables(); !tunables.empty()) {
    if (const char* old = getenv("GLIBC_TUNABLES"); old && *old) tunables = std::string(old) + ":" + tunables;
    setenv("GLIBC_TUNABLES", tunables.c_str(), 1);
  }
  // The loader then asks rgpu's audit module where each library comes from:
  // a path naming NVIDIA's driver or runtime gets rgpu's, and the libraries
  // that drive a local GPU's video engines are not loaded (library_audit.cpp).
  prepend("LD_AUDIT", dir + "/librgpu-audit.so");
}

}  // namespace rgpu::cli
