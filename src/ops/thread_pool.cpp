#include "ops/thread_pool.h"

#include <algorithm>

namespace minigen {

ThreadPool::ThreadPool(int num_threads) {
  for (int i = 1; i < std::max(1, num_threads); ++i) workers_.emplace_back([this, i] { worker_loop(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  work_ready_.notify_all();
  for (auto& worker : workers_) worker.join();
}

int ThreadPool::default_thread_count() { return std::max(1u, std::thread::hardware_concurrency()); }

void ThreadPool::run_share(int share_index) {
  const int64_t shares = num_threads();
  const int64_t begin = count_ * share_index / shares;
  const int64_t end = count_ * (share_index + 1) / shares;
  if (begin < end) (*body_)(begin, end);
}

void ThreadPool::parallel_for(int64_t count, const std::function<void(int64_t, int64_t)>& body) {
  if (count <= 0) return;
  if (workers_.empty() || count == 1) {
    body(0, count);
    return;
  }
  {
    std::lock_guard lock(mutex_);
    body_ = &body;
    count_ = count;
    pending_workers_ = static_cast<int>(workers_.size());
    ++generation_;
  }
  work_ready_.notify_all();
  run_share(0);
  std::unique_lock lock(mutex_);
  work_done_.wait(lock, [this] { return pending_workers_ == 0; });
  body_ = nullptr;
}

void ThreadPool::worker_loop(int worker_index) {
  uint64_t seen_generation = 0;
  while (true) {
    {
      std::unique_lock lock(mutex_);
      work_ready_.wait(lock, [&] { return stopping_ || generation_ != seen_generation; });
      if (stopping_) return;
      seen_generation = generation_;
    }
    run_share(worker_index);
    {
      std::lock_guard lock(mutex_);
      --pending_workers_;
    }
    work_done_.notify_one();
  }
}

}  // namespace minigen
