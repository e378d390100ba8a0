// RGPU_PIPELINE_BLOCK: the block size of pipelined bulk copies (bytes, or
// with a K/M suffix), sent to each server in the hello; unset: the server
// chooses by transfer size.
#pragma once
#include <cstdint>
#include <string>

namespace rgpu::client {

// Bytes, or 0 for "by size"; throws std::invalid_argument for bad text.
uint32_t parse_pipeline_block(const std::string& text);
uint32_t pipeline_block_from_environment();

}  // namespace rgpu::client
