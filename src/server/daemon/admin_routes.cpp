#include "server/daemon/admin_routes.hpp"

#include <httplib.h>

#include <algorithm>
#include <memory>
#include <sstream>
#include <vector>

#include "common/hex.hpp"
#include "protocol/auth.hpp"
#include "server/daemon/challenge_book.hpp"

namespace rgpu::server {
namespace {

// Whether the request proves the job key over an open challenge and `what`.
bool proves_job_key(const httplib::Request& req, const std::string& job_key, ChallengeBook& book,
                    const std::string& what) {
  std::istringstream header(req.get_header_value("Authorization"));
  std::string scheme, challenge, proof;
  if (!(header >> scheme >> challenge >> proof) || scheme != "RGPU-Job") return false;
  const auto nonce = book.take(challenge);
  if (!nonce) return false;
  const auto given = from_hex(proof);
  return given && proto::same_secret(*given, proto::request_proof(job_key, *nonce, what));
}

void refuse(httplib::Response& res, int status, const std::string& why) {
  res.status = status;
  res.set_content(why + "\n", "text/plain");
}

}  // namespace

bool bearer_token_matches(const httplib::Request& req, const std::string& token) {
  if (token.empty()) return true;
  const std::string header = req.get_header_value("Authorization"), prefix = "Bearer ";
  if (header.compare(0, prefix.size(), prefix) != 0) return false;
  return proto::same_secret(std::vector<uint8_t>(header.begin() + prefix.size(), header.end()),
                            std::vector<uint8_t>(token.begin(), token.end()));
}

void add_admin_routes(httplib::Server& http, const std::string& job_key, const std::string& token,
                      JobLedger& ledger) {
  auto book = std::make_shared<ChallengeBook>();
  http.Get("/v1/challenge", [=](const httplib::Request&, httplib::Response& res) {
    if (job_key.empty()) return refuse(res, 404, "this server has no job key (--job-key-file)");
    res.set_content(book->issue() + "\n", "text/plain");
  });
  http.Post(R"(/v1/sessions/(\d{1,9})/move)", [=, &ledger](const httplib::Request& req, httplib::Response& res) {
    if (job_key.empty()) return refuse(res, 404, "this server has no job key (--job-key-file)");
    const std::string worker = req.matches[1], target = req.body;
    if (!proves_job_key(req, job_key, *book, "move " + worker + " " + target)) {
      res.set_header("WWW-Authenticate", "RGPU-Job");
      return refuse(res, 401, "moving a session needs this server's job key: prove it over a fresh /v1/challenge");
    }
    if (target.empty() || target.size() > kMaxMoveTarget ||
        std::any_of(target.begin(), target.end(), [](unsigned char c) { return c <= ' ' || c >= 0x7f; }))
      return refuse(res, 400, "no place to move the session to (HOST[:PORT][/GPU])");
    if (!ledger.ask_move(static_cast<pid_t>(std::stol(worker)), target))
      return refuse(res, 404, "no session " + worker + " on this server");
    res.status = 202;
    res.set_content("session " + worker + " asked to move to " + target + "\n", "text/plain");
  });
  http.Get(R"(/v1/sessions/(\d{1,9})/move)", [=, &ledger](const httplib::Request& req, httplib::Response& res) {
    if (!bearer_token_matches(req, token)) {
      res.set_header("WWW-Authenticate", "Bearer");
      return refuse(res, 401, "the metrics token is needed");
    }
    const pid_t worker = static_cast<pid_t>(std::stol(req.matches[1].str()));
    for (const LedgerSession& s : ledger.snapshot().sessions)
      if (s.worker == worker) {
        res.set_content((s.move.empty() ? std::string("none") : s.move) + "\n", "text/plain");
        return;
      }
    refuse(res, 404, "no session " + std::to_string(worker) + " on this server (it left, or never was)");
  });
}

}  // namespace rgpu::server
