// rgpu: the command-line front end. `rgpu run` starts a program so that it
// loads rgpu's libcudart.so.13 and libcuda.so.1 (both in one directory) and uses remote GPUs.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cli/bench_command.hpp"
#include "cli/credential_command.hpp"
#include "cli/doctor_command.hpp"
#include "cli/job_end_command.hpp"
#include "cli/migrate_command.hpp"
#include "cli/ls_command.hpp"
#include "cli/run_environment.hpp"
#include "cli/smi_command.hpp"
#include "cli/token_command.hpp"
#include "common/version_text.hpp"

namespace {

const char* kUsage =
    "usage: rgpu run [--server HOST[:PORT]] [--gpus LIST] [--trace] -- PROGRAM [ARGS...]\n"
    "       rgpu ls [--server HOST[:PORT]]...\n"
    "       rgpu bench [--server HOST[:PORT]] [--out DIR] [--max-bytes N]\n"
    "       rgpu token FILE   (a new token for rgpu-server --token-file, readable by you alone)\n"
    "       rgpu smi [--json] [--key-file FILE] [SERVER[:PORT]...]\n"
    "       rgpu credential --key-file FILE --job JOBID [--user NAME] --expires SECONDS\n"
    "                       --gpu HOST:PORT:GPU[=AMOUNT]...\n"
    "       rgpu job-end --key-file FILE --job JOBID [SERVER[:PORT]...]\n"
    "       rgpu migrate --key-file FILE --session WORKER --to HOST[:PORT][/GPU] [--wait SECONDS] SERVER[:PORT]\n"
    "       rgpu doctor [--server HOST[:PORT]]... [-- PROGRAM [ARGS...]]\n"
    "                   (checks this client's setup and says what to fix)\n"
    "       rgpu --version\n"
    "  --server HOST[:PORT]  the rgpu-server to use (default: RGPU_DEVICES, else localhost)\n"
    "  --gpus LIST           that server's GPUs to use, e.g. 0,1 (default 0)\n"
    "  --trace               log every forwarded call (RGPU_TRACE=1)\n";

int run(int argc, char** argv) {
  std::string server, gpus = "0";
  int i = 0;
  for (; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--") {
      ++i;
      break;
    }
    if (a == "--server" && i + 1 < argc) server = argv[++i];
    else if (a == "--gpus" && i + 1 < argc) gpus = argv[++i];
    else if (a == "--trace") setenv("RGPU_TRACE", "1", 1);
    else if (a[0] != '-') break;
    else {
      fprintf(stderr, "rgpu run: unknown option %s\n%s", a.c_str(), kUsage);
      return 2;
    }
  }
  if (i >= argc) {
    fputs(kUsage, stderr);
    return 2;
  }
  rgpu::cli::set_run_environment(server, gpus);
  execvp(argv[i], argv + i);
  perror(argv[i]);
  return 127;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2 && std::string(argv[1]) == "run") return run(argc - 2, argv + 2);
  if (argc >= 2 && std::string(argv[1]) == "ls") return rgpu::cli::ls_command(argc - 2, argv + 2);
  if (argc >= 2 && std::string(argv[1]) == "bench") return rgpu::cli::bench_command(argc - 2, argv + 2);
  if (argc >= 2 && std::string(argv[1]) == "token") return rgpu::cli::token_command(argc - 2, argv + 2);
  if (argc >= 2 && std::string(argv[1]) == "smi") return rgpu::cli::smi_command(argc - 2, argv + 2);
  if (argc >= 2 && std::string(argv[1]) == "credential") return rgpu::cli::credential_command(argc - 2, argv + 2);
  if (argc >= 2 && std::string(argv[1]) == "doctor") return rgpu::cli::doctor_command(argc - 2, argv + 2);
  if (argc >= 2 && std::string(argv[1]) == "--version") {
    puts(rgpu::version_text("rgpu").c_str());
    return 0;
  }
  if (argc >= 2 && std::string(argv[1]) == "job-end") return rgpu::cli::job_end_command(argc - 2, argv + 2);
  if (argc >= 2 && std::string(argv[1]) == "migrate") return rgpu::cli::migrate_command(argc - 2, argv + 2);
  fputs(kUsage, argc >= 2 && std::string(argv[1]) == "--help" ? stdout : stderr);
  return argc >= 2 && std::string(argv[1]) == "--help" ? 0 : 2;
}
