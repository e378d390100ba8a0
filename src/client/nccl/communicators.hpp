// The application's ncclComm_t: the front-end's record of a communicator
// made on a worker. Handles are checked against the live set, so a stale or
// made-up one is refused, never followed.
#pragma once
#include <nccl.h>

#include <cstdint>

struct ncclComm {
  int device;           // the application's device index
  const void* server;   // the device's server session (FrontEndBridge::device_server)
  int ordinal;          // the device's ordinal on its server
  int rank;
  int nranks;
  uint64_t remote = 0;  // the worker's communicator
  bool pending = false; // made inside a group that has not ended yet
};

namespace rgpu::nccl {

// A new communicator of `device` (not yet known to its worker); null when
// the device does not exist (logged).
ncclComm_t make_comm(int device, int rank, int nranks);
// The communicator, or null when comm is not a live one.
ncclComm_t find_comm(ncclComm_t comm);
void forget_comm(ncclComm_t comm);

}  // namespace rgpu::nccl
