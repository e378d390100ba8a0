// What rgpu's front-end does not forward: NCCL's device-side API (device
// communicators, teams, barriers and their requirements: kernels of the
// application's would reach the workers' NCCL state directly), and newer
// host calls not yet forwarded. Each is exported, as NVIDIA's library
// exports it, logs why once and fails with ncclInvalidUsage (or a neutral
// value where it returns no ncclResult_t). Arguments are not read, so each
// is defined without them, and this file does not see nccl.h's prototypes
// (ncclResult_t is an int-sized enum: returned as an int).
#include <cstdint>

#include "client/nccl/unsupported.hpp"

namespace {

int unsupported(const char* name) { return rgpu::nccl::refuse_unsupported(name); }

// An ncclTeam returned by value (12 bytes, in two registers): all zero.
struct ZeroTeam {
  uint64_t low, high;
};

}  // namespace

#define RGPU_NCCL_UNSUPPORTED(name)                          \
  extern "C" int name() { return unsupported(#name); } \
  extern "C" int p##name() { return unsupported(#name); }

RGPU_NCCL_UNSUPPORTED(ncclCommShrink)
RGPU_NCCL_UNSUPPORTED(ncclCommRevoke)
RGPU_NCCL_UNSUPPORTED(ncclCommWindowRegister)
RGPU_NCCL_UNSUPPORTED(ncclCommWindowDeregister)
RGPU_NCCL_UNSUPPORTED(ncclGroupSimulateEnd)
RGPU_NCCL_UNSUPPORTED(ncclDevCommCreate)
RGPU_NCCL_UNSUPPORTED(ncclDevCommDestroy)
RGPU_NCCL_UNSUPPORTED(ncclGinBarrierCreateRequirement)
RGPU_NCCL_UNSUPPORTED(ncclLsaBarrierCreateRequirement)
RGPU_NCCL_UNSUPPORTED(ncclLLA2ACreateRequirement)

#define RGPU_NCCL_NEUTRAL(type, name, value)         \
  extern "C" type name() {                           \
    unsupported(#name);                              \
    return value;                                    \
  }                                                  \
  extern "C" type p##name() { return name(); }

RGPU_NCCL_NEUTRAL(int, ncclLLA2ACalcSlots, 0)
RGPU_NCCL_NEUTRAL(ZeroTeam, ncclTeamWorld, ZeroTeam{})
RGPU_NCCL_NEUTRAL(ZeroTeam, ncclTeamLsa, ZeroTeam{})
RGPU_NCCL_NEUTRAL(ZeroTeam, ncclTeamRail, ZeroTeam{})
RGPU_NCCL_NEUTRAL(int, ncclTeamRankToLsa, -1)
RGPU_NCCL_NEUTRAL(int, ncclTeamRankToWorld, -1)

// NCCL's debug-log reset: rgpu's front-end has no NCCL log to reset.
extern "C" void ncclResetDebugInitInternal() {}
extern "C" void ncclResetDebugInit() {}
extern "C" void pncclResetDebugInit() {}
