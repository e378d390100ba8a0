#include "cli/credential_command.hpp"

#include <cstdio>
#include <ctime>
#include <stdexcept>
#include <string>

#include "protocol/credential.hpp"

namespace rgpu::cli {
namespace {
const char* kUsage =
    "usage: rgpu credential --key-file FILE --job JOBID [--user NAME] --expires SECONDS\n"
    "                       --gpu HOST:PORT:GPU[=AMOUNT][@SHARE%] [--gpu ...]\n"
    "  prints the job's credential (one line) for RGPU_CREDENTIAL or RGPU_CREDENTIAL_FILE;\n"
    "  AMOUNT (e.g. 512M, 4G) is the GPU memory the job may hold there (default: no limit);\n"
    "  SHARE (1 to 100) the percentage of its SMs each of the job's sessions may use where\n"
    "  the server shares the GPU through MPS (default: all)\n"
    "  it expires SECONDS from now\n";
}

int credential_command(int argc, char** argv) {
  std::string key_file;
  proto::CredentialClaims claims;
  long long lifetime = -1;
  try {
    for (int i = 0; i < argc; ++i) {
      std::string a = argv[i];
      if (a == "--help") {
        fputs(kUsage, stdout);
        return 0;
      }
      if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
      std::string v = argv[++i];
      if (a == "--key-file") key_file = v;
      else if (a == "--job") claims.job = v;
      else if (a == "--user") claims.user = v;
      else if (a == "--expires") lifetime = std::stoll(v);
      else if (a == "--gpu") claims.gpus.push_back(proto::parse_credential_gpu(v));
      else throw std::invalid_argument("unknown option " + a);
    }
    if (key_file.empty() || claims.job.empty() || lifetime <= 0 || claims.gpus.empty())
      throw std::invalid_argument("--key-file, --job, --expires (> 0) and at least one --gpu are needed");
    std::string why;
    std::string key = proto::read_secret_file(key_file, &why);
    if (key.empty()) throw std::invalid_argument("job key file " + why);
    claims.expires = static_cast<int64_t>(time(nullptr)) + lifetime;
    printf("%s\n", proto::issue_credential(key, claims).c_str());
    return 0;
  } catch (const std::exception& e) {
    fprintf(stderr, "rgpu credential: %s\n%s", e.what(), kUsage);
    return 2;
  }
}

}  // namespace rgpu::cli
