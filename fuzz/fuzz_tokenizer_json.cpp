// tokenizer.json (+ tokenizer_config.json) loading (src/tokenizer/tokenizer_json_loader.*). The input is
// tokenizer.json, optionally followed by a NUL byte and tokenizer_config.json (JSON text holds no raw NUL). Beyond
// "no crash" and "only minigen::Error": a tokenizer that loads encodes sample texts (and the input itself) to ids in
// [0, vocab_size) that decode back to the same bytes, and its bos/eos/pad ids, when it has them, lie in the vocabulary.
#include <optional>
#include <string>

#include "core/error.h"
#include "fuzz_check.h"
#include "tokenizer/bpe_tokenizer.h"

using namespace minigen;

namespace {

void check_round_trip(const Tokenizer& tokenizer, std::string_view text) {
  const std::vector<int> ids = tokenizer.encode(text);
  for (const int id : ids) fuzz::check(id >= 0 && id < tokenizer.vocab_size(), "ids inside the vocabulary");
  fuzz::check(tokenizer.decode(ids, /*skip_special_tokens=*/false) == text, "decode(encode(text)) == text");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input = fuzz::as_text(data, size);
  const std::size_t split = input.find('\0');
  const std::string_view tokenizer_json = input.substr(0, split);
  std::optional<std::string_view> config_json;
  if (split != std::string_view::npos) config_json = input.substr(split + 1);
  std::optional<Tokenizer> tokenizer;
  try {
    tokenizer.emplace(Tokenizer::from_json_text(tokenizer_json, config_json));
  } catch (const Error&) {
    return 0;
  }
  fuzz::check(tokenizer->vocab_size() > 0, "a loaded tokenizer has tokens");
  for (const std::string_view text : {"", "Hello, world!", "  two  spaces\n\ttab", "\xe4\xb8\xad\xe6\x96\x87 \xff\xfe",
                                      "<|im_start|>user\nhi<|im_end|>", "123 4567 89"}) {
    check_round_trip(*tokenizer, text);
  }
  check_round_trip(*tokenizer, tokenizer_json.substr(0, 256));
  for (int (Tokenizer::*role)() const : {&Tokenizer::bos_id, &Tokenizer::eos_id, &Tokenizer::pad_id}) {
    try {
      const int id = (*tokenizer.*role)();
      fuzz::check(id >= 0 && id < tokenizer->vocab_size(), "bos, eos and pad ids inside the vocabulary");
    } catch (const Error&) {  // the tokenizer has no such token
    }
  }
  return 0;
}
