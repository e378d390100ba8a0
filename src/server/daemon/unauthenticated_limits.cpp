#include "server/daemon/unauthenticated_limits.hpp"

#include <algorithm>

namespace rgpu::server {

UnauthenticatedLimits::Verdict UnauthenticatedLimits::accept(const std::string& source, Clock::time_point now,
                                                             Id* id) {
  if (entries_.size() >= bounds_.total) return Verdict::over_total_bound;
  auto it = sources_.find(source);
  // per_source in hello and as many more waiting, however many of them a
  // worker took already.
  if (it != sources_.end() && it->second.queued + it->second.in_hello >= 2 * bounds_.per_source)
    return Verdict::over_source_bound;
  *id = next_id_++;
  entries_.emplace(*id, Entry{source, false, now});
  ++sources_[source].queued;
  ++queued_;
  return Verdict::queued;
}

std::optional<UnauthenticatedLimits::Id> UnauthenticatedLimits::next_to_dispatch() const {
  for (const auto& [id, e] : entries_)
    if (!e.in_hello && sources_.at(e.source).in_hello < bounds_.per_source) return id;
  return std::nullopt;
}

size_t UnauthenticatedLimits::dispatchable() const {
  size_t n = 0;
  for (const auto& [name, s] : sources_) n += std::min(s.queued, bounds_.per_source - s.in_hello);
  return n;
}

void UnauthenticatedLimits::dispatched(Id id, Clock::time_point now) {
  auto it = entries_.find(id);
  if (it == entries_.end() || it->second.in_hello) return;
  Source& s = sources_.at(it->second.source);
  --s.queued;
  ++s.in_hello;
  --queued_;
  it->second.in_hello = true;
  it->second.since = now;
}

void UnauthenticatedLimits::finished(Id id) {
  auto it = entries_.find(id);
  if (it == entries_.end()) return;
  auto s = sources_.find(it->second.source);
  if (it->second.in_hello) {
    --s->second.in_hello;
  } else {
    --s->second.queued;
    --queued_;
  }
  if (s->second.queued == 0 && s->second.in_hello == 0) sources_.erase(s);
  entries_.erase(it);
}

std::vector<UnauthenticatedLimits::Id> UnauthenticatedLimits::expired_in_queue(Clock::time_point now) const {
  std::vector<Id> out;
  for (const auto& [id, e] : entries_)
    if (!e.in_hello && now - e.since >= bounds_.hello_timeout &&
        sources_.at(e.source).in_hello >= bounds_.per_source)
      out.push_back(id);
  return out;
}

std::vector<UnauthenticatedLimits::Id> UnauthenticatedLimits::overdue_in_hello(Clock::time_point now) const {
  std::vector<Id> out;
  for (const auto& [id, e] : entries_)
    if (e.in_hello && now - e.since >= bounds_.hello_timeout + bounds_.grace) out.push_back(id);
  return out;
}

size_t UnauthenticatedLimits::in_hello_of(const std::string& source) const {
  auto it = sources_.find(source);
  return it == sources_.end() ? 0 : it->second.in_hello;
}

size_t UnauthenticatedLimits::queued_of(const std::string& source) const {
  auto it = sources_.find(source);
  return it == sources_.end() ? 0 : it->second.queued;
}

}  // namespace rgpu::server
