// Admission of sessions by the daemon. Only a worker learns who a client is
// (the handshake), and only the daemon sees every session, so a worker asks
// the daemon over its control channel before it grants a session; the
// daemon counts sessions overall and per client identity.
#pragma once
#include <optional>
#include <string>

namespace rgpu::server {

// Worker side: asks the daemon to admit a session of `identity`. Returns
// "" when admitted, else why not (the daemon's limit, or no answer).
std::string ask_admission(int channel, const std::string& identity);

// Daemon side: the identity a worker asks admission for; nullopt when the
// channel closed (the worker ended) or carries no well-formed request.
std::optional<std::string> read_admission_request(int channel);
// Daemon side: the answer; `refusal` empty admits.
void answer_admission(int channel, const std::string& refusal);

}  // namespace rgpu::server
