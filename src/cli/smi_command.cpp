#include "cli/smi_command.hpp"

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/server_list.hpp"
#include "client/core/session.hpp"
#include "protocol/auth.hpp"
#include "protocol/handshake.hpp"

namespace rgpu::cli {
namespace {
const char* kUsage =
    "usage: rgpu smi [--json] [--key-file FILE] [SERVER[:PORT]...]\n"
    "  each GPU of the servers (default: those in RGPU_DEVICES): mode, jobs and their\n"
    "  sessions, memory used against each job's amount, utilisation. Admitted as any client\n"
    "  (RGPU_TOKEN_FILE, RGPU_CREDENTIAL) or, with --key-file, by the job key\n";

std::string mib(uint64_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

void print_table(const nlohmann::json& servers) {
  for (const auto& s : servers) {
    if (s.contains("error")) {
      printf("%s  unreachable: %s\n", s["server"].get<std::string>().c_str(), s["error"].get<std::string>().c_str());
      continue;
    }
    printf("%s  backend %s%s\n", s["server"].get<std::string>().c_str(), s["backend"].get<std::string>().c_str(),
           s["credentials"].get<bool>() ? ", job credentials required" : "");
    for (const auto& g : s["gpus"]) {
      std::string util = g["utilization"].is_null() ? "n/a" : std::to_string(g["utilization"].get<int>()) + " %";
      printf("  gpu %d  %-28s %-9s  %s free of %s  util %s\n", g["gpu"].get<int>(),
             g.value("name", std::string("?")).c_str(), g["mode"].get<std::string>().c_str(),
             mib(g.value("memory_free", uint64_t{0})).c_str(), mib(g.value("memory_total", uint64_t{0})).c_str(),
             util.c_str());
      for (const auto& [job, j] : g["jobs"].items()) {
        uint64_t amount = j["amount"].get<uint64_t>();
        const int share = j.value("share", 0);
        printf("    job %-12s %s used of %s%s\n", job.c_str(), mib(j["used"].get<uint64_t>()).c_str(),
               amount ? mib(amount).c_str() : "no limit",
               share ? (", share " + std::to_string(share) + " % of SMs").c_str() : "");
        for (const auto& p : j["sessions"])
          printf("      %-24s %-20s pid %u\n", p["host"].get<std::string>().c_str(),
                 p["process"].get<std::string>().c_str(), p["pid"].get<unsigned>());
      }
      for (const auto& p : g["sessions_without_job"])
        printf("    no job       %-24s %-20s pid %u\n", p["host"].get<std::string>().c_str(),
               p["process"].get<std::string>().c_str(), p["pid"].get<unsigned>());
    }
  }
}
}  // namespace

int smi_command(int argc, char** argv) {
  bool json = false;
  std::string key_file;
  std::vector<std::string> named;
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--json") json = true;
    else if (a == "--key-file" && i + 1 < argc) key_file = argv[++i];
    else if (!a.starts_with("-")) named.push_back(a);
    else {
      fputs(kUsage, a == "--help" ? stdout : stderr);
      return a == "--help" ? 0 : 2;
    }
  }
  std::string why;
  std::string key = key_file.empty() ? "" : proto::read_secret_file(key_file, &why);
  if (!key_file.empty() && key.empty()) {
    fprintf(stderr, "rgpu smi: job key file %s\n", why.c_str());
    return 2;
  }
  auto servers = servers_or_environment(named, "smi");
  if (!servers) return 2;
  nlohmann::json out = nlohmann::json::array();
  int failures = 0;
  for (const auto& s : *servers) {
    std::string why;
    auto reply = client::Session::ask(s, proto::kRequestPoolStatus, key, "", &why);
    nlohmann::json entry;
    if (reply) {
      entry = nlohmann::json::parse(reply->pool_status, nullptr, false);
      if (entry.is_discarded()) entry = {{"error", "the server's answer is not JSON"}};
    } else {
      entry = {{"error", why}};
    }
    if (entry.contains("error")) ++failures;
    entry["server"] = s.to_string();
    out.push_back(entry);
  }
  if (json) printf("%s\n", nlohmann::json{{"servers", out}}.dump(2).c_str());
  else print_table(out);
  return failures ? 1 : 0;
}

}  // namespace rgpu::cli
