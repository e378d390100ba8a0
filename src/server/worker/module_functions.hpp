// A kernel of a loaded module, described for the client: its handle, the
// dynamic shared memory it may use and its parameter layout. Shared by the
// runtime's module load and the driver API's cuModuleGetFunction.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "protocol/codec.hpp"
#include "server/backend/backend.hpp"

namespace rgpu::server {

class SessionContext;
struct Request;

// Loads the module a request names into the session: its image sent with
// the request or found in the module cache by the hash the client claims;
// *missing (and no module) when neither, and the client must send it. The
// image counts against max-session-host-memory while the worker holds it,
// and reaches the cache (under the hash the server computes) only once the
// backend has loaded it: nothing invalid is kept. A module preloaded from
// that image (kOpModulePreload) is taken instead. *verified, when given:
// the hash this worker computed of the image (or found it cached under).
int32_t load_module(SessionContext& s, Request& req, const std::string& hash, bool with_image, Handle* module,
                    bool* missing, std::string* verified = nullptr);

// Writes the description and records the function in the session; on error
// writes nothing.
int32_t put_function(SessionContext& s, Handle module, const std::string& name, proto::Writer& out);

// Writes a variable of the module for the client (address, size, and
// whether the driver made it managed memory, which the client keeps
// host-accessible) and makes its memory the session's, so copies may name
// it; an address of 0 (none found) is written alone as not managed.
void put_variable(SessionContext& s, Handle module, const std::string& name, DevPtr ptr, size_t size,
                  proto::Writer& out);

}  // namespace rgpu::server
