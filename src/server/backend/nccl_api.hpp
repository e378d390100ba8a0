// What a backend does for NCCL (rgpu's libnccl.so.2 forwards the application's
// NCCL calls to its workers). The `cuda` backend runs NVIDIA's NCCL on its
// GPUs, so collectives move data between the servers over their own network;
// `host-test` runs a stand-in over sockets on host memory. Results are
// ncclResult_t values. The worker has checked every argument first:
// communicators are values this interface returned to the session, buffers
// lie in the session's memory, streams are the session's.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "protocol/nccl_wire.hpp"

namespace rgpu::server {

class NcclApi {
 public:
  virtual ~NcclApi() = default;
  // Whether NCCL could be loaded; *why says why not.
  virtual bool available(std::string* why) = 0;
  // A unique id whose bootstrap listens on this worker.
  virtual int32_t get_unique_id(proto::NcclUniqueIdWire* id) = 0;
  // Blocks until all ranks joined (init.device is the current device).
  virtual int32_t init_rank(const proto::NcclInitWire& init, uint64_t* comm) = 0;
  // *out: 0 where color is NCCL_SPLIT_NOCOLOR.
  virtual int32_t split(uint64_t comm, int32_t color, int32_t key, const proto::NcclConfigWire& config,
                        uint64_t* out) = 0;
  // The communicator's rank and size (ncclCommUserRank, ncclCommCount).
  virtual int32_t rank_and_size(uint64_t comm, int* rank, int* nranks) = 0;
  virtual int32_t finalize(uint64_t comm) = 0;
  virtual int32_t destroy(uint64_t comm) = 0;
  virtual int32_t abort(uint64_t comm) = 0;
  virtual int32_t async_error(uint64_t comm, int32_t* error) = 0;
  // The text of the last error (of comm, or of the calling thread's when 0).
  virtual std::string last_error(uint64_t comm) = 0;
  // Enqueued on the call's stream.
  virtual int32_t collective(const proto::NcclCollectiveWire& c) = 0;
  // One NCCL group: the inits (each on its device; comms[i] their
  // communicators) and the collectives, completed together.
  virtual int32_t group(std::span<const proto::NcclInitWire> inits, std::vector<uint64_t>* comms,
                        std::span<const proto::NcclCollectiveWire> collectives) = 0;
  // scalar: the host value's bytes (residence ncclScalarHostImmediate) or a
  // device address (ncclScalarDevice) in its first 8 bytes.
  virtual int32_t red_op_create_pre_mul_sum(uint64_t comm, int32_t datatype, int32_t residence, uint64_t scalar,
                                            int32_t* op) = 0;
  virtual int32_t red_op_destroy(uint64_t comm, int32_t op) = 0;
  virtual int32_t comm_register(uint64_t comm, uint64_t ptr, uint64_t size, uint64_t* handle) = 0;
  virtual int32_t comm_deregister(uint64_t comm, uint64_t handle) = 0;
};

}  // namespace rgpu::server
