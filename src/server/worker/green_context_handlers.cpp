// Green contexts and device resources (cuDeviceGetDevResource,
// cuDevSmResourceSplitByCount, cuGreenCtx*...). Resources come back to the
// client as tokens in place of the driver's private bytes, descriptors and
// green contexts as session objects (GreenContextTable); every handle from
// the wire is checked before the backend sees it.
#include <algorithm>
#include <vector>

#include "protocol/ops.hpp"
#include "protocol/wire_enum.hpp"
#include "server/worker/dispatcher.hpp"
#include "server/worker/session_context.hpp"

namespace rgpu::server {
namespace {

constexpr int32_t kInvalidContext = CUDA_ERROR_INVALID_CONTEXT;

// Sends the client's copy of a resource the backend made.
int32_t put_resource(SessionContext& s, const CUdevResource& r, proto::Writer& out) {
  CUdevResource copy;
  if (s.green.add_resource(r, &copy) == 0) return CUDA_ERROR_OUT_OF_MEMORY;
  out.put(copy);
  return CUDA_SUCCESS;
}

// The backend's resource a client's token names.
bool get_resource(SessionContext& s, Request& req, CUdevResource* r) {
  return s.green.find_resource(req.args.get<uint64_t>(), r);
}

bool get_green(SessionContext& s, Request& req, GreenContextTable::Green* g) {
  return s.green.find_green(req.args.get<uint16_t>(), g);
}

// The resource type as the number the client sent, checked before it is an
// enum (see protocol/wire_enum.hpp); false for a type CUDA 13.0 does not
// know, which is answered as CUDA answers CU_DEV_RESOURCE_TYPE_INVALID.
bool get_type(Request& req, CUdevResourceType* type) {
  auto n = req.args.get<proto::EnumNumber<CUdevResourceType>>();
  if (!proto::enum_in_range(n, CU_DEV_RESOURCE_TYPE_INVALID, CU_DEV_RESOURCE_TYPE_SM)) return false;
  *type = static_cast<CUdevResourceType>(n);
  return true;
}

int32_t device_resource(SessionContext& s, Request& req, proto::Writer& out) {
  CUdevResourceType type;
  bool known = get_type(req, &type);
  req.args.expect_end();
  if (!known) return cudaErrorInvalidResourceType;
  CUdevResource r{};
  if (int32_t e = s.backend().green_contexts().device_resource(req.header().device, type, &r)) return e;
  return put_resource(s, r, out);
}

int32_t green_resource(SessionContext& s, Request& req, proto::Writer& out) {
  GreenContextTable::Green g;
  bool found = get_green(s, req, &g);
  CUdevResourceType type;
  bool known = get_type(req, &type);
  req.args.expect_end();
  if (!found) return kInvalidContext;
  if (!known) return cudaErrorInvalidResourceType;
  CUdevResource r{};
  if (int32_t e = s.backend().green_contexts().green_resource(g.handle, type, &r)) return e;
  return put_resource(s, r, out);
}

int32_t split(SessionContext& s, Request& req, proto::Writer& out) {
  CUdevResource input;
  bool found = get_resource(s, req, &input);
  auto groups = req.args.get<uint32_t>();
  bool want_result = req.args.get<uint8_t>();
  bool want_remaining = req.args.get<uint8_t>();
  auto flags = req.args.get<uint32_t>();
  auto min_count = req.args.get<uint32_t>();
  req.args.expect_end();
  if (!found) return CUDA_ERROR_INVALID_VALUE;
  if (want_result && groups == 0) return CUDA_ERROR_INVALID_VALUE;
  // Every group has an SM at least: no split makes more groups than that.
  std::vector<CUdevResource> result(want_result ? std::min(groups, std::max(input.sm.smCount, 1u)) : 0);
  unsigned made = static_cast<unsigned>(result.size());
  CUdevResource remaining{};
  if (int32_t e = s.backend().green_contexts().split_by_count(result, &made, input,
                                                              want_remaining ? &remaining : nullptr, flags,
                                                              min_count))
    return e;
  if (want_result && made > result.size()) return CUDA_ERROR_INVALID_VALUE;
  out.put<uint32_t>(made);
  for (unsigned i = 0; want_result && i < made; ++i)
    if (int32_t e = put_resource(s, result[i], out)) return e;
  if (want_remaining)
    if (int32_t e = put_resource(s, remaining, out)) return e;
  return CUDA_SUCCESS;
}

int32_t generate_desc(SessionContext& s, Request& req, proto::Writer& out) {
  auto n = req.args.get<uint32_t>();
  if (n == 0 || n > req.args.remaining() / sizeof(uint64_t)) return CUDA_ERROR_INVALID_VALUE;
  std::vector<CUdevResource> resources(n);
  bool found = true;
  for (auto& r : resources) found = get_resource(s, req, &r) && found;
  req.args.expect_end();
  if (!found) return CUDA_ERROR_INVALID_VALUE;
  Handle desc = 0;
  if (int32_t e = s.backend().green_contexts().generate_desc(&desc, resources)) return e;
  s.green.descs.add(desc);
  out.put<uint64_t>(desc);
  return CUDA_SUCCESS;
}

int32_t create(SessionContext& s, Request& req, proto::Writer& out) {
  auto desc = req.args.get<uint64_t>();
  auto flags = req.args.get<uint32_t>();
  req.args.expect_end();
  if (!s.green.descs.contains(desc)) return CUDA_ERROR_INVALID_VALUE;
  GreenContextApi& api = s.backend().green_contexts();
  const int device = req.header().device;
  Handle g = 0;
  if (int32_t e = api.create(&g, desc, device, flags)) return e;
  unsigned long long id = 0;
  int32_t e = api.id(g, &id);
  uint16_t slot = e ? 0 : s.green.add_green({g, device});
  if (slot == 0) {
    api.destroy(g);
    return e ? e : CUDA_ERROR_OUT_OF_MEMORY;
  }
  out.put<uint16_t>(slot).put<uint64_t>(id);
  return CUDA_SUCCESS;
}

int32_t destroy(SessionContext& s, Request& req, proto::Writer&) {
  auto slot = req.args.get<uint16_t>();
  req.args.expect_end();
  GreenContextTable::Green g;
  if (!s.green.find_green(slot, &g)) return kInvalidContext;
  if (int32_t e = s.backend().green_contexts().destroy(g.handle)) return e;
  s.green.remove_green(slot);
  return CUDA_SUCCESS;
}

// cuGreenCtxRecordEvent / cuGreenCtxWaitEvent: slot, event.
template <int32_t (GreenContextApi::*Fn)(GreenContextApi::Handle, GreenContextApi::Handle)>
int32_t with_event(SessionContext& s, Request& req, proto::Writer&) {
  GreenContextTable::Green g;
  bool found = get_green(s, req, &g);
  auto event = req.args.get<uint64_t>();
  req.args.expect_end();
  if (!found) return kInvalidContext;
  if (!s.valid_event(event)) return CUDA_ERROR_INVALID_HANDLE;
  return (s.backend().green_contexts().*Fn)(g.handle, event);
}

int32_t stream_create(SessionContext& s, Request& req, proto::Writer& out) {
  GreenContextTable::Green g;
  bool found = get_green(s, req, &g);
  auto flags = req.args.get<uint32_t>();
  auto priority = req.args.get<int32_t>();
  req.args.expect_end();
  if (!found) return kInvalidContext;
  if (!s.streams.room_for_one_more()) return CUDA_ERROR_OUT_OF_MEMORY;
  Handle h = 0;
  if (int32_t e = s.backend().green_contexts().stream_create(&h, g.handle, flags, priority)) return e;
  s.streams.add(h);
  out.put<uint64_t>(h);
  return CUDA_SUCCESS;
}

// Special streams are the client's to answer (the thread's current context).
int32_t stream_green(SessionContext& s, Request& req, proto::Writer& out) {
  auto stream = req.args.get<uint64_t>();
  req.args.expect_end();
  if (!s.streams.contains(stream)) return CUDA_ERROR_INVALID_HANDLE;
  Handle g = 0;
  if (int32_t e = s.backend().green_contexts().stream_green(stream, &g)) return e;
  out.put<uint16_t>(s.green.slot_of(g));
  return CUDA_SUCCESS;
}

}  // namespace

void register_green_context_handlers(Dispatcher& d) {
  d.add(proto::kOpDeviceGetDevResource, device_resource);
  d.add(proto::kOpGreenCtxGetDevResource, green_resource);
  d.add(proto::kOpDevSmResourceSplit, split);
  d.add(proto::kOpDevResourceGenerateDesc, generate_desc);
  d.add(proto::kOpGreenCtxCreate, create);
  d.add(proto::kOpGreenCtxDestroy, destroy);
  d.add(proto::kOpGreenCtxRecordEvent, with_event<&GreenContextApi::record_event>);
  d.add(proto::kOpGreenCtxWaitEvent, with_event<&GreenContextApi::wait_event>);
  d.add(proto::kOpGreenCtxStreamCreate, stream_create);
  d.add(proto::kOpStreamGetGreenCtx, stream_green);
}

}  // namespace rgpu::server
