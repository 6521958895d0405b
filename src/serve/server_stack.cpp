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

// The fingerprint names what changes the bits of an answer besides the request: the weights' and the cache's types.
// And the vocabulary grammars mask, built once per server. Added tokens that are not special (<tool_call>, <think>)
// count as their text, so a forced tool call may use the model's own <tool_call> token.
ApiServerOptions api_options(ApiServerOptions api, WeightType weights, KvDType kv_dtype, const Model& model,
                             const Tokenizer& tokenizer) {
  api.system_fingerprint =
      "minigen-" + std::string(weight_type_name(weights)) + "-kv-" + std::string(kv_dtype_name(kv_dtype));
  api.grammar_vocabulary = TokenVocabulary::from_tokenizer(
      tokenizer, model.config.vocab_size, model.config.eos_token_id, /*plain_added_tokens_as_text=*/true);
  return api;
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
      adapters_(std::move(model_name), model.config),
      api_(engine_, tokenizer, adapters_,
           api_options(options_.api, options_.weight_type, options_.kv_dtype, model, tokenizer)) {
  transformer_.warm_up();  // before the first request, whose TTFT should be its prefill
}

}  // namespace minigen
