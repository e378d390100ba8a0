// rgpu: the command-line front end. `rgpu run` starts a program so that it
// loads rgpu's libcudart.so.13 and libcuda.so.1 (both in one directory) and uses remote GPUs.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cli/bench_command.hpp"
#include "cli/credential_command.hpp"
#include "cli/job_end_command.hpp"
#include "cli/ls_command.hpp"
#include "cli/sanitizer_runtime.hpp"
#include "cli/smi_command.hpp"
#include "cli/token_command.hpp"
#include "common/executable_dir.hpp"

namespace {

const char* kUsage =
    "usage: rgpu run [--server HOST[:PORT]] [--gpus LIST] [--trace] -- PROGRAM [ARGS...]\n"
    "       rgpu ls [--server HOST[:PORT]]...\n"
    "       rgpu bench [--server HOST[:PORT]] [--out DIR] [--max-bytes N]\n"
    "       rgpu token FILE   (a new token for rgpu-server --token-file, readable by you alone)\n"
    "       rgpu smi [--json] [--key-file FILE] [SERVER[:PORT]...]\n"
    "       rgpu credential --key-file FILE --job JOBID [--user NAME] --expires SECONDS\n"
    "                       --gpu HOST:PORT:GPU[=AMOUNT]...\n"
    "       rgpu job-end --key-file FILE --job JOBID [SERVER[:PORT]...]\n"
    "  --server HOST[:PORT]  the rgpu-server to use (default: RGPU_DEVICES, else localhost)\n"
    "  --gpus LIST           that server's GPUs to use, e.g. 0,1 (default 0)\n"
    "  --trace               log every forwarded call (RGPU_TRACE=1)\n";

// The build tree keeps the library in lib/; an install in ../lib/rgpu.
std::string library_dir() {
  std::string dir = rgpu::executable_dir();
  for (std::string candidate : {dir + "/lib", dir + "/../lib/rgpu"})
    if (access((candidate + "/libcudart.so.13").c_str(), R_OK) == 0) return candidate;
  return dir + "/lib";
}

int run(int argc, char** argv) {
  std::string server, gpus = "0";
  int i = 0;
  for (; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--") {
      ++i;
      break;
    }
    if (a == "--server" && i + 1 < argc) server = argv[++i];
    else if (a == "--gpus" && i + 1 < argc) gpus = argv[++i];
    else if (a == "--trace") setenv("RGPU_TRACE", "1", 1);
    else if (a[0] != '-') break;
    else {
      fprintf(stderr, "rgpu run: unknown option %s\n%s", a.c_str(), kUsage);
      return 2;
    }
  }
  if (i >= argc) {
    fputs(kUsage, stderr);
    return 2;
  }
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
  std::string path = dir;
  if (const char* old = getenv("LD_LIBRARY_PATH"); old && *old) path += std::string(":") + old;
  setenv("LD_LIBRARY_PATH", path.c_str(), 1);
  // Preloaded, rgpu's runtime is the libcudart.so.13 every library that
  // needs one gets, even one whose RPATH names NVIDIA's (PyTorch's does):
  // the loader matches a needed soname to a library already loaded first.
  // The library path still serves programs that open the driver by name.
  std::string preload = dir + "/libcudart.so.13";
  if (const char* old = getenv("LD_PRELOAD"); old && *old) preload += std::string(":") + old;
  if (std::string runtime = rgpu::cli::sanitizer_runtime(); !runtime.empty()) preload = runtime + ":" + preload;
  setenv("LD_PRELOAD", preload.c_str(), 1);
  if (std::string tunables = rgpu::cli::sanitizer_tunables(); !tunables.empty()) {
    if (const char* old = getenv("GLIBC_TUNABLES"); old && *old) tunables = std::string(old) + ":" + tunables;
    setenv("GLIBC_TUNABLES", tunables.c_str(), 1);
  }
  // The loader then asks rgpu's audit module where each library comes from:
  // a path naming NVIDIA's driver or runtime gets rgpu's, and the libraries
  // that drive a local GPU's video engines are not loaded (library_audit.cpp).
  std::string audit = dir + "/librgpu-audit.so";
  if (const char* old = getenv("LD_AUDIT"); old && *old) audit += std::string(":") + old;
  setenv("LD_AUDIT", audit.c_str(), 1);
  execvp(argv[i], argv + i);
  perror(argv[i]);
  return 127;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2 && std::string(argv[1]) == "run") return run(argc - 2, argv + 2);
  if (argc >= 2 && std::string(argv[1]) == "ls") return rgpu::cli::ls_command(argc - 2, argv + 2);
  if (argc >= 2 && std::string(argv[1]) == "bench") return rgpu::cli::bench_command(argc - 2, argv + 2);
  if (argc >= 2 && std::string(argv[1]) == "token") return rgpu::cli::token_command(argc - 2, argv + 2);
  if (argc >= 2 && std::string(argv[1]) == "smi") return rgpu::cli::smi_command(argc - 2, argv + 2);
  if (argc >= 2 && std::string(argv[1]) == "credential") return rgpu::cli::credential_command(argc - 2, argv + 2);
  if (argc >= 2 && std::string(argv[1]) == "job-end") return rgpu::cli::job_end_command(argc - 2, argv + 2);
  fputs(kUsage, argc >= 2 && std::string(argv[1]) == "--help" ? stdout : stderr);
  return argc >= 2 && std::string(argv[1]) == "--help" ? 0 : 2;
}
