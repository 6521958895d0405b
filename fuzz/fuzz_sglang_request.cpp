// SGLang's /generate and /update_weights_from_disk request parsers (src/openai/sglang_generate.*) with the shipped
// tokenizer. Beyond "no crash": the only exception is ApiError with a 4xx status naming a field or none, and its error
// body is valid JSON; an accepted request has 1 to kMaxGenerateSequences sequences, in-vocabulary prompts and stop
// token ids, rows that do not overlap (prompt k's first row is k · n), and sampling values the library accepts; an
// accepted weight update has a non-empty, bounded model_path.
#include <nlohmann/json.hpp>

#include "core/json_text.h"
#include "fuzz_check.h"
#include "openai/openai_api.h"
#include "openai/sglang_generate.h"
#include "shipped_tokenizer.h"
#include "tokenizer/bpe_tokenizer.h"

using namespace minigen;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string body(fuzz::as_text(data, size));
  // The same bytes as a weight-update body: a 400 naming a field, or a non-empty path of at most 4,096 bytes.
  try {
    const UpdateWeightsRequest update = parse_update_weights_request(body);
    fuzz::check(!update.model_path.empty() && update.model_path.size() <= 4096, "a bounded model_path");
    fuzz::check(update.weight_version.size() <= 128, "a bounded weight_version");
  } catch (const ApiError& error) {
    fuzz::check(error.status == 400, "a bad update body is a 400");
  }
  const Tokenizer& tokenizer = fuzz::shipped_tokenizer();
  GenerateRequest request;
  try {
    request = parse_generate_request(body, tokenizer, nullptr);
  } catch (const ApiError& error) {
    fuzz::check(error.status >= 400 && error.status < 500, "a client error is a 4xx");
    const std::string text = to_json_text(error_body(error.what(), "invalid_request_error", error.param));
    fuzz::check(nlohmann::json::accept(text), "the error body is valid JSON");
    return 0;
  }
  fuzz::check(!request.jobs.empty(), "at least one prompt");
  fuzz::check(request.rids.size() == request.jobs.size(), "one rid per prompt");
  int64_t sequences = 0;
  for (const Job& job : request.jobs) {
    fuzz::check(job.first_rng_row == static_cast<uint64_t>(sequences), "rows follow each other");
    sequences += job.choices;
    fuzz::check(!job.prompt.empty(), "a prompt");
    for (int id : job.prompt) fuzz::check(id >= 0 && id < tokenizer.vocab_size(), "prompt ids in the vocabulary");
    for (int id : job.settings.stop_token_ids) {
      fuzz::check(id >= 0 && id < tokenizer.vocab_size(), "stop token ids in the vocabulary");
    }
    fuzz::check(job.settings.max_new_tokens >= 1, "at least one new token");
    job.settings.sampling.validate();  // throws minigen::Error, which libFuzzer reports, if a bad value got in
  }
  fuzz::check(sequences >= 1 && sequences <= kMaxGenerateSequences, "1 to kMaxGenerateSequences sequences");
  fuzz::check(request.top_logprobs_num >= 0 && request.top_logprobs_num <= 20, "at most 20 top logprobs");
  return 0;
}
