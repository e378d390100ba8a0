// What `rgpu --version` and `rgpu-server --version` print: the release, the
// protocol it speaks and the CUDA version it was built for.
#pragma once
#include <string>

namespace rgpu {
std::string version_text(const char* program);
}
