// `rgpu ls`: the GPUs each rgpu-server exports, with their memory.
#pragma once

namespace rgpu::cli {
int ls_command(int argc, char** argv);
}
