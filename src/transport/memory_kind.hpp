// Where memory a transport moves lives (transport.hpp's zero-copy calls; a
// backend says which kind its device memory is).
#pragma once

namespace rgpu::transport {

enum class MemoryKind { host, gpu };

}  // namespace rgpu::transport
