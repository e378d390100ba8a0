// `rgpu credential`: the scheduler side issues a job its credential.
#pragma once

namespace rgpu::cli {
int credential_command(int argc, char** argv);
}
