// ncclGroupStart/End in the front-end. Inside a group, inits and collectives
// are kept per thread (NCCL's groups are per thread too); the outermost
// ncclGroupEnd sends each server its share as one frame, to every server
// before waiting for any (a group may hold ranks of one communicator on
// several servers, each blocking until all join), and the worker runs it as
// one NCCL group.
#pragma once
#include <nccl.h>

#include "protocol/nccl_wire.hpp"

namespace rgpu::nccl {

bool in_group();
void group_start();
// Ends a group level; the outermost runs the group: its first error.
ncclResult_t group_end();
// Kept for the group's end; the communicator gets its worker's handle then.
void group_add_init(ncclComm_t comm, const proto::NcclInitWire& init);
void group_add_call(ncclComm_t comm, const proto::NcclCollectiveWire& call);

}  // namespace rgpu::nccl
