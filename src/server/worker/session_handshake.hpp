// The first exchange on each connection a worker serves: the hello that
// opens a session, and the join that adds an application thread's
// connection to it.
#pragma once
#include <functional>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "server/backend/backend.hpp"
#include "server/worker/ipc_records.hpp"
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
  IpcOwner owner;  // the client's identity and job
};

// Answers the client's hello. `join_point` makes the session's join point
// when, and only when, the hello opens a session: a peer that has not
// authenticated gets no listener.
SessionGrant open_session(Backend& backend, transport::Connection& conn, const SessionLimits& limits,
                          const std::function<JoinPoint()>& join_point);

// A joining connection's first frame: what it joins for (a
// proto::JoinPurpose) when it proved it belongs to the session; nothing when
// it did not (and was told so; the caller logs it). Its caller's
// HelloDeadline bounds the wait.
std::optional<uint8_t> read_join(transport::Connection& conn, const std::vector<uint8_t>& secret);
// Tells a connection read_join accepted that it joined: from then on the
// client may rely on what it joined for.
void admit_join(transport::Connection& conn);
// Tells a connection read_join accepted that a session limit keeps it out.
void refuse_join(transport::Connection& conn, const std::string& why);

}  // namespace rgpu::server
