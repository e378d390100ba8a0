#include "server/worker/frame_recorder.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "common/log.hpp"
#include "fatbin/fatbin_hash.hpp"

namespace rgpu::server {
namespace {
// Bulk copies make frames of any size: a seed corpus wants small ones.
constexpr size_t kMaxRecordedFrame = 1 << 20;
}  // namespace

std::unique_ptr<FrameRecorder> FrameRecorder::from_env(transport::Connection& inner) {
  const char* dir = std::getenv("RGPU_RECORD_FRAMES");
  if (!dir || !*dir) return nullptr;
  return std::unique_ptr<FrameRecorder>(new FrameRecorder(inner, dir));
}

void FrameRecorder::recv(void* dst, size_t len) {
  inner_.recv(dst, len);
  if (frame_.size() + len <= kMaxRecordedFrame) {
    auto* p = static_cast<const uint8_t*>(dst);
    frame_.insert(frame_.end(), p, p + len);
  } else {
    frame_.resize(kMaxRecordedFrame + 1);  // too big: not recorded
  }
}

void FrameRecorder::frame_done(const char* kind) {
  if (!frame_.empty() && frame_.size() <= kMaxRecordedFrame) {
    namespace fs = std::filesystem;
    fs::path dir = fs::path(dir_) / kind;
    std::error_code ec;
    fs::create_directories(dir, ec);
    fs::path file = dir / fatbin::fatbin_hash(std::as_bytes(std::span(frame_)));
    std::ofstream out(file, std::ios::binary);
    out.write(reinterpret_cast<const char*>(frame_.data()), static_cast<std::streamsize>(frame_.size()));
    if (!out) RGPU_LOG(warn, "cannot record a frame in %s", file.c_str());
  }
  frame_.clear();
}

}  // namespace rgpu::server
