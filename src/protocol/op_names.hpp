// Names of operations, for traces and logs.
#pragma once
#include <cstdint>

namespace rgpu::proto {
const char* op_name(uint16_t op);
}
