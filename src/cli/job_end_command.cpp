#include "cli/job_end_command.hpp"

#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli/options.hpp"
#include "cli/server_list.hpp"
#include "client/core/session.hpp"
#include "protocol/auth.hpp"
#include "protocol/handshake.hpp"

namespace rgpu::cli {
namespace {
const char* kUsage =
    "usage: rgpu job-end --key-file FILE --job JOBID [SERVER[:PORT]...]\n"
    "  ends every session of the job on each server (default: the servers in RGPU_DEVICES)\n"
    "  and refuses the job's credential from then on\n";
}

int job_end_command(int argc, char** argv) {
  int status = 0;
  auto options = parse_options(argc, argv, {"--key-file", "--job"}, {}, "job-end", kUsage, &status);
  if (!options) return status;
  const std::string key_file = options->value("--key-file"), job = options->value("--job");
  const auto& named = options->named;
  std::string why;
  std::string key = key_file.empty() ? "" : proto::read_secret_file(key_file, &why);
  if (key.empty() || job.empty()) {
    fprintf(stderr, "rgpu job-end: needs --job and a readable --key-file%s%s\n%s", why.empty() ? "" : ": ",
            why.c_str(), kUsage);
    return 2;
  }
  auto servers = servers_or_environment(named, "job-end");
  if (!servers) return 2;
  int failures = 0;
  for (const auto& s : *servers) {
    std::string why;
    auto reply = client::Session::ask(s, proto::kRequestEndJob, key, job, &why);
    if (reply) printf("%s: %s\n", s.to_string().c_str(), reply->message.c_str());
    else {
      fprintf(stderr, "rgpu job-end: %s\n", why.c_str());
      ++failures;
    }
  }
  return failures ? 1 : 0;
}

}  // namespace rgpu::cli
