#include <gtest/gtest.h>

#include "server/pool/job_ledger.hpp"

using namespace rgpu::server;

namespace {
SessionClaim job_claim(const std::string& job, std::vector<int> gpus, std::vector<uint64_t> amounts) {
  SessionClaim c;
  c.job = job;
  c.expires = 4000000000;
  c.gpus = std::move(gpus);
  c.amounts = std::move(amounts);
  c.host = "10.0.0.1:5000";
  c.process = "app";
  return c;
}
}  // namespace

TEST(JobLedger, AmountIsOneBudgetAcrossTheJobsSessions) {
  JobLedger ledger;
  std::vector<GpuMode> modes{GpuMode::shared};
  ASSERT_EQ(ledger.admit(101, job_claim("a", {0}, {1000}), modes), "");
  ASSERT_EQ(ledger.admit(102, job_claim("a", {0}, {1000}), modes), "");
  ASSERT_EQ(ledger.admit(201, job_claim("b", {0}, {500}), modes), "");
  EXPECT_TRUE(ledger.charge(101, 0, 600));
  EXPECT_FALSE(ledger.charge(102, 0, 401));  // 600 + 401 > 1000, across sessions
  EXPECT_TRUE(ledger.charge(102, 0, 400));
  EXPECT_TRUE(ledger.charge(201, 0, 500));  // job b is untouched by a
  EXPECT_FALSE(ledger.charge(201, 0, 1));
  uint64_t amount = 0, used = 0;
  ASSERT_TRUE(ledger.quota(101, 0, &amount, &used));
  EXPECT_EQ(amount, 1000u);
  EXPECT_EQ(used, 1000u);
  ledger.release(101, 0, 600);
  ASSERT_TRUE(ledger.quota(102, 0, &amount, &used));
  EXPECT_EQ(used, 400u);
  // A worker that dies returns what it held.
  ledger.session_ended(102);
  ASSERT_TRUE(ledger.quota(101, 0, &amount, &used));
  EXPECT_EQ(used, 0u);
  EXPECT_FALSE(ledger.quota(101, 1, &amount, &used));  // no amount on GPU 1
}

TEST(JobLedger, EachGpuOfAJobHasItsOwnAmount) {
  JobLedger ledger;
  std::vector<GpuMode> modes{GpuMode::shared, GpuMode::shared};
  ASSERT_EQ(ledger.admit(101, job_claim("a", {0, 1}, {1000, 300}), modes), "");
  EXPECT_TRUE(ledger.charge(101, 0, 800));
  EXPECT_FALSE(ledger.charge(101, 1, 301));  // past GPU 1's amount, though GPU 0 has 200 left
  EXPECT_TRUE(ledger.charge(101, 1, 300));
  EXPECT_TRUE(ledger.charge(101, 0, 200));  // GPU 1 being full leaves GPU 0's budget alone
  EXPECT_FALSE(ledger.charge(101, 0, 1));
  uint64_t amount = 0, used = 0;
  ASSERT_TRUE(ledger.quota(101, 1, &amount, &used));
  EXPECT_EQ(amount, 300u);
  EXPECT_EQ(used, 300u);
  // Another session of the job on GPU 1 alone shares that GPU's budget.
  ASSERT_EQ(ledger.admit(102, job_claim("a", {1}, {300}), modes), "");
  EXPECT_FALSE(ledger.charge(102, 1, 1));
  ledger.session_ended(101);  // returns what it held on both GPUs
  ASSERT_TRUE(ledger.quota(102, 1, &amount, &used));
  EXPECT_EQ(used, 0u);
  ASSERT_TRUE(ledger.quota(102, 0, &amount, &used));
  EXPECT_EQ(amount, 1000u);
  EXPECT_EQ(used, 0u);
  EXPECT_TRUE(ledger.charge(102, 1, 300));
}

TEST(JobLedger, ExclusiveGpuServesOneJob) {
  JobLedger ledger;
  std::vector<GpuMode> modes{GpuMode::exclusive, GpuMode::shared};
  ASSERT_EQ(ledger.admit(101, job_claim("a", {0}, {0}), modes), "");
  EXPECT_EQ(ledger.admit(102, job_claim("a", {0}, {0}), modes), "");  // the same job's second session
  EXPECT_EQ(ledger.admit(201, job_claim("b", {0}, {0}), modes), "GPU 0 is held exclusively by job a");
  EXPECT_EQ(ledger.admit(202, job_claim("b", {1}, {0}), modes), "");  // GPU 1 is shared
  ledger.session_ended(101);
  ledger.session_ended(102);
  EXPECT_EQ(ledger.admit(203, job_claim("b", {0}, {0}), modes), "");
}

TEST(JobLedger, EndedJobIsRefusedAndItsWorkersNamed) {
  JobLedger ledger;
  std::vector<GpuMode> modes;
  ASSERT_EQ(ledger.admit(101, job_claim("a", {0}, {0}), modes), "");
  ASSERT_EQ(ledger.admit(201, job_claim("b", {0}, {0}), modes), "");
  EXPECT_EQ(ledger.end_job("a"), 1);
  EXPECT_EQ(ledger.workers_of_ended_jobs(), std::vector<pid_t>{101});
  EXPECT_EQ(ledger.admit(102, job_claim("a", {0}, {0}), modes), "job a has ended");
  ledger.session_ended(101);
  EXPECT_TRUE(ledger.workers_of_ended_jobs().empty());
  EXPECT_TRUE(ledger.job_ended("a"));
  // A job ended before any of its sessions came is refused too.
  EXPECT_EQ(ledger.end_job("c"), 0);
  EXPECT_EQ(ledger.admit(301, job_claim("c", {0}, {0}), modes), "job c has ended");
  auto snap = ledger.snapshot();
  ASSERT_EQ(snap.sessions.size(), 1u);
  EXPECT_EQ(snap.sessions[0].job, "b");
}

TEST(JobLedger, AMoveAskedIsTakenOnceAndItsRefusalShows) {
  JobLedger ledger;
  std::vector<GpuMode> modes;
  ASSERT_EQ(ledger.admit(301, job_claim("m", {0}, {0}), modes), "");
  EXPECT_FALSE(ledger.ask_move(999, "elsewhere:7000/0"));  // no such session
  EXPECT_FALSE(ledger.ask_move(0, "elsewhere:7000/0"));    // a free slot is no session
  EXPECT_EQ(ledger.take_move(301), "");
  ASSERT_TRUE(ledger.ask_move(301, "elsewhere:7000/1"));
  EXPECT_EQ(ledger.snapshot().sessions.at(0).move, "asked: to elsewhere:7000/1");
  EXPECT_EQ(ledger.take_move(301), "elsewhere:7000/1");
  EXPECT_EQ(ledger.take_move(301), "");  // taken once
  ledger.note_move(301, "refused: the session holds 1 CUDA arrays");
  EXPECT_EQ(ledger.snapshot().sessions.at(0).move, "refused: the session holds 1 CUDA arrays");
  // A new request clears the old outcome.
  ASSERT_TRUE(ledger.ask_move(301, "elsewhere:7000/0"));
  EXPECT_EQ(ledger.snapshot().sessions.at(0).move, "asked: to elsewhere:7000/0");
}
