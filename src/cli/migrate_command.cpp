#include "cli/migrate_command.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include "cli/options.hpp"
#include "cli/server_list.hpp"
#include "client/core/session.hpp"
#include "protocol/auth.hpp"
#include "protocol/handshake.hpp"

namespace rgpu::cli {
namespace {

const char* kUsage =
    "usage: rgpu migrate --key-file FILE (--session WORKER | --all) --to HOST[:PORT][/GPU] [--wait SECONDS]\n"
    "                    SERVER[:PORT]\n"
    "  asks SERVER to move its session WORKER (the worker's pid, as `rgpu smi` lists it), or every\n"
    "  session it serves, to the GPU named (GPU 0 and the default port when left out), with the\n"
    "  server's job key; each session's client moves it at its next heartbeat. Waits (default 60 s)\n"
    "  until each session has left SERVER or its client said why it stays. Exit 0 when every\n"
    "  session moved, 1 otherwise.\n";

// The sessions in the server's pool status, by worker, or nullopt when the
// server did not answer.
std::optional<std::map<uint32_t, nlohmann::json>> list_sessions(const transport::Endpoint& server,
                                                                const std::string& key) {
  std::string why;
  auto reply = client::Session::ask(server, proto::kRequestPoolStatus, key, "", &why);
  if (!reply) return std::nullopt;
  auto status = nlohmann::json::parse(reply->pool_status, nullptr, false);
  if (status.is_discarded()) return std::nullopt;
  // Fields the server leaves empty may be null.
  const auto field = [](const nlohmann::json& j, const char* key) {
    return j.is_object() && j.contains(key) && !j[key].is_null() ? j[key] : nlohmann::json::array();
  };
  std::map<uint32_t, nlohmann::json> out;
  for (const auto& gpu : field(status, "gpus")) {
    auto sessions = field(gpu, "sessions_without_job");
    for (const auto& j : field(gpu, "jobs"))
      for (const auto& s : field(j, "sessions")) sessions.push_back(s);
    for (const auto& s : sessions)
      if (s.is_object() && s.value("worker", 0u) != 0) out[s.value("worker", 0u)] = s;
  }
  return out;
}

}  // namespace

int migrate_command(int argc, char** argv) {
  int status = 0;
  auto options = parse_options(argc, argv, {"--key-file", "--session", "--to", "--wait"}, {"--all"}, "migrate",
                               kUsage, &status);
  if (!options) return status;
  const std::string key_file = options->value("--key-file"), target = options->value("--to"),
                    session_text = options->value("--session"), wait_text = options->value("--wait", "60");
  const bool all = options->flags.contains("--all");
  const auto& named = options->named;
  char* end = nullptr;
  const unsigned long worker = std::strtoul(session_text.c_str(), &end, 10);
  const double wait_s = std::strtod(wait_text.c_str(), nullptr);
  std::string why;
  std::string key = key_file.empty() ? "" : proto::read_secret_file(key_file, &why);
  const bool one = !session_text.empty() && !*end && worker != 0 && worker <= UINT32_MAX;
  if (key.empty() || target.empty() || one == all || named.size() != 1 || wait_s < 0) {
    fprintf(stderr, "rgpu migrate: needs a readable --key-file, --session or --all, --to and one server%s%s\n%s",
            why.empty() ? "" : ": ", why.c_str(), kUsage);
    return 2;
  }
  auto servers = servers_or_environment(named, "migrate");
  if (!servers) return 2;
  const auto& server = servers->front();
  std::set<uint32_t> asked;
  if (all) {
    auto sessions = list_sessions(server, key);
    if (!sessions) {
      fprintf(stderr, "rgpu migrate: %s does not list its sessions\n", server.to_string().c_str());
      return 1;
    }
    for (const auto& [w, s] : *sessions) asked.insert(w);
  } else {
    asked.insert(static_cast<uint32_t>(worker));
  }
  int failed = 0;
  for (auto it = asked.begin(); it != asked.end();) {
    auto reply = client::Session::ask(server, proto::kRequestMoveSession, key, "", &why, *it, target);
    if (reply) {
      printf("%s: %s\n", server.to_string().c_str(), reply->message.c_str());
      ++it;
    } else {
      fprintf(stderr, "rgpu migrate: %s\n", why.c_str());
      ++failed;
      it = asked.erase(it);
    }
  }
  fflush(stdout);
  // Each session asked has left the server (moved), or its client said why
  // it stays.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(wait_s);
  while (!asked.empty() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    auto sessions = list_sessions(server, key);
    if (!sessions) continue;
    for (auto it = asked.begin(); it != asked.end();) {
      auto s = sessions->find(*it);
      const std::string move = s == sessions->end() ? "" : s->second.value("move", "");
      if (s == sessions->end()) {
        printf("session %u moved to %s\n", *it, target.c_str());
      } else if (move.starts_with("refused")) {
        fprintf(stderr, "rgpu migrate: session %u stays: %s\n", *it, move.c_str());
        ++failed;
      } else {
        ++it;
        continue;
      }
      it = asked.erase(it);
    }
  }
  for (uint32_t w : asked) fprintf(stderr, "rgpu migrate: session %u has not moved within %s s\n", w, wait_text.c_str());
  return failed || !asked.empty() ? 1 : 0;
}

}  // namespace rgpu::cli
