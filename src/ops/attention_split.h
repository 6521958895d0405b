#pragma once
// The attention of every token of one forward call, spread over a thread pool.
//
// Work items are (token, kv head) when there are enough of them to keep every thread busy (prefill, batched decode):
// each item attends over all its keys, chunk after chunk, on one thread. When there are few (one sequence's decode
// step) and a token's context spans several chunks, the items become (token, chunk, kv head) — split-K: the chunks
// run on different threads, each thread streaming its own stretch of the cache (both kv heads of a block, one after
// the other), and the chunks are merged after. Both ways run the same chunks and the same merge (ops/attention.h),
// so the bits do not depend on which way, nor on the thread count.
#include <cstddef>
#include <span>
#include <vector>

#include "ops/attention.h"
#include "ops/thread_pool.h"

namespace minigen {

// One token's attention: its query heads (kv_heads · group_size · head_dim floats, group by group) over its keys.
struct AttentionTask {
  const float* queries = nullptr;
  float* out = nullptr;  // same shape as queries
  std::span<const std::byte* const> blocks;
  int num_keys = 0;
  const KvBlockLayout* layout = nullptr;
};

class SplitAttention {
 public:
  // Runs every task; all share kv_heads, group_size and the layout's head_dim.
  void run(std::span<const AttentionTask> tasks, int kv_heads, int group_size, ThreadPool& pool);

  // True when run() splits the tasks' chunks across threads (the tests check which way they ran).
  static bool splits_chunks(std::span<const AttentionTask> tasks, int kv_heads, int threads);

 private:
  void run_whole(std::span<const AttentionTask> tasks, int kv_heads, int group_size, ThreadPool& pool);
  void run_split(std::span<const AttentionTask> tasks, int kv_heads, int group_size, ThreadPool& pool);

  struct ChunkItem {
    int task = 0;
    int chunk = 0;
  };
  struct TaskOffsets {
    std::size_t softmax = 0;   // into softmax_
    std::size_t partials = 0;  // into partials_
  };
  std::vector<ChunkItem> items_;  // (task, chunk), task-major; × kv_heads in the parallel_for
  std::vector<TaskOffsets> task_offsets_;
  std::vector<ChunkSoftmax> softmax_;  // per task: [kv_head][chunk][group]
  std::vector<float> partials_;        // per task of several chunks: [kv_head][chunk][group][head_dim]
  std::vector<int> merged_tasks_;      // the tasks of several chunks
};

}  // namespace minigen
