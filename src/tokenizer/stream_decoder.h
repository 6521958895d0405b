#pragma once
// Turns generated token ids, arriving one at a time, into text that is always valid UTF-8. A byte-level token can end
// in the middle of a character (an emoji is often split over two or more tokens); printing those bytes as they come
// would show mojibake, so they are held back until the character is complete.
#include <string>

#include "tokenizer/bpe_tokenizer.h"

namespace minigen {

class StreamDecoder {
 public:
  // `tokenizer` must outlive the decoder.
  explicit StreamDecoder(const Tokenizer& tokenizer, bool skip_special_tokens = false);

  // The text that became complete with this token (possibly empty). Bytes that can never form a character are
  // replaced by U+FFFD at once; the start of a character that may still be completed is held.
  // Throws minigen::Error for an id outside the vocabulary.
  std::string push(int id);

  // Whatever is still held, with an unfinished character replaced by U+FFFD. The decoder is then empty and may be
  // reused for a new stream.
  std::string finish();

 private:
  // Moves every complete character (or replaced invalid run) from the front of pending_ into the result; holds a
  // truncated character at the end unless `at_end_of_stream`.
  std::string take_complete_text(bool at_end_of_stream);

  const Tokenizer* tokenizer_;
  bool skip_special_tokens_;
  std::string pending_;
};

}  // namespace minigen
