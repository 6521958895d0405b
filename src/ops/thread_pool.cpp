#include "ops/thread_pool.h"

#include <algorithm>
#include <utility>

namespace minigen {
namespace {

// A pause is ~20 ns on this machine's cores: 10,000 of them (~0.2 ms) outlast the gap between two jobs of one
// forward pass and the sampling between two decode steps, yet an idle pool stops spinning soon enough not to
// starve other threads of the process (the server's HTTP threads) on a small machine.
constexpr int kSpinsBeforeSleep = 10000;
constexpr int kSpinsBeforeYield = 1000;

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

}  // namespace

ThreadPool::ThreadPool(int num_threads) {
  for (int i = 1; i < std::max(1, num_threads); ++i) workers_.emplace_back([this, i] { worker_loop(i); });
}

ThreadPool::~ThreadPool() {
  stopping_.store(true);
  generation_.fetch_add(1);
  generation_.notify_all();
  for (auto& worker : workers_) worker.join();
}

int ThreadPool::default_thread_count() { return std::max(1u, std::thread::hardware_concurrency()); }

void ThreadPool::run_claimed_shares() {
  const int64_t shares = num_threads();
  for (int share = next_share_.fetch_add(1, std::memory_order_acq_rel); share < shares;
       share = next_share_.fetch_add(1, std::memory_order_acq_rel)) {
    const int64_t begin = count_ * share / shares;
    const int64_t end = count_ * (share + 1) / shares;
    if (begin < end) run_share(begin, end);
    finished_shares_.fetch_add(1, std::memory_order_acq_rel);
  }
}

void ThreadPool::run_share(int64_t begin, int64_t end) {
  try {
    trampoline_(context_, begin, end);
  } catch (...) {
    // An exception must not leave a worker thread (std::terminate); the caller rethrows it after the join.
    if (!failed_.exchange(true, std::memory_order_acq_rel)) first_error_ = std::current_exception();
  }
}

void ThreadPool::run(int64_t count, Trampoline trampoline, void* context) {
  if (count <= 0) return;
  if (workers_.empty() || count == 1) {
    trampoline(context, 0, count);
    return;
  }
  trampoline_ = trampoline;
  context_ = context;
  count_ = count;
  failed_.store(false, std::memory_order_relaxed);
  first_error_ = nullptr;
  finished_shares_.store(0, std::memory_order_relaxed);
  next_share_.store(0, std::memory_order_release);
  // seq_cst pairs with the worker's seq_cst increment of sleeping_workers_: either we see it asleep and wake it,
  // or its wait() sees the new generation.
  generation_.fetch_add(1);
  if (sleeping_workers_.load() > 0) generation_.notify_all();
  run_claimed_shares();
  const int shares = num_threads();
  for (int spins = 0; finished_shares_.load(std::memory_order_acquire) != shares; ++spins) {
    if (spins < kSpinsBeforeYield) {
      cpu_relax();
    } else {
      std::this_thread::yield();
    }
  }
  // The acquire load of the last finished share orders first_error_'s write before this read.
  if (failed_.load(std::memory_order_acquire)) std::rethrow_exception(std::exchange(first_error_, nullptr));
}

void ThreadPool::worker_loop(int /*worker_index*/) {
  uint64_t seen_generation = 0;
  while (true) {
    uint64_t generation = generation_.load(std::memory_order_acquire);
    for (int spins = 0; generation == seen_generation; ++spins) {
      if (spins < kSpinsBeforeSleep) {
        cpu_relax();
      } else {
        sleeping_workers_.fetch_add(1);
        generation_.wait(seen_generation);
        sleeping_workers_.fetch_sub(1);
        spins = 0;
      }
      generation = generation_.load(std::memory_order_acquire);
    }
    seen_generation = generation;
    if (stopping_.load()) return;
    run_claimed_shares();
  }
}

}  // namespace minigen
