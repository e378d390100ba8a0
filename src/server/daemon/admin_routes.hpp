// The scheduler's side of the metrics endpoint (`--metrics-port`): what
// `rgpu migrate` asks through a session handshake, over HTTP, proving the
// job key without sending it (docs/migration.md, "Through HTTP").
//   GET  /v1/challenge                 a fresh challenge (hex)
//   POST /v1/sessions/WORKER/move      body: HOST[:PORT][/GPU]; header
//        "Authorization: RGPU-Job CHALLENGE PROOF", PROOF the hex of
//        HMAC-SHA256(job key, challenge bytes || "move WORKER TARGET")
//   GET  /v1/sessions/WORKER/move      the move asked, or what came of the
//        last one (as `rgpu smi --json` shows it); 404 once the session left
// The GET of a session's move needs the metrics token where one is set.
#pragma once
#include <string>

#include "server/pool/job_ledger.hpp"

namespace httplib {
class Server;
struct Request;
}

namespace rgpu::server {

void add_admin_routes(httplib::Server& http, const std::string& job_key, const std::string& token,
                      JobLedger& ledger);
// Whether the request carries "Authorization: Bearer TOKEN" (compared in
// constant time); true when there is no token to carry.
bool bearer_token_matches(const httplib::Request& req, const std::string& token);

}  // namespace rgpu::server
