// The bodies of rgpu's fuzz targets: each takes one input and returns 0, and
// crashes (or trips a sanitizer) only on a bug. libFuzzer drives them in the
// clang build (RGPU_FUZZ=ON); fuzz_replay runs them on the committed corpus
// and reproducers in every build.
#pragma once
#include <cstddef>
#include <cstdint>

namespace rgpu::fuzz {

// The frames a server or client reads: header checks, arguments, payload skipping.
int frame_reader(const uint8_t* data, size_t size);
// A connection's first frame, on the worker's side (hello with and without
// a token, join) and the client's (challenge, hello reply, join reply).
int handshake(const uint8_t* data, size_t size);
// A session's requests, each through the worker's dispatcher and its
// handler on the host-test backend, as serve_lane runs them.
int dispatcher(const uint8_t* data, size_t size);
// NVIDIA fat binaries: the container, compressed entries, cubin and PTX
// kernel and variable tables.
int fatbin(const uint8_t* data, size_t size);
// The shm byte ring while the peer, which shares its control block, writes
// what it likes there.
int shm_ring(const uint8_t* data, size_t size);
// A client joining a session over shm, hostile: its offer (tag, join secret,
// a ring file sealed or not, shrunk at some moment), the rings' control
// blocks and the join frame. The worker's side only ever refuses.
int shm_join(const uint8_t* data, size_t size);
// The daemon's bounds on unauthenticated connections under any sequence of
// accepts, hand-offs, admissions, closes and time steps.
int unauthenticated_limits(const uint8_t* data, size_t size);

}  // namespace rgpu::fuzz
