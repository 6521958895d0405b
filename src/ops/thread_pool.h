#pragma once
// A small persistent pool of worker threads for splitting independent output elements across cores.
// Work is split by output index only, never inside a reduction, so the thread count cannot change a result bit.
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace minigen {

class ThreadPool {
 public:
  // num_threads counts the calling thread too: 1 means "run everything inline".
  explicit ThreadPool(int num_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return static_cast<int>(workers_.size()) + 1; }

  // Calls body(begin, end) on disjoint sub-ranges covering [0, count); returns when all are done.
  void parallel_for(int64_t count, const std::function<void(int64_t begin, int64_t end)>& body);

  static int default_thread_count();  // the number of cores

 private:
  void worker_loop(int worker_index);
  void run_share(int share_index);

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable work_ready_;
  std::condition_variable work_done_;
  const std::function<void(int64_t, int64_t)>* body_ = nullptr;
  int64_t count_ = 0;
  uint64_t generation_ = 0;
  int pending_workers_ = 0;
  bool stopping_ = false;
};

}  // namespace minigen
