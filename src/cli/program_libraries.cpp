#include "cli/program_libraries.hpp"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>

#include "cli/run_environment.hpp"

namespace rgpu::cli {
namespace {

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// NVIDIA's CUDA libraries (libcuda, libcudart, libcublas, libcudnn, libcufft,
// libnvrtc, libnvJitLink, libnvjpeg, libnvidia-ml, libnccl, libnpp...) and rgpu's.
bool is_cuda_library(const std::string& base) {
  for (const char* prefix : {"libcu", "libnv", "libnccl", "libnpp", "librgpu"})
    if (starts_with(base, prefix)) return true;
  return false;
}

std::string real_path(const std::string& path) {
  char buf[PATH_MAX];
  return realpath(path.c_str(), buf) ? buf : path;
}

std::string verdict_on_nvidia(const std::string& base, bool nvidia_driver) {
  if (starts_with(base, "libcuda.so"))
    return "NVIDIA's driver: CUDA calls through it use this machine's GPUs (or fail without one), not rgpu's. "
           "It was opened by a name rgpu does not redirect (rgpu redirects libcuda.so.1, libcuda.so, "
           "libcudart.so.13 and libcudart.so): open libcuda.so.1 by that name";
  if (starts_with(base, "libnvidia-ml"))
    return "NVIDIA's management library (NVML): it reports this machine's GPUs, rgpu does not forward it";
  const std::string driver = nvidia_driver ? "runs on NVIDIA's driver (see its line)" : "runs on rgpu's driver";
  if (starts_with(base, "libnccl"))
    return "NVIDIA's NCCL in the process (RGPU_NCCL=native, or a name rgpu does not redirect): its transports run "
           "here, not on the servers (docs/nccl.md); it " + driver;
  if (starts_with(base, "libcudart"))
    return "NVIDIA's CUDA runtime, a second one beside rgpu's (opened by a file name rgpu does not redirect): " +
           driver;
  return "NVIDIA's library: " + driver;
}

}  // namespace

bool is_same_file(const std::string& a, const std::string& b) {
  struct stat sa{}, sb{};
  return stat(a.c_str(), &sa) == 0 && stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

std::vector<LibraryFinding> classify_libraries(const std::vector<std::string>& loaded, const std::string& rgpu_dir) {
  const std::string rgpu_real_dir = real_path(rgpu_dir);
  const std::string rgpu_runtime = rgpu_dir + "/libcudart.so.13";
  auto is_rgpus = [&](const std::string& path) {
    const std::string real = real_path(path);
    return is_same_file(path, rgpu_runtime) || real.substr(0, real.rfind('/')) == rgpu_real_dir;
  };
  auto base_of = [](const std::string& path) { return path.substr(path.rfind('/') + 1); };
  bool nvidia_driver = false;
  for (const auto& path : loaded)
    if (starts_with(base_of(path), "libcuda.so") && !is_rgpus(path)) nvidia_driver = true;
  std::vector<LibraryFinding> out;
  std::set<std::string> seen;
  for (const auto& path : loaded) {
    const std::string base = base_of(path);
    if (!is_cuda_library(base) || !seen.insert(real_path(path)).second) continue;
    LibraryFinding f{path, "", false};
    if (is_same_file(path, rgpu_runtime)) {
      f.verdict = "rgpu's runtime and driver (libcudart.so.13 and libcuda.so.1 are this one file)";
    } else if (is_rgpus(path)) {
      f.verdict = starts_with(base, "libnccl") ? "rgpu's NCCL front-end: collectives run on the servers' GPUs" : "rgpu's";
    } else {
      f.verdict = verdict_on_nvidia(base, nvidia_driver);
      f.problem = starts_with(base, "libcuda.so");
    }
    out.push_back(f);
  }
  return out;
}

ProgramLibraries program_libraries(char** argv, const std::string& server, const std::string& rgpu_dir) {
  ProgramLibraries result;
  char list[] = "/tmp/rgpu-doctor-XXXXXX";
  int fd = mkstemp(list);
  if (fd < 0) {
    result.why = std::string("cannot make a temporary file: ") + strerror(errno);
    return result;
  }
  close(fd);
  pid_t pid = fork();
  if (pid == 0) {
    set_run_environment(server, "0");
    setenv("RGPU_AUDIT_LIST", list, 1);
    // The program's own output goes to standard error: the doctor's report is standard output.
    dup2(STDERR_FILENO, STDOUT_FILENO);
    execvp(argv[0], argv);
    fprintf(stderr, "rgpu doctor: cannot run %s: %s\n", argv[0], strerror(errno));
    _exit(127);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) < 0) {
    result.why = std::string("cannot run the program: ") + strerror(errno);
    unlink(list);
    return result;
  }
  result.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  std::vector<std::string> loaded;
  std::ifstream in(list);
  for (std::string line; std::getline(in, line);) loaded.push_back(line);
  unlink(list);
  // Nothing listed: the loader never ran the audit module (no such program, or a static one).
  result.started = !loaded.empty();
  if (!result.started)
    result.why = result.exit_status == 127 ? "it could not be started" : "it loaded no shared library (a static program?)";
  result.cuda_libraries = classify_libraries(loaded, rgpu_dir);
  return result;
}

}  // namespace rgpu::cli
