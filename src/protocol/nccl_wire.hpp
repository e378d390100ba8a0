// NCCL calls on the wire (ops 700-719). Values use nccl.h's numbering
// (ncclResult_t, ncclDataType_t, ncclRedOp_t); the worker checks each.
#pragma once
#include <cstddef>
#include <cstdint>

namespace rgpu::proto {

constexpr uint32_t kNcclUniqueIdBytes = 128;  // NCCL_UNIQUE_ID_BYTES
// Element counts past this are refused before any size is computed from them.
constexpr uint64_t kNcclMaxCount = uint64_t{1} << 48;
// Bytes per element of each ncclDataType_t, in nccl.h's order (ncclNumTypes).
constexpr size_t kNcclTypeSizes[] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1};
struct NcclUniqueIdWire {
  uint8_t bytes[kNcclUniqueIdBytes];
};

// The ncclConfig_t fields a worker passes on (NCCL_CONFIG_UNDEF_INT: unset).
struct NcclConfigWire {
  int32_t blocking;
  int32_t cga_cluster_size;
  int32_t min_ctas;
  int32_t max_ctas;
  int32_t split_share;
  int32_t traffic_class;
  int32_t collnet_enable;
  int32_t cta_policy;
  int32_t nvls_ctas;
  char net_name[64];   // empty: unset
  char comm_name[64];  // empty: unset
};

// ncclCommInitRank(Config): on `device` (the server's ordinal).
struct NcclInitWire {
  int32_t device;
  int32_t nranks;
  int32_t rank;
  NcclUniqueIdWire id;
  NcclConfigWire config;
};

enum class NcclKind : uint8_t {
  all_reduce,
  broadcast,
  reduce,
  all_gather,
  reduce_scatter,
  all_to_all,
  gather,
  scatter,
  send,
  recv,
  count
};

// One collective or point-to-point call; `peer` is the root of rooted
// collectives, the other rank of send/recv. Addresses are the session's
// device addresses, the stream a server handle.
struct NcclCollectiveWire {
  NcclKind kind;
  uint8_t pad[3];
  int32_t datatype;
  int32_t op;
  int32_t peer;
  uint64_t comm;
  uint64_t send;
  uint64_t recv;
  uint64_t count;
  uint64_t stream;
};

// Collectives that take a reduction op.
constexpr bool nccl_reduces(NcclKind k) {
  return k == NcclKind::all_reduce || k == NcclKind::reduce || k == NcclKind::reduce_scatter;
}
// Calls whose `peer` names a rank: the root, or the other end of send/recv.
constexpr bool nccl_names_peer(NcclKind k) {
  return k == NcclKind::broadcast || k == NcclKind::reduce || k == NcclKind::gather || k == NcclKind::scatter ||
         k == NcclKind::send || k == NcclKind::recv;
}

// Bytes a collective reads from send and writes to recv on `rank` of a
// communicator of `nranks`, for `bytes` per element count.
inline void nccl_buffer_bytes(const NcclCollectiveWire& w, int rank, int nranks, size_t bytes, size_t* send,
                              size_t* recv) {
  size_t all = bytes * static_cast<size_t>(nranks);
  bool root = w.peer == rank;
  *send = *recv = 0;
  switch (w.kind) {
    case NcclKind::all_reduce: *send = *recv = bytes; break;
    case NcclKind::broadcast: *send = root ? bytes : 0, *recv = bytes; break;
    case NcclKind::reduce: *send = bytes, *recv = root ? bytes : 0; break;
    case NcclKind::all_gather: *send = bytes, *recv = all; break;
    case NcclKind::reduce_scatter: *send = all, *recv = bytes; break;
    case NcclKind::all_to_all: *send = *recv = all; break;
    case NcclKind::gather: *send = bytes, *recv = root ? all : 0; break;
    case NcclKind::scatter: *send = root ? all : 0, *recv = bytes; break;
    case NcclKind::send: *send = bytes; break;
    case NcclKind::recv: *recv = bytes; break;
    default: break;
  }
}

}  // namespace rgpu::proto
