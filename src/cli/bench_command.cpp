#include "cli/bench_command.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/executable_dir.hpp"
#include "transport/transport.hpp"

namespace rgpu::cli {
namespace {

const char* kUsage =
    "usage: rgpu bench [--server HOST[:PORT]] [--tls-server HOST[:PORT]] [--ucx-port N] [--out DIR] [--max-bytes N]\n"
    "  Measures copy latency and bandwidth (4 KB to 1 GB, pinned and pageable, both\n"
    "  directions), kernel launch times and start-up, locally and through rgpu, and\n"
    "  the raw transport, in one run. Without --server it starts a local rgpu-server.\n"
    "  --tls-server adds the same over TLS to that server (its CA in RGPU_TLS_CA),\n"
    "  with each figure's ratio to plain tcp. --ucx-port adds ucx (the server's ucx port).\n"
    "  Writes DIR/bench.json, DIR/bench.md and DIR/bench.png (default DIR: rgpu-bench).\n";

// Runs argv with extra environment, stdout to `out`; returns the exit status.
int run_to_file(const std::vector<std::string>& argv, const std::vector<std::string>& env, const std::string& out) {
  pid_t pid = fork();
  if (pid == 0) {
    int fd = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0) _exit(126);
    for (const auto& kv : env) putenv(const_cast<char*>(kv.c_str()));
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool reachable(const std::string& server) {
  try {
    transport::make_tcp_transport()->connect(transport::Endpoint::parse(server, 18515), 500);
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

// The port --ucx-port gave (checked before anything starts).
uint16_t ucx_endpoint_port(const std::string& port) { return transport::Endpoint::parse("host:" + port, 0).port; }

}  // namespace

int bench_command(int argc, char** argv) {
  std::string server, tls_server, ucx_port, out = "rgpu-bench", max_bytes = std::to_string(size_t{1} << 30);
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--server" && i + 1 < argc) server = argv[++i];
    else if (a == "--tls-server" && i + 1 < argc) tls_server = argv[++i];
    else if (a == "--ucx-port" && i + 1 < argc) ucx_port = argv[++i];
    else if (a == "--out" && i + 1 < argc) out = argv[++i];
    else if (a == "--max-bytes" && i + 1 < argc) max_bytes = argv[++i];
    else {
      fputs(kUsage, a == "--help" ? stdout : stderr);
      return a == "--help" ? 0 : 2;
    }
  }
  try {
    if (!ucx_port.empty()) ucx_endpoint_port(ucx_port);
  } catch (const transport::TransportError& e) {
    fprintf(stderr, "rgpu bench: --ucx-port: %s\n", e.what());
    return 2;
  }
  const std::string dir = executable_dir();
  mkdir(out.c_str(), 0755);

  pid_t own_server = 0;
  if (server.empty()) {
    server = "127.0.0.1:18599";
    own_server = fork();
    if (own_server == 0) {
      setpgid(0, 0);
      std::string log = out + "/server.log";
      if (!freopen(log.c_str(), "w", stderr)) _exit(126);
      std::vector<std::string> args{dir + "/rgpu-server", "--listen", "127.0.0.1", "--port", "18599", "--workers", "2"};
      if (!ucx_port.empty()) args.insert(args.end(), {"--ucx-port", ucx_port});
      std::vector<char*> argv_server;
      for (auto& a : args) argv_server.push_back(a.data());
      argv_server.push_back(nullptr);
      execv(argv_server[0], argv_server.data());
      _exit(127);
    }
    for (int i = 0; i < 300 && !reachable(server); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (!reachable(server) || (!tls_server.empty() && !reachable(tls_server))) {
    fprintf(stderr, "rgpu bench: no rgpu-server at %s\n", reachable(server) ? tls_server.c_str() : server.c_str());
    if (own_server > 0) kill(-own_server, SIGTERM);
    return 1;
  }

  const std::vector<std::string> bench{dir + "/rgpu-bench-cuda", "--max-bytes", max_bytes};
  // Local: NVIDIA's runtime, as the program finds it without rgpu.
  int rc = run_to_file(bench, {}, out + "/local.json");
  // Through rgpu: the same binary, loading rgpu's libcudart.so.13.
  std::string path = "LD_LIBRARY_PATH=" + dir + "/lib";
  if (const char* old = getenv("LD_LIBRARY_PATH"); old && *old) path += std::string(":") + old;
  // shm needs the server on this host; its socket says whether it is.
  auto endpoint = transport::Endpoint::parse(server, 18515);
  std::vector<std::pair<std::string, std::string>> transports{{"tcp", server}};
  if (access(transport::default_shm_socket(endpoint.port).c_str(), F_OK) == 0) transports.emplace_back("shm", server);
  if (!tls_server.empty()) transports.emplace_back("tls", tls_server);
  if (!ucx_port.empty())
    transports.emplace_back("ucx", "ucx://" + transport::Endpoint{endpoint.host, ucx_endpoint_port(ucx_port)}.to_string());
  for (const auto& [t, where] : transports) {
    rc |= run_to_file(bench, {path, "RGPU_DEVICES=" + where + ":0", "RGPU_TRANSPORT=" + t}, out + "/" + t + ".json");
    rc |= run_to_file({dir + "/rgpu-transport-bench", t}, {}, out + "/raw_" + t + ".json");
  }
  if (own_server > 0) {
    kill(-own_server, SIGTERM);
    waitpid(own_server, nullptr, 0);
  }
  if (rc != 0) {
    fprintf(stderr, "rgpu bench: a measurement failed; see %s/\n", out.c_str());
    return 1;
  }
  {
    std::ofstream json(out + "/bench.json");
    json << "{\"local\": " << slurp(out + "/local.json");
    for (const auto& [t, where] : transports)
      json << ", \"" << t << "\": " << slurp(out + "/" + t + ".json") << ", \"raw_" << t
           << "\": " << slurp(out + "/raw_" + t + ".json");
    json << "}\n";
  }
  std::string plot = std::string("python3 ") + RGPU_SOURCE_DIR + "/bench/plot_bench.py " + out + "/bench.json " +
                     out + "/bench.md " + out + "/bench.png";
  if (system(plot.c_str()) != 0) fprintf(stderr, "rgpu bench: the table/plot step failed\n");
  fputs(slurp(out + "/bench.md").c_str(), stdout);
  return 0;
}

}  // namespace rgpu::cli
