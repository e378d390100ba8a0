#include "cli/options.hpp"

#include <cstdio>

namespace rgpu::cli {

std::optional<Options> parse_options(int argc, char** argv, const std::set<std::string>& valued,
                                     const std::set<std::string>& flags, const char* command, const char* usage,
                                     int* status) {
  Options o;
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help") {
      fputs(usage, stdout);
      *status = 0;
      return std::nullopt;
    }
    if (valued.contains(a) && i + 1 < argc) o.values[a] = argv[++i];
    else if (flags.contains(a)) o.flags.insert(a);
    else if (!a.starts_with("-")) o.named.push_back(a);
    else {
      fprintf(stderr, "rgpu %s: unknown option %s\n%s", command, a.c_str(), usage);
      *status = 2;
      return std::nullopt;
    }
  }
  return o;
}

}  // namespace rgpu::cli
