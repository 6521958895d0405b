// The OpenAI request parser (src/serve/openai_api.*: JSON body → Job) with the shipped tokenizer. The first byte
// picks the endpoint (bit 0: chat), the rest is the body. Beyond "no crash": the only exception is ApiError with a
// 4xx status, and its error body is valid JSON whatever bytes the message quotes; an accepted request has a prompt of
// in-vocabulary ids, 1–16 choices, at most 4 non-empty stop strings, at most 20 top logprobs, and sampling values
// that pass the library's own validation.
#include <nlohmann/json.hpp>

#include "core/json_text.h"
#include "fuzz_check.h"
#include "openai/openai_api.h"
#include "shipped_tokenizer.h"
#include "tokenizer/bpe_tokenizer.h"

using namespace minigen;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const Endpoint endpoint = (data[0] & 1) != 0 ? Endpoint::kChatCompletions : Endpoint::kCompletions;
  const std::string body(fuzz::as_text(data + 1, size - 1));
  const Tokenizer& tokenizer = fuzz::shipped_tokenizer();
  ApiRequest request;
  try {
    request = parse_api_request(endpoint, body, tokenizer);
  } catch (const ApiError& error) {
    fuzz::check(error.status >= 400 && error.status < 500, "a client error is a 4xx");
    const std::string text = to_json_text(error_body(error.what(), "invalid_request_error", error.param));
    fuzz::check(nlohmann::json::accept(text), "the error body is valid JSON");
    return 0;
  }
  const Job& job = request.job;
  fuzz::check(!job.prompt.empty(), "a prompt");
  for (int id : job.prompt) fuzz::check(id >= 0 && id < tokenizer.vocab_size(), "prompt ids in the vocabulary");
  fuzz::check(job.choices >= 1 && job.choices <= 16, "1 to 16 choices");
  fuzz::check(job.stop.size() <= 4, "at most 4 stop strings");
  for (const std::string& stop : job.stop) fuzz::check(!stop.empty(), "stop strings are not empty");
  fuzz::check(request.top_logprobs >= 0 && request.top_logprobs <= 20, "at most 20 top logprobs");
  fuzz::check(job.settings.max_new_tokens >= 1, "at least one new token");
  job.settings.sampling.validate();  // throws minigen::Error, which libFuzzer reports, if the API let a bad value in
  return 0;
}
