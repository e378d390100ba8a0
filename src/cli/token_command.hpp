// `rgpu token FILE`: writes a new random token, readable by its owner alone,
// for rgpu-server --token-file and the clients' RGPU_TOKEN_FILE.
#pragma once

namespace rgpu::cli {
int token_command(int argc, char** argv);
}
