#include "server/daemon/server_config.hpp"

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <stdexcept>

#include "common/version_text.hpp"
#include "protocol/auth.hpp"
#include "protocol/wire.hpp"
#include "transport/transport.hpp"

namespace rgpu::server {
namespace {

const char* kUsage =
    "usage: rgpu-server [options]\n"
    "  --version            print the version and the protocol it speaks\n"
    "  --drain              drain the rgpu-server of this host on --port (its other\n"
    "                       options may be given, and are ignored): it takes no new\n"
    "                       sessions and stops once its sessions end; waits for that\n"
    "  --move-to HOST[:PORT][/GPU]  with --drain: first ask every session to move there\n"
    "                       (rgpu migrate --all, with --job-key-file); those that cannot\n"
    "                       move run to their end\n"
    "  --listen ADDR        address to listen on (default 127.0.0.1: this host only;\n"
    "                       0.0.0.0 serves every host that reaches the port: give a token)\n"
    "  --port N             TCP port (default 18515)\n"
    "  --ucx-port N         also serve clients over UCX (InfiniBand, RoCE...) on port N\n"
    "                       (clients' default for ucx is 18516; default: off)\n"
    "  --gpus LIST          GPUs to export, e.g. 0,1 (default: all)\n"
    "  --workers N          pre-started workers with CUDA initialised (default 2)\n"
    "  --backend NAME       cuda (default) or host-test (host memory, for tests only)\n"
    "  --log-level LEVEL    error, warn, info (default) or debug\n"
    "  --module-cache DIR   where fat binaries are cached by hash (default\n"
    "                       /tmp/rgpu-module-cache-UID; made 0700; off unless this\n"
    "                       user's and writable by no one else; none: off)\n"
    "  --token-file FILE    clients must prove they know the token in FILE (rgpu token;\n"
    "                       refused if its group or others may read it)\n"
    "  --job-key-file FILE  the scheduler side's job key: every session needs a job\n"
    "                       credential (rgpu credential) for the GPUs it opens (the\n"
    "                       same file mode rule)\n"
    "  --metrics-port N     Prometheus metrics at http://LISTEN:N/metrics\n"
    "  --metrics-token-file FILE  scrapes must send the token in FILE as\n"
    "                       'Authorization: Bearer TOKEN' (the token file mode rule)\n"
    "  --gpu-mode GPU=MODE  exclusive (one job at a time) or shared (default);\n"
    "                       repeat for each GPU\n"
    "  --gpu-sharing HOW    how sessions share a shared GPU: timeslice (default: the\n"
    "                       driver time-slices their contexts) or mps (their kernels run\n"
    "                       side by side as clients of an MPS daemon this server starts\n"
    "                       for the GPU; needs --gpus 0: one server per GPU, chosen\n"
    "                       with CUDA_VISIBLE_DEVICES)\n"
    "  --mps-control PATH   the MPS control program (default nvidia-cuda-mps-control)\n"
    "  --mps-dir DIR        where the MPS daemons' private pipe and log directories go\n"
    "                       (default $XDG_RUNTIME_DIR/rgpu-mps-PORT, else\n"
    "                       /tmp/rgpu-mps-UID-PORT; made 0700)\n"
    "  --unix-socket PATH   socket for clients on this host, whose page-locked memory\n"
    "                       is then shared (default /tmp/rgpu-PORT.sock; none: off)\n"
    "  --unix-socket-mode M its file mode, octal: who on this host may connect\n"
    "                       (default 600: the server's user; 660: its group too)\n"
    "  --ipc-dir DIR        where CUDA IPC records are kept, a directory of the server's\n"
    "                       user, mode 0700 (default /dev/shm/rgpu-ipc-UID-PORT)\n"
    "  --ipc-sharing WHO    who may open an exported CUDA IPC handle: owner (default: the\n"
    "                       exporter's client, its host over tcp or user over the Unix\n"
    "                       socket, and job), job (any client of its job) or server (any)\n"
    "  --tls-cert FILE      the tcp port speaks TLS 1.3 only, with this certificate (PEM)\n"
    "  --tls-key FILE       and its private key (PEM)\n"
    "  --tls-client-ca FILE clients must present a certificate signed by this CA\n"
    "  --nccl-library PATH  NVIDIA's libnccl.so.2 for applications' NCCL calls (default:\n"
    "                       by soname, then pip's nvidia/nccl/lib in the usual places;\n"
    "                       none: applications' NCCL calls are refused)\n"
    "  --nccl-socket-ifname LIST  the network interfaces NCCL uses between servers\n"
    "                       (NCCL_SOCKET_IFNAME; default: NCCL's choice)\n"
    "  --nccl-ib-hca LIST   the InfiniBand/RoCE adapters NCCL uses (NCCL_IB_HCA)\n"
    "  --nccl-env NAME=VALUE  any other NCCL_* setting for the workers' NCCL; repeat\n"
    "  --config FILE        read these settings (key = value) from FILE first\n"
    "limits (0: none):\n"
    "  --max-sessions N             sessions at once, all clients (default 256)\n"
    "  --max-sessions-per-client N  sessions at once of one client: its host (tcp, ucx)\n"
    "                               or its user (Unix socket) (default 64)\n"
    "  --max-session-connections N  connections (application threads) of one session (default 256)\n"
    "  --max-frame-bytes SIZE       arguments of one request (default 1M; 4K to 1M)\n"
    "  --max-session-memory SIZE    device memory one session may allocate (default 0)\n"
    "  --max-session-host-memory SIZE  host memory one session may make its worker hold:\n"
    "                               page-locked memory, staging, module images being loaded\n"
    "                               (default: a quarter of the host's memory)\n"
    "  --max-module-bytes SIZE      one module image, or one JIT link's inputs (default 512M)\n"
    "  --module-cache-max SIZE      the module cache directory; past it the least recently\n"
    "                               used images go (default 2G)\n"
    "  --max-session-streams N      streams one session may hold (default 4096)\n"
    "  --max-session-events N       events one session may hold (default 65536)\n"
    "  --max-session-modules N      modules and libraries one session may hold (default 16384)\n"
    "  --max-session-graphs N       graphs, and executable graphs, one session may hold\n"
    "                               (default 16384 each)\n"
    "  --max-session-graph-nodes N  nodes one session may add to its graphs (default 1048576)\n"
    "  --max-session-allocations N  device allocations one session may hold (default 262144)\n"
    "  --max-session-objects N      of each other kind one session may hold: memory pools,\n"
    "                               texture and surface objects, texture references, external\n"
    "                               memories and semaphores, user objects, conditional\n"
    "                               handles (default 16384 each)\n"
    "  --idle-timeout S             end a session that makes no call for S seconds (default 0)\n"
    "  --peer-timeout S             end a session whose client is silent for S seconds, and\n"
    "                               let clients find a silent server as fast (default 30)\n"
    "  --hello-timeout S            a connection's whole hello (or join) must arrive within\n"
    "                               S seconds, at least 1 (default 5)\n"
    "  --max-unauthenticated-per-client N  connections of one host (tcp) or user (Unix\n"
    "                               socket) in their hello at once, as many more queued;\n"
    "                               past that closed at once; at least 1 (default 16)\n"
    "  --max-unauthenticated N      connections not yet authenticated, all sources, in\n"
    "                               their hello or queued (each in its hello holds a\n"
    "                               worker and its CUDA context); at least 1 (default 64)\n";

std::string trim(const std::string& s) {
  auto b = s.find_first_not_of(" \t\r");
  auto e = s.find_last_not_of(" \t\r");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

int to_int(const std::string& key, const std::string& v) {
  size_t used = 0;
  int n = 0;
  try {
    n = std::stoi(v, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != v.size()) throw std::invalid_argument(key + " needs a number, not '" + v + "'");
  return n;
}

// "4096", "64K", "512M", "8G".
uint64_t to_bytes(const std::string& key, const std::string& v) {
  size_t used = 0;
  uint64_t n = 0;
  try {
    n = std::stoull(v, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  int shift = 0;
  if (used != 0 && used + 1 == v.size()) {
    switch (v.back()) {
      case 'K': case 'k': shift = 10; break;
      case 'M': case 'm': shift = 20; break;
      case 'G': case 'g': shift = 30; break;
      case 'T': case 't': shift = 40; break;
      default: used = 0;
    }
    if (used) ++used;
  }
  if (used == 0 || used != v.size() || v[0] == '-' || n > (UINT64_MAX >> shift))
    throw std::invalid_argument(key + " needs a size (bytes, or with K, M, G, T), not '" + v + "'");
  return n << shift;
}

int to_count(const std::string& key, const std::string& v) {
  int n = to_int(key, v);
  if (n < 0) throw std::invalid_argument(key + " must not be negative");
  return n;
}

// A token or key from its file (proto::read_secret_file's mode rule).
std::string secret(const std::string& key, const std::string& path) {
  std::string why;
  std::string s = proto::read_secret_file(path, &why);
  if (s.empty()) throw std::invalid_argument(key + ": " + why);
  return s;
}

int to_positive(const std::string& key, const std::string& v) {
  int n = to_int(key, v);
  if (n < 1) throw std::invalid_argument(key + " must be at least 1");
  return n;
}

// NAME=VALUE of an NCCL_* environment variable.
std::pair<std::string, std::string> nccl_setting(const std::string& key, const std::string& v) {
  size_t eq = v.find('=');
  std::string name = v.substr(0, eq);
  bool valid = eq != std::string::npos && name.rfind("NCCL_", 0) == 0 && name.size() > 5 &&
               name.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == std::string::npos;
  if (!valid) throw std::invalid_argument(key + " needs NCCL_NAME=VALUE, not '" + v + "'");
  return {name, v.substr(eq + 1)};
}

void apply(ServerConfig* c, const std::string& key, const std::string& v) {
  if (key == "listen") c->listen = v;
  else if (key == "port") c->port = to_int(key, v);
  else if (key == "metrics-port") c->metrics_port = to_int(key, v);
  else if (key == "ucx-port") c->ucx_port = to_int(key, v);
  else if (key == "workers") c->workers = to_int(key, v);
  else if (key == "backend") c->backend = v;
  else if (key == "log-level") c->log_level = v;
  else if (key == "module-cache") c->module_cache = v;
  else if (key == "nccl-library") c->nccl_library = v;
  else if (key == "nccl-socket-ifname") c->nccl_env.emplace_back("NCCL_SOCKET_IFNAME", v);
  else if (key == "nccl-ib-hca") c->nccl_env.emplace_back("NCCL_IB_HCA", v);
  else if (key == "nccl-env") c->nccl_env.push_back(nccl_setting(key, v));
  else if (key == "unix-socket") c->unix_socket = v;
  else if (key == "max-sessions") c->max_sessions = to_count(key, v);
  else if (key == "max-sessions-per-client") c->max_sessions_per_client = to_count(key, v);
  else if (key == "max-session-connections") c->max_session_connections = to_count(key, v);
  else if (key == "max-session-memory") c->max_session_memory = to_bytes(key, v);
  else if (key == "max-session-host-memory") c->max_session_host_memory = to_bytes(key, v);
  else if (key == "max-module-bytes") c->bounds.max_module_bytes = to_bytes(key, v);
  else if (key == "module-cache-max") c->bounds.module_cache_max = to_bytes(key, v);
  else if (key == "max-session-streams") c->bounds.max_streams = to_count(key, v);
  else if (key == "max-session-events") c->bounds.max_events = to_count(key, v);
  else if (key == "max-session-modules") c->bounds.max_modules = to_count(key, v);
  else if (key == "max-session-graphs") c->bounds.max_graphs = to_count(key, v);
  else if (key == "max-session-graph-nodes") c->bounds.max_graph_nodes = to_count(key, v);
  else if (key == "max-session-objects") c->bounds.max_objects = to_count(key, v);
  else if (key == "max-session-allocations") c->bounds.max_allocations = to_count(key, v);
  else if (key == "idle-timeout") c->idle_timeout_s = to_count(key, v);
  else if (key == "peer-timeout") c->peer_timeout_s = to_count(key, v);
  else if (key == "hello-timeout") c->hello_timeout_s = to_positive(key, v);
  else if (key == "max-unauthenticated-per-client") c->max_unauthenticated_per_client = to_positive(key, v);
  else if (key == "max-unauthenticated") c->max_unauthenticated = to_positive(key, v);
  else if (key == "max-frame-bytes") {
    uint64_t n = to_bytes(key, v);
    if (n < 4096 || n > proto::kMaxArgsBytes)
      throw std::invalid_argument(key + " must be between 4K and " + std::to_string(proto::kMaxArgsBytes >> 10) + "K");
    c->max_frame_bytes = static_cast<uint32_t>(n);
  }
  else if (key == "unix-socket-mode") {
    size_t used = 0;
    unsigned long mode = 0;
    try {
      mode = std::stoul(v, &used, 8);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != v.size() || mode > 0777)
      throw std::invalid_argument(key + " needs an octal file mode, not '" + v + "'");
    c->unix_socket_mode = static_cast<unsigned>(mode);
  }
  else if (key == "ipc-dir") c->ipc_dir = v;
  else if (key == "mps-control") c->mps_control = v;
  else if (key == "mps-dir") c->mps_dir = v;
  else if (key == "gpu-sharing") {
    if (v == "timeslice") c->gpu_sharing = GpuSharing::timeslice;
    else if (v == "mps") c->gpu_sharing = GpuSharing::mps;
    else throw std::invalid_argument(key + " needs timeslice or mps, not '" + v + "'");
  }
  else if (key == "ipc-sharing") {
    if (v == "owner") c->ipc_sharing = IpcSharing::owner;
    else if (v == "job") c->ipc_sharing = IpcSharing::job;
    else if (v == "server") c->ipc_sharing = IpcSharing::server;
    else throw std::invalid_argument(key + " needs owner, job or server, not '" + v + "'");
  }
  else if (key == "tls-cert") c->tls.certificate = v;
  else if (key == "tls-key") c->tls.private_key = v;
  else if (key == "tls-client-ca") c->tls.peer_ca = v;
  else if (key == "token-file") c->token = secret(key, v);
  else if (key == "job-key-file") {
    c->job_key = secret(key, v);
    c->job_key_file = v;
  } else if (key == "move-to") c->drain_move_to = v;
  else if (key == "metrics-token-file") c->metrics_token = secret(key, v);
  else if (key == "gpu-mode") {
    auto eq = v.find('=');
    std::string mode = eq == std::string::npos ? "" : trim(v.substr(eq + 1));
    if (mode != "exclusive" && mode != "shared")
      throw std::invalid_argument(key + " needs GPU=exclusive or GPU=shared, not '" + v + "'");
    int gpu = to_int(key, trim(v.substr(0, eq)));
    if (gpu < 0 || gpu >= kLedgerGpus) throw std::invalid_argument(key + ": GPU " + std::to_string(gpu) + " out of range");
    if (c->gpu_modes.size() <= static_cast<size_t>(gpu)) c->gpu_modes.resize(gpu + 1, GpuMode::shared);
    c->gpu_modes[gpu] = mode == "exclusive" ? GpuMode::exclusive : GpuMode::shared;
  }
  else if (key == "gpus") {
    c->gpus.clear();
    if (v == "all") return;
    size_t start = 0;
    while (start <= v.size()) {
      size_t comma = v.find(',', start);
      c->gpus.push_back(to_int(key, trim(v.substr(start, comma - start))));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  } else {
    throw std::invalid_argument("unknown setting '" + key + "'");
  }
}

void read_file(ServerConfig* c, const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::invalid_argument("cannot read config file " + path);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    line = trim(line.substr(0, line.find('#')));
    if (line.empty()) continue;
    auto eq = line.find('=');
    if (eq == std::string::npos)
      throw std::invalid_argument(path + ":" + std::to_string(n) + ": expected key = value");
    apply(c, trim(line.substr(0, eq)), trim(line.substr(eq + 1)));
  }
}

}  // namespace

uint64_t default_session_host_memory() {
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  // Unknown (never on Linux): a bound still, rather than none.
  if (pages <= 0 || page <= 0) return uint64_t{1} << 30;
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) / 4;
}

bool parse_server_args(int argc, char** argv, ServerConfig* config) {
  config->module_cache = "/tmp/rgpu-module-cache-" + std::to_string(getuid());
  std::map<std::string, std::string> flags;
  std::vector<std::pair<std::string, std::string>> ordered;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      fputs(kUsage, stdout);
      return false;
    }
    if (a == "--version") {
      puts(version_text("rgpu-server").c_str());
      return false;
    }
    if (a == "--drain") {
      config->drain = true;
      continue;
    }
    if (a.rfind("--", 0) != 0) throw std::invalid_argument("unexpected argument '" + a + "'\n" + kUsage);
    std::string key = a.substr(2), value;
    if (auto eq = key.find('='); eq != std::string::npos) {
      value = key.substr(eq + 1);
      key = key.substr(0, eq);
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      throw std::invalid_argument("--" + key + " needs a value");
    }
    if (key == "config") read_file(config, value);
    else ordered.emplace_back(key, value);
  }
  for (const auto& [k, v] : ordered) apply(config, k, v);
  if (config->port <= 0 || config->port > 65535) throw std::invalid_argument("port out of range");
  if (config->metrics_port < 0 || config->metrics_port > 65535 ||
      (config->metrics_port != 0 && config->metrics_port == config->port))
    throw std::invalid_argument("metrics port out of range or the same as the port");
  if (config->ucx_port < 0 || config->ucx_port > 65535 || config->ucx_port == config->port)
    throw std::invalid_argument("ucx-port out of range or the same as port");
  if (config->workers < 0) throw std::invalid_argument("workers must be >= 0");
  if (config->tls.certificate.empty() != config->tls.private_key.empty())
    throw std::invalid_argument("TLS needs both --tls-cert and --tls-key");
  if (!config->tls.peer_ca.empty() && config->tls.certificate.empty())
    throw std::invalid_argument("--tls-client-ca needs TLS: give --tls-cert and --tls-key");
  if (config->unix_socket.empty()) config->unix_socket = transport::default_shm_socket(config->port);
  if (config->unix_socket == "none") config->unix_socket.clear();
  if (config->module_cache == "none") config->module_cache.clear();
  // A process is the client of one MPS server, and a worker must be one
  // before CUDA starts, before it knows its session's GPU; that server shows
  // its GPU to its clients as device 0.
  if (config->gpu_sharing == GpuSharing::mps && config->gpus != std::vector<int>{0})
    throw std::invalid_argument(
        "--gpu-sharing mps serves one GPU, device 0 of the server: give --gpus 0, and run one rgpu-server per GPU "
        "with CUDA_VISIBLE_DEVICES naming it");
  if (config->mps_dir.empty()) {
    const char* runtime = getenv("XDG_RUNTIME_DIR");
    config->mps_dir = runtime && *runtime ? std::string(runtime) + "/rgpu-mps-" + std::to_string(config->port)
                                          : "/tmp/rgpu-mps-" + std::to_string(getuid()) + "-" + std::to_string(config->port);
  }
  if (config->ipc_dir.empty()) config->ipc_dir = default_ipc_directory(static_cast<uint16_t>(config->port));
  return true;
}

}  // namespace rgpu::server
