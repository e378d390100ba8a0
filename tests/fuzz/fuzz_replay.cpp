// Runs a fuzz target's body on every file under the given directories (its
// seed corpus and the reproducers of what fuzzing found), so that the normal
// build checks them: a crash or sanitizer report fails the test.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string_view>
#include <vector>

#include "fuzz_targets.hpp"

namespace fs = std::filesystem;

namespace {

struct NamedTarget {
  std::string_view name;
  int (*body)(const uint8_t*, size_t);
};
constexpr NamedTarget kTargets[] = {
    {"frame_reader", rgpu::fuzz::frame_reader}, {"handshake", rgpu::fuzz::handshake},
    {"dispatcher", rgpu::fuzz::dispatcher},     {"fatbin", rgpu::fuzz::fatbin},
    {"shm_ring", rgpu::fuzz::shm_ring},         {"shm_join", rgpu::fuzz::shm_join},
    {"unauthenticated_limits", rgpu::fuzz::unauthenticated_limits},
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: fuzz_replay TARGET DIR...\n");
    return 2;
  }
  int (*body)(const uint8_t*, size_t) = nullptr;
  for (const auto& t : kTargets)
    if (t.name == argv[1]) body = t.body;
  if (!body) {
    std::fprintf(stderr, "fuzz_replay: no target %s\n", argv[1]);
    return 2;
  }
  size_t inputs = 0;
  for (int i = 2; i < argc; ++i) {
    if (!fs::is_directory(argv[i])) continue;
    for (const auto& entry : fs::recursive_directory_iterator(argv[i])) {
      if (!entry.is_regular_file()) continue;
      std::ifstream f(entry.path(), std::ios::binary);
      std::vector<uint8_t> input{std::istreambuf_iterator<char>(f), {}};
      body(input.data(), input.size());
      ++inputs;
    }
  }
  std::printf("%s: %zu inputs replayed\n", argv[1], inputs);
  // An empty corpus would pass while checking nothing.
  return inputs > 0 ? 0 : 1;
}
