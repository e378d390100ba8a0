#include "client/move/page_locked_share.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cstdio>

#include "client/core/memory_map.hpp"
#include "client/core/session.hpp"
#include "client/move/move_refusal.hpp"
#include "protocol/codec.hpp"
#include "protocol/ops.hpp"

namespace rgpu::client {
namespace {

std::vector<SharedRange> shared_page_locked() {
  std::vector<SharedRange> out;
  for (const HostRange& r : MemoryMap::get().page_locked_ranges()) {
    struct stat st {};
    if (r.shared_fd >= 0 && fstat(r.shared_fd, &st) == 0) out.push_back({r.base, r.size, r.shared_fd, st.st_ino});
  }
  return out;
}

}  // namespace

std::vector<SharedRange> share_page_locked(Session& to, int gpu, const std::vector<SharedRange>& before) {
  if (!to.shares_memory()) return {};
  const std::vector<SharedRange> now = shared_page_locked();
  std::vector<uint8_t> reply;
  for (const SharedRange& r : before) {
    if (std::find(now.begin(), now.end(), r) != now.end()) continue;
    proto::Writer w;
    w.put<uint64_t>(r.base);
    check_step(to.call(proto::kOpHostUnregisterShared, static_cast<uint16_t>(gpu), w.bytes(), {}, reply),
               "letting go of freed page-locked memory on the target");
  }
  for (const SharedRange& r : now) {
    if (std::find(before.begin(), before.end(), r) != before.end()) continue;
    proto::Writer w;
    w.put<uint64_t>(r.base).put<uint64_t>(r.size);
    check_step(to.call_with_fd(proto::kOpHostRegisterShared, static_cast<uint16_t>(gpu), w.bytes(), r.fd, reply),
               "sharing page-locked memory with the target");
    proto::Writer at;
    at.put<uint64_t>(r.base);
    check_step(to.call(proto::kOpHostGetDevicePointer, static_cast<uint16_t>(gpu), at.bytes(), {}, reply),
               "the target's address for page-locked memory");
    if (proto::Reader(reply).get<uint64_t>() != r.base) {
      char text[96];
      std::snprintf(text, sizeof text, "the target cannot map page-locked memory at 0x%llx, its address here",
                    static_cast<unsigned long long>(r.base));
      throw MoveRefusal(text);
    }
  }
  return now;
}

}  // namespace rgpu::client
