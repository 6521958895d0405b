#include "generate/run_summary.h"

#include "core/format.h"
#include "core/process_memory.h"

namespace minigen {

namespace {

// {"17": -100, …}: OpenAI's shape of the field.
nlohmann::json logit_bias_json(const std::vector<LogitBias>& biases) {
  nlohmann::json out = nlohmann::json::object();
  for (const LogitBias& entry : biases) out[std::to_string(entry.token)] = as_typed_decimal(entry.bias);
  return out;
}

// A reported name, or null where there is none (float weights have no activation codes).
nlohmann::json json_or_null(std::string_view name) {
  return name.empty() ? nlohmann::json(nullptr) : nlohmann::json(name);
}

}  // namespace

RunMemory run_memory(const Transformer& transformer) {
  return {transformer.weight_type(), transformer.activations(), transformer.weight_bytes(), resident_memory_bytes()};
}

nlohmann::json run_summary_json(const GenerateResult& result, const Tokenizer& tokenizer,
                                const GenerateOptions& options, const std::filesystem::path& model_path,
                                const RunMemory& memory, const LoraAdapter* adapter) {
  const GenerateStats& stats = result.stats;
  nlohmann::json sequences = nlohmann::json::array();
  for (const GeneratedSequence& sequence : result.sequences) {
    sequences.push_back({{"token_ids", sequence.token_ids},
                         {"text", tokenizer.decode(sequence.token_ids, /*skip_special_tokens=*/true)},
                         {"new_tokens", sequence.token_ids.size()},
                         {"finish_reason", sequence.finish_reason},
                         {"forward_tokens", sequence.forward_tokens},
                         {"padding_steps", sequence.padding_steps}});
    // With --json-schema or --json-object: how many ids the grammar allowed at each step.
    if (!sequence.grammar_allowed_tokens.empty())
      sequences.back()["grammar_allowed_tokens"] = sequence.grammar_allowed_tokens;
  }
  const SamplingParams& sampling = options.sampling;
  nlohmann::json summary = {
      {"model", model_path.string()},
      {"prompt_tokens", result.sequences.empty() ? 0 : result.sequences.front().prompt_tokens},
      {"forward_calls", stats.forward_calls},
      {"forward_tokens", stats.forward_tokens},
      {"kv_cache_bytes", stats.kv_bytes_used},
      {"recompute_buffer_bytes", stats.recompute_buffer_bytes},
      {"kv_cache_bytes_allocated", stats.kv_bytes_allocated},
      {"weights", weight_type_name(memory.weights)},
      {"activations", json_or_null(reported_activations(memory.weights, memory.activations))},
      {"weight_bytes", memory.weight_bytes},
      {"resident_bytes", memory.resident_bytes},
      {"load_ms", stats.load_ms},
      {"ttft_ms", stats.ttft_ms},
      {"itl_ms", stats.itl_ms},
      {"total_ms", stats.total_ms},
      {"sequences", sequences},
      {"settings",
       {{"max_new_tokens", options.max_new_tokens},
        {"use_cache", options.use_cache},
        {"kv_dtype", kv_dtype_name(options.kv_dtype)},
        {"ignore_eos", options.ignore_eos},
        {"greedy", sampling.takes_argmax()},
        {"temperature", as_typed_decimal(sampling.temperature)},
        {"top_k", sampling.top_k},
        {"top_p", as_typed_decimal(sampling.top_p)},
        {"min_p", as_typed_decimal(sampling.min_p)},
        {"repetition_penalty", as_typed_decimal(sampling.repetition_penalty)},
        {"frequency_penalty", as_typed_decimal(sampling.frequency_penalty)},
        {"presence_penalty", as_typed_decimal(sampling.presence_penalty)},
        {"logit_bias", logit_bias_json(sampling.logit_bias)},
        {"top_p_rule", top_p_rule_name(sampling.top_p_rule)},
        {"seed", sampling.seed},
        {"num_return_sequences", result.sequences.size()}}},
  };
  if (adapter != nullptr) {
    summary["lora"] = {{"name", adapter->name},
                       {"source", adapter->source},
                       {"format", adapter->format},
                       {"rank", adapter->max_rank()},
                       {"scale", as_typed_decimal(adapter->scale)},
                       {"parameters", adapter->parameter_count()}};
  }
  return summary;
}

}  // namespace minigen
