// `rgpu migrate`: asks a server to move one of its sessions to another GPU
// (docs/migration.md), then waits until the session has left it or its
// client said why it stays.
#pragma once

namespace rgpu::cli {

int migrate_command(int argc, char** argv);

}  // namespace rgpu::cli
