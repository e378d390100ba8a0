// The environment `rgpu run` starts a program in (and `rgpu doctor --
// PROGRAM` probes it in): rgpu's libraries first on the loader's paths,
// preloaded, and its loader audit module watching every library search.
#pragma once
#include <string>

namespace rgpu::cli {

// rgpu's client libraries: lib/ beside the executable (the build tree, the
// wheel and the Debian package), else ../lib/rgpu.
std::string library_dir();

// Sets RGPU_DEVICES (when server is not empty: its GPUs in gpus, e.g.
// "0,1"), LD_LIBRARY_PATH, LD_PRELOAD, LD_AUDIT and GLIBC_TUNABLES.
void set_run_environment(const std::string& server, const std::string& gpus);

}  // namespace rgpu::cli
