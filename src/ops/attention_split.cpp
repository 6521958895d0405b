// Split-K scheduling of a forward call's attention: which thread runs which chunk, and the merge after.
#include "ops/attention_split.h"

#include <algorithm>
#include <cstdint>
#include <utility>

#include "core/assert.h"

namespace minigen {
namespace {

// Scratch for one chunk's scores on the calling thread: group_size · round_up(min(keys, chunk), 16) floats.
float* chunk_scores(int group_size, int num_keys) {
  thread_local std::vector<float> scores;
  const int keys = std::min(num_keys, kAttentionChunkKeys);
  const std::size_t padded = static_cast<std::size_t>(keys + KvBlockLayout::kBlockTokens - 1) /
                             KvBlockLayout::kBlockTokens * KvBlockLayout::kBlockTokens;
  if (scores.size() < group_size * padded) scores.resize(group_size * padded);
  return scores.data();
}

// With fewer than this many (token, kv head) items per thread, the chunks are split across threads.
constexpr int kItemsPerThreadWithoutSplit = 4;

}  // namespace

bool SplitAttention::splits_chunks(std::span<const AttentionTask> tasks, int kv_heads, int threads) {
  if (threads <= 1) return false;
  if (static_cast<int64_t>(tasks.size()) * kv_heads >= static_cast<int64_t>(kItemsPerThreadWithoutSplit) * threads)
    return false;
  return std::any_of(tasks.begin(), tasks.end(),
                     [](const AttentionTask& task) { return attention_chunk_count(task.num_keys) > 1; });
}

void SplitAttention::run(std::span<const AttentionTask> tasks, int kv_heads, int group_size, ThreadPool& pool) {
  MINIGEN_ASSERT(kv_heads >= 1 && group_size >= 1, "attention: ", kv_heads, " kv heads in groups of ", group_size);
  if (splits_chunks(tasks, kv_heads, pool.num_threads())) {
    run_split(tasks, kv_heads, group_size, pool);
  } else {
    run_whole(tasks, kv_heads, group_size, pool);
  }
}

void SplitAttention::run_whole(std::span<const AttentionTask> tasks, int kv_heads, int group_size, ThreadPool& pool) {
  pool.parallel_for(static_cast<int64_t>(tasks.size()) * kv_heads, [&](int64_t begin, int64_t end) {
    for (int64_t item = begin; item < end; ++item) {
      const AttentionTask& task = tasks[item / kv_heads];
      const int kv_head = static_cast<int>(item % kv_heads);
      const std::size_t group_floats = static_cast<std::size_t>(group_size) * task.layout->head_dim;
      const AttentionGroup group{task.queries + kv_head * group_floats, task.out + kv_head * group_floats, group_size,
                                 kv_head};
      attend(group, task.blocks, task.num_keys, *task.layout, chunk_scores(group_size, task.num_keys));
    }
  });
}

void SplitAttention::run_split(std::span<const AttentionTask> tasks, int kv_heads, int group_size, ThreadPool& pool) {
  // Per task: its chunks' softmax summaries [kv_head][chunk][group] and, for a task of more than one chunk, its
  // partial outputs [kv_head][chunk][group][head_dim]; a task of one chunk writes its output directly.
  items_.clear();
  merged_tasks_.clear();
  task_offsets_.resize(tasks.size());
  std::size_t softmax_count = 0, partial_floats = 0;
  for (std::size_t t = 0; t < tasks.size(); ++t) {
    const int chunks = attention_chunk_count(tasks[t].num_keys);
    for (int c = 0; c < chunks; ++c) items_.push_back({static_cast<int>(t), c});
    task_offsets_[t] = {softmax_count, partial_floats};
    const std::size_t slots = static_cast<std::size_t>(kv_heads) * chunks * group_size;
    softmax_count += slots;
    if (chunks > 1) {
      merged_tasks_.push_back(static_cast<int>(t));
      partial_floats += slots * tasks[t].layout->head_dim;
    }
  }
  if (softmax_.size() < softmax_count) softmax_.resize(softmax_count);
  if (partials_.size() < partial_floats) partials_.resize(partial_floats);

  // The first of (kv head, chunk)'s group_size summaries and, if merged, partial outputs of task t.
  const auto slot = [&](int t, int kv_head, int chunk) {
    const std::size_t index = static_cast<std::size_t>(kv_head) * attention_chunk_count(tasks[t].num_keys) + chunk;
    return std::pair{softmax_.data() + task_offsets_[t].softmax + index * group_size,
                     partials_.data() + task_offsets_[t].partials + index * group_size * tasks[t].layout->head_dim};
  };

  // (task, chunk, kv head): consecutive items read the same blocks, and each thread's share is a stretch of them.
  pool.parallel_for(static_cast<int64_t>(items_.size()) * kv_heads, [&](int64_t begin, int64_t end) {
    for (int64_t item = begin; item < end; ++item) {
      const auto [t, chunk] = items_[item / kv_heads];
      const AttentionTask& task = tasks[t];
      const int kv_head = static_cast<int>(item % kv_heads);
      const std::size_t group_floats = static_cast<std::size_t>(group_size) * task.layout->head_dim;
      const auto [softmax, partial] = slot(t, kv_head, chunk);
      const bool merged = attention_chunk_count(task.num_keys) > 1;
      const AttentionGroup group{task.queries + kv_head * group_floats,
                                 merged ? partial : task.out + kv_head * group_floats, group_size, kv_head};
      attend_chunk(group, task.blocks, task.num_keys, chunk, *task.layout, chunk_scores(group_size, task.num_keys),
                   softmax);
    }
  });

  pool.parallel_for(static_cast<int64_t>(merged_tasks_.size()) * kv_heads, [&](int64_t begin, int64_t end) {
    for (int64_t item = begin; item < end; ++item) {
      const int t = merged_tasks_[item / kv_heads];
      const AttentionTask& task = tasks[t];
      const int kv_head = static_cast<int>(item % kv_heads);
      const int head_dim = task.layout->head_dim;
      const auto [softmax, partials] = slot(t, kv_head, 0);
      merge_attention_chunks(attention_chunk_count(task.num_keys), group_size, head_dim, partials, softmax,
                             task.out + static_cast<std::size_t>(kv_head) * group_size * head_dim);
    }
  });
}

}  // namespace minigen
