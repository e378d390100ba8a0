#include "transport/ucx/ucx_connection.hpp"

#include <poll.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

#include "transport/poll_window.hpp"
#include "transport/ucx/registration_cache.hpp"
#include "transport/ucx/ucx_context.hpp"
#include "transport/ucx/ucx_listener.hpp"

namespace rgpu::transport::ucx {
namespace {

// Message kinds, told apart by tag. The stream's own messages (bytes and
// offers) match kStreamTag under kStreamMask; acknowledgements and the
// greeting do not.
constexpr ucp_tag_t kTagBytes = 1, kTagOffer = 2, kTagTaken = 4, kTagGreeting = 8;
constexpr ucp_tag_t kStreamTag = 0, kStreamMask = kTagTaken | kTagGreeting, kExact = ~ucp_tag_t{0};

// Pieces this large are read by the receiver from registered memory;
// smaller ones are gathered and copied. Gathered bytes leave at this size.
constexpr size_t kRegisteredBytes = 256 * 1024;
// The largest message a peer may send (an offer's descriptor is far
// smaller): anything else is a broken or hostile peer.
constexpr size_t kMaxMessage = kRegisteredBytes;

constexpr uint64_t kAddressMagic = 0x31584355'55504752;  // "RGPUUCX1"

std::string status_text(ucs_status_t s) { return ucs_status_string(s); }

}  // namespace

UcxConnection::UcxConnection(std::unique_ptr<Connection> side_channel) : side_(std::move(side_channel)) {
  ucp_worker_params_t params{};
  params.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  // One thread at a time, under mutex_.
  params.thread_mode = UCS_THREAD_MODE_SERIALIZED;
  if (ucs_status_t s = ucp_worker_create(context(), &params, &worker_); s != UCS_OK)
    throw TransportError("UCX worker: " + status_text(s));
  try {
    if (ucs_status_t s = ucp_worker_get_efd(worker_, &wakeup_fd_); s != UCS_OK)
      throw TransportError("UCX wakeup descriptor: " + status_text(s));
    exchange_addresses();
    std::lock_guard lock(mutex_);
    greet();
  } catch (...) {
    ucp_worker_destroy(worker_);
    throw;
  }
}

void UcxConnection::exchange_addresses() {
  ucp_address_t* mine = nullptr;
  size_t mine_len = 0;
  if (ucs_status_t s = ucp_worker_get_address(worker_, &mine, &mine_len); s != UCS_OK)
    throw TransportError("UCX worker address: " + status_text(s));
  uint64_t head[2] = {kAddressMagic, mine_len};
  iovec parts[2] = {{head, sizeof head}, {mine, mine_len}};
  try {
    side_->send(parts);
  } catch (...) {
    ucp_worker_release_address(worker_, mine);
    throw;
  }
  ucp_worker_release_address(worker_, mine);
  uint64_t theirs_head[2];
  side_->recv(theirs_head, sizeof theirs_head);
  if (theirs_head[0] != kAddressMagic || theirs_head[1] == 0 || theirs_head[1] > 64 * 1024)
    throw TransportError("the peer at " + side_->peer() + " does not speak rgpu's UCX transport");
  std::vector<char> theirs(theirs_head[1]);
  side_->recv(theirs.data(), theirs.size());

  ucp_ep_params_t ep{};
  ep.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                  UCP_EP_PARAM_FIELD_ERR_HANDLER;
  ep.address = reinterpret_cast<const ucp_address_t*>(theirs.data());
  // A peer that dies must end this connection with an error, not hang it.
  ep.err_mode = UCP_ERR_HANDLING_MODE_PEER;
  ep.err_handler.cb = &UcxConnection::on_endpoint_error;
  ep.err_handler.arg = this;
  if (ucs_status_t s = ucp_ep_create(worker_, &ep, &ep_); s != UCS_OK)
    throw TransportError("UCX endpoint to " + side_->peer() + ": " + status_text(s));
}

void UcxConnection::greet() {
  // Each side sends one message and waits for the other's: the endpoints
  // are then wired up, and a small send completes without waiting for the
  // peer to look at its worker (as a socket's would).
  uint64_t mine = 1, theirs = 0;
  ucp_request_param_t param{};
  void* receive = ucp_tag_recv_nbx(worker_, &theirs, sizeof theirs, kTagGreeting, kExact, &param);
  send_message(kTagGreeting, &mine, sizeof mine);
  wait_request(receive, "greeting");
}

UcxConnection::~UcxConnection() {
  if (offer_.rkey) ucp_rkey_destroy(offer_.rkey);
  if (ep_) {
    // Forced: a peer that is gone cannot answer a graceful close.
    ucp_request_param_t param{};
    param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    param.flags = UCP_EP_CLOSE_FLAG_FORCE;
    void* request = ucp_ep_close_nbx(ep_, &param);
    if (UCS_PTR_IS_PTR(request)) {
      while (ucp_request_check_status(request) == UCS_INPROGRESS) ucp_worker_progress(worker_);
      ucp_request_free(request);
    }
  }
  ucp_worker_destroy(worker_);
}

void UcxConnection::on_endpoint_error(void* self, ucp_ep_h, ucs_status_t status) {
  auto* c = static_cast<UcxConnection*>(self);
  if (c->lost_.empty()) c->lost_ = "UCX peer lost: " + status_text(status);
}

void UcxConnection::fail_if_lost() {
  if (!lost_.empty()) throw TransportError(lost_);
}

template <typename Done>
bool UcxConnection::progress_until(Done done, int timeout_ms) {
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  const auto spin_until = start + poll_window();
  const auto deadline = start + std::chrono::milliseconds(timeout_ms);
  while (!done()) {
    fail_if_lost();
    if (ucp_worker_progress(worker_)) continue;
    const auto now = clock::now();
    if (timeout_ms >= 0 && now >= deadline) return false;
    if (now < spin_until) {
      std::this_thread::yield();
      continue;
    }
    // Sleep until the worker has an event or the side channel stirs (the
    // peer closed it, or shutdown() did).
    ucs_status_t s = ucp_worker_arm(worker_);
    if (s == UCS_ERR_BUSY) continue;
    if (s != UCS_OK) throw TransportError("UCX wait: " + status_text(s));
    if (done()) break;
    int wait_ms = 200;
    if (timeout_ms >= 0)
      wait_ms = std::min<int>(wait_ms, std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count() + 1);
    pollfd fds[2] = {{wakeup_fd_, POLLIN, 0}, {side_->native_handle(), POLLIN | POLLRDHUP, 0}};
    // Another thread may send meanwhile (its events wake this one).
    mutex_.unlock();
    ::poll(fds, 2, wait_ms);
    mutex_.lock();
    if (fds[1].revents) {
      // One last look: the peer may have sent its final bytes and left.
      while (ucp_worker_progress(worker_)) {
      }
      if (done()) break;
      if (lost_.empty()) lost_ = "connection closed by peer";
    }
  }
  return true;
}

void UcxConnection::wait_request(void* request, const char* what) {
  if (request == nullptr) return;
  if (UCS_PTR_IS_ERR(request))
    throw TransportError(std::string("UCX ") + what + ": " + status_text(UCS_PTR_STATUS(request)));
  ucs_status_t status = UCS_INPROGRESS;
  try {
    progress_until([&] { return (status = ucp_request_check_status(request)) != UCS_INPROGRESS; });
  } catch (...) {
    // A receive stops at once; a send may still read its buffer until UCX
    // fails it (the endpoint broke) or it leaves: wait a while for that.
    ucp_request_cancel(worker_, request);
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    while (ucp_request_check_status(request) == UCS_INPROGRESS && std::chrono::steady_clock::now() < until)
      ucp_worker_progress(worker_);
    ucp_request_free(request);
    throw;
  }
  ucp_request_free(request);
  if (status != UCS_OK) {
    if (lost_.empty()) lost_ = std::string("UCX ") + what + ": " + status_text(status);
    fail_if_lost();
  }
}

void UcxConnection::send_message(ucp_tag_t tag, const void* data, size_t len) {
  ucp_request_param_t param{};
  wait_request(ucp_tag_send_nbx(ep_, data, len, tag, &param), "send");
}

void UcxConnection::flush_gathered() {
  if (gathered_.empty()) return;
  send_message(kTagBytes, gathered_.data(), gathered_.size());
  gathered_.clear();
}

bool UcxConnection::send_registered(const iovec& piece) {
  RegistrationCache& cache = RegistrationCache::get();
  ucp_mem_h cached = cache.find(piece.iov_base, piece.iov_len);
  // Memory UCX cannot register (read-only pages on some fabrics) is copied.
  ucp_mem_h memh = cached ? cached : cache.map_once(piece.iov_base, piece.iov_len);
  if (!memh) return false;
  auto release = [&] {
    if (!cached) cache.unmap_once(memh);
  };
  void* rkey = nullptr;
  size_t rkey_len = 0;
  if (ucp_rkey_pack(context(), memh, &rkey, &rkey_len) != UCS_OK) {
    release();
    return false;
  }
  std::vector<char> descriptor(2 * sizeof(uint64_t) + rkey_len);
  uint64_t where[2] = {reinterpret_cast<uint64_t>(piece.iov_base), piece.iov_len};
  std::memcpy(descriptor.data(), where, sizeof where);
  std::memcpy(descriptor.data() + sizeof where, rkey, rkey_len);
  ucp_rkey_buffer_release(rkey);
  try {
    send_message(kTagOffer, descriptor.data(), descriptor.size());
    // The memory must stay as it is until the peer has read all of it.
    uint64_t taken = 0;
    ucp_request_param_t param{};
    wait_request(ucp_tag_recv_nbx(worker_, &taken, sizeof taken, kTagTaken, kExact, &param), "receive");
  } catch (...) {
    release();
    throw;
  }
  release();
  return true;
}

void UcxConnection::send(std::span<const iovec> parts, bool more) {
  std::lock_guard lock(mutex_);
  fail_if_lost();
  for (const iovec& part : parts) {
    if (part.iov_len >= kRegisteredBytes) {
      flush_gathered();
      if (send_registered(part)) continue;
    }
    for (size_t off = 0; off < part.iov_len;) {
      if (gathered_.size() == kMaxMessage) flush_gathered();
      size_t take = std::min(part.iov_len - off, kMaxMessage - gathered_.size());
      const char* from = static_cast<const char*>(part.iov_base) + off;
      gathered_.insert(gathered_.end(), from, from + take);
      off += take;
    }
  }
  if (!more) flush_gathered();
}

void UcxConnection::send_with_fd(std::span<const iovec>, int) {
  throw TransportError("descriptors cannot travel over ucx (only over shm)");
}

// Receives the next stream message: bytes into received_, or an offer.
void UcxConnection::next_message() {
  ucp_tag_message_h message = nullptr;
  ucp_tag_recv_info_t info{};
  progress_until([&] { return (message = ucp_tag_probe_nb(worker_, kStreamTag, kStreamMask, 1, &info)) != nullptr; });
  if (info.length > kMaxMessage || (info.sender_tag != kTagBytes && info.sender_tag != kTagOffer)) {
    lost_ = "malformed UCX message from " + side_->peer();
    fail_if_lost();
  }
  received_.resize(info.length);
  received_begin_ = 0;
  ucp_request_param_t param{};
  wait_request(ucp_tag_msg_recv_nbx(worker_, received_.data(), received_.size(), message, &param), "receive");
  if (info.sender_tag == kTagOffer) {
    take_offer(received_);
    received_.clear();
  }
}

void UcxConnection::take_offer(const std::vector<char>& descriptor) {
  uint64_t where[2];
  if (descriptor.size() <= sizeof where) throw TransportError("malformed UCX offer from " + side_->peer());
  std::memcpy(where, descriptor.data(), sizeof where);
  if (where[1] == 0) throw TransportError("empty UCX offer from " + side_->peer());
  ucp_rkey_h rkey = nullptr;
  if (ucs_status_t s = ucp_ep_rkey_unpack(ep_, descriptor.data() + sizeof where, &rkey); s != UCS_OK)
    throw TransportError("UCX remote key from " + side_->peer() + ": " + status_text(s));
  offer_ = Offer{where[0], where[1], 0, rkey};
}

void* UcxConnection::start_read(char* dst, size_t len) {
  ucp_request_param_t param{};
  // Into cached page-locked memory, UCX need not register the target.
  if (ucp_mem_h memh = RegistrationCache::get().find(dst, len)) {
    param.op_attr_mask = UCP_OP_ATTR_FIELD_MEMH;
    param.memh = memh;
  }
  return ucp_get_nbx(ep_, dst, len, offer_.address + offer_.taken, offer_.rkey, &param);
}

void UcxConnection::read_offer(char* dst, size_t len) {
  wait_request(start_read(dst, len), "read");
  finish_read(len);
}

void UcxConnection::finish_read(size_t len) {
  offer_.taken += len;
  if (offer_.taken < offer_.length) return;
  ucp_rkey_destroy(offer_.rkey);
  offer_ = Offer{};
  static const uint64_t taken = 1;
  send_message(kTagTaken, &taken, sizeof taken);
}

void UcxConnection::recv(void* dst, size_t len) {
  std::lock_guard lock(mutex_);
  // Whatever send() held back goes first: the peer may be waiting for it.
  flush_gathered();
  auto p = static_cast<char*>(dst);
  // What arrived before the peer left is read first (its last reply, say);
  // progress_until reports the loss once nothing more is there.
  while (len > 0) {
    if (received_begin_ < received_.size()) {
      size_t take = std::min(len, received_.size() - received_begin_);
      std::memcpy(p, received_.data() + received_begin_, take);
      received_begin_ += take;
      p += take;
      len -= take;
    } else if (offer_.rkey) {
      size_t take = std::min<uint64_t>(len, offer_.length - offer_.taken);
      read_offer(p, take);
      p += take;
      len -= take;
    } else {
      next_message();
    }
  }
}

bool UcxConnection::zero_copy(MemoryKind kind) const { return kind == MemoryKind::host || reaches_gpu_memory(); }

size_t UcxConnection::recv_zero_copy(void* dst, size_t len) {
  std::lock_guard lock(mutex_);
  flush_gathered();
  auto p = static_cast<char*>(dst);
  size_t got = 0;
  // Only offered bytes land in place: gathered ones are host memory here
  // and go through recv().
  while (got < len && received_begin_ == received_.size()) {
    if (!offer_.rkey) {
      next_message();
      continue;
    }
    size_t take = std::min<uint64_t>(len - got, offer_.length - offer_.taken);
    void* read = start_read(p + got, take);
    // Memory UCX cannot write (no protocol for it): recv() takes the rest.
    if (UCS_PTR_IS_ERR(read)) break;
    wait_request(read, "read");
    finish_read(take);
    got += take;
  }
  return got;
}

bool UcxConnection::send_zero_copy(const void* src, size_t len) {
  std::lock_guard lock(mutex_);
  fail_if_lost();
  flush_gathered();
  return send_registered({const_cast<void*>(src), len});
}

bool UcxConnection::wait_readable(int timeout_ms) {
  std::lock_guard lock(mutex_);
  // A lost peer reads as readable, as a closed socket does: recv() then
  // says what happened.
  try {
    flush_gathered();
    if (received_begin_ < received_.size() || offer_.rkey) return true;
    ucp_tag_recv_info_t info;
    return progress_until([&] { return ucp_tag_probe_nb(worker_, kStreamTag, kStreamMask, 0, &info) != nullptr; },
                          timeout_ms);
  } catch (const TransportError&) {
    if (lost_.empty()) throw;
    return true;
  }
}

void UcxConnection::shutdown() {
  // Wakes a thread sleeping in progress_until through the side channel.
  side_->shutdown();
}

std::unique_ptr<Listener> UcxConnection::listen_beside() const {
  return std::make_unique<UcxListener>(side_->listen_beside());
}

}  // namespace rgpu::transport::ucx
