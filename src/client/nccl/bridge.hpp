// The front-end's way to the workers: rgpu's client core (inside rgpu's
// libcuda.so.1), reached through its bridge table (core/front_end_bridge.hpp).
#pragma once
#include <nccl.h>

#include <cstdint>
#include <vector>

#include "client/core/front_end_bridge.hpp"
#include "protocol/codec.hpp"

namespace rgpu::nccl {

// The core's table, or null (logged once, with the reason) when the process
// has no rgpu client: NVIDIA's libcuda.so.1 answered, or none loaded.
const client::FrontEndBridge* bridge();

// A synchronous call to `device`'s worker: the call's ncclResult_t, its
// outputs in *reply. A lost server or a refused frame is an NCCL error
// (remembered for ncclGetLastError).
ncclResult_t remote_call(uint16_t op, int device, const proto::Writer& args, std::vector<uint8_t>* buffer,
                         proto::Reader* reply);
// An asynchronous call to `device`'s worker: queued in order with the
// device's other calls; what fails there the worker keeps as the
// communicator's asynchronous error. A lost server is an NCCL error.
ncclResult_t remote_post(uint16_t op, int device, const proto::Writer& args);

}  // namespace rgpu::nccl
