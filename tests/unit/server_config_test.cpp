#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

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

TEST(Endpoint, ParsesHostsAndPorts) {
  auto e = transport::Endpoint::parse("gpu7:9000", 1);
  EXPECT_EQ(e.host, "gpu7");
  EXPECT_EQ(e.port, 9000);
  EXPECT_EQ(transport::Endpoint::parse("gpu7", 18515).port, 18515);
  EXPECT_EQ(transport::Endpoint::parse("[fe80::1]:7", 1).host, "fe80::1");
  EXPECT_THROW(transport::Endpoint::parse("gpu7:", 1), transport::TransportError);
  EXPECT_THROW(transport::Endpoint::parse("gpu7:0", 1), transport::TransportError);
}
