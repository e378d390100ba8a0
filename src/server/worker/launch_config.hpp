// A launch configuration from the wire (grid, block, dynamic shared memory,
// stream, and for cudaLaunchKernelExC / cuLaunchKernelEx its attributes),
// checked against the session before it reaches the backend.
#pragma once
#include <cstdint>

#include "protocol/codec.hpp"
#include "server/backend/backend.hpp"

namespace rgpu::server {

class SessionContext;

// Reads grid, block, shared memory and stream into `config`; the stream must
// be the session's.
int32_t read_launch_config(SessionContext& s, proto::Reader& in, LaunchConfig* config);
// Reads a count and that many attributes: events must be the session's, an
// access policy window must lie in the session's memory, and an attribute
// the launch cannot take is cudaErrorInvalidValue.
int32_t read_launch_attributes(SessionContext& s, proto::Reader& in, LaunchConfig* config);

}  // namespace rgpu::server
