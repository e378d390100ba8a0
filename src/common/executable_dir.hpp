// The directory of the running executable: installed pieces (libraries,
// backend modules) are found next to it.
#pragma once
#include <string>

namespace rgpu {
std::string executable_dir();
}
