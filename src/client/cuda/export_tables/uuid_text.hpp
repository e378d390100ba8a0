// A table id as text, in the order of its bytes (the order cuGetExportTable
// is handed them): what rgpu's log and the driver tracer print.
#pragma once
#include <string>

namespace rgpu::client {

std::string uuid_text(const unsigned char (&bytes)[16]);

}  // namespace rgpu::client
