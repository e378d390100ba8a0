#include "client/core/pipeline_block.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

using rgpu::client::parse_pipeline_block;

TEST(PipelineBlock, BytesAndUnits) {
  EXPECT_EQ(parse_pipeline_block("65536"), 65536u);
  EXPECT_EQ(parse_pipeline_block("300K"), 300u * 1024);
  EXPECT_EQ(parse_pipeline_block("2M"), 2u << 20);
  EXPECT_EQ(parse_pipeline_block("0"), 0u);
}

TEST(PipelineBlock, BadTextIsRefused) {
  EXPECT_THROW(parse_pipeline_block("big"), std::invalid_argument);
  EXPECT_THROW(parse_pipeline_block("4G"), std::invalid_argument);
  EXPECT_THROW(parse_pipeline_block("8192M"), std::invalid_argument);
}
