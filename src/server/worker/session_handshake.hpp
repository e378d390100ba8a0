// The first exchange on each connection a worker serves: the hello that
// opens a session, and the join that adds an application thread's
// connection to it.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "server/backend/backend.hpp"
#include "server/worker/session_loop.hpp"
#include "transport/transport.hpp"

namespace rgpu::server {

// Where and how the session's other connections join it.
struct JoinPoint {
  transport::Endpoint where;  // host empty: a TCP port on the server's host
  std::vector<uint8_t> secret;
};

// What a client asked for and was granted.
struct SessionGrant {
  std::vector<int> gpus;  // none: the hello was refused (and told why)
  uint32_t pipeline_block = 0;
};

SessionGrant open_session(Backend& backend, transport::Connection& conn, const SessionLimits& limits,
                              const JoinPoint& join);

// True when the connection proved it belongs to the session (and says
// what for, a proto::JoinPurpose) and `refusal` is empty; answers it, with
// the refusal if any (a session limit).
bool accept_join(transport::Connection& conn, const std::vector<uint8_t>& secret, const std::string& refusal,
                 uint8_t* purpose);

}  // namespace rgpu::server
