#include "http/worker_pool.h"

#include <system_error>

namespace minigen::http {

WorkerPool::WorkerPool(int max_threads) : max_threads_(max_threads) {}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (std::thread& thread : threads_) thread.join();
}

bool WorkerPool::try_run(std::function<void()> job) {
  std::unique_lock lock(mutex_);
  if (idle_ > static_cast<int>(jobs_.size())) {
    jobs_.push_back(std::move(job));
    lock.unlock();
    wake_.notify_one();
    return true;
  }
  if (static_cast<int>(threads_.size()) >= max_threads_) return false;
  jobs_.push_back(std::move(job));
  try {
    ++idle_;  // the new thread counts as idle until it takes the job
    threads_.emplace_back([this] { work(); });
  } catch (const std::system_error&) {
    --idle_;
    jobs_.pop_back();
    return false;
  }
  return true;
}

void WorkerPool::work() {
  std::unique_lock lock(mutex_);
  while (true) {
    wake_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
    if (jobs_.empty()) return;  // stopping, and nothing left to run
    std::function<void()> job = std::move(jobs_.front());
    jobs_.pop_front();
    --idle_;
    lock.unlock();
    job();
    job = nullptr;  // what the job holds is released before the thread counts as idle again
    lock.lock();
    ++idle_;
  }
}

}  // namespace minigen::http
