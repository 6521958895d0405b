// BPE encode/decode with the shipped tokenizer (tokenizers/minigen-6400). Beyond "no crash" for any bytes:
// decode(encode(text)) == text for every input (tokens are bytes, so this holds for invalid UTF-8 too); ids lie in
// the vocabulary; encode_parts gives encode()'s ids for one markup part, and the same ids for the text as one plain
// part or as two plain halves (plain stretches are joined), which also decode to the text; and streaming the ids
// through StreamDecoder yields valid UTF-8 that equals the text whenever the text is valid UTF-8.
#include <string>

#include "core/error.h"
#include "fuzz_check.h"
#include "shipped_tokenizer.h"
#include "tokenizer/bpe_tokenizer.h"
#include "tokenizer/stream_decoder.h"
#include "tokenizer/utf8.h"

using namespace minigen;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const Tokenizer& tokenizer = fuzz::shipped_tokenizer();
  const std::string_view text = fuzz::as_text(data, size);
  const std::vector<int> ids = tokenizer.encode(text);
  for (const int id : ids) fuzz::check(id >= 0 && id < tokenizer.vocab_size(), "ids inside the vocabulary");
  fuzz::check(tokenizer.decode(ids, /*skip_special_tokens=*/false) == text, "decode(encode(text)) == text");

  const Tokenizer::TextPart as_markup[] = {{text, true}};
  fuzz::check(tokenizer.encode_parts(as_markup) == ids, "one markup part encodes like encode()");
  const Tokenizer::TextPart as_plain[] = {{text, false}};
  const std::vector<int> plain_ids = tokenizer.encode_parts(as_plain);
  fuzz::check(tokenizer.decode(plain_ids, false) == text, "plain text round trip");
  const std::size_t middle = size / 2;
  const Tokenizer::TextPart halves[] = {{text.substr(0, middle), false}, {text.substr(middle), false}};
  fuzz::check(tokenizer.encode_parts(halves) == plain_ids, "two plain parts encode like one");

  StreamDecoder stream(tokenizer);
  std::string streamed;
  for (const int id : ids) streamed += stream.push(id);
  streamed += stream.finish();
  fuzz::check(first_invalid_utf8(streamed) == std::string_view::npos, "streamed text is valid UTF-8");
  if (first_invalid_utf8(text) == std::string_view::npos) {
    fuzz::check(streamed == text, "streamed text equals valid UTF-8 input");
  }
  return 0;
}
