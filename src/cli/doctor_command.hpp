// `rgpu doctor`: checks this client's setup and says what to fix, in plain
// words: rgpu's libraries, each configured server (reachable, authentication,
// protocol versions, the transport taken and why) and, given a program, the
// CUDA libraries it loads. Exit status 1 when something is wrong.
#pragma once

namespace rgpu::cli {
int doctor_command(int argc, char** argv);
}
