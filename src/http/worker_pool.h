#pragma once
// The threads that run handlers: created when first needed, up to a limit, then kept and reused (a thread per
// request costs its creation on every request — and far more under the sanitizers). A job is refused, not queued,
// when every thread is busy: the server answers 503 at once rather than let a request wait behind long generations.
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace minigen::http {

class WorkerPool {
 public:
  explicit WorkerPool(int max_threads);
  ~WorkerPool();  // lets the running jobs finish, then joins every thread
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Runs the job on an idle thread (starting one if fewer than max_threads exist); false when all are busy, or a
  // thread could not be started.
  bool try_run(std::function<void()> job);

 private:
  void work();

  const int max_threads_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> jobs_;  // at most one per idle thread
  std::vector<std::thread> threads_;
  int idle_ = 0;
  bool stopping_ = false;
};

}  // namespace minigen::http
