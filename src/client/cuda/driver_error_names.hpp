// The identifier and description of each CUresult (generated from cuda.h).
#pragma once
#include "client/cuda/cuda_api.hpp"

namespace rgpu::client {

struct DriverErrorName {
  CUresult value;
  const char* name;
  const char* description;
};

// nullptr for a value cuda.h does not define.
const DriverErrorName* driver_error_name(CUresult e);

}  // namespace rgpu::client
