#include "cli/migrate_command.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>

#include "cli/server_list.hpp"
#include "client/core/session.hpp"
#include "protocol/auth.hpp"
#include "protocol/handshake.hpp"

namespace rgpu::cli {
namespace {

const char* kUsage =
    "usage: rgpu migrate --key-file FILE --session WORKER --to HOST[:PORT][/GPU] [--wait SECONDS] SERVER[:PORT]\n"
    "  asks SERVER to move its session WORKER (the worker's pid, as `rgpu smi` lists it) to the GPU\n"
    "  named (GPU 0 and the default port when left out), with the server's job key; the session's\n"
    "  client moves it at its next heartbeat. Waits (default 60 s) until the session has left SERVER\n"
    "  (exit 0) or its client said why it stays (exit 1).\n";

// The session's entry in the server's pool status, the JSON null when the
// server lists no such session, nullopt when the server did not answer.
std::optional<nlohmann::json> find_session(const transport::Endpoint& server, const std::string& key, uint32_t worker) {
  std::string why;
  auto reply = client::Session::ask(server, proto::kRequestPoolStatus, key, "", &why);
  if (!reply) return std::nullopt;
  auto status = nlohmann::json::parse(reply->pool_status, nullptr, false);
  if (status.is_discarded()) return std::nullopt;
  // Fields the server leaves empty may be null.
  const auto field = [](const nlohmann::json& j, const char* key) {
    return j.is_object() && j.contains(key) && !j[key].is_null() ? j[key] : nlohmann::json::array();
  };
  for (const auto& gpu : field(status, "gpus")) {
    auto sessions = field(gpu, "sessions_without_job");
    for (const auto& j : field(gpu, "jobs"))
      for (const auto& s : field(j, "sessions")) sessions.push_back(s);
    for (const auto& s : sessions)
      if (s.is_object() && s.value("worker", 0u) == worker) return s;
  }
  return nlohmann::json();
}

}  // namespace

int migrate_command(int argc, char** argv) {
  std::string key_file, target, session_text, wait_text = "60";
  std::vector<std::string> named;
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help") {
      fputs(kUsage, stdout);
      return 0;
    }
    if ((a == "--key-file" || a == "--session" || a == "--to" || a == "--wait") && i + 1 < argc)
      (a == "--key-file" ? key_file : a == "--session" ? session_text : a == "--to" ? target : wait_text) = argv[++i];
    else if (!a.starts_with("-")) named.push_back(a);
    else {
      fprintf(stderr, "rgpu migrate: unknown option %s\n%s", a.c_str(), kUsage);
      return 2;
    }
  }
  char* end = nullptr;
  const unsigned long worker = std::strtoul(session_text.c_str(), &end, 10);
  const double wait_s = std::strtod(wait_text.c_str(), nullptr);
  std::string why;
  std::string key = key_file.empty() ? "" : proto::read_secret_file(key_file, &why);
  if (key.empty() || target.empty() || session_text.empty() || *end || worker == 0 || worker > UINT32_MAX ||
      named.size() != 1 || wait_s < 0) {
    fprintf(stderr, "rgpu migrate: needs a readable --key-file, --session, --to and one server%s%s\n%s",
            why.empty() ? "" : ": ", why.c_str(), kUsage);
    return 2;
  }
  auto servers = servers_or_environment(named, "migrate");
  if (!servers) return 2;
  const auto& server = servers->front();
  auto reply = client::Session::ask(server, proto::kRequestMoveSession, key, "", &why, static_cast<uint32_t>(worker),
                                    target);
  if (!reply) {
    fprintf(stderr, "rgpu migrate: %s\n", why.c_str());
    return 1;
  }
  printf("%s: %s\n", server.to_string().c_str(), reply->message.c_str());
  fflush(stdout);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(wait_s);
  while (std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    auto s = find_session(server, key, static_cast<uint32_t>(worker));
    if (!s) continue;
    if (s->is_null()) {
      printf("session %lu moved to %s\n", worker, target.c_str());
      return 0;
    }
    const std::string move = s->value("move", "");
    if (move.starts_with("refused")) {
      fprintf(stderr, "rgpu migrate: session %lu stays: %s\n", worker, move.c_str());
      return 1;
    }
  }
  fprintf(stderr, "rgpu migrate: session %lu has not moved within %s s\n", worker, wait_text.c_str());
  return 1;
}

}  // namespace rgpu::cli
