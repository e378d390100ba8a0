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

// The image a module load names, sent with the request (and then cached by
// the hash the server computes) or found in the module cache by the hash the
// client claims; *missing when neither, and the client must send it.
int32_t image_for_load(SessionContext& s, Request& req, const std::string& hash, bool with_image,
                       std::vector<uint8_t>* image, bool* missing);

// Writes the description and records the function in the session; on error
// writes nothing.
int32_t put_function(SessionContext& s, Handle module, const std::string& name, proto::Writer& out);

}  // namespace rgpu::server
