#include "ops/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace minigen {
namespace {

TEST(ThreadPool, CoversEveryIndexExactlyOnce) {
  ThreadPool pool(3);
  for (int count : {1, 2, 5, 100}) {
    std::vector<int> hits(count, 0);
    pool.parallel_for(count, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) ++hits[i];
    });
    for (int i = 0; i < count; ++i) EXPECT_EQ(hits[i], 1) << "count " << count << " index " << i;
  }
}

// Thousands of back-to-back jobs (workers spinning) and jobs after the workers fell asleep (futex wake-up):
// every job runs completely, none is lost or run twice.
TEST(ThreadPool, BackToBackJobsAndWakeUpsAfterSleep) {
  ThreadPool pool(2);
  std::atomic<int64_t> total{0};
  for (int job = 0; job < 5000; ++job) {
    pool.parallel_for(4, [&](int64_t begin, int64_t end) { total += end - begin; });
  }
  EXPECT_EQ(total.load(), 5000 * 4);
  for (int job = 0; job < 3; ++job) {
    std::this_thread::sleep_for(std::chrono::milliseconds(150));  // long enough for the workers to sleep
    pool.parallel_for(10, [&](int64_t begin, int64_t end) { total += end - begin; });
  }
  EXPECT_EQ(total.load(), 5000 * 4 + 30);
}

// A body that throws on a worker thread must not terminate the process: every share still runs, the caller gets
// the exception, and the pool works normally afterwards.
TEST(ThreadPool, ExceptionOnAnyShareReachesTheCallerAndThePoolKeepsWorking) {
  ThreadPool pool(3);
  for (int failing_share = 0; failing_share < 3; ++failing_share) {
    std::atomic<int> shares_run{0};
    try {
      pool.parallel_for(3, [&](int64_t begin, int64_t) {
        ++shares_run;
        if (begin == failing_share) throw std::runtime_error("share " + std::to_string(begin) + " failed");
      });
      ADD_FAILURE() << "parallel_for returned normally";
    } catch (const std::runtime_error& error) {
      EXPECT_EQ(std::string(error.what()), "share " + std::to_string(failing_share) + " failed");
    }
    EXPECT_EQ(shares_run.load(), 3);
  }
  std::atomic<int64_t> total{0};
  pool.parallel_for(100, [&](int64_t begin, int64_t end) { total += end - begin; });
  EXPECT_EQ(total.load(), 100);
}

TEST(ThreadPool, SingleThreadRunsInline) {
  ThreadPool pool(1);
  const auto caller = std::this_thread::get_id();
  bool inline_call = false;
  pool.parallel_for(7, [&](int64_t begin, int64_t end) {
    inline_call = std::this_thread::get_id() == caller && begin == 0 && end == 7;
  });
  EXPECT_TRUE(inline_call);
}

}  // namespace
}  // namespace minigen
