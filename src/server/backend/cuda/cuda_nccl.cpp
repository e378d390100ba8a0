#include "server/backend/cuda/cuda_nccl.hpp"

#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <glob.h>
#include <nccl.h>

#include <climits>
#include <cstdlib>
#include <cstring>
#include <list>

#include "common/log.hpp"

namespace rgpu::server {

struct NcclFunctions {
  void* library = nullptr;
#define RGPU_NCCL_FUNCTIONS(X)                                                                                  \
  X(ncclGetVersion) X(ncclGetUniqueId) X(ncclCommInitRankConfig) X(ncclCommSplit) X(ncclCommFinalize)          \
  X(ncclCommDestroy) X(ncclCommAbort) X(ncclCommGetAsyncError) X(ncclGetLastError) X(ncclAllReduce)             \
  X(ncclBroadcast) X(ncclReduce) X(ncclAllGather) X(ncclReduceScatter) X(ncclAlltoAll) X(ncclGather)            \
  X(ncclScatter) X(ncclSend) X(ncclRecv) X(ncclGroupStart) X(ncclGroupEnd) X(ncclRedOpCreatePreMulSum)         \
  X(ncclRedOpDestroy) X(ncclCommRegister) X(ncclCommDeregister) X(ncclCommUserRank) X(ncclCommCount)
#define RGPU_NCCL_MEMBER(name) decltype(&::name) name = nullptr;
  RGPU_NCCL_FUNCTIONS(RGPU_NCCL_MEMBER)
#undef RGPU_NCCL_MEMBER
};

namespace {

ncclComm_t as_comm(uint64_t h) { return reinterpret_cast<ncclComm_t>(h); }

// Where a server admin's pip installs put NVIDIA's wheel (nvidia-nccl-cu13).
constexpr const char* kWheelPatterns[] = {
    "/usr/local/lib/python3*/dist-packages/nvidia/nccl/lib/libnccl.so.2",
    "/usr/local/lib/python3*/site-packages/nvidia/nccl/lib/libnccl.so.2",
    "/usr/lib/python3*/dist-packages/nvidia/nccl/lib/libnccl.so.2",
    "/usr/lib/python3/dist-packages/nvidia/nccl/lib/libnccl.so.2",
    "/opt/*/.venv/lib/python3*/site-packages/nvidia/nccl/lib/libnccl.so.2",
    "/opt/*/lib/python3*/site-packages/nvidia/nccl/lib/libnccl.so.2",
};

void* open_nccl(std::string* tried) {
  if (const char* path = std::getenv("RGPU_NCCL_LIBRARY"); path && *path) {
    *tried = path;
    return dlopen(path, RTLD_NOW | RTLD_LOCAL);
  }
  *tried = "libnccl.so.2";
  if (void* h = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL)) return h;
  for (const char* pattern : kWheelPatterns) {
    glob_t g{};
    if (glob(pattern, 0, nullptr, &g) == 0)
      for (size_t i = 0; i < g.gl_pathc; ++i) {
        *tried += std::string(", ") + g.gl_pathv[i];
        if (void* h = dlopen(g.gl_pathv[i], RTLD_NOW | RTLD_LOCAL)) {
          globfree(&g);
          return h;
        }
      }
    globfree(&g);
  }
  return nullptr;
}

// A wire config as ncclConfig_t; its strings point into `names`, which must
// outlive the call that takes it.
ncclConfig_t config_of(const proto::NcclConfigWire& w, std::list<std::string>& names) {
  ncclConfig_t c = NCCL_CONFIG_INITIALIZER;
  c.blocking = w.blocking;
  c.cgaClusterSize = w.cga_cluster_size;
  c.minCTAs = w.min_ctas;
  c.maxCTAs = w.max_ctas;
  c.splitShare = w.split_share;
  c.trafficClass = w.traffic_class;
  c.collnetEnable = w.collnet_enable;
  c.CTAPolicy = w.cta_policy;
  c.nvlsCTAs = w.nvls_ctas;
  if (w.net_name[0]) c.netName = names.emplace_back(w.net_name, strnlen(w.net_name, sizeof w.net_name)).c_str();
  if (w.comm_name[0]) c.commName = names.emplace_back(w.comm_name, strnlen(w.comm_name, sizeof w.comm_name)).c_str();
  return c;
}

}  // namespace

CudaNccl::CudaNccl() = default;
CudaNccl::~CudaNccl() { delete f_; }

const NcclFunctions* CudaNccl::load() {
  std::call_once(once_, [this] {
    const char* configured = std::getenv("RGPU_NCCL_LIBRARY");
    if (configured && std::string(configured) == "none") {
      why_ = "NCCL is turned off on this server (--nccl-library none)";
      return;
    }
    std::string tried;
    void* h = open_nccl(&tried);
    if (!h) {
      const char* e = dlerror();
      why_ = "NVIDIA's NCCL could not be loaded (tried " + tried + (e ? std::string("): ") + e : std::string(")")) +
             "; give the server --nccl-library PATH";
      RGPU_LOG(error, "%s", why_.c_str());
      return;
    }
    auto* f = new NcclFunctions;
    f->library = h;
#define RGPU_NCCL_RESOLVE(name)                                           \
  f->name = reinterpret_cast<decltype(f->name)>(dlsym(h, #name));         \
  if (!f->name && why_.empty()) why_ = "NCCL (" + tried + ") lacks " #name;
    RGPU_NCCL_FUNCTIONS(RGPU_NCCL_RESOLVE)
#undef RGPU_NCCL_RESOLVE
    if (!why_.empty()) {
      RGPU_LOG(error, "%s", why_.c_str());
      delete f;
      return;
    }
    int version = 0;
    f->ncclGetVersion(&version);
    RGPU_LOG(info, "NCCL %d loaded for the application's NCCL calls", version);
    f_ = f;
  });
  return f_;
}

bool CudaNccl::available(std::string* why) {
  if (load()) return true;
  *why = why_;
  return false;
}

int32_t CudaNccl::get_unique_id(proto::NcclUniqueIdWire* id) {
  static_assert(sizeof(ncclUniqueId) == sizeof(proto::NcclUniqueIdWire));
  return load()->ncclGetUniqueId(reinterpret_cast<ncclUniqueId*>(id));
}

int32_t CudaNccl::init_rank(const proto::NcclInitWire& init, uint64_t* comm) {
  std::list<std::string> names;
  ncclConfig_t config = config_of(init.config, names);
  ncclUniqueId id;
  std::memcpy(&id, &init.id, sizeof id);
  ncclComm_t c = nullptr;
  ncclResult_t r = load()->ncclCommInitRankConfig(&c, init.nranks, id, init.rank, &config);
  *comm = reinterpret_cast<uint64_t>(c);
  return r;
}

int32_t CudaNccl::split(uint64_t comm, int32_t color, int32_t key, const proto::NcclConfigWire& wire, uint64_t* out) {
  std::list<std::string> names;
  ncclConfig_t config = config_of(wire, names);
  ncclComm_t c = nullptr;
  ncclResult_t r = load()->ncclCommSplit(as_comm(comm), color, key, &c, &config);
  *out = reinterpret_cast<uint64_t>(c);
  return r;
}

int32_t CudaNccl::rank_and_size(uint64_t comm, int* rank, int* nranks) {
  if (ncclResult_t r = load()->ncclCommUserRank(as_comm(comm), rank)) return r;
  return load()->ncclCommCount(as_comm(comm), nranks);
}

int32_t CudaNccl::finalize(uint64_t comm) { return load()->ncclCommFinalize(as_comm(comm)); }
int32_t CudaNccl::destroy(uint64_t comm) { return load()->ncclCommDestroy(as_comm(comm)); }
int32_t CudaNccl::abort(uint64_t comm) { return load()->ncclCommAbort(as_comm(comm)); }

int32_t CudaNccl::async_error(uint64_t comm, int32_t* error) {
  ncclResult_t e = ncclSuccess;
  ncclResult_t r = load()->ncclCommGetAsyncError(as_comm(comm), &e);
  *error = e;
  return r;
}

std::string CudaNccl::last_error(uint64_t comm) {
  const NcclFunctions* f = load();
  if (!f) return why_;
  const char* s = f->ncclGetLastError(as_comm(comm));
  return s ? s : "";
}

int32_t CudaNccl::collective(const proto::NcclCollectiveWire& w) {
  const NcclFunctions& f = *load();
  const void* send = reinterpret_cast<const void*>(w.send);
  void* recv = reinterpret_cast<void*>(w.recv);
  auto type = static_cast<ncclDataType_t>(w.datatype);
  auto op = static_cast<ncclRedOp_t>(w.op);
  ncclComm_t comm = as_comm(w.comm);
  auto stream = reinterpret_cast<cudaStream_t>(w.stream);
  switch (w.kind) {
    case proto::NcclKind::all_reduce: return f.ncclAllReduce(send, recv, w.count, type, op, comm, stream);
    case proto::NcclKind::broadcast: return f.ncclBroadcast(send, recv, w.count, type, w.peer, comm, stream);
    case proto::NcclKind::reduce: return f.ncclReduce(send, recv, w.count, type, op, w.peer, comm, stream);
    case proto::NcclKind::all_gather: return f.ncclAllGather(send, recv, w.count, type, comm, stream);
    case proto::NcclKind::reduce_scatter: return f.ncclReduceScatter(send, recv, w.count, type, op, comm, stream);
    case proto::NcclKind::all_to_all: return f.ncclAlltoAll(send, recv, w.count, type, comm, stream);
    case proto::NcclKind::gather: return f.ncclGather(send, recv, w.count, type, w.peer, comm, stream);
    case proto::NcclKind::scatter: return f.ncclScatter(send, recv, w.count, type, w.peer, comm, stream);
    case proto::NcclKind::send: return f.ncclSend(send, w.count, type, w.peer, comm, stream);
    case proto::NcclKind::recv: return f.ncclRecv(recv, w.count, type, w.peer, comm, stream);
    default: return ncclInvalidArgument;
  }
}

int32_t CudaNccl::group(std::span<const proto::NcclInitWire> inits, std::vector<uint64_t>* comms,
                        std::span<const proto::NcclCollectiveWire> collectives) {
  const NcclFunctions& f = *load();
  std::list<std::string> names;
  std::vector<ncclConfig_t> configs;
  configs.reserve(inits.size());
  std::vector<ncclComm_t> made(inits.size());
  int32_t first = ncclSuccess;
  auto keep = [&](int32_t r) {
    if (first == ncclSuccess || first == ncclInProgress) first = r;
  };
  if (ncclResult_t r = f.ncclGroupStart()) return r;
  for (size_t i = 0; i < inits.size(); ++i) {
    ncclUniqueId id;
    std::memcpy(&id, &inits[i].id, sizeof id);
    configs.push_back(config_of(inits[i].config, names));
    if (cudaError_t e = cudaSetDevice(inits[i].device); e != cudaSuccess) {
      keep(ncclUnhandledCudaError);
      continue;
    }
    keep(f.ncclCommInitRankConfig(&made[i], inits[i].nranks, id, inits[i].rank, &configs.back()));
  }
  for (const auto& w : collectives) keep(collective(w));
  keep(f.ncclGroupEnd());
  comms->assign(inits.size(), 0);
  for (size_t i = 0; i < inits.size(); ++i) (*comms)[i] = reinterpret_cast<uint64_t>(made[i]);
  return first;
}

int32_t CudaNccl::red_op_create_pre_mul_sum(uint64_t comm, int32_t datatype, int32_t residence, uint64_t scalar,
                                            int32_t* op) {
  void* value = residence == ncclScalarDevice ? reinterpret_cast<void*>(scalar) : &scalar;
  ncclRedOp_t made{};
  ncclResult_t r = load()->ncclRedOpCreatePreMulSum(&made, value, static_cast<ncclDataType_t>(datatype),
                                                    static_cast<ncclScalarResidence_t>(residence), as_comm(comm));
  *op = made;
  return r;
}

int32_t CudaNccl::red_op_destroy(uint64_t comm, int32_t op) {
  return load()->ncclRedOpDestroy(static_cast<ncclRedOp_t>(op), as_comm(comm));
}

int32_t CudaNccl::comm_register(uint64_t comm, uint64_t ptr, uint64_t size, uint64_t* handle) {
  void* h = nullptr;
  ncclResult_t r = load()->ncclCommRegister(as_comm(comm), reinterpret_cast<void*>(ptr), size, &h);
  *handle = reinterpret_cast<uint64_t>(h);
  return r;
}

int32_t CudaNccl::comm_deregister(uint64_t comm, uint64_t handle) {
  return load()->ncclCommDeregister(as_comm(comm), reinterpret_cast<void*>(handle));
}

}  // namespace rgpu::server
