#pragma once
// SGLang's native generation API (`POST /generate`) as MiniMind's RL trainers call it (trainer/rollout_engine.py,
// SGLangRolloutEngine): JSON in, one Job per prompt out; the finished choices in, SGLang's result list out.
//
// Request: "text" or "input_ids" — one prompt or a list; "sampling_params" with SGLang's names and defaults
// (temperature 1.0 with 0 = greedy, top_p 1.0, top_k −1 = off, min_p 0, max_new_tokens 128, stop, stop_token_ids,
// ignore_eos, repetition/frequency/presence penalties, n, json_schema, sampling_seed); "return_logprob",
// "top_logprobs_num", "return_text_in_logprobs", "rid", and minigen's "logprob_distribution": "raw" (default: the
// log-probability under the raw logits, what MiniMind's compute_per_token_logps recomputes) or "sampling" (the
// distribution the token was drawn from). An unknown field, a wrong type or a value out of range is an ApiError 400
// naming the field.
//
// Result per sequence (prompt k's copy j is item k·n + j): "text", "output_ids" and "meta_info" with "id",
// "finish_reason" ({"type": "stop", "matched": id or string} or {"type": "length", "length": N}), "prompt_tokens",
// "completion_tokens", "cached_tokens", "output_ids", "output_token_logprobs" as [logprob, token_id, text or null]
// — one per output id, the ending eos included — "output_top_logprobs", "weight_version", "sampling_seed",
// "e2e_latency". A single prompt with n = 1 answers one object, anything else a list.
//
// "stream": true answers server-sent events as SGLang does: `data: {result so far, "index": k·n + j}` each time a
// sequence has a new token (its text, output_ids and logprobs cumulative), then `data: [DONE]`.
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "grammar/token_vocabulary.h"
#include "request/job.h"
#include "tokenizer/bpe_tokenizer.h"

namespace minigen {

// The most sequences (prompts × n) one /generate request may ask for: a rollout of 64 prompts × 16 copies.
inline constexpr int kMaxGenerateSequences = 1024;

struct GenerateRequest {
  std::vector<Job> jobs;   // one per prompt, each with n choices and its rows in the rollout
  bool list_form = false;  // the prompts came as a list: the answer is a list even for one
  bool return_logprob = false;
  bool raw_logprobs = true;  // "logprob_distribution": "raw" (true) or "sampling"
  int top_logprobs_num = 0;
  bool text_in_logprobs = false;
  bool stream = false;
  std::vector<std::string> rids;  // one per prompt
};

GenerateRequest parse_generate_request(const std::string& body, const Tokenizer& tokenizer,
                                       const std::shared_ptr<const TokenVocabulary>& vocabulary);

// What one sequence produced, gathered from its job's events.
struct RolloutSequence {
  std::vector<JobEvent> tokens;  // one per generated token, in order
  std::string text;
  std::string finish_reason;  // "stop", "length" or "abort"
  std::string abort_message;
  std::string weight_version = "default";  // the weights it was computed with
  int prompt_tokens = 0;
  int cached_tokens = 0;
};

// One sequence's result (`index` = k·n + j): finished, or so far while streaming ("finish_reason" null until the
// end). SGLang streams these whole — text, output_ids and logprobs from the first token on, not only the new ones.
nlohmann::json sequence_result(const GenerateRequest& request, std::size_t index, const RolloutSequence& sequence,
                               const Tokenizer& tokenizer, double e2e_latency_seconds);

// The answer: `sequences` in request order (prompt k's choice j at k·n + j).
nlohmann::json generate_response(const GenerateRequest& request, const std::vector<RolloutSequence>& sequences,
                                 const Tokenizer& tokenizer, double e2e_latency_seconds);

// POST /update_weights_from_disk: {"model_path", "weight_version"?, "abort_all_requests"? (false: requests in
// flight finish on the old weights first; true: they end with finish_reason "abort"), "load_format"? ("auto"),
// "flush_cache"? (true; false is refused: the prefix cache is always emptied with the switch)}.
struct UpdateWeightsRequest {
  std::string model_path;
  std::string weight_version;  // empty: the server numbers the update
  bool abort_all_requests = false;
};

// Throws ApiError 400 naming the field.
UpdateWeightsRequest parse_update_weights_request(const std::string& body);

}  // namespace minigen
