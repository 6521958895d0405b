#pragma once
// A small persistent pool of worker threads for splitting independent output elements across cores.
//
// Work is split by output index only, never inside a reduction, so the thread count cannot change a result bit.
// A tiny model's layer is a few tens of microseconds of work cut into five or so parallel jobs, so dispatch must
// cost about a microsecond: idle workers spin on a generation counter for a short while before they sleep
// (futex via std::atomic::wait), and the caller spins until its helpers are done. Spinning is bounded, so an
// oversubscribed machine (tests running side by side) degrades to sleeping instead of burning a core.
// Shares are claimed, not assigned: whoever is free takes the next unclaimed share, so when a worker is not
// scheduled (another process holds its core) the caller runs that share itself instead of waiting a time slice.
// Which thread computes a share never changes its result.
//
// An exception thrown by the body on any thread is caught there and rethrown by parallel_for on the calling thread
// once every share has finished (the first one wins), so a failing job fails its caller, never the process.
#include <atomic>
#include <cstdint>
#include <exception>
#include <thread>
#include <type_traits>
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

  // Calls body(begin, end) on disjoint sub-ranges covering [0, count), share i = [count·i/n, count·(i+1)/n) for
  // n threads, each share run by whichever thread claims it first. Returns when all are done; rethrows the first
  // exception a share threw. Not re-entrant.
  template <class Body>
  void parallel_for(int64_t count, Body&& body) {
    using Decayed = std::remove_reference_t<Body>;
    run(
        count, [](void* context, int64_t begin, int64_t end) { (*static_cast<Decayed*>(context))(begin, end); },
        const_cast<void*>(static_cast<const void*>(&body)));
  }

  static int default_thread_count();  // the number of cores

 private:
  using Trampoline = void (*)(void* context, int64_t begin, int64_t end);
  void run(int64_t count, Trampoline trampoline, void* context);
  void run_claimed_shares();
  void run_share(int64_t begin, int64_t end);
  void worker_loop(int worker_index);

  std::vector<std::thread> workers_;
  // The job, published by a release increment of generation_.
  Trampoline trampoline_ = nullptr;
  void* context_ = nullptr;
  int64_t count_ = 0;
  std::atomic<uint64_t> generation_{0};
  // The next share to claim; reset to 0 (release) after the job fields are written, so a claim that succeeds sees
  // them. Stays ≥ the share count between jobs, so a late worker's claim fails.
  std::atomic<int> next_share_{1 << 30};
  std::atomic<int> finished_shares_{0};
  std::atomic<bool> failed_{false};
  std::exception_ptr first_error_;  // written once, by the share that set failed_
  std::atomic<int> sleeping_workers_{0};
  std::atomic<bool> stopping_{false};
};

}  // namespace minigen
