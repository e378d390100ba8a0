// A client process the fault tests stop and kill: opens a session with the
// server on 127.0.0.1:PORT over TRANSPORT, prints its worker's pid, then
// stays idle (MODE idle) or synchronizes in a loop until a call fails
// (MODE calls: exit status 3 then).
#include <unistd.h>

#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "client/core/session.hpp"
#include "protocol/ops.hpp"

int main(int argc, char** argv) {
  using namespace rgpu;
  if (argc != 4) {
    fprintf(stderr, "usage: rgpu_fault_client PORT TRANSPORT idle|calls\n");
    return 2;
  }
  std::string why;
  auto s = client::Session::open({"127.0.0.1", static_cast<uint16_t>(std::atoi(argv[1]))}, argv[2], {0}, &why);
  if (!s) {
    fprintf(stderr, "%s\n", why.c_str());
    return 2;
  }
  printf("%u\n", s->hello().worker_pid);
  fflush(stdout);
  if (std::string(argv[3]) == "idle")
    for (;;) pause();
  std::vector<uint8_t> reply;
  while (s->call(proto::kOpDeviceSynchronize, 0, {}, {}, reply) == cudaSuccess) usleep(1000);
  return 3;
}
