// The client's error log behind cudaLogs*: iterators, dumps that keep the
// newest messages that fit, dropping the oldest past the size limit, and
// callbacks.
#include "client/core/error_log.hpp"

#include <gtest/gtest.h>

#include <string>

using rgpu::client::ErrorLog;

namespace {

void add(const std::string& m) { ErrorLog::get().add(cudaLogLevelWarning, m.data(), m.size()); }

TEST(ErrorLog, DumpsFromAnIteratorAndAdvancesIt) {
  cudaLogIterator it = ErrorLog::get().current();
  add("first");
  add("second");
  EXPECT_EQ(ErrorLog::get().current(), it + 2);
  cudaLogIterator from = it + 1;
  EXPECT_EQ(ErrorLog::get().dump(&from), "second\n");
  EXPECT_EQ(from, it + 2);
  EXPECT_EQ(ErrorLog::get().dump(&from), "");
}

TEST(ErrorLog, MemoryDumpKeepsTheNewestMessagesThatFit) {
  cudaLogIterator it = ErrorLog::get().current();
  add("aaaa");
  add("bbbb");
  char buffer[16];
  size_t size = 8;  // "bbbb\n" and the NUL fit, "aaaa\n" too would not
  cudaLogIterator from = it;
  ASSERT_EQ(ErrorLog::get().dump_to_memory(&from, buffer, &size), cudaSuccess);
  EXPECT_EQ(std::string(buffer), "bbbb\n");
  EXPECT_EQ(size, 5u);
  EXPECT_EQ(from, it + 2);
  size = sizeof buffer;
  ASSERT_EQ(ErrorLog::get().dump_to_memory(&from, buffer, &size), cudaSuccess);
  EXPECT_EQ(size, 0u);
  size = 3;
  from = it;
  EXPECT_EQ(ErrorLog::get().dump_to_memory(&from, buffer, &size), cudaErrorInvalidValue);
  EXPECT_EQ(size, 0u);
  EXPECT_EQ(ErrorLog::get().dump_to_memory(&from, nullptr, &size), cudaErrorInvalidValue);
}

TEST(ErrorLog, DropsTheOldestPastItsLimitAndSaysSo) {
  cudaLogIterator it = ErrorLog::get().current();
  const std::string big(1000, 'x');
  for (int i = 0; i < 40; ++i) add(big);
  cudaLogIterator from = it;
  std::string text = ErrorLog::get().dump(&from);
  EXPECT_EQ(text.rfind("[rgpu: earlier log messages were dropped]\n", 0), 0u);
  EXPECT_LE(text.size(), 25600u + 64u);
  EXPECT_EQ(from, it + 40);
}

TEST(ErrorLog, CallbacksGetEachMessageUntilRemoved) {
  static std::string seen;
  static int level = -1;
  auto on_log = [](void*, cudaLogLevel l, char* message, size_t length) {
    seen.assign(message, length);
    level = l;
  };
  cudaLogsCallbackHandle handle = nullptr;
  ASSERT_EQ(ErrorLog::get().add_callback(on_log, nullptr, &handle), cudaSuccess);
  ErrorLog::get().add(cudaLogLevelError, "broken", 6);
  EXPECT_EQ(seen, "broken");
  EXPECT_EQ(level, cudaLogLevelError);
  ASSERT_EQ(ErrorLog::get().remove_callback(handle), cudaSuccess);
  add("after");
  EXPECT_EQ(seen, "broken");
  EXPECT_EQ(ErrorLog::get().remove_callback(handle), cudaErrorInvalidValue);
  EXPECT_EQ(ErrorLog::get().add_callback(nullptr, nullptr, &handle), cudaErrorInvalidValue);
}

}  // namespace
