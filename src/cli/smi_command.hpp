// `rgpu smi`: each GPU of the pool's servers with its mode, jobs, sessions,
// memory and utilisation, as a table or JSON.
#pragma once

namespace rgpu::cli {
int smi_command(int argc, char** argv);
}
