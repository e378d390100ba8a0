#include "protocol/handshake.hpp"

namespace rgpu::proto {
namespace {
// More GPUs than any host has: a bigger list is a malformed hello.
constexpr uint32_t kMaxGpus = 1024;
}  // namespace

void Challenge::encode(Writer& w) const { w.put(nonce).put(token_required).put(credential_required); }

Challenge Challenge::decode(Reader& r) {
  Challenge c;
  c.nonce = r.get<Nonce>();
  c.token_required = r.get<uint8_t>();
  c.credential_required = r.get<uint8_t>();
  r.expect_end();
  return c;
}

void Hello::encode(Writer& w) const {
  w.put(protocol_version).put(cuda_runtime_version).put<uint32_t>(gpus.size());
  for (int32_t g : gpus) w.put(g);
  w.put_string(client_name);
  w.put_bytes(proof.data(), proof.size());
  w.put(pipeline_block).put(client_pid).put_string(credential);
  w.put_bytes(credential_proof.data(), credential_proof.size());
  w.put(request).put_bytes(key_proof.data(), key_proof.size()).put_string(job);
  w.put(session).put_string(move_to);
}

Hello Hello::decode(Reader& r) {
  Hello h;
  h.protocol_version = r.get<uint32_t>();
  h.cuda_runtime_version = r.get<int32_t>();
  uint32_t n = r.get<uint32_t>();
  if (n > kMaxGpus) throw DecodeError("hello asks for too many GPUs");
  for (uint32_t i = 0; i < n; ++i) h.gpus.push_back(r.get<int32_t>());
  h.client_name = r.get_string();
  auto proof = r.get_bytes();
  h.proof.assign(proof.begin(), proof.end());
  h.pipeline_block = r.get<uint32_t>();
  h.client_pid = r.get<uint32_t>();
  h.credential = r.get_string();
  auto credential_proof = r.get_bytes();
  h.credential_proof.assign(credential_proof.begin(), credential_proof.end());
  h.request = r.get<uint8_t>();
  if (h.request > kRequestMoveSession) throw DecodeError("unknown hello request");
  auto key_proof = r.get_bytes();
  h.key_proof.assign(key_proof.begin(), key_proof.end());
  h.job = r.get_string();
  h.session = r.get<uint32_t>();
  h.move_to = r.get_string();
  r.expect_end();
  return h;
}

void HelloReply::encode(Writer& w) const {
  w.put(status).put(protocol_version).put(driver_version).put(runtime_version).put(worker_pid);
  w.put_string(backend).put_string(message).put<uint32_t>(gpus.size());
  for (const auto& g : gpus) w.put(g.ordinal).put_string(g.name).put(g.total_memory).put(g.free_memory);
  w.put(join_port).put_string(join_path).put_bytes(join_secret.data(), join_secret.size());
  w.put_string(pool_status);
}

HelloReply HelloReply::decode(Reader& r) {
  HelloReply h;
  h.status = r.get<int32_t>();
  h.protocol_version = r.get<uint32_t>();
  h.driver_version = r.get<int32_t>();
  h.runtime_version = r.get<int32_t>();
  h.worker_pid = r.get<uint32_t>();
  h.backend = r.get_string();
  h.message = r.get_string();
  uint32_t n = r.get<uint32_t>();
  if (n > kMaxGpus) throw DecodeError("reply lists too many GPUs");
  for (uint32_t i = 0; i < n; ++i) {
    GpuSummary g;
    g.ordinal = r.get<int32_t>();
    g.name = r.get_string();
    g.total_memory = r.get<uint64_t>();
    g.free_memory = r.get<uint64_t>();
    h.gpus.push_back(std::move(g));
  }
  h.join_port = r.get<uint16_t>();
  h.join_path = r.get_string();
  auto secret = r.get_bytes();
  h.join_secret.assign(secret.begin(), secret.end());
  h.pool_status = r.get_string();
  r.expect_end();
  return h;
}

void Join::encode(Writer& w) const { w.put_bytes(secret.data(), secret.size()).put(purpose); }

Join Join::decode(Reader& r) {
  Join j;
  auto secret = r.get_bytes();
  j.secret.assign(secret.begin(), secret.end());
  j.purpose = r.get<uint8_t>();
  if (j.purpose > kJoinHeartbeats) throw DecodeError("unknown join purpose");
  r.expect_end();
  return j;
}

void JoinReply::encode(Writer& w) const { w.put(status).put_string(message); }

JoinReply JoinReply::decode(Reader& r) {
  JoinReply j;
  j.status = r.get<int32_t>();
  j.message = r.get_string();
  r.expect_end();
  return j;
}

}  // namespace rgpu::proto
