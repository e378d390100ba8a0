// A session's virtual memory management objects (cuMemCreate & co.):
// physical allocations, address reservations and what is mapped where. The
// worker checks every call against it so a client maps only its own
// allocations into its own reservations; ranges it made accessible enter
// SessionContext::mapped (copies and memsets validate there).
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <vector>

namespace rgpu::server {

class VmmTable {
 public:
  // Physical allocations and address reservations held.
  size_t size() const {
    std::lock_guard lock(mutex_);
    return allocations_.size() + reservations_.size();
  }
  struct Mapping {
    uint64_t base;
    size_t size;
    uint64_t allocation;
  };

  // size 0: an imported allocation whose size only the driver knows.
  void add_allocation(uint64_t handle, size_t size);
  bool remove_allocation(uint64_t handle);
  std::optional<size_t> allocation_size(uint64_t handle) const;

  void add_reservation(uint64_t base, size_t size);
  // [base, +size) overlaps a reservation held.
  bool reserved_over(uint64_t base, size_t size) const;
  // Physical allocations imported from another process (their size unknown).
  size_t imported() const;
  // False unless [base, +size) is exactly one reservation with nothing mapped.
  bool remove_reservation(uint64_t base, size_t size);

  // [base, +size) lies in one reservation and overlaps no mapping.
  bool can_map(uint64_t base, size_t size) const;
  void add_mapping(const Mapping& m);
  // The mappings that exactly tile [base, +size), or nothing when the range
  // cuts one or holds a hole.
  std::optional<std::vector<Mapping>> mappings_in(uint64_t base, size_t size) const;
  void remove_mapping(uint64_t base);

  // Ranges made readable and writable (each enters SessionContext::mapped
  // whole): ranges that overlap or touch merge, so that copies may run
  // across chunks mapped back to back; unmapping part of one keeps the rest.
  void add_access(uint64_t base, size_t size);
  // Takes out the ranges that overlap [base, +size), or also those that only
  // touch it; each as {base, size}.
  std::vector<std::pair<uint64_t, size_t>> take_access(uint64_t base, size_t size, bool touching);
  // [base, +size) lies in a range made accessible.
  bool accessible(uint64_t base, size_t size) const;

 private:
  mutable std::mutex mutex_;
  std::map<uint64_t, size_t> allocations_;
  std::map<uint64_t, size_t> reservations_;
  std::map<uint64_t, Mapping> mappings_;
  std::map<uint64_t, size_t> access_;
};

}  // namespace rgpu::server
