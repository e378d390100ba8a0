// `rgpu doctor -- PROGRAM`: runs the program the way `rgpu run` would, with
// rgpu's loader audit module listing every library it loads, and says of
// each CUDA library whether it is rgpu's or runs on rgpu's driver.
#pragma once
#include <string>
#include <vector>

namespace rgpu::cli {

struct LibraryFinding {
  std::string path;
  std::string verdict;  // in words
  bool problem = false;
};

struct ProgramLibraries {
  bool started = false;
  int exit_status = 0;   // the program's; 128+N for a signal
  std::string why;       // when it could not be run
  std::vector<LibraryFinding> cuda_libraries;  // in load order
};

// The libraries `argv` (null-terminated) and its children load under `rgpu
// run [--server server]`, rgpu's being in `rgpu_dir`.
ProgramLibraries program_libraries(char** argv, const std::string& server, const std::string& rgpu_dir);

// True when both paths reach one file: the loader maps a file once,
// whichever name reached it.
bool is_same_file(const std::string& a, const std::string& b);

// The verdict on each CUDA library among `loaded` (paths, in load order,
// repeats allowed); other libraries are left out.
std::vector<LibraryFinding> classify_libraries(const std::vector<std::string>& loaded, const std::string& rgpu_dir);

}  // namespace rgpu::cli
