#include "http/worker_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <set>
#include <thread>

namespace minigen::http {
namespace {

using namespace std::chrono_literals;

TEST(WorkerPool, RefusesBeyondItsThreadsAndReusesThemOnceFree) {
  WorkerPool pool(2);
  std::atomic<bool> release{false};
  std::atomic<int> running{0};
  auto blocker = [&] {
    ++running;
    while (!release.load()) std::this_thread::sleep_for(1ms);
    --running;
  };
  ASSERT_TRUE(pool.try_run(blocker));
  ASSERT_TRUE(pool.try_run(blocker));
  EXPECT_FALSE(pool.try_run([] {}));  // both threads busy: refused, not queued
  release = true;
  while (running.load() > 0) std::this_thread::sleep_for(1ms);

  std::mutex mutex;
  std::set<std::thread::id> seen;
  std::atomic<int> done{0};
  for (int i = 0; i < 20; ++i) {
    while (!pool.try_run([&] {
      {
        std::lock_guard lock(mutex);
        seen.insert(std::this_thread::get_id());
      }
      ++done;
    })) {
      std::this_thread::sleep_for(100us);  // both threads are finishing a job: try again
    }
  }
  while (done.load() < 20) std::this_thread::sleep_for(1ms);
  EXPECT_LE(seen.size(), 2u);  // twenty jobs, no more than the two threads
}

TEST(WorkerPool, TheDestructorLetsRunningJobsFinish) {
  std::atomic<bool> finished{false};
  {
    WorkerPool pool(1);
    ASSERT_TRUE(pool.try_run([&] {
      std::this_thread::sleep_for(50ms);
      finished = true;
    }));
  }
  EXPECT_TRUE(finished.load());
}

}  // namespace
}  // namespace minigen::http
