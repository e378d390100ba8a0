#include "common/executable_dir.hpp"

#include <unistd.h>

#include <climits>

namespace rgpu {

std::string executable_dir() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return ".";
  std::string path(buf, n);
  return path.substr(0, path.rfind('/'));
}

}  // namespace rgpu
