#include "cli/doctor_command.hpp"

#include <cuda_runtime_api.h>
#include <unistd.h>

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "cli/program_libraries.hpp"
#include "cli/run_environment.hpp"
#include "client/core/device_list.hpp"
#include "client/core/session.hpp"
#include "client/core/transport_choice.hpp"
#include "common/version_text.hpp"
#include "protocol/wire.hpp"

namespace rgpu::cli {
namespace {

const char* kDoctorUsage =
    "usage: rgpu doctor [--server HOST[:PORT]]... [-- PROGRAM [ARGS...]]\n"
    "  checks rgpu's libraries, each server (default: those in RGPU_DEVICES, else localhost)\n"
    "  and, given a program, runs it as `rgpu run` would and lists the CUDA libraries it loads\n";

// Lines of the report; the exit status counts the problems.
class Report {
 public:
  void ok(const std::string& what) { printf("  ok   %s\n", what.c_str()); }
  void note(const std::string& what) { printf("  note %s\n", what.c_str()); }
  void problem(const std::string& what, const std::string& fix) {
    printf("  FIX  %s\n       -> %s\n", what.c_str(), fix.c_str());
    ++problems_;
  }
  int problems() const { return problems_; }

 private:
  int problems_ = 0;
};

void check_libraries(const std::string& dir, Report& report) {
  printf("client libraries in %s\n", dir.c_str());
  const std::string runtime = dir + "/libcudart.so.13";
  if (access(runtime.c_str(), R_OK) != 0) {
    report.problem("no libcudart.so.13 there", "reinstall rgpu (pip install rgpu, or the rgpu-client package)");
    return;
  }
  for (const char* driver : {"libcuda.so.1", "libcuda.so"}) {
    if (is_same_file(dir + "/" + driver, runtime))
      report.ok(std::string(driver) + " is libcudart.so.13 (one client for both APIs)");
    else
      report.problem(std::string(driver) + " is missing or not the same file as libcudart.so.13",
                     "make it a link: ln -sf libcudart.so.13 " + dir + "/" + driver);
  }
  if (access((dir + "/librgpu-audit.so").c_str(), R_OK) == 0)
    report.ok("librgpu-audit.so (redirects NVIDIA's driver paths to rgpu's)");
  else
    report.problem("no librgpu-audit.so", "reinstall rgpu: without it a program opening NVIDIA's driver by path "
                                          "bypasses rgpu");
  // The client library loads the ucx module from its own folder (ucx_module.cpp).
  if (access((dir + "/librgpu-transport-ucx.so").c_str(), R_OK) == 0)
    report.ok("librgpu-transport-ucx.so: RGPU_TRANSPORT=ucx can be used (with this machine's UCX, libucx0)");
  else
    report.note("no ucx transport module (rgpu was built without UCX): tcp, shm and tls only");
}

std::string cuda_version(int version) {
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

// What to do about a connection or handshake that failed, by what went wrong.
std::string fix_for(const std::string& why) {
  auto says = [&](const char* words) { return why.find(words) != std::string::npos; };
  if (says("set RGPU_TRANSPORT=tls"))
    return "the server speaks TLS: set RGPU_TRANSPORT=tls, and RGPU_TLS_CA to the CA that signed its certificate";
  if (says("certificate verify failed"))
    return "set RGPU_TLS_CA to the CA that signed the server's certificate (unset: the system's CAs)";
  if (says("certificate required"))
    return "the server asks for a client certificate: set RGPU_TLS_CERT and RGPU_TLS_KEY to one signed by the CA "
           "its --tls-client-ca names";
  if (says("token"))
    return "set RGPU_TOKEN_FILE to a file (mode 600) holding the server's token (the file the server's "
           "--token-file names)";
  if (says("TLS")) return "check RGPU_TLS_CA, RGPU_TLS_CERT and RGPU_TLS_KEY against the server's --tls-* files";
  return "start rgpu-server there (or check the host and port in --server/RGPU_DEVICES, and that no firewall "
         "blocks the port)";
}

void check_server(const client::DeviceSpec& spec, const std::vector<int>& gpus, Report& report) {
  printf("server %s\n", spec.server_key().c_str());
  const std::string reason = client::transport_reason(spec.server, spec.transport);
  const auto answer = client::Session::probe(spec.server, spec.transport);
  if (!answer.reached) {
    // A TLS handshake fails inside the connect: the server was reached.
    const bool tls = answer.why.find("TLS") != std::string::npos;
    report.problem((tls ? "TLS: " : "not reachable: ") + answer.why, fix_for(answer.why));
    return;
  }
  // The reason names the transport the choice predicted; a stale Unix socket falls back to tcp.
  if (reason.rfind(answer.transport + ":", 0) == 0)
    report.ok("reachable, transport " + reason);
  else
    report.note("reachable over " + answer.transport + ", not as chosen (" + reason + "): the socket is stale");
  if (!answer.reply) {
    report.problem(answer.why, fix_for(answer.why));
    return;
  }
  const proto::HelloReply& reply = *answer.reply;
  if (reply.protocol_version != proto::kProtocolVersion) {
    report.problem("protocol: this client speaks " + std::to_string(proto::kProtocolVersion) + ", the server " +
                       std::to_string(reply.protocol_version),
                   "install the same rgpu release on both sides (compare `rgpu --version` and `rgpu-server "
                   "--version`)");
    return;
  }
  report.ok("protocol " + std::to_string(reply.protocol_version) + " on both sides");
  const char* token_file = getenv("RGPU_TOKEN_FILE");
  if (answer.refused) {
    std::string fix = "see the server's reason above";
    if (reply.status == cudaErrorNotPermitted)
      fix = token_file ? std::string("RGPU_TOKEN_FILE (") + token_file + ") holds another token than the server's: "
                             "point it at a copy of the file the server's --token-file names (or, for a pool with "
                             "job credentials, set RGPU_CREDENTIAL or RGPU_CREDENTIAL_FILE)"
                       : "set RGPU_TOKEN_FILE to the server's token file (or, for a pool with job credentials, "
                         "RGPU_CREDENTIAL or RGPU_CREDENTIAL_FILE)";
    report.problem(answer.why, fix);
    return;
  }
  report.ok("authentication: admitted" + (token_file ? " (RGPU_TOKEN_FILE " + std::string(token_file) + ")"
                                                     : std::string(" without a token (the server asks for none)")));
  report.ok("backend " + reply.backend + ", driver " + cuda_version(reply.driver_version) + ", runtime " +
            cuda_version(reply.runtime_version) + ", " + std::to_string(reply.gpus.size()) + " GPU(s)");
  for (int gpu : gpus) {
    bool exported = false;
    for (const auto& g : reply.gpus) exported = exported || g.ordinal == gpu;
    if (exported)
      report.ok("GPU " + std::to_string(gpu) + " exported");
    else
      report.problem("GPU " + std::to_string(gpu) + " is not among the server's GPUs",
                     "ask for one of the GPUs `rgpu ls --server " + spec.server.to_string() + "` lists");
  }
}

void check_program(char** argv, const std::string& server, const std::string& dir, Report& report) {
  printf("program %s (run as `rgpu run` would; its output follows on standard error)\n", argv[0]);
  fflush(stdout);
  const ProgramLibraries libraries = program_libraries(argv, server, dir);
  if (!libraries.started) {
    report.problem(std::string(argv[0]) + ": " + libraries.why, "check the program's name and that it is a "
                                                                "dynamically linked program");
    return;
  }
  for (const auto& f : libraries.cuda_libraries) {
    if (f.problem)
      report.problem(f.path + ": " + f.verdict, "see above");
    else
      report.ok(f.path + ": " + f.verdict);
  }
  if (libraries.cuda_libraries.empty())
    report.note("it loaded no CUDA library (a Python program may load CUDA only when it first uses the GPU)");
  if (libraries.exit_status != 0)
    report.problem("the program exited with status " + std::to_string(libraries.exit_status) + " under rgpu",
                   "run it with `rgpu run --trace` to see the failing call");
}

}  // namespace

int doctor_command(int argc, char** argv) {
  // Options end where the program begins, at "--".
  int options = 0;
  while (options < argc && std::string(argv[options]) != "--") ++options;
  std::vector<std::string> named;
  for (int i = 0; i < options; ++i) {
    std::string a = argv[i];
    if (a == "--server" && i + 1 < options) {
      named.push_back(argv[++i]);
    } else {
      fputs(kDoctorUsage, a == "--help" ? stdout : stderr);
      return a == "--help" ? 0 : 2;
    }
  }
  // Each server once, with the GPUs the application would ask it for.
  std::map<std::string, std::pair<client::DeviceSpec, std::vector<int>>> servers;
  try {
    const std::string transport = client::transport_from_environment();
    std::vector<client::DeviceSpec> specs;
    for (const auto& n : named)
      specs.push_back({transport::Endpoint::parse(n, client::default_port(transport)), 0, transport});
    if (named.empty()) specs = client::device_list_from_environment();
    for (const auto& d : specs) {
      auto& entry = servers.try_emplace(d.server_key(), d, std::vector<int>{}).first->second;
      entry.second.push_back(d.gpu);
    }
  } catch (const std::exception& e) {
    fprintf(stderr, "rgpu doctor: %s\n", e.what());
    return 2;
  }
  printf("%s\n", version_text("rgpu").c_str());
  Report report;
  const std::string dir = library_dir();
  check_libraries(dir, report);
  for (const auto& [key, entry] : servers) check_server(entry.first, entry.second, report);
  if (options + 1 < argc) check_program(argv + options + 1, named.size() == 1 ? named[0] : "", dir, report);
  if (report.problems() == 0) {
    printf("no problem found\n");
    return 0;
  }
  printf("%d problem(s) found: see the lines marked FIX\n", report.problems());
  return 1;
}

}  // namespace rgpu::cli
