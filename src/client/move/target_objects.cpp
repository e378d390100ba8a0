#include "client/move/target_objects.hpp"

#include <vector>

#include "client/core/session.hpp"
#include "client/move/move_refusal.hpp"
#include "protocol/codec.hpp"
#include "protocol/ops.hpp"

namespace rgpu::client {

uint64_t make_object(Session& s, int gpu, ObjectKind kind, uint32_t flags, int32_t priority, const std::string& what) {
  const bool event = kind == ObjectKind::event;
  proto::Writer w;
  if (event)
    w.put<uint32_t>(flags).put<uint32_t>(1);  // one event
  else
    w.put<uint32_t>(flags).put<int32_t>(priority);
  std::vector<uint8_t> reply;
  check_step(
      s.call(event ? proto::kOpEventCreate : proto::kOpStreamCreate, static_cast<uint16_t>(gpu), w.bytes(), {}, reply),
      what);
  proto::Reader r(reply);
  if (event && r.get<uint32_t>() != 1) throw MoveRefusal(what + ": no event made");
  return r.get<uint64_t>();
}

void destroy_object(Session& s, int gpu, ObjectKind kind, uint64_t handle) {
  proto::Writer w;
  w.put<uint64_t>(handle);
  std::vector<uint8_t> reply;
  s.call(kind == ObjectKind::event ? proto::kOpEventDestroy : proto::kOpStreamDestroy, static_cast<uint16_t>(gpu),
         w.bytes(), {}, reply, false);
}

}  // namespace rgpu::client
