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
// glibc tunables that runtime needs once preloaded: libtsan.so.2 keeps its
// thread state in static TLS, more than glibc's default surplus leaves it
// ("cannot allocate memory in static TLS block"); empty where none are needed.
std::string sanitizer_tunables();
}
