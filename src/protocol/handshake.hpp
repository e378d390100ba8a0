// The first exchange on a connection: the server sends a challenge, the
// client says who it is, proves it knows the token (when the server has one)
// and which GPUs it wants; the server answers with what it grants.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "protocol/auth.hpp"
#include "protocol/codec.hpp"

namespace rgpu::proto {

struct Challenge {
  Nonce nonce{};
  uint8_t token_required = 0;
  uint8_t credential_required = 0;  // the server admits jobs only (credential.hpp)

  void encode(Writer& w) const;
  static Challenge decode(Reader& r);
};

// What a hello asks for besides a session.
enum HelloRequest : uint8_t {
  kRequestSession = 0,     // a session on `gpus`; none: a probe (`rgpu ls`)
  kRequestPoolStatus = 1,  // the pool's state as JSON (`rgpu smi`)
  kRequestEndJob = 2,      // end every session of `job` (`rgpu job-end`, with the job key)
  kRequestMoveSession = 3,  // move session `session` to `move_to` (`rgpu migrate`, with the job key)
};

struct Hello {
  uint32_t protocol_version = 0;
  int32_t cuda_runtime_version = 0;  // CUDART_VERSION the client was built with
  std::vector<int32_t> gpus;         // server-local GPU ordinals asked for; none: a probe (`rgpu ls`)
  std::string client_name;           // program name, for logs and `rgpu ls`
  std::vector<uint8_t> proof;        // HMAC of the challenge; empty without a token
  uint32_t pipeline_block = 0;       // bytes per block of bulk copies; 0: chosen by size
  uint32_t client_pid = 0;           // for `rgpu smi`
  std::string credential;            // the job credential's claims (never its MAC); empty: none
  std::vector<uint8_t> credential_proof;  // HMAC(credential MAC, challenge)
  uint8_t request = kRequestSession;
  std::vector<uint8_t> key_proof;  // HMAC(job key, challenge): the scheduler side speaking
  std::string job;                 // the job a kRequestEndJob ends
  uint32_t session = 0;            // the session (its worker's pid) a kRequestMoveSession moves
  std::string move_to;             // and where: HOST:PORT/GPU

  void encode(Writer& w) const;
  static Hello decode(Reader& r);
};

// What a probe learns about each GPU a server exports.
struct GpuSummary {
  int32_t ordinal = 0;
  std::string name;
  uint64_t total_memory = 0;
  uint64_t free_memory = 0;
};

struct HelloReply {
  int32_t status = 0;  // cudaSuccess or why the session was refused
  uint32_t protocol_version = 0;
  int32_t driver_version = 0;
  int32_t runtime_version = 0;
  uint32_t worker_pid = 0;
  std::string backend;  // "cuda", or "host-test" for the test backend
  std::string message;  // human-readable reason when refused
  std::vector<GpuSummary> gpus;  // filled only in reply to a probe
  // Where the application's other threads connect to join this session: a
  // TCP port on the server's host, or a Unix socket (shm); the secret
  // proves a joining connection belongs to this session. Neither when the
  // worker has no join point: then all threads share one connection.
  uint16_t join_port = 0;
  std::string join_path;
  std::vector<uint8_t> join_secret;
  std::string pool_status;  // JSON, in reply to kRequestPoolStatus

  void encode(Writer& w) const;
  static HelloReply decode(Reader& r);
};

// What a joining connection is for.
enum JoinPurpose : uint8_t {
  kJoinCalls = 0,      // an application thread's calls
  kJoinCallbacks = 1,  // the worker asks the application to run host callbacks
  kJoinHeartbeats = 2,  // client and worker tell each other they are alive (heartbeat.hpp)
};

// The first frame of a joining connection, and the worker's answer.
struct Join {
  std::vector<uint8_t> secret;
  uint8_t purpose = kJoinCalls;
  void encode(Writer& w) const;
  static Join decode(Reader& r);
};

struct JoinReply {
  int32_t status = 0;
  std::string message;
  void encode(Writer& w) const;
  static JoinReply decode(Reader& r);
};

}  // namespace rgpu::proto
