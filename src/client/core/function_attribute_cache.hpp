// What the server answered about a kernel as loaded on a device, kept so
// that asking again costs no round trip: its attributes (cudaFuncAttributes,
// which cuFuncGetAttribute reads one at a time) and its occupancy for a
// block size, dynamic shared memory and flags. NVIDIA's libraries ask both
// before many launches.
//
// An answer changes only when the kernel's settable attributes or cache
// preferences change, or the device's cache preferences, or the device is
// reset: the calls that do so forget the kernel's (or the device's) answers
// when they return, whatever their outcome (kept_answers.hpp).
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "client/core/kept_answers.hpp"

namespace rgpu::client {

struct OccupancyQuery {
  int32_t block_size;
  uint64_t dynamic_shared;
  uint32_t flags;
  bool operator==(const OccupancyQuery&) const = default;
};

class FunctionAttributeCache {
 public:
  static FunctionAttributeCache& get();

  // The kernel's attributes on `device` (`function`: its server handle
  // there), asking `fetch(cudaFuncAttributes*)` only when none are kept.
  template <typename Fetch>
  cudaError_t attributes(int device, uint64_t function, cudaFuncAttributes* out, Fetch&& fetch) {
    return kept_.answer(
        {device, function}, out,
        [](const Entry& e, cudaFuncAttributes* a) {
          if (e.attributes) *a = *e.attributes;
          return e.attributes.has_value();
        },
        std::forward<Fetch>(fetch), [](Entry& e, const cudaFuncAttributes& a) { e.attributes = a; });
  }
  // Resident blocks per multiprocessor, as `attributes`.
  template <typename Fetch>
  cudaError_t occupancy(int device, uint64_t function, const OccupancyQuery& q, int* out, Fetch&& fetch) {
    return kept_.answer(
        {device, function}, out,
        [&](const Entry& e, int* blocks) {
          for (const auto& [query, b] : e.occupancy)
            if (query == q) {
              *blocks = b;
              return true;
            }
          return false;
        },
        std::forward<Fetch>(fetch), [&](Entry& e, int blocks) { keep_occupancy(e, q, blocks); });
  }

  // The kernel's attributes or cache preference changed (or may have).
  void forget_function(int device, uint64_t function);
  // The device's cache preferences changed, or it was reset.
  void forget_device(int device);

  // Most occupancy answers kept per kernel: an application that sizes its
  // dynamic shared memory by block size asks many; past this the oldest go.
  static constexpr size_t kOccupancyAnswersPerFunction = 64;

 private:
  struct Key {
    int device;
    uint64_t function;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const { return std::hash<uint64_t>()(k.function) ^ k.device; }
  };
  struct Entry {
    std::optional<cudaFuncAttributes> attributes;
    std::vector<std::pair<OccupancyQuery, int>> occupancy;  // oldest first
  };

  static void keep_occupancy(Entry& entry, const OccupancyQuery& q, int blocks);

  KeptAnswers<std::unordered_map<Key, Entry, KeyHash>> kept_;
};

}  // namespace rgpu::client
