// The application's descriptor for a POSIX file descriptor shareable handle
// exported where no descriptor can cross from the server (tcp, ucx): a
// sealed memfd holding the exporting worker's token. It travels between the
// application's processes as any descriptor does (over a Unix socket, by
// fork) and whoever holds it can import, as with a driver's descriptor;
// the importing client reads the token back and sends it to its server.
#pragma once
#include "protocol/descriptor_token.hpp"

namespace rgpu::client {

// A new stand-in for `token` (the application's to close), or -1 (errno).
int make_stand_in(const proto::DescriptorToken& token);
// Whether `fd` is a stand-in; its token then goes to *token.
bool read_stand_in(int fd, proto::DescriptorToken* token);

}  // namespace rgpu::client
