#include "server/worker/device_output.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <string>

using rgpu::server::DeviceOutput;

// Capturing redirects the process's own output, so it runs in a child that
// reports what it took through a pipe.
TEST(DeviceOutput, TakesWhatWasPrintedInOrderPerStream) {
  int report[2];
  ASSERT_EQ(pipe(report), 0);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(report[0]);
    DeviceOutput out;
    if (!out.capture()) _exit(2);
    printf("kernel line 1\n");
    printf("kernel line 2\n");
    fprintf(stderr, "assertion message\n");
    // Standard error is unbuffered and may be drained before standard
    // output is flushed: only the order within each stream is kept.
    std::string per_fd[3];
    for (const auto& c : out.take(true)) per_fd[c.fd] += c.text;
    std::string got = "1:" + per_fd[1] + "2:" + per_fd[2];
    // Nothing is left once taken.
    if (!out.take(true).empty() || out.pending()) got += "LEFTOVER";
    if (write(report[1], got.data(), got.size()) != static_cast<ssize_t>(got.size())) _exit(3);
    _exit(0);
  }
  close(report[1]);
  std::string got;
  char buf[256];
  for (ssize_t n; (n = read(report[0], buf, sizeof buf)) > 0;) got.append(buf, n);
  close(report[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(got, "1:kernel line 1\nkernel line 2\n2:assertion message\n");
}

TEST(DeviceOutput, LooksForOutputOnlyWhileKernelsMayNotHavePrinted) {
  DeviceOutput out;
  EXPECT_FALSE(out.may_hold_output(0));
  out.kernel_queued(0);
  EXPECT_TRUE(out.may_hold_output(0));
  EXPECT_FALSE(out.may_hold_output(1));
  // A synchronize that started before the second kernel was queued covers
  // only the first.
  uint64_t before_sync = out.kernels_queued(0);
  out.kernel_queued(0);
  out.printed_through(0, before_sync);
  EXPECT_TRUE(out.may_hold_output(0));
  out.printed_through(0, out.kernels_queued(0));
  EXPECT_FALSE(out.may_hold_output(0));
  // An older synchronize finishing late does not undo a newer one.
  out.printed_through(0, before_sync);
  EXPECT_FALSE(out.may_hold_output(0));
  // Unchecked ordinals from a client stay in bounds.
  out.kernel_queued(65535);
  EXPECT_TRUE(out.may_hold_output(65535));
}
