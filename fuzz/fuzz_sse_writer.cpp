// The streaming and whole-response writers (src/serve/openai_api.*: events → JSON, framed as server-sent events)
// on fuzzed events: any token id, any text bytes (a token can end inside a UTF-8 character), any probability bits
// (NaN, infinities, denormals), any candidate list. Beyond "no crash": every chunk and every response is valid JSON
// with no raw newline (an SSE event ends at a blank line), each logprob entry's "token" is valid UTF-8 and its
// "bytes" are exactly the token's bytes.
#include <cstring>
#include <nlohmann/json.hpp>

#include "core/json_text.h"
#include "fuzz_check.h"
#include "openai/openai_api.h"
#include "shipped_tokenizer.h"
#include "tokenizer/bpe_tokenizer.h"
#include "tokenizer/utf8.h"

using namespace minigen;

namespace {

// Reads fixed-size fields from the front of the input, zeros once it runs out.
struct Reader {
  const uint8_t* data;
  size_t size;
  template <class T>
  T take() {
    T value{};
    const size_t n = std::min(sizeof(T), size);
    std::memcpy(&value, data, n);
    data += n;
    size -= n;
    return value;
  }
};

void check_entry(const nlohmann::json& entry, const Tokenizer& tokenizer) {
  const int id = entry.at("token_id").get<int>();
  std::string bytes;
  for (const auto& byte : entry.at("bytes")) bytes.push_back(static_cast<char>(byte.get<int>()));
  fuzz::check(bytes == tokenizer.token_bytes(id), "\"bytes\" are the token's bytes");
  fuzz::check(first_invalid_utf8(entry.at("token").get<std::string>()) == std::string::npos, "\"token\" is UTF-8");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const Tokenizer& tokenizer = fuzz::shipped_tokenizer();
  Reader reader{data, size};
  const auto flags = reader.take<uint8_t>();
  ApiRequest request;
  request.endpoint = (flags & 1) != 0 ? Endpoint::kChatCompletions : Endpoint::kCompletions;
  request.logprobs = (flags & 2) != 0;
  request.job.choices = 1;
  JobEvent event;
  event.token = static_cast<int>(reader.take<uint16_t>() % static_cast<unsigned>(tokenizer.vocab_size()));
  event.probability = reader.take<float>();
  event.kept_candidates = reader.take<int32_t>();
  event.finished = (flags & 4) != 0;
  event.finish_reason = (flags & 8) != 0 ? "stop" : "length";
  for (int i = reader.take<uint8_t>() % 21; i > 0; --i) {
    event.top.push_back({static_cast<int>(reader.take<uint16_t>() % static_cast<unsigned>(tokenizer.vocab_size())),
                         reader.take<float>()});
  }
  event.text.assign(reinterpret_cast<const char*>(reader.data), reader.size);  // any bytes, as a token may end

  const std::string chunk = to_json_text(stream_chunk(request, {"id-1", "model", "minigen"}, event, tokenizer));
  fuzz::check(nlohmann::json::accept(chunk), "a chunk is valid JSON");
  fuzz::check(chunk.find('\n') == std::string::npos, "no raw newline inside an SSE event");
  ChoiceResult choice;
  choice.text = event.text;
  choice.finish_reason = event.finish_reason;
  choice.tokens.push_back(event);
  const std::string whole =
      to_json_text(completion_response(request, {"id-1", "model", "minigen"}, {choice}, 3, tokenizer));
  fuzz::check(nlohmann::json::accept(whole), "a response is valid JSON");
  // The eos that ends a choice is not part of the text, so it has no logprobs entry; every other token has one.
  const bool ends_with_eos = event.finished && event.token == tokenizer.eos_id();
  const nlohmann::json parsed = nlohmann::json::parse(chunk);
  fuzz::check(parsed["choices"][0]["logprobs"].is_null() == (!request.logprobs || ends_with_eos),
              "logprobs for every token of the text, and only when asked for");
  if (request.logprobs && !ends_with_eos) {
    const nlohmann::json& entry = parsed["choices"][0]["logprobs"]["content"][0];
    check_entry(entry, tokenizer);
    for (const nlohmann::json& candidate : entry["top_logprobs"]) check_entry(candidate, tokenizer);
  }
  return 0;
}
