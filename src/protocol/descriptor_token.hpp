// A POSIX file descriptor shareable handle where no descriptor can cross
// (tcp, ucx): the exporting worker keeps the driver's descriptor and the
// application gets a stand-in descriptor holding this token; an importer's
// worker presents it to the exporting worker for the real descriptor.
// The secret is the capability: whoever holds the stand-in may import, as
// whoever holds a descriptor may locally.
#pragma once
#include <cstdint>

namespace rgpu::proto {

enum class DescriptorKind : uint32_t { memory = 1, pool = 2 };

struct DescriptorToken {
  uint64_t server = 0;   // ipc_server_identity() of the exporting server
  uint32_t worker = 0;   // the exporting worker's pid
  DescriptorKind kind{};
  uint64_t export_id = 0;
  uint8_t secret[32] = {};
};
static_assert(sizeof(DescriptorToken) == 56);

// How an import names a POSIX descriptor handle on the wire, after its type.
enum class DescriptorCarrier : uint8_t { attached = 0, token = 1 };

}  // namespace rgpu::proto
