#include "serve/server_stack.h"

#include "checkpoint/model_loader.h"
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
ApiServerOptions api_options(ApiServerOptions api, const Transformer& transformer, KvDType kv_dtype, const Model& model,
                             const Tokenizer& tokenizer) {
  // "minigen-q8-kv-f32"; int8 activations on q8 weights (not their default) add "-a8": another model's numbers.
  const WeightType weights = transformer.weight_type();
  const bool w8a8 = weights == WeightType::kQ8 && transformer.activations() == ActivationCodes::kInt8;
  api.system_fingerprint = "minigen-" + std::string(weight_type_name(weights)) + (w8a8 ? "-a8" : "") + "-kv-" +
                           std::string(kv_dtype_name(kv_dtype));
  api.weight_type = weight_type_name(weights);
  api.activations = reported_activations(weights, transformer.activations());
  api.grammar_vocabulary = TokenVocabulary::from_tokenizer(
      tokenizer, model.config.vocab_size, model.config.eos_token_id, /*plain_added_tokens_as_text=*/true);
  return api;
}

}  // namespace

ServerStack::ServerStack(const Model& model, const Tokenizer& tokenizer, std::string model_name, ServeOptions options)
    : options_(std::move(options)),
      threads_(options_.threads > 0 ? options_.threads : ThreadPool::default_thread_count()),
      transformer_(std::make_unique<Transformer>(model, threads_, options_.weight_type, options_.activations)),
      blocks_(model.config.kv_layout(options_.kv_dtype),
              pool_blocks(model.config.kv_layout(options_.kv_dtype), options_.kv_budget_bytes)),
      engine_(*transformer_, blocks_, tokenizer, SchedulerOptions{options_.max_batch, options_.token_budget},
              options_.max_queue),
      adapters_(std::move(model_name), model.config),
      api_(engine_, tokenizer, adapters_, [&] {
        ApiServerOptions api = api_options(options_.api, *transformer_, options_.kv_dtype, model, tokenizer);
        api.update_weights = [this](const std::string& path, const std::string& version, bool abort) {
          return update_weights(path, version, abort);
        };
        return api;
      }()) {
  transformer_->warm_up();  // before the first request, whose TTFT should be its prefill
}

WeightUpdateReport ServerStack::update_weights(const std::string& model_path, const std::string& weight_version,
                                               bool abort_all_requests) {
  using Clock = std::chrono::steady_clock;
  std::lock_guard lock(update_mutex_);
  const auto started = Clock::now();
  // Served as f16, the file's fp16 matrices pack as they are: no fp32 copy of the whole model to fault in and fill.
  const TensorReadOptions read{.keep_fp16_matrices = options_.weight_type == WeightType::kF16};
  std::unique_ptr<Model> model = weight_loader_ ? weight_loader_(model_path, engine_.config(), read)
                                                : load_replacement_weights(model_path, engine_.config(), read);
  auto next = std::make_unique<Transformer>(*model, threads_, options_.weight_type, options_.activations);
  model->release_matrices();  // the packed copy is the one that runs
  const auto loaded = Clock::now();
  WeightUpdateReport report;
  report.weight_version = weight_version.empty() ? std::to_string(updates_ + 1) : weight_version;
  engine_.replace_weights(*next, report.weight_version, abort_all_requests);
  ++updates_;
  transformer_ = std::move(next);  // the old weights are freed here: the engine no longer reads them
  updated_model_ = std::move(model);
  report.load_seconds = std::chrono::duration<double>(loaded - started).count();
  report.switch_seconds = std::chrono::duration<double>(Clock::now() - loaded).count();
  return report;
}

}  // namespace minigen
