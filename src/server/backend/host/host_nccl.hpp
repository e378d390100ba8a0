// host-test's NCCL: communicators of workers (in several rgpu-server
// processes on this host) joined through the unique id's bootstrap, with
// collectives computed on host memory over a socket mesh
// (host_nccl_mesh.hpp). Work on streams runs at once in host-test, so a
// collective completes before its call returns. For tests only.
#pragma once
#include <memory>
#include <mutex>
#include <string>

#include "server/backend/nccl_api.hpp"

namespace rgpu::server {

class HostNccl final : public NcclApi {
 public:
  bool available(std::string*) override { return true; }
  int32_t get_unique_id(proto::NcclUniqueIdWire* id) override;
  int32_t init_rank(const proto::NcclInitWire& init, uint64_t* comm) override;
  int32_t split(uint64_t comm, int32_t color, int32_t key, const proto::NcclConfigWire& config,
                uint64_t* out) override;
  int32_t rank_and_size(uint64_t comm, int* rank, int* nranks) override;
  int32_t finalize(uint64_t comm) override;
  int32_t destroy(uint64_t comm) override;
  int32_t abort(uint64_t comm) override;
  int32_t async_error(uint64_t comm, int32_t* error) override;
  std::string last_error(uint64_t comm) override;
  int32_t collective(const proto::NcclCollectiveWire& c) override;
  int32_t group(std::span<const proto::NcclInitWire> inits, std::vector<uint64_t>* comms,
                std::span<const proto::NcclCollectiveWire> collectives) override;
  int32_t red_op_create_pre_mul_sum(uint64_t comm, int32_t datatype, int32_t residence, uint64_t scalar,
                                    int32_t* op) override;
  int32_t red_op_destroy(uint64_t comm, int32_t op) override;
  int32_t comm_register(uint64_t comm, uint64_t ptr, uint64_t size, uint64_t* handle) override;
  int32_t comm_deregister(uint64_t comm, uint64_t handle) override;

 private:
  // Records why a call failed (ncclGetLastError) and returns `result`.
  int32_t fail(int32_t result, const std::string& why);

  std::mutex mutex_;
  std::string last_error_;
  uint64_t next_registration_ = 1;
};

}  // namespace rgpu::server
