#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "server/daemon/server_config.hpp"
#include "transport/transport.hpp"

using namespace rgpu;

namespace {
bool parse(std::vector<std::string> args, server::ServerConfig* c) {
  std::vector<char*> argv{const_cast<char*>("rgpu-server")};
  for (auto& a : args) argv.push_back(a.data());
  return server::parse_server_args(static_cast<int>(argv.size()), argv.data(), c);
}
}  // namespace

TEST(ServerConfig, FlagsOverrideConfigFile) {
  std::string path = ::testing::TempDir() + "/rgpu-server.conf";
  std::ofstream(path) << "# comment\nport = 9000\ngpus = 0, 2\nworkers=4\nbackend = host-test\n";
  server::ServerConfig c;
  ASSERT_TRUE(parse({"--config", path, "--port", "9100"}, &c));
  EXPECT_EQ(c.port, 9100);
  EXPECT_EQ(c.gpus, (std::vector<int>{0, 2}));
  EXPECT_EQ(c.workers, 4);
  EXPECT_EQ(c.backend, "host-test");
}

// --drain takes no value and reads the port from the flags or the file.
TEST(ServerConfig, DrainTakesThePortOfTheServerToDrain) {
  std::string path = ::testing::TempDir() + "/rgpu-server-drain.conf";
  std::ofstream(path) << "port = 9200\n";
  server::ServerConfig from_file;
  ASSERT_TRUE(parse({"--drain", "--config", path}, &from_file));
  EXPECT_TRUE(from_file.drain);
  EXPECT_EQ(from_file.port, 9200);
  server::ServerConfig from_flag;
  ASSERT_TRUE(parse({"--port", "9300", "--drain"}, &from_flag));
  EXPECT_TRUE(from_flag.drain);
  EXPECT_EQ(from_flag.port, 9300);
  server::ServerConfig serving;
  ASSERT_TRUE(parse({}, &serving));
  EXPECT_FALSE(serving.drain);
}

TEST(ServerConfig, RejectsUnknownAndMalformedSettings) {
  server::ServerConfig c;
  EXPECT_THROW(parse({"--bogus", "1"}, &c), std::invalid_argument);
  EXPECT_THROW(parse({"--port", "12ab"}, &c), std::invalid_argument);
  EXPECT_THROW(parse({"--port", "70000"}, &c), std::invalid_argument);
  EXPECT_THROW(parse({"--port"}, &c), std::invalid_argument);
}

TEST(ServerConfig, UcxPortIsOffUnlessGivenAndDistinct) {
  server::ServerConfig c;
  ASSERT_TRUE(parse({}, &c));
  EXPECT_EQ(c.ucx_port, 0);
  ASSERT_TRUE(parse({"--ucx-port", "18516"}, &c));
  EXPECT_EQ(c.ucx_port, 18516);
  server::ServerConfig same;
  EXPECT_THROW(parse({"--port", "9000", "--ucx-port", "9000"}, &same), std::invalid_argument);
  server::ServerConfig bad;
  EXPECT_THROW(parse({"--ucx-port", "70000"}, &bad), std::invalid_argument);
}

// Nothing is open beyond this host and its user unless configured so.
TEST(ServerConfig, DefaultsAdmitOnlyThisHostAndUser) {
  server::ServerConfig c;
  ASSERT_TRUE(parse({}, &c));
  EXPECT_EQ(c.listen, "127.0.0.1");
  EXPECT_EQ(c.unix_socket_mode, 0600u);
  EXPECT_TRUE(c.token.empty());
  ASSERT_TRUE(parse({"--unix-socket-mode", "660", "--listen", "0.0.0.0"}, &c));
  EXPECT_EQ(c.unix_socket_mode, 0660u);
  EXPECT_EQ(c.listen, "0.0.0.0");
  EXPECT_THROW(parse({"--unix-socket-mode", "999"}, &c), std::invalid_argument);
  EXPECT_THROW(parse({"--unix-socket-mode", "rw"}, &c), std::invalid_argument);
  EXPECT_THROW(parse({"--unix-socket-mode", "1777"}, &c), std::invalid_argument);
}

TEST(ServerConfig, LimitsTakeCountsSizesAndSeconds) {
  server::ServerConfig c;
  ASSERT_TRUE(parse({}, &c));
  EXPECT_EQ(c.max_sessions, 256);
  EXPECT_EQ(c.max_frame_bytes, 1u << 20);
  EXPECT_EQ(c.max_session_memory, 0u);
  ASSERT_TRUE(parse({"--max-sessions", "10", "--max-sessions-per-client", "0", "--max-session-connections", "8",
                     "--max-frame-bytes", "64K", "--max-session-memory", "8G", "--idle-timeout", "600",
                     "--peer-timeout", "5"},
                    &c));
  EXPECT_EQ(c.max_sessions, 10);
  EXPECT_EQ(c.max_sessions_per_client, 0);
  EXPECT_EQ(c.max_session_connections, 8);
  EXPECT_EQ(c.max_frame_bytes, 64u << 10);
  EXPECT_EQ(c.max_session_memory, 8ull << 30);
  EXPECT_EQ(c.idle_timeout_s, 600);
  EXPECT_EQ(c.peer_timeout_s, 5);
  EXPECT_THROW(parse({"--max-sessions", "-1"}, &c), std::invalid_argument);
  EXPECT_THROW(parse({"--max-session-memory", "12X"}, &c), std::invalid_argument);
  EXPECT_THROW(parse({"--max-session-memory", "-5"}, &c), std::invalid_argument);
  EXPECT_THROW(parse({"--max-session-memory", "99999999999T"}, &c), std::invalid_argument);
  EXPECT_THROW(parse({"--max-frame-bytes", "2M"}, &c), std::invalid_argument);
  EXPECT_THROW(parse({"--max-frame-bytes", "100"}, &c), std::invalid_argument);
}

// Unconfigured, a session may pin a quarter of the host's memory; 0 lifts
// the bound.
TEST(ServerConfig, SessionHostMemoryIsBoundedByDefault) {
  server::ServerConfig c;
  ASSERT_TRUE(parse({}, &c));
  const uint64_t physical = static_cast<uint64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGESIZE);
  EXPECT_EQ(c.max_session_host_memory, physical / 4);
  EXPECT_GT(c.max_session_host_memory, 0u);
  ASSERT_TRUE(parse({"--max-session-host-memory", "2G"}, &c));
  EXPECT_EQ(c.max_session_host_memory, 2ull << 30);
  ASSERT_TRUE(parse({"--max-session-host-memory", "0"}, &c));
  EXPECT_EQ(c.max_session_host_memory, 0u);
  EXPECT_THROW(parse({"--max-session-host-memory", "lots"}, &c), std::invalid_argument);
}

TEST(ServerConfig, IpcRecordsArePrivateAndOpenOnlyToTheirOwnerByDefault) {
  server::ServerConfig c;
  ASSERT_TRUE(parse({"--port", "9200"}, &c));
  EXPECT_EQ(c.ipc_sharing, server::IpcSharing::owner);
  EXPECT_EQ(c.ipc_dir, "/dev/shm/rgpu-ipc-" + std::to_string(geteuid()) + "-9200");
  ASSERT_TRUE(parse({"--ipc-sharing", "job", "--ipc-dir", "/run/rgpu/ipc"}, &c));
  EXPECT_EQ(c.ipc_sharing, server::IpcSharing::job);
  EXPECT_EQ(c.ipc_dir, "/run/rgpu/ipc");
  EXPECT_THROW(parse({"--ipc-sharing", "anyone"}, &c), std::invalid_argument);
}

TEST(ServerConfig, IpcSharingDecidesWhoImports) {
  using server::IpcSharing;
  const server::IpcOwner alice{"user 1000", ""}, alice_job{"user 1000", "j1"}, bob_job{"user 1001", "j1"},
      bob{"user 1001", ""};
  EXPECT_TRUE(server::may_import(IpcSharing::owner, alice, alice));
  EXPECT_FALSE(server::may_import(IpcSharing::owner, alice, bob));
  EXPECT_FALSE(server::may_import(IpcSharing::owner, alice_job, alice));  // same user, not its job
  EXPECT_FALSE(server::may_import(IpcSharing::owner, alice_job, bob_job));
  EXPECT_TRUE(server::may_import(IpcSharing::job, alice_job, bob_job));
  EXPECT_FALSE(server::may_import(IpcSharing::job, alice_job, bob));
  EXPECT_FALSE(server::may_import(IpcSharing::job, alice, bob));  // no job: its client's only
  EXPECT_TRUE(server::may_import(IpcSharing::server, alice_job, bob));
}

TEST(ServerConfig, TlsNeedsCertificateAndKey) {
  std::string path = ::testing::TempDir() + "/rgpu-server-tls.conf";
  std::ofstream(path) << "tls-cert = /etc/rgpu/server.pem\ntls-key = /etc/rgpu/server.key\n";
  server::ServerConfig c;
  ASSERT_TRUE(parse({"--config", path, "--tls-client-ca", "/etc/rgpu/ca.pem"}, &c));
  EXPECT_EQ(c.tls.certificate, "/etc/rgpu/server.pem");
  EXPECT_EQ(c.tls.private_key, "/etc/rgpu/server.key");
  EXPECT_EQ(c.tls.peer_ca, "/etc/rgpu/ca.pem");
  server::ServerConfig plain;
  ASSERT_TRUE(parse({}, &plain));
  EXPECT_TRUE(plain.tls.certificate.empty());
  server::ServerConfig half;
  EXPECT_THROW(parse({"--tls-cert", "server.pem"}, &half), std::invalid_argument);
  server::ServerConfig no_tls;
  EXPECT_THROW(parse({"--tls-client-ca", "ca.pem"}, &no_tls), std::invalid_argument);
}

// The counts and sizes a session may make its worker hold (session_bounds.hpp).
TEST(ServerConfig, SessionBoundsHaveDefaultsAndFlags) {
  server::ServerConfig c;
  ASSERT_TRUE(parse({}, &c));
  EXPECT_EQ(c.bounds.max_module_bytes, 512ull << 20);
  EXPECT_GT(c.bounds.max_streams, 0u);
  EXPECT_GT(c.bounds.max_allocations, 0u);
  ASSERT_TRUE(parse({"--max-module-bytes", "1M", "--module-cache-max", "3M", "--max-session-streams", "10",
                     "--max-session-events", "11", "--max-session-modules", "12", "--max-session-graphs", "13",
                     "--max-session-allocations", "14", "--max-session-graph-nodes", "15",
                     "--max-session-objects", "16"},
                    &c));
  EXPECT_EQ(c.bounds.max_module_bytes, 1u << 20);
  EXPECT_EQ(c.bounds.module_cache_max, 3u << 20);
  EXPECT_EQ(c.bounds.max_streams, 10u);
  EXPECT_EQ(c.bounds.max_events, 11u);
  EXPECT_EQ(c.bounds.max_modules, 12u);
  EXPECT_EQ(c.bounds.max_graphs, 13u);
  EXPECT_EQ(c.bounds.max_allocations, 14u);
  EXPECT_EQ(c.bounds.max_graph_nodes, 15u);
  EXPECT_EQ(c.bounds.max_objects, 16u);
  EXPECT_THROW(parse({"--max-session-streams", "-1"}, &c), std::invalid_argument);
  server::ServerConfig none;
  ASSERT_TRUE(parse({"--module-cache", "none"}, &none));
  EXPECT_TRUE(none.module_cache.empty());
}

// As ssh does for keys: a secret others may read is refused, with the fix.
TEST(ServerConfig, SecretFilesOthersMayReadAreRefused) {
  for (const char* flag : {"--token-file", "--job-key-file", "--metrics-token-file"}) {
    SCOPED_TRACE(flag);
    std::string path = ::testing::TempDir() + "/rgpu-secret-" + std::to_string(getpid());
    std::ofstream(path) << "secret\n";
    chmod(path.c_str(), 0644);
    server::ServerConfig c;
    try {
      parse({flag, path}, &c);
      ADD_FAILURE() << "mode 644 accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("chmod 600"), std::string::npos) << e.what();
    }
    chmod(path.c_str(), 0600);
    EXPECT_TRUE(parse({flag, path}, &c));
    unlink(path.c_str());
  }
}

// Every flag README's table names is one the parser takes and --help tells.
TEST(ServerConfig, ReadmeAndHelpNameTheFlagsTheParserTakes) {
  std::string help_path = ::testing::TempDir() + "/rgpu-help-" + std::to_string(getpid());
  fflush(stdout);
  int saved = dup(STDOUT_FILENO);
  ASSERT_TRUE(freopen(help_path.c_str(), "w", stdout));
  server::ServerConfig c;
  const bool ran = parse({"--help"}, &c);
  fflush(stdout);
  dup2(saved, STDOUT_FILENO);
  close(saved);
  EXPECT_FALSE(ran);
  std::stringstream help;
  help << std::ifstream(help_path).rdbuf();
  unlink(help_path.c_str());

  std::ifstream readme(RGPU_README);
  ASSERT_TRUE(readme);
  std::set<std::string> flags;
  const std::regex flag("`--([a-z0-9-]+)");
  for (std::string line; std::getline(readme, line);) {
    if (line.rfind("| `--", 0) != 0) continue;
    const std::string first_cell = line.substr(0, line.find('|', 1));
    for (std::sregex_iterator m(first_cell.begin(), first_cell.end(), flag), end; m != end; ++m)
      flags.insert((*m)[1]);
  }
  EXPECT_GT(flags.size(), 20u);
  for (const auto& name : flags) {
    SCOPED_TRACE(name);
    EXPECT_NE(help.str().find("--" + name + " "), std::string::npos) << "not in --help";
    if (name == "help" || name == "config") continue;
    server::ServerConfig any;
    try {
      parse({"--" + name, "1"}, &any);
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(std::string(e.what()).find("unknown setting"), std::string::npos) << e.what();
    }
  }
}

TEST(ServerConfig, GpuSharingIsTimesliceUnlessMpsForOneGpu) {
  server::ServerConfig def;
  ASSERT_TRUE(parse({}, &def));
  EXPECT_EQ(def.gpu_sharing, server::GpuSharing::timeslice);
  EXPECT_EQ(def.mps_control, "nvidia-cuda-mps-control");
  EXPECT_NE(def.mps_dir.find("rgpu-mps-"), std::string::npos);
  server::ServerConfig mps;
  ASSERT_TRUE(parse({"--gpus", "0", "--gpu-sharing", "mps", "--mps-control", "/x/ctl", "--mps-dir", "/x/d"}, &mps));
  EXPECT_EQ(mps.gpu_sharing, server::GpuSharing::mps);
  EXPECT_EQ(mps.mps_control, "/x/ctl");
  EXPECT_EQ(mps.mps_dir, "/x/d");
  server::ServerConfig c;
  EXPECT_THROW(parse({"--gpu-sharing", "mps"}, &c), std::invalid_argument);
  EXPECT_THROW(parse({"--gpus", "0,1", "--gpu-sharing", "mps"}, &c), std::invalid_argument);
  EXPECT_THROW(parse({"--gpus", "1", "--gpu-sharing", "mps"}, &c), std::invalid_argument);
  EXPECT_THROW(parse({"--gpus", "0", "--gpu-sharing", "spatial"}, &c), std::invalid_argument);
}

TEST(Endpoint, ParsesHostsAndPorts) {
  auto e = transport::Endpoint::parse("gpu7:9000", 1);
  EXPECT_EQ(e.host, "gpu7");
  EXPECT_EQ(e.port, 9000);
  EXPECT_EQ(transport::Endpoint::parse("gpu7", 18515).port, 18515);
  EXPECT_EQ(transport::Endpoint::parse("[fe80::1]:7", 1).host, "fe80::1");
  EXPECT_THROW(transport::Endpoint::parse("gpu7:", 1), transport::TransportError);
  EXPECT_THROW(transport::Endpoint::parse("gpu7:0", 1), transport::TransportError);
}

TEST(ServerConfig, NcclSettingsReachTheWorkersEnvironment) {
  server::ServerConfig c;
  ASSERT_TRUE(parse({"--nccl-library", "/opt/nccl/libnccl.so.2", "--nccl-socket-ifname", "eth1", "--nccl-ib-hca",
                     "mlx5_0", "--nccl-env", "NCCL_NET_GDR_LEVEL=PHB", "--nccl-env", "NCCL_DEBUG=INFO"},
                    &c));
  EXPECT_EQ(c.nccl_library, "/opt/nccl/libnccl.so.2");
  using Env = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(c.nccl_env, (Env{{"NCCL_SOCKET_IFNAME", "eth1"},
                             {"NCCL_IB_HCA", "mlx5_0"},
                             {"NCCL_NET_GDR_LEVEL", "PHB"},
                             {"NCCL_DEBUG", "INFO"}}));
  for (const char* bad : {"PATH=/tmp", "NCCL_=1", "NCCL_DEBUG", "nccl_debug=1", "NCCL_A B=1"}) {
    server::ServerConfig d;
    EXPECT_THROW(parse({"--nccl-env", bad}, &d), std::invalid_argument) << bad;
  }
}
