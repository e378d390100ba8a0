#include "server/worker/fixed_address_memory.hpp"

#include "common/log.hpp"

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

namespace rgpu::server {
namespace {

// Runs further apart than this get spans of their own: past the widening
// reserve_span may do (1 GB each side), so that spans never meet.
constexpr uint64_t kSpanGap = uint64_t{4} << 30;

// What this process has mapped inside [base, base + size), from
// /proc/self/maps: the first mapping and how many there are (a move whose
// addresses are taken says by what: the driver's reservations, libraries,
// thread stacks, page-locked memory).
std::string mappings_within(uint64_t base, uint64_t size) {
  std::ifstream maps("/proc/self/maps");
  std::string line, first;
  int count = 0;
  for (uint64_t lo, hi; std::getline(maps, line);) {
    if (std::sscanf(line.c_str(), "%" SCNx64 "-%" SCNx64, &lo, &hi) != 2 || hi <= base || lo >= base + size) continue;
    if (count++ == 0) first = line;
  }
  if (count == 0) return "nothing mapped there by this process";
  return std::to_string(count) + " mapping(s) there, the first: " + first;
}

// The driver takes a reservation's address as a hint and, measured on
// H200s, places a reservation at a multiple of 32 MB (a 2 MB one asked at
// ...1de00000 landed at ...1e000000): a span that starts off such a multiple
// moves though its pages are free. So the span is tried as it is, then
// widened to multiples of 32 MB, 64 MB, ... 1 GB; its holes stay unmapped.
// The reserved [base, base + size), or false when none was kept.
bool reserve_span(Backend& backend, uint64_t lo, uint64_t hi, size_t page, uint64_t max_span, uint64_t* base,
                  uint64_t* size) {
  std::vector<uint64_t> alignments{page};
  for (uint64_t a = uint64_t{32} << 20; a <= (uint64_t{1} << 30); a *= 2)
    if (a > page) alignments.push_back(a);
  for (uint64_t align : alignments) {
    const uint64_t b = lo / align * align, e = (hi + align - 1) / align * align;
    if (e - b > max_span) break;
    DevPtr got = 0;
    if (int32_t r = backend.vmm_reserve(&got, e - b, align, b)) {
      RGPU_LOG(info, "fixed-address span %#llx-%#llx (alignment %#llx): reservation refused, error %d",
               static_cast<unsigned long long>(b), static_cast<unsigned long long>(e),
               static_cast<unsigned long long>(align), r);
      continue;
    }
    if (got == b) {
      *base = b;
      *size = e - b;
      return true;
    }
    RGPU_LOG(info, "fixed-address span %#llx-%#llx (alignment %#llx): the driver placed it at %#llx",
             static_cast<unsigned long long>(b), static_cast<unsigned long long>(e),
             static_cast<unsigned long long>(align), static_cast<unsigned long long>(got));
    backend.vmm_free(got, e - b);
  }
  return false;
}

}  // namespace

int32_t FixedAddressMemory::allocate(Backend& backend, SessionQuota& quota, int device,
                                     std::span<const Allocation> allocations, uint64_t max_span, std::string* why) {
  if (allocations.empty()) return cudaErrorInvalidValue;
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = device;
  size_t page = 0;
  if (int32_t e = backend.vmm_granularity(&page, prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM)) return e;
  // The pages that hold the allocations, merged into runs; each allocation
  // lies in one run.
  struct Piece {
    uint64_t base, end;
  };
  std::vector<Piece> runs;
  uint64_t last_end = 0;
  for (const Allocation& a : allocations) {
    if (a.size == 0 || a.size > UINT64_MAX - page || a.base < last_end || a.base > UINT64_MAX - page - a.size)
      return cudaErrorInvalidValue;
    last_end = a.base + a.size;
    const uint64_t lo = a.base / page * page, hi = (last_end + page - 1) / page * page;
    if (!runs.empty() && lo <= runs.back().end)
      runs.back().end = std::max(runs.back().end, hi);
    else
      runs.push_back({lo, hi});
  }
  // Runs far apart get spans of their own (a session moved back holds
  // allocations made on two servers, whose addresses lie apart).
  std::vector<std::pair<size_t, size_t>> groups;  // [first run, last run)
  for (size_t i = 0; i < runs.size(); ++i) {
    if (i == 0 || runs[i].base - runs[i - 1].end > kSpanGap)
      groups.emplace_back(i, i + 1);
    else
      groups.back().second = i + 1;
  }
  std::lock_guard lock(mutex_);
  std::vector<uint64_t> made;  // spans reserved by this call
  auto undo = [&] {  // none made: the runs mapped so far, and each span with its last
    for (uint64_t reserved : made) {
      for (auto it = runs_.lower_bound(reserved); it != runs_.end() && it->second.span == reserved;)
        drop_run(backend, quota, it++);
      if (auto span = spans_.find(reserved); span != spans_.end()) {
        backend.vmm_free(reserved, span->second.size);
        spans_.erase(span);
      }
    }
  };
  for (const auto& [first, last] : groups) {
    const uint64_t span = runs[first].base, span_size = runs[last - 1].end - span;
    if (span_size > max_span) {
      undo();
      return cudaErrorInvalidValue;
    }
    uint64_t reserved = 0, reserved_size = 0;
    if (!reserve_span(backend, span, span + span_size, page, max_span, &reserved, &reserved_size)) {
      undo();
      char text[128];
      std::snprintf(text, sizeof text, "device addresses 0x%llx-0x%llx are taken in this worker (",
                    static_cast<unsigned long long>(span), static_cast<unsigned long long>(span + span_size));
      *why = text + mappings_within(span, span_size) + ")";
      return cudaErrorAlreadyMapped;
    }
    spans_[reserved] = {reserved_size, 0};
    made.push_back(reserved);
    for (size_t i = first; i < last; ++i) {
      const Piece& r = runs[i];
      Handle memory = 0;
      int32_t e = quota.allocate(device, r.end - r.base, SessionQuota::Kind::fixed_run, &r.base, [&] {
        int32_t mapped = backend.vmm_create(&memory, r.end - r.base, prop);
        if (!mapped && (mapped = backend.vmm_map(r.base, r.end - r.base, 0, memory))) backend.vmm_release(memory);
        return mapped;
      });
      if (!e) {
        runs_[r.base] = {r.end - r.base, memory, reserved, device, 0};
        ++spans_[reserved].runs;
        e = backend.vmm_set_access(r.base, r.end - r.base, device, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
      }
      if (e) {
        undo();
        return e;
      }
    }
  }
  for (const Allocation& a : allocations) {
    auto run = std::prev(runs_.upper_bound(a.base));
    allocations_[a.base] = run->first;
    ++run->second.allocations;
  }
  return cudaSuccess;
}

bool FixedAddressMemory::holds(uint64_t base) const {
  std::lock_guard lock(mutex_);
  return allocations_.contains(base);
}

int32_t FixedAddressMemory::free(Backend& backend, SessionQuota& quota, uint64_t base) {
  std::lock_guard lock(mutex_);
  auto a = allocations_.find(base);
  if (a == allocations_.end()) return cudaErrorInvalidValue;
  auto run = runs_.find(a->second);
  allocations_.erase(a);
  return --run->second.allocations == 0 ? drop_run(backend, quota, run) : cudaSuccess;
}

int32_t FixedAddressMemory::drop_run(Backend& backend, SessionQuota& quota, std::map<uint64_t, Run>::iterator run) {
  quota.freed(SessionQuota::Kind::fixed_run, run->first);
  int32_t e = backend.vmm_unmap(run->first, run->second.size);
  if (int32_t r = backend.vmm_release(run->second.memory); !e) e = r;
  auto span = spans_.find(run->second.span);
  runs_.erase(run);
  if (--span->second.runs == 0) {
    if (int32_t f = backend.vmm_free(span->first, span->second.size); !e) e = f;
    spans_.erase(span);
  }
  return e;
}

namespace {

template <typename T>
bool overlaps_any(const std::map<uint64_t, T>& ranges, uint64_t base, uint64_t size) {
  auto it = ranges.lower_bound(base + size);
  return it != ranges.begin() && std::prev(it)->first + std::prev(it)->second.size > base;
}

}  // namespace

bool FixedAddressMemory::lend(uint64_t base, uint64_t size, int device) {
  std::lock_guard lock(mutex_);
  if (size == 0 || base + size < base || spans_.empty()) return false;
  auto span = spans_.upper_bound(base);
  if (span == spans_.begin()) return false;
  --span;
  if (base + size > span->first + span->second.size || overlaps_any(runs_, base, size) ||
      overlaps_any(lent_, base, size))
    return false;
  lent_[base] = {size, span->first, device};
  ++span->second.runs;
  return true;
}

bool FixedAddressMemory::lent(uint64_t base) const {
  std::lock_guard lock(mutex_);
  return lent_.contains(base);
}

int32_t FixedAddressMemory::take_back(Backend& backend, uint64_t base) {
  std::lock_guard lock(mutex_);
  auto it = lent_.find(base);
  if (it == lent_.end()) return cudaErrorInvalidValue;
  auto span = spans_.find(it->second.span);
  lent_.erase(it);
  if (--span->second.runs) return cudaSuccess;
  const int32_t e = backend.vmm_free(span->first, span->second.size);
  spans_.erase(span);
  return e;
}

void FixedAddressMemory::forget(int device) {
  std::lock_guard lock(mutex_);
  for (auto it = lent_.begin(); it != lent_.end();) {
    if (it->second.device != device) {
      ++it;
      continue;
    }
    if (auto span = spans_.find(it->second.span); --span->second.runs == 0) spans_.erase(span);
    it = lent_.erase(it);
  }
  for (auto run = runs_.begin(); run != runs_.end();) {
    if (run->second.device != device) {
      ++run;
      continue;
    }
    for (auto a = allocations_.begin(); a != allocations_.end();)
      a = a->second == run->first ? allocations_.erase(a) : std::next(a);
    if (auto span = spans_.find(run->second.span); --span->second.runs == 0) spans_.erase(span);
    run = runs_.erase(run);
  }
}

}  // namespace rgpu::server
