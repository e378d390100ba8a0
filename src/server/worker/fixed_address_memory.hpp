// Device memory made at addresses the client names (proto::kOpMallocAt):
// a session that moves here from another worker or server keeps its device
// addresses, because device memory holds pointers to device memory
// (docs/migration.md). Built on the backend's virtual memory calls: the
// pages that hold the allocations, merged into runs, are mapped inside one
// reservation of their whole span at its own address (one span per group of
// runs less than 4 GB apart). The driver takes
// that address as a hint only, and keeps it for a large reservation but
// not for small ones (tests/gpu/migration/address_probe.cu), hence one
// span, widened to a multiple of 32 MB or more where the driver moves it. Each allocation is freed alone; a run's memory goes with the last
// allocation in it, the span with its last run. What is charged to the
// session is what is mapped: each run, whatever the allocations in it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <span>
#include <string>

#include "server/backend/backend.hpp"
#include "server/pool/session_quota.hpp"

namespace rgpu::server {

class FixedAddressMemory {
 public:
  struct Allocation {
    uint64_t base;
    uint64_t size;
  };
  // Makes every allocation on `device` at its own address, or none.
  // Allocations must be non-empty, in address order, and must not overlap.
  // cudaErrorInvalidValue for a list that breaks those rules or one of whose
  // spans passes `max_span` bytes; cudaErrorAlreadyMapped when the span's address
  // is taken in this process (*why then names it).
  // Each run is charged to `quota` (SessionQuota::Kind::fixed_run) until it goes.
  int32_t allocate(Backend& backend, SessionQuota& quota, int device, std::span<const Allocation> allocations,
                   uint64_t max_span, std::string* why);
  // Whether base is an allocation made here (then free it with free()).
  bool holds(uint64_t base) const;
  int32_t free(Backend& backend, SessionQuota& quota, uint64_t base);
  // A device reset destroyed the device's memory: its records go (its
  // charges went with SessionQuota::reset).
  void forget(int device);

  // A virtual memory reservation of a session moved here, which lay between
  // its allocations: [base, +size) inside a span, over none of its runs,
  // lent to it (the span stays while it is lent). False when no span holds it.
  bool lend(uint64_t base, uint64_t size, int device);
  bool lent(uint64_t base) const;
  // The reservation goes back to its span, which goes once empty.
  int32_t take_back(Backend& backend, uint64_t base);

 private:
  struct Run {
    uint64_t size;
    Handle memory;
    uint64_t span;  // the base of its span
    int device;
    unsigned allocations;
  };
  struct Span {
    uint64_t size;
    unsigned runs;  // and reservations lent out of it
  };
  struct Lent {
    uint64_t size;
    uint64_t span;
    int device;
  };
  // With mutex_ held: unmaps and releases a run, and its span once empty.
  int32_t drop_run(Backend& backend, SessionQuota& quota, std::map<uint64_t, Run>::iterator run);

  mutable std::mutex mutex_;
  std::map<uint64_t, uint64_t> allocations_;  // base -> its run's base
  std::map<uint64_t, Run> runs_;
  std::map<uint64_t, Span> spans_;
  std::map<uint64_t, Lent> lent_;
};

}  // namespace rgpu::server
