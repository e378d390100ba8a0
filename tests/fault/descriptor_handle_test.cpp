// POSIX file descriptor shareable handles where descriptors cannot cross
// (tcp): the exporting worker keeps the descriptor and hands out a token
// with a 256-bit secret (descriptor_exports.hpp). Only the exact token
// imports; a wrong secret, export, kind, server or worker is refused and the
// server goes on serving; another local user imports only with the token it
// was given (as whoever holds a descriptor may, locally) and cannot reach
// the exporting worker's socket; an export ends with its allocation or its
// session, leaving nothing in the IPC directory.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cuda.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <thread>

#include "client/core/session.hpp"
#include "protocol/codec.hpp"
#include "protocol/descriptor_token.hpp"
#include "protocol/ops.hpp"
#include "server/worker/ipc_records.hpp"
#include "test_server.hpp"

using namespace rgpu;
using namespace rgpu::test;

namespace {

constexpr uint64_t kBytes = 2 << 20;  // the test backend's granularity

// A new allocation of session `s` that may be exported as a descriptor.
uint64_t create_shareable(client::Session& s) {
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  proto::Writer w;
  w.put(kBytes).put(prop);
  std::vector<uint8_t> reply;
  EXPECT_EQ(s.call(proto::kOpVmmCreate, 0, w.bytes(), {}, reply), cudaSuccess);
  return reply.size() == sizeof(uint64_t) ? proto::Reader(reply).get<uint64_t>() : 0;
}

proto::DescriptorToken export_allocation(client::Session& s, uint64_t allocation) {
  proto::Writer w;
  w.put(allocation).put<int32_t>(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
  std::vector<uint8_t> reply;
  EXPECT_EQ(s.call(proto::kOpVmmExport, 0, w.bytes(), {}, reply), cudaSuccess);
  proto::DescriptorToken token;
  if (reply.size() == sizeof token) token = proto::Reader(reply).get<proto::DescriptorToken>();
  return token;
}

// Imports `token` as an allocation (kOpVmmImport) or as a pool.
cudaError_t import_token(client::Session& s, const proto::DescriptorToken& token,
                         uint16_t op = proto::kOpVmmImport) {
  proto::Writer w;
  w.put<int32_t>(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR).put(proto::DescriptorCarrier::token).put(token);
  std::vector<uint8_t> reply;
  return s.call(op, 0, w.bytes(), {}, reply);
}

cudaError_t release(client::Session& s, uint64_t allocation) {
  proto::Writer w;
  w.put(allocation);
  std::vector<uint8_t> reply;
  return s.call(proto::kOpVmmRelease, 0, w.bytes(), {}, reply);
}

std::string exporter_socket(uint16_t port, pid_t worker) {
  return server::default_ipc_directory(port) + "/" + server::ipc_name_prefix(worker) + "descriptors";
}

}  // namespace

TEST(DescriptorHandles, OnlyTheExactTokenImportsAndBadOnesHarmNothing) {
  const uint16_t port = free_port();
  ServerProcess server(port, {});
  auto owner = open_session(port, "tcp");
  auto importer = open_session(port, "tcp");
  ASSERT_TRUE(owner && importer);
  const uint64_t allocation = create_shareable(*owner);
  const proto::DescriptorToken good = export_allocation(*owner, allocation);
  ASSERT_EQ(good.worker, owner->hello().worker_pid);

  auto bad = good;
  bad.secret[31] ^= 1;
  EXPECT_EQ(import_token(*importer, bad), cudaErrorInvalidValue) << "a secret one bit off imported";
  bad = good;
  bad.export_id += 1;
  EXPECT_EQ(import_token(*importer, bad), cudaErrorInvalidValue) << "another export id imported";
  bad = good;
  bad.server ^= 1;
  EXPECT_EQ(import_token(*importer, bad), cudaErrorInvalidValue) << "a handle of another server imported";
  bad = good;
  bad.worker = static_cast<uint32_t>(server.pid());  // the daemon answers no one
  EXPECT_EQ(import_token(*importer, bad), cudaErrorInvalidValue);
  bad.worker = 1;
  EXPECT_EQ(import_token(*importer, bad), cudaErrorInvalidValue);
  EXPECT_EQ(import_token(*importer, good, proto::kOpMemPoolImport), cudaErrorInvalidValue)
      << "an allocation's handle imported as a pool";

  // Both sessions, and the exporter's answering, carry on.
  EXPECT_EQ(import_token(*importer, good), cudaSuccess);
  EXPECT_EQ(import_token(*importer, good), cudaSuccess);
  EXPECT_EQ(synchronize(*owner), cudaSuccess);
  // Every export of one allocation is the same capability; another
  // allocation's is another.
  auto again = export_allocation(*owner, allocation);
  EXPECT_EQ(std::memcmp(&again, &good, sizeof good), 0);
  auto other = export_allocation(*owner, create_shareable(*owner));
  EXPECT_NE(other.export_id, good.export_id);
  EXPECT_NE(std::memcmp(other.secret, good.secret, sizeof good.secret), 0);
  EXPECT_EQ(import_token(*importer, other), cudaSuccess);
}

TEST(DescriptorHandles, AnotherUserImportsOnlyWithTheTokenItWasGiven) {
  const uint16_t port = free_port();
  ServerProcess server(port, {});
  auto owner = open_session(port, "tcp");
  ASSERT_TRUE(owner);
  const proto::DescriptorToken given = export_allocation(*owner, create_shareable(*owner));
  const std::string socket_path = exporter_socket(port, static_cast<pid_t>(owner->hello().worker_pid));
  struct stat st;
  ASSERT_EQ(stat(socket_path.c_str(), &st), 0) << "the exporter's socket is not where the test looks";
  EXPECT_EQ(as_second_user([&] {
              // The directory keeps the exporter's socket from everyone but
              // the server's user.
              sockaddr_un a{};
              a.sun_family = AF_UNIX;
              std::strncpy(a.sun_path, socket_path.c_str(), sizeof a.sun_path - 1);
              int fd = socket(AF_UNIX, SOCK_STREAM, 0);
              if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) return 3;
              close(fd);
              std::string why;
              auto other = client::Session::open({"127.0.0.1", port}, "tcp", {0}, &why);
              if (!other) return 2;
              auto guessed = given;
              std::memset(guessed.secret, 0, sizeof guessed.secret);
              if (import_token(*other, guessed) != cudaErrorInvalidValue) return 1;
              // Holding the handle is the capability, as with a descriptor.
              return import_token(*other, given) == cudaSuccess ? 0 : 4;
            }),
            0)
      << "1: a guessed secret imported; 2: no session; 3: another user reached the socket; 4: the given handle "
         "did not import";
}

TEST(DescriptorHandles, AnExportEndsWithItsAllocationOrItsSession) {
  const uint16_t port = free_port();
  ServerProcess server(port, {});
  auto importer = open_session(port, "tcp");
  auto owner = open_session(port, "tcp");
  ASSERT_TRUE(owner && importer);
  const uint64_t released = create_shareable(*owner);
  const auto of_released = export_allocation(*owner, released);
  ASSERT_EQ(release(*owner, released), cudaSuccess);
  EXPECT_EQ(import_token(*importer, of_released), cudaErrorInvalidValue);

  const auto kept = export_allocation(*owner, create_shareable(*owner));
  const pid_t worker = static_cast<pid_t>(owner->hello().worker_pid);
  owner.reset();
  for (int i = 0; i < 100 && running(worker); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_FALSE(running(worker));
  EXPECT_EQ(import_token(*importer, kept), cudaErrorInvalidValue);
  EXPECT_FALSE(std::filesystem::exists(exporter_socket(port, worker))) << "the ended worker left its socket";
  EXPECT_EQ(synchronize(*importer), cudaSuccess);
}
