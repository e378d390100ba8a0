// A sanitizer build of rgpu (tools/sanitize.sh): the programs `rgpu run`
// starts are not instrumented (nvcc builds them) but load rgpu's libraries,
// which are; the sanitizer runtime must then be the first library of the
// process, so `rgpu run` preloads the one it runs with itself.
#pragma once
#include <string>

namespace rgpu::cli {
// The path of the sanitizer runtime library this process runs with; empty in
// a normal build (or where the runtime is linked statically, as clang's is).
std::string sanitizer_runtime();
}
