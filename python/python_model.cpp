#include "python_model.h"

#include "checkpoint/model_description.h"
#include "core/error.h"
#include "generate/memory_budget.h"
#include "generate/run_summary.h"
#include "openai/chat_request.h"
#include "request/chat_turn.h"
#include "request/reply_fields.h"
#include "request/sampling_settings.h"

namespace minigen::python {

PythonCache::PythonCache(std::shared_ptr<PythonModel> model, int capacity_tokens)
    : model_(std::move(model)), cache_(model_->config().kv_layout(model_->kv_dtype()), capacity_tokens) {}

PythonModel::PythonModel(const ModelSettings& settings)
    : loaded_(settings.load()), kv_dtype_(settings.kv_dtype_value()) {
  const WeightType weights = settings.weight_type(*loaded_.model);
  pool_ = std::make_unique<ThreadPool>(settings.thread_count());
  transformer_ = std::make_unique<Transformer>(*loaded_.model, *pool_, weights, settings.activation_codes(weights));
  loaded_.model->release_matrices();  // the packed copy is the one that runs (as in the CLI)
  transformer_->warm_up();            // part of loading, as in the CLI: the first call's TTFT is its prefill
}

nlohmann::json PythonModel::config_fields() const {
  nlohmann::json fields = model_description(loaded_, kv_dtype_);
  nlohmann::json names_of_config_json = config_to_json(config());
  // config_to_json writes what an export stores (float32); stored_dtype and weights say what this model holds and runs.
  names_of_config_json.erase("torch_dtype");
  // Where both name a field, config.json's meaning wins: its intermediate_size is the dense MLP's width (an MoE
  // model's expert width is moe_intermediate_size), where `minigen info` shows the width that runs.
  fields.update(names_of_config_json);
  // `minigen info --json` names it weight_type; Model(weights=...) and Model.weights name it weights.
  fields["weight_type"] = weight_type_name(transformer_->weight_type());
  fields["weights"] = fields["weight_type"];
  if (const auto codes = reported_activations(transformer_->weight_type(), transformer_->activations());
      !codes.empty()) {
    fields["activations"] = codes;
  }
  return fields;
}

std::vector<int> PythonModel::encode(const Prompt& prompt) const {
  if (!prompt.ids.empty()) return prompt.ids;
  if (prompt.text.empty()) throw Error("give a prompt: a non-empty text or a list of token ids");
  if (!prompt.chat) return encode_base_prompt(tokenizer(), prompt.text);
  return encode_chat_turn(tokenizer(), {prompt.system, prompt.text, prompt.thinking, prompt.tools});
}

std::shared_ptr<const TokenVocabulary> PythonModel::vocabulary(bool plain_added_tokens_as_text) const {
  return TokenVocabulary::from_tokenizer(tokenizer(), config().vocab_size, config().eos_token_id,
                                         plain_added_tokens_as_text);
}

std::vector<int> PythonModel::encode_messages(const nlohmann::ordered_json& messages,
                                              const nlohmann::ordered_json& tools, bool add_generation_prompt,
                                              bool thinking) const {
  ChatConversation conversation = chat_conversation_from_json(messages, tools);
  ChatPromptOptions options;
  options.add_generation_prompt = add_generation_prompt;
  options.open_thinking = thinking;
  options.tools = std::move(conversation.tools);
  return encode_chat(tokenizer(), conversation.messages, options);
}

void PythonModel::forward(std::span<const int> ids, PythonCache* cache, std::vector<float>& out) {
  if (ids.empty()) throw Error("forward needs at least one token id");
  if (cache && cache->model() != this) throw Error("this cache was made by another model's new_cache()");
  // Before the fresh cache is sized by the ids: 10^6 ids would otherwise reserve 2 GB of cache to refuse them.
  check_fits_context(config(), cache ? cache->length() : 0, ids.size());
  const std::lock_guard lock(mutex_);
  KvCache fresh(config().kv_layout(kv_dtype_), cache ? 0 : static_cast<int>(ids.size()));
  KvCache& kv = cache ? cache->cache() : fresh;
  const ForwardRow row{&kv, ids, /*all_logits=*/true};
  const std::vector<float>& logits = transformer_->forward(std::span(&row, 1));
  out.assign(logits.begin(), logits.begin() + static_cast<std::ptrdiff_t>(ids.size()) * config().vocab_size);
}

void PythonModel::check_run(const RunRequest& run) const {
  if (run.options.max_new_tokens < 1) throw Error("max_new_tokens must be at least 1");
  if (run.num_return_sequences < 1 || run.num_return_sequences > kMaxBatchRows)
    throw Error("num_return_sequences must be in [1, " + std::to_string(kMaxBatchRows) + "]");
  try {
    check_sampling_settings(run.options.sampling);
  } catch (const RequestError& error) {
    throw Error(error.field() + " " + error.what());  // the keyword arguments have the parameters' names
  }
  run.options.sampling.check_vocabulary(config().vocab_size);
  const std::vector<std::vector<int>> prompts(run.num_return_sequences, run.prompt);
  check_run_memory(config(), generation_shape(prompts, run.options), "lower num_return_sequences or max_new_tokens");
}

nlohmann::json PythonModel::generate(const RunRequest& run, const TokenCallback& on_token) {
  check_run(run);
  const std::vector<std::vector<int>> prompts(run.num_return_sequences, run.prompt);
  const std::lock_guard lock(mutex_);
  const GenerateResult result = minigen::generate(*transformer_, prompts, run.options, on_token);
  nlohmann::json summary = run_summary_json(result, tokenizer(), run.options, loaded_.path, run_memory(*transformer_),
                                            loaded_.model->adapter.get());
  if (run.chat) add_chat_reply_fields(summary, run.thinking, run.tools_offered);
  return summary;
}

}  // namespace minigen::python
