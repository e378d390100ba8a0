#include "server/worker/host_callbacks.hpp"

#include "common/log.hpp"
#include "protocol/frame_io.hpp"
#include "protocol/ops.hpp"

namespace rgpu::server {

void HostCallbacks::run(uint64_t id, uint64_t seq, const CallbackStaging& staging) {
  Due due{id, seq, staging};
  std::unique_lock lock(mutex_);
  if (closed_) return;
  if (!attached_) {
    // Only a client that skipped the callback connection asks for this.
    RGPU_LOG(warn, "host callback %llu not run: the client has no callback connection",
             static_cast<unsigned long long>(id));
    return;
  }
  due_.push_back(&due);
  changed_.notify_all();
  changed_.wait(lock, [&] { return due.done; });
}

void HostCallbacks::attach() {
  std::lock_guard lock(mutex_);
  attached_ = true;
}

bool HostCallbacks::attached() {
  std::lock_guard lock(mutex_);
  return attached_;
}

void HostCallbacks::notify(uint64_t id, const cudaAsyncNotificationInfo_t& info) {
  std::lock_guard lock(mutex_);
  if (closed_) return;
  // A client that never reads them (no callback connection) cannot make the worker grow without end.
  constexpr size_t kMaxQueued = 4096;
  if (notifications_.size() >= kMaxQueued) {
    RGPU_LOG(warn, "async notification for callback %llu dropped: %zu wait for the client already",
             static_cast<unsigned long long>(id), notifications_.size());
    return;
  }
  notifications_.emplace_back(id, info);
  changed_.notify_all();
}

// Waits for the client to say it ran what was sent, with the `n` bytes it
// was asked for, which go to `into`.
static void await_end(transport::Connection& conn, uint16_t op, char* into = nullptr, uint64_t n = 0) {
  auto h = proto::recv_header(conn);
  std::vector<uint8_t> args;
  proto::recv_args(conn, h, args);
  if (h.op != op || h.payload_len != n) throw proto::DecodeError("not a callback's end");
  if (n) conn.recv(into, n);
}

void HostCallbacks::serve(transport::Connection& conn) {
  std::unique_lock lock(mutex_);
  try {
    for (;;) {
      changed_.wait(lock, [&] { return closed_ || !due_.empty() || !notifications_.empty(); });
      if (closed_) return;
      if (!notifications_.empty()) {
        auto [id, info] = notifications_.front();
        notifications_.pop_front();
        lock.unlock();
        proto::Writer w;
        w.put(id).put(info);
        proto::send_frame(conn, proto::FrameHeader{.op = proto::kOpAsyncNotification}, w.bytes());
        await_end(conn, proto::kOpAsyncNotification);
        lock.lock();
        continue;
      }
      Due* due = due_.front();
      lock.unlock();
      // The bytes a staged upload asks for; a download's go with the message.
      const CallbackStaging& st = due->staging;
      const uint64_t wanted = st.upload ? st.bytes : 0;
      proto::Writer w;
      w.put(due->id).put(due->seq).put(wanted);
      iovec download{st.block, st.bytes};
      proto::send_frame(conn, proto::FrameHeader{.op = proto::kOpHostCallback}, w.bytes(),
                        {&download, st.bytes && !st.upload ? 1u : 0u});
      await_end(conn, proto::kOpHostCallback, st.block, wanted);
      lock.lock();
      due_.pop_front();
      due->done = true;
      changed_.notify_all();
    }
  } catch (const std::exception& e) {
    RGPU_LOG(info, "callback connection ended: %s", e.what());
    if (!lock.owns_lock()) lock.lock();
    closed_ = true;
    finish_all();
  }
}

void HostCallbacks::close() {
  std::lock_guard lock(mutex_);
  closed_ = true;
  finish_all();
}

void HostCallbacks::finish_all() {
  for (Due* d : due_) d->done = true;
  due_.clear();
  changed_.notify_all();
}

}  // namespace rgpu::server
