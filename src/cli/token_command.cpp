#include "cli/token_command.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "protocol/auth.hpp"

namespace rgpu::cli {

int token_command(int argc, char** argv) {
  if (argc != 1 || std::string(argv[0]).starts_with("-")) {
    fputs("usage: rgpu token FILE   (writes a new token, mode 600; an existing FILE is left alone)\n",
          argc == 1 && std::string(argv[0]) == "--help" ? stdout : stderr);
    return argc == 1 && std::string(argv[0]) == "--help" ? 0 : 2;
  }
  // Created with its final mode, never over an existing file: a token is
  // never readable by others, not even for a moment.
  int fd = open(argv[0], O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    fprintf(stderr, "rgpu token: %s: %s\n", argv[0], strerror(errno));
    return 1;
  }
  std::string hex;
  char b[3];
  for (uint8_t x : proto::random_nonce()) {
    snprintf(b, sizeof b, "%02x", x);
    hex += b;
  }
  hex += '\n';
  bool ok = write(fd, hex.data(), hex.size()) == static_cast<ssize_t>(hex.size());
  ok = close(fd) == 0 && ok;
  if (!ok) {
    fprintf(stderr, "rgpu token: writing %s failed\n", argv[0]);
    unlink(argv[0]);
    return 1;
  }
  printf("wrote a new token to %s (mode 600): give it to rgpu-server --token-file and to clients as RGPU_TOKEN_FILE\n",
         argv[0]);
  return 0;
}

}  // namespace rgpu::cli
