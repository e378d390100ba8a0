#include "client/core/error_log.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include "common/log.hpp"

// A registered callback; cudaLogsCallbackHandle points at one.
struct CUlogsCallbackEntry_st {
  cudaLogsCallback_t fn;
  void* data;
};

namespace rgpu::client {
namespace {

// Errors and warnings are what CUDA's log levels name.
void keep(log::Level level, const char* message, size_t length) {
  if (level == log::Level::error || level == log::Level::warn)
    ErrorLog::get().add(level == log::Level::error ? cudaLogLevelError : cudaLogLevelWarning, message, length);
}

}  // namespace

ErrorLog& ErrorLog::get() {
  static ErrorLog* log = [] {
    auto* l = new ErrorLog;
    log::set_sink(keep);
    return l;
  }();
  return *log;
}

// Installed when the library loads, so that messages logged before the
// application first asks are kept too.
[[maybe_unused]] static ErrorLog& g_installed = ErrorLog::get();

void ErrorLog::add(int level, const char* message, size_t length) {
  std::vector<CUlogsCallbackEntry_st> callbacks;
  std::string text(message, length);
  {
    std::lock_guard lock(mutex_);
    bytes_ += text.size() + 1;
    messages_.push_back(text);
    drop_oldest_over_limit();
    for (cudaLogsCallbackHandle c : callbacks_) callbacks.push_back(*c);
  }
  // Outside the lock: a callback may call cudaLogs* itself.
  for (const auto& c : callbacks) {
    std::vector<char> copy(text.begin(), text.end());
    copy.push_back('\0');
    c.fn(c.data, static_cast<cudaLogLevel>(level), copy.data(), text.size());
  }
}

void ErrorLog::drop_oldest_over_limit() {
  while (bytes_ > kMaxBytes && !messages_.empty()) {
    bytes_ -= messages_.front().size() + 1;
    messages_.pop_front();
    ++first_;
  }
}

cudaError_t ErrorLog::add_callback(cudaLogsCallback_t fn, void* data, cudaLogsCallbackHandle* handle) {
  if (!fn) return cudaErrorInvalidValue;
  auto* entry = new CUlogsCallbackEntry_st{fn, data};
  {
    std::lock_guard lock(mutex_);
    callbacks_.insert(entry);
  }
  if (handle) *handle = entry;
  return cudaSuccess;
}

cudaError_t ErrorLog::remove_callback(cudaLogsCallbackHandle handle) {
  std::lock_guard lock(mutex_);
  if (!callbacks_.erase(handle)) return cudaErrorInvalidValue;
  delete handle;
  return cudaSuccess;
}

cudaLogIterator ErrorLog::current() {
  std::lock_guard lock(mutex_);
  return first_ + static_cast<cudaLogIterator>(messages_.size());
}

std::string ErrorLog::dump(cudaLogIterator* from) {
  std::lock_guard lock(mutex_);
  cudaLogIterator start = from ? *from : first_;
  std::string out;
  if (start < first_) {
    out = "[rgpu: earlier log messages were dropped]\n";
    start = first_;
  }
  for (size_t i = start - first_; i < messages_.size(); ++i) out += messages_[i] + "\n";
  if (from) *from = first_ + static_cast<cudaLogIterator>(messages_.size());
  return out;
}

cudaError_t ErrorLog::dump_to_memory(cudaLogIterator* from, char* buffer, size_t* size) {
  if (!buffer || !size) return cudaErrorInvalidValue;
  std::lock_guard lock(mutex_);
  cudaLogIterator start = from ? std::max(*from, first_) : first_;
  size_t end = messages_.size();
  size_t begin = std::min<size_t>(start - first_, end);
  // The newest messages that fit with the terminating NUL.
  size_t used = 0, take = end;
  for (size_t i = end; i > begin; --i) {
    size_t need = messages_[i - 1].size() + 1;
    if (used + need + 1 > *size) break;
    used += need;
    take = i - 1;
  }
  if (begin < end && take == end) {
    *size = 0;
    return cudaErrorInvalidValue;  // not even the newest message fits
  }
  size_t at = 0;
  for (size_t i = take; i < end; ++i) {
    std::memcpy(buffer + at, messages_[i].data(), messages_[i].size());
    at += messages_[i].size();
    buffer[at++] = '\n';
  }
  if (*size > 0) buffer[at] = '\0';
  *size = at;
  if (from) *from = first_ + static_cast<cudaLogIterator>(end);
  return cudaSuccess;
}

}  // namespace rgpu::client
