// Every device attribute the test backend's modelled GPU reports, as NVIDIA's
// driver reports them: NVIDIA's runtime reads them all at start-up.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>

namespace rgpu::server {

// The attribute's value for a device of properties `p`; false for a number
// that names no attribute.
bool host_device_attribute(const cudaDeviceProp& p, int attribute, int* value);

}  // namespace rgpu::server
