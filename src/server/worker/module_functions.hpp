// A kernel of a loaded module, described for the client: its handle, the
// dynamic shared memory it may use and its parameter layout. Shared by the
// runtime's module load and the driver API's cuModuleGetFunction.
#pragma once
#include <cstdint>
#include <string>

#include "protocol/codec.hpp"
#include "server/backend/backend.hpp"

namespace rgpu::server {

class SessionContext;

// Writes the description and records the function in the session; on error
// writes nothing.
int32_t put_function(SessionContext& s, Handle module, const std::string& name, proto::Writer& out);

}  // namespace rgpu::server
