#include "server/daemon/drain_command.hpp"

#include <dirent.h>
#include <sys/wait.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/executable_dir.hpp"

namespace rgpu::server {
namespace {

// Inodes of the sockets listening on TCP `port` (IPv4 and IPv6).
std::set<std::string> listening_inodes(int port) {
  std::set<std::string> inodes;
  for (const char* table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::ifstream in(table);
    std::string line;
    std::getline(in, line);  // the header
    while (std::getline(in, line)) {
      std::istringstream fields(line);
      std::string slot, local, remote, state, queues, timer, retransmits, uid, timeout, inode;
      fields >> slot >> local >> remote >> state >> queues >> timer >> retransmits >> uid >> timeout >> inode;
      const size_t colon = local.rfind(':');
      if (state != "0A" || colon == std::string::npos) continue;  // 0A: LISTEN
      if (std::stoi(local.substr(colon + 1), nullptr, 16) == port) inodes.insert(inode);
    }
  }
  return inodes;
}

std::string read_first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// A process's state and parent, from /proc/PID/stat ("pid (comm) state
// ppid ...", comm may hold spaces); nothing when it is gone.
struct ProcessStat {
  char state = 0;
  pid_t parent = 0;
};
std::optional<ProcessStat> process_stat(pid_t pid) {
  const std::string stat = read_first_line("/proc/" + std::to_string(pid) + "/stat");
  const size_t close = stat.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream rest(stat.substr(close + 1));
  ProcessStat p;
  rest >> p.state >> p.parent;
  return p;
}

// The rgpu-server processes holding one of `inodes` (those whose
// descriptors this user may read).
std::vector<pid_t> holders(const std::set<std::string>& inodes) {
  std::vector<pid_t> found;
  DIR* proc = opendir("/proc");
  if (!proc) return found;
  while (dirent* e = readdir(proc)) {
    const pid_t pid = static_cast<pid_t>(std::atoi(e->d_name));
    if (pid <= 0) continue;
    const std::string dir = "/proc/" + std::to_string(pid);
    if (read_first_line(dir + "/comm") != "rgpu-server") continue;
    DIR* fds = opendir((dir + "/fd").c_str());
    if (!fds) continue;
    while (dirent* f = readdir(fds)) {
      char target[64] = {};
      const std::string link = dir + "/fd/" + f->d_name;
      if (readlink(link.c_str(), target, sizeof target - 1) <= 0) continue;
      const std::string t = target;
      if (t.rfind("socket:[", 0) == 0 && inodes.contains(t.substr(8, t.size() - 9))) {
        found.push_back(pid);
        break;
      }
    }
    closedir(fds);
  }
  closedir(proc);
  return found;
}

// `rgpu migrate --all` (the CLI beside this program) on the server: its exit status.
int move_every_session(int port, const std::string& address, const std::string& move_to,
                       const std::string& job_key_file) {
  const std::string rgpu = executable_dir() + "/rgpu";
  const std::string server = (address.empty() || address == "0.0.0.0" ? "127.0.0.1" : address) + ":" +
                             std::to_string(port);
  std::printf("asking every session of %s to move to %s\n", server.c_str(), move_to.c_str());
  std::fflush(stdout);
  pid_t child = fork();
  if (child == 0) {
    execl(rgpu.c_str(), rgpu.c_str(), "migrate", "--all", "--key-file", job_key_file.c_str(), "--to",
          move_to.c_str(), "--wait", "120", server.c_str(), static_cast<char*>(nullptr));
    std::fprintf(stderr, "rgpu-server --drain: cannot run %s: %s\n", rgpu.c_str(), std::strerror(errno));
    _exit(127);
  }
  int status = 0;
  if (child < 0 || waitpid(child, &status, 0) != child) return 1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

}  // namespace

int drain_running_server(int port, const std::string& address, const std::string& move_to,
                         const std::string& job_key_file) {
  const std::vector<pid_t> found = holders(listening_inodes(port));
  // Workers are forked from the daemon and may hold its listener too: the
  // daemon is the one whose parent is none of them.
  const std::set<pid_t> holding(found.begin(), found.end());
  pid_t daemon = 0;
  for (pid_t pid : found)
    if (auto stat = process_stat(pid); stat && !holding.contains(stat->parent)) daemon = pid;
  if (!daemon) {
    std::fprintf(stderr, "rgpu-server --drain: no rgpu-server of this user listens on port %d\n", port);
    return 1;
  }
  if (!move_to.empty()) {
    if (job_key_file.empty()) {
      std::fprintf(stderr, "rgpu-server --drain --move-to: needs the server's --job-key-file\n");
      return 1;
    }
    if (move_every_session(port, address, move_to, job_key_file) != 0)
      std::printf("not every session moved: those left run to their end\n");
  }
  if (kill(daemon, SIGUSR1) != 0) {
    std::fprintf(stderr, "rgpu-server --drain: cannot signal rgpu-server %d: %s\n", daemon, std::strerror(errno));
    return 1;
  }
  std::printf("rgpu-server %d on port %d is draining: it takes no new sessions, and stops once its sessions end\n",
              daemon, port);
  std::fflush(stdout);
  // A zombie (the daemon's parent has not reaped it) has stopped too.
  for (auto stat = process_stat(daemon); stat && stat->state != 'Z'; stat = process_stat(daemon))
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  std::printf("rgpu-server %d stopped\n", daemon);
  return 0;
}

}  // namespace rgpu::server
