#include "server/daemon/mps_daemons.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <thread>

#include "common/log.hpp"

namespace rgpu::server {
namespace {

// The control program answers at once; one that does not is broken.
constexpr auto kControlTimeout = std::chrono::seconds(10);
// A daemon that died with no session to notice is found within this.
constexpr auto kCheckInterval = std::chrono::seconds(5);

// A directory of the server's user alone: made if missing, refused if it is
// a link, another user's, or open to others.
std::string private_directory(const std::string& path) {
  if (mkdir(path.c_str(), 0700) != 0 && errno != EEXIST) return "cannot make " + path + ": " + strerror(errno);
  struct stat st{};
  if (lstat(path.c_str(), &st) != 0) return "cannot read " + path + ": " + strerror(errno);
  if (!S_ISDIR(st.st_mode)) return path + " is not a directory";
  if (st.st_uid != getuid()) return path + " belongs to another user";
  if ((st.st_mode & 0077) != 0 && chmod(path.c_str(), 0700) != 0)
    return "cannot make " + path + " private: " + strerror(errno);
  return "";
}

// What CUDA_VISIBLE_DEVICES names GPU `gpu` of this server: the server's
// own list, when it has one, numbers its GPUs.
std::string visible_device(int gpu) {
  const char* own = getenv("CUDA_VISIBLE_DEVICES");
  if (!own || !*own) return std::to_string(gpu);
  std::string list = own;
  size_t start = 0;
  for (int i = 0; i < gpu && start != std::string::npos; ++i) {
    start = list.find(',', start);
    if (start != std::string::npos) ++start;
  }
  if (start == std::string::npos) return std::to_string(gpu);
  return list.substr(start, list.find(',', start) - start);
}

bool shared_gpu(const ServerConfig& config, int gpu) {
  return static_cast<size_t>(gpu) >= config.gpu_modes.size() || config.gpu_modes[gpu] == GpuMode::shared;
}

}  // namespace

MpsDaemons::MpsDaemons(const ServerConfig& config, ServerCounters& counters) : config_(config), counters_(counters) {}

MpsDaemons::~MpsDaemons() {
  for (const Daemon& d : running_) stop_one(d);
  if (!running_.empty()) rmdir(config_.mps_dir.c_str());
}

int MpsDaemons::control(const Daemon& d, const std::vector<std::string>& args, const std::string& input,
                        std::string* output) const {
  int in[2], out[2];
  if (pipe2(in, O_CLOEXEC) != 0) return -1;
  if (pipe2(out, O_CLOEXEC) != 0) {
    close(in[0]);
    close(in[1]);
    return -1;
  }
  pid_t pid = fork();
  if (pid == 0) {
    dup2(in[0], 0);
    dup2(out[1], 1);
    dup2(out[1], 2);
    setenv("CUDA_MPS_PIPE_DIRECTORY", d.pipe_dir.c_str(), 1);
    setenv("CUDA_MPS_LOG_DIRECTORY", d.log_dir.c_str(), 1);
    setenv("CUDA_VISIBLE_DEVICES", visible_device(d.gpu).c_str(), 1);
    std::vector<char*> argv{const_cast<char*>(config_.mps_control.c_str())};
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    dprintf(2, "cannot run %s: %s\n", argv[0], strerror(errno));
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  // (SIGPIPE is ignored: a program that exits unread fails only this write.)
  if (pid > 0 && !input.empty()) [[maybe_unused]] ssize_t n = write(in[1], input.data(), input.size());
  close(in[1]);
  int status = -1;
  if (pid > 0) {
    // A daemonised child may keep the output pipe open: wait for the
    // program itself, then take what it wrote.
    fcntl(out[0], F_SETFL, O_NONBLOCK);
    const auto deadline = std::chrono::steady_clock::now() + kControlTimeout;
    int raw = 0;
    pid_t done = 0;
    while ((done = waitpid(pid, &raw, WNOHANG)) == 0 && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (done == 0) {
      kill(pid, SIGKILL);
      waitpid(pid, &raw, 0);
    } else if (done == pid) {
      status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
    }
    char buf[4096];
    ssize_t n;
    while ((n = read(out[0], buf, sizeof buf)) > 0) output->append(buf, static_cast<size_t>(n));
  }
  close(out[0]);
  while (!output->empty() && (output->back() == '\n' || output->back() == ' ')) output->pop_back();
  return status;
}

bool MpsDaemons::start_one(const Daemon& d, std::string* why) {
  for (const std::string& dir : {d.dir, d.pipe_dir, d.log_dir})
    if (*why = private_directory(dir); !why->empty()) return false;
  std::string out;
  int status = control(d, {"-d"}, "", &out);
  if (status != 0) {
    *why = config_.mps_control + " -d " + (status < 0 ? "did not finish" : "exited with status " + std::to_string(status)) +
           (out.empty() ? "" : ": " + out);
    return false;
  }
  // -d returns once it has forked: the daemon is up when it answers.
  out.clear();
  status = control(d, {}, "get_server_list\n", &out);
  if (status != 0) {
    *why = "the control daemon does not answer" + (out.empty() ? "" : ": " + out);
    return false;
  }
  return true;
}

void MpsDaemons::stop_one(const Daemon& d) {
  std::string out;
  if (int status = control(d, {}, "quit\n", &out); status != 0)
    RGPU_LOG(warn, "MPS control daemon of GPU %d did not take quit (status %d)%s%s", d.gpu, status,
             out.empty() ? "" : ": ", out.c_str());
  std::error_code ec;
  std::filesystem::remove_all(d.dir, ec);
  if (ec) RGPU_LOG(warn, "cannot remove %s: %s", d.dir.c_str(), ec.message().c_str());
}

void MpsDaemons::start() {
  if (config_.gpu_sharing != GpuSharing::mps) return;
  if (std::string why = private_directory(config_.mps_dir); !why.empty()) {
    RGPU_LOG(error, "--mps-dir: %s; every GPU time-slices", why.c_str());
    for (int g : config_.gpus) counters_.set_gpu_sharing(g, SharingState::timeslice_fallback);
    return;
  }
  for (int gpu : config_.gpus) {
    if (!shared_gpu(config_, gpu)) continue;
    const std::string dir = config_.mps_dir + "/gpu" + std::to_string(gpu);
    Daemon d{gpu, dir, dir + "/pipe", dir + "/log"};
    struct stat st{};
    if (lstat(dir.c_str(), &st) == 0) {
      RGPU_LOG(warn, "GPU %d: stopping the MPS control daemon a previous server left in %s", gpu, dir.c_str());
      stop_one(d);
    }
    if (std::string why; !start_one(d, &why)) {
      RGPU_LOG(error, "GPU %d: cannot start its MPS control daemon (%s); it time-slices instead", gpu, why.c_str());
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
      counters_.set_gpu_sharing(gpu, SharingState::timeslice_fallback);
      continue;
    }
    RGPU_LOG(info, "GPU %d: MPS control daemon started, pipe directory %s", gpu, d.pipe_dir.c_str());
    counters_.set_gpu_sharing(gpu, SharingState::mps);
    running_.push_back(d);
  }
}

bool MpsDaemons::broken() {
  const auto now = std::chrono::steady_clock::now();
  const bool periodic = now >= next_check_;
  if (periodic) next_check_ = now + kCheckInterval;
  bool any = false;
  for (Daemon& d : running_) {
    const uint64_t faults = counters_.sticky_faults(d.gpu);
    const bool faulted = faults != d.faults_seen;
    d.faults_seen = faults;
    std::string out;
    if (faulted) {
      RGPU_LOG(error, "GPU %d: a session's sticky fault; its MPS server fails every session of the GPU and takes no "
               "new one until all have ended: ending them, then restarting the MPS daemon", d.gpu);
    } else if (!periodic || control(d, {}, "get_server_list\n", &out) == 0) {
      continue;
    } else {
      RGPU_LOG(error, "GPU %d: its MPS control daemon does not answer%s%s; ending the GPU's sessions (their MPS "
               "server is gone), then restarting it", d.gpu, out.empty() ? "" : ": ", out.c_str());
    }
    d.broken = any = true;
  }
  return any;
}

bool MpsDaemons::restart() {
  for (Daemon& d : running_) {
    if (!d.broken) continue;
    stop_one(d);
    counters_.mps_restarted(d.gpu);
    if (std::string why; !start_one(d, &why)) {
      RGPU_LOG(error, "GPU %d: cannot restart its MPS control daemon (%s)", d.gpu, why.c_str());
      return false;
    }
    // The ended sessions' own reports of the fault are not a new one.
    d.faults_seen = counters_.sticky_faults(d.gpu);
    d.broken = false;
    RGPU_LOG(info, "GPU %d: MPS control daemon restarted", d.gpu);
  }
  return true;
}

std::string MpsDaemons::pipe_directory(int gpu) const {
  for (const Daemon& d : running_)
    if (d.gpu == gpu) return d.pipe_dir;
  return "";
}

}  // namespace rgpu::server
