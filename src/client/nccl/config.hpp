// ncclConfig_t (of any NCCL version's size) as the wire's NcclConfigWire.
#pragma once
#include <nccl.h>

#include "protocol/nccl_wire.hpp"

namespace rgpu::nccl {

// Fields a config does not have (an older, smaller one) or null: unset.
// false when the config is not one (its magic is wrong).
bool config_wire(const ncclConfig_t* config, proto::NcclConfigWire* wire);

}  // namespace rgpu::nccl
