#include "serve/server_stack.h"

#include "core/error.h"

namespace minigen {
namespace {

int pool_blocks(const KvLayout& layout, std::size_t budget_bytes) {
  const int blocks = BlockPool::blocks_for_budget(layout, budget_bytes);
  if (blocks < 1) {
    throw Error("the KV budget (" + std::to_string(budget_bytes) + " bytes) is smaller than one KV block (" +
                std::to_string(BlockPool::bytes_per_block(layout)) + " bytes)");
  }
  return blocks;
}

}  // namespace

ServerStack::ServerStack(const Model& model, const Tokenizer& tokenizer, std::string model_name, ServeOptions options)
    : options_(std::move(options)),
      threads_(options_.threads > 0 ? options_.threads : ThreadPool::default_thread_count()),
      transformer_(model, threads_, options_.weight_type),
      blocks_(model.config.kv_layout(options_.kv_dtype),
              pool_blocks(model.config.kv_layout(options_.kv_dtype), options_.kv_budget_bytes)),
      engine_(transformer_, blocks_, tokenizer, SchedulerOptions{options_.max_batch, options_.token_budget},
              options_.max_queue),
      api_(engine_, tokenizer, std::move(model_name), options_.api) {}

}  // namespace minigen
