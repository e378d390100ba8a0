// NVIDIA's NCCL on the worker's GPUs, loaded at first use: the library the
// server was told (--nccl-library, handed to workers as RGPU_NCCL_LIBRARY),
// else libnccl.so.2 by soname, else the pip wheel's (nvidia/nccl/lib) in the
// usual Python locations; `none` turns NCCL off. The server's network
// settings for NCCL reach it as its environment (--nccl-socket-ifname,
// --nccl-env).
#pragma once
#include <mutex>
#include <string>

#include "server/backend/nccl_api.hpp"

namespace rgpu::server {

struct NcclFunctions;

class CudaNccl final : public NcclApi {
 public:
  CudaNccl();
  ~CudaNccl() override;
  bool available(std::string* why) override;
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
  // Loads NCCL once; null with why_ set when it cannot be had.
  const NcclFunctions* load();

  std::once_flag once_;
  NcclFunctions* f_ = nullptr;
  std::string why_;
};

}  // namespace rgpu::server
