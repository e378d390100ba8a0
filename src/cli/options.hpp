// The options of an `rgpu` subcommand: `--name VALUE` pairs, bare flags and
// plain arguments (servers), with --help and unknown options answered the
// same way by each command.
#pragma once
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace rgpu::cli {

struct Options {
  std::map<std::string, std::string> values;  // by option, "--" included
  std::set<std::string> flags;
  std::vector<std::string> named;
  std::string value(const std::string& option, const std::string& fallback = "") const {
    auto it = values.find(option);
    return it == values.end() ? fallback : it->second;
  }
};

// Nullopt when the command is to end with *status: 0 after --help (usage
// on stdout), 2 after an unknown option (named, with the usage, on stderr).
std::optional<Options> parse_options(int argc, char** argv, const std::set<std::string>& valued,
                                     const std::set<std::string>& flags, const char* command, const char* usage,
                                     int* status);

}  // namespace rgpu::cli
