#include "server/worker/copy_pipeline.hpp"

#include <algorithm>
#include <vector>

namespace rgpu::server {
namespace {

// Copies up to this size skip the staging slots: the driver stages a small
// pageable copy itself, for less than a slot's event costs.
constexpr size_t kDirectBytes = 64 * 1024;

// This thread's buffer for such small copies.
uint8_t* direct_buffer() {
  thread_local std::vector<uint8_t> buffer(kDirectBytes);
  return buffer.data();
}

// The block size the client asked for (within sane bounds: each of the
// staging slots grows to it), or one by size: enough blocks to keep the
// slots busy, none too small to pay for its event. Whole rows of a 2-D copy.
size_t block_bytes(size_t total, size_t granule, size_t asked) {
  constexpr size_t kStep = 64 * 1024, kMinAuto = 256 * 1024, kMaxAsked = 64u << 20;
  size_t block = std::clamp(asked, kStep, kMaxAsked);
  if (!asked) {
    block = (total / StagingPool::kSlots + kStep - 1) / kStep * kStep;
    block = std::clamp(block, kMinAuto, StagingPool::kBlockBytes);
  }
  return std::max(granule, block / granule * granule);
}

// Whether a copy of more than kDirectBytes moves in place: then the
// stream's earlier work is done first.
bool in_place(SessionContext& s, Request& req, const void* device, Handle stream) {
  return device && zero_copy_applies(s.zero_copy, req.connection(), s.backend(), stream) &&
         s.backend().stream_synchronize(stream) == cudaSuccess;
}

}  // namespace

StagingPool& lane_staging(SessionContext& s, Request& req) {
  return req.lane().staging(s.backend(), s.host_memory, req.header().device, s.reset_epoch(req.header().device));
}

int32_t pipeline_in(SessionContext& s, Request& req, size_t total, size_t granule, Handle stream, bool sync,
                    const IssueBlock& issue, void* device) {
  if (s.counters) s.counters->bytes(transport_kind(req.connection()), Direction::to_client, total);
  if (total <= kDirectBytes) {
    // As a local synchronous copy from pageable memory: the stream's earlier
    // work is done first, and the copy returns once the driver has staged
    // the data, without waiting for its DMA.
    uint8_t* buf = direct_buffer();
    req.read_payload(buf, total);
    if (sync)
      if (int32_t e = s.backend().stream_synchronize(stream)) return e;
    return issue(buf, 0, total);
  }
  StagingPool& pool = lane_staging(s, req);
  const size_t block = block_bytes(total, granule, s.pipeline_block);
  const bool zero_copy = in_place(s, req, device, stream);
  int32_t err = cudaSuccess;
  size_t i = 0;
  for (size_t off = 0; off < total && !err; off += block, ++i) {
    size_t len = std::min(block, total - off);
    // What does not arrive in place (bytes the peer sent as a copy) is staged.
    size_t landed = zero_copy ? req.read_payload_zero_copy(static_cast<uint8_t*>(device) + off, len) : 0;
    if (landed == len) continue;
    StagingPool::Slot* slot;
    if ((err = pool.acquire(i, len - landed, &slot))) break;
    req.read_payload(slot->buffer, len - landed);
    if ((err = issue(slot->buffer, off + landed, len - landed))) break;
    err = pool.release_after(*slot, stream);
  }
  if (!err && sync) err = s.backend().stream_synchronize(stream);
  return err;
}

void pipeline_out(SessionContext& s, Request& req, size_t total, size_t granule, Handle stream,
                  const IssueBlock& issue, const void* device) {
  if (total <= kDirectBytes) {
    uint8_t* buf = direct_buffer();
    int32_t err = issue(buf, 0, total);
    if (!err) err = s.backend().stream_synchronize(stream);
    iovec parts[2] = {{buf, total}, {&err, sizeof err}};
    req.connection().send(parts);
    return;
  }
  if (in_place(s, req, device, stream) && req.connection().send_zero_copy(device, total)) {
    int32_t err = cudaSuccess;
    iovec tail{&err, sizeof err};
    req.connection().send({&tail, 1});
    return;
  }
  StagingPool& pool = lane_staging(s, req);
  const size_t block = block_bytes(total, granule, s.pipeline_block);
  const size_t blocks = (total + block - 1) / block;
  std::vector<StagingPool::Slot*> slots(blocks, nullptr);
  int32_t err = cudaSuccess;
  auto start = [&](size_t i) {
    if (err || i >= blocks) return;
    size_t off = i * block;
    size_t len = std::min(block, total - off);
    if ((err = pool.acquire(i, len, &slots[i]))) return;
    if ((err = issue(slots[i]->buffer, off, len))) return;
    err = pool.release_after(*slots[i], stream);
  };
  for (size_t i = 0; i < StagingPool::kSlots; ++i) start(i);
  std::vector<uint8_t> zeros;
  for (size_t i = 0; i < blocks; ++i) {
    size_t len = std::min(block, total - i * block);
    if (!err) {
      err = s.backend().event_synchronize(slots[i]->event);
      slots[i]->in_flight = false;
    }
    const void* data = slots[i] && !err ? slots[i]->buffer : nullptr;
    if (!data) {
      // The reply promised `total` bytes: after a failure send filler; the
      // final status tells the client the data is not valid.
      zeros.resize(len);
      data = zeros.data();
    }
    iovec v{const_cast<void*>(data), len};
    req.connection().send({&v, 1}, true);
    start(i + StagingPool::kSlots);
  }
  iovec tail{&err, sizeof err};
  req.connection().send({&tail, 1});
}

}  // namespace rgpu::server
