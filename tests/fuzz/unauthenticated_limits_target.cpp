// The daemon's bookkeeping of unauthenticated connections under any sequence
// of accepts (from a few sources), hand-offs to workers, admissions and
// closes, and time steps: its bounds always hold, and every connection it
// tracks leaves by its deadlines (held back in the queue: closed; in hello:
// its worker killed).
#include <cstdlib>
#include <map>
#include <set>

#include "fuzz_targets.hpp"
#include "server/daemon/unauthenticated_limits.hpp"

namespace rgpu::fuzz {
namespace {

using server::UnauthenticatedLimits;

void check(bool ok) {
  if (!ok) std::abort();
}

void check_bounds(const UnauthenticatedLimits& limits, const std::set<UnauthenticatedLimits::Id>& tracked) {
  const auto& b = limits.bounds();
  check(limits.queued() + limits.in_hello() <= b.total);
  check(limits.queued() + limits.in_hello() == tracked.size());
  for (char s = 'a'; s <= 'd'; ++s) {
    const std::string source(1, s);
    check(limits.in_hello_of(source) <= b.per_source);
    check(limits.queued_of(source) + limits.in_hello_of(source) <= 2 * b.per_source);
  }
}

}  // namespace

int unauthenticated_limits(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  UnauthenticatedLimits::Bounds bounds;
  bounds.per_source = 1 + data[0] % 4;
  bounds.total = 1 + data[1] % 12;
  bounds.hello_timeout = std::chrono::milliseconds(500);
  bounds.grace = std::chrono::milliseconds(200);
  UnauthenticatedLimits limits(bounds);
  auto now = UnauthenticatedLimits::Clock::time_point{} + std::chrono::hours(1);
  std::set<UnauthenticatedLimits::Id> tracked;
  auto expire = [&] {
    for (auto id : limits.expired_in_queue(now)) {
      limits.finished(id);
      tracked.erase(id);
    }
    for (auto id : limits.overdue_in_hello(now)) {
      limits.finished(id);
      tracked.erase(id);
    }
  };
  for (size_t i = 2; i + 1 < size; i += 2) {
    const uint8_t arg = data[i + 1];
    switch (data[i] % 5) {
      case 0: {
        UnauthenticatedLimits::Id id = 0;
        if (limits.accept(std::string(1, static_cast<char>('a' + arg % 4)), now, &id) ==
            UnauthenticatedLimits::Verdict::queued) {
          check(tracked.insert(id).second);
        }
        break;
      }
      case 1:
        if (auto next = limits.next_to_dispatch()) {
          check(tracked.count(*next) == 1);
          limits.dispatched(*next, now);
        } else {
          check(limits.dispatchable() == 0);
        }
        break;
      case 2:
        if (!tracked.empty()) {
          auto it = tracked.begin();
          std::advance(it, arg % tracked.size());
          limits.finished(*it);
          tracked.erase(it);
        } else {
          limits.finished(arg);  // unknown: ignored
        }
        break;
      case 3:
        now += std::chrono::milliseconds(arg * 10);
        break;
      case 4:
        expire();
        break;
    }
    check_bounds(limits, tracked);
  }
  // With workers for all that may have them, past every deadline nothing
  // is left: each connection was handed to a worker or closed.
  for (size_t round = 0; round <= bounds.total && !tracked.empty(); ++round) {
    while (auto next = limits.next_to_dispatch()) limits.dispatched(*next, now);
    now += bounds.hello_timeout + bounds.grace;
    expire();
  }
  check(tracked.empty());
  check(limits.queued() == 0 && limits.in_hello() == 0);
  return 0;
}

}  // namespace rgpu::fuzz
