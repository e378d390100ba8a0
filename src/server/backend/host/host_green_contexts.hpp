// TEST BACKEND's green contexts. Each device has one SM resource of
// kHostSms streaming multiprocessors, partitioned as compute capability 9.0
// documents (at least 8 SMs, in multiples of 8; 2 and 2 with
// CU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING). Work runs at once on the
// host, so recording an event on a green context records it, and waiting
// for one has nothing to wait for.
#pragma once
#include <map>
#include <mutex>

#include "server/backend/green_context_api.hpp"

namespace rgpu::server {

constexpr unsigned kHostSms = 132;
constexpr unsigned kHostMinSmPartition = 8;
constexpr unsigned kHostSmAlignment = 8;

// What the green contexts need of the backend that holds them.
class HostGreenHooks {
 public:
  virtual ~HostGreenHooks() = default;
  // Makes `device` the calling thread's device, as set_device does.
  virtual void enter_device(int device) = 0;
  // A stream of the green context `green` (0: of the device).
  virtual int32_t create_stream(uint64_t* stream, unsigned flags, int priority, uint64_t green) = 0;
  // The green context a stream was created in, 0 if none.
  virtual uint64_t stream_context(uint64_t stream) = 0;
  virtual int32_t record_event_now(uint64_t event) = 0;
};

class HostGreenContexts final : public GreenContextApi {
 public:
  HostGreenContexts(HostGreenHooks& hooks, int devices) : hooks_(hooks), devices_(devices) {}

  // The green context current to the calling thread (0: the device's
  // primary context); set_device leaves it.
  static Handle current();
  static void leave_current();

  int32_t device_resource(int device, CUdevResourceType type, CUdevResource* out) override;
  int32_t green_resource(Handle green, CUdevResourceType type, CUdevResource* out) override;
  int32_t split_by_count(std::span<CUdevResource> result, unsigned* groups, const CUdevResource& input,
                         CUdevResource* remaining, unsigned flags, unsigned min_count) override;
  int32_t generate_desc(Handle* desc, std::span<CUdevResource> resources) override;
  int32_t create(Handle* green, Handle desc, int device, unsigned flags) override;
  int32_t destroy(Handle green) override;
  int32_t id(Handle green, unsigned long long* id) override;
  int32_t record_event(Handle green, Handle event) override;
  int32_t wait_event(Handle green, Handle event) override;
  int32_t stream_create(Handle* stream, Handle green, unsigned flags, int priority) override;
  int32_t stream_green(Handle stream, Handle* green) override;
  int32_t make_current(Handle green) override;

 private:
  // An SM set: a device's, a descriptor's or a green context's.
  struct SmSet {
    int device;
    unsigned sms;
  };
  bool find_green(Handle green, SmSet* out);

  HostGreenHooks& hooks_;
  const int devices_;
  std::mutex mutex_;
  uint64_t next_id_ = 1;  // descriptors, green contexts and splits alike
  std::map<Handle, SmSet> descs_;
  std::map<Handle, SmSet> greens_;
};

}  // namespace rgpu::server
