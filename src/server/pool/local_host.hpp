// Whether a host name, as a credential names a GPU's server, is this
// machine: its host name, or a name that resolves to one of its addresses.
#pragma once
#include <string>

namespace rgpu::server {
bool names_this_host(const std::string& host);
}
