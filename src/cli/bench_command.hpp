// `rgpu bench`: the same measurements against local CUDA and through rgpu,
// plus the raw transport, in one run; JSON, a markdown table and a plot.
#pragma once

namespace rgpu::cli {
int bench_command(int argc, char** argv);
}
