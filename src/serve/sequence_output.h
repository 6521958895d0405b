#pragma once
// The output step of one served sequence: its tokens become text as they arrive — decoded incrementally, so a
// character split over tokens is sent whole — and the text ends before the first of the request's stop strings.
// Stop strings may span tokens, so text that could still be the start of one is held back until it cannot.
#include <cstddef>
#include <string>
#include <vector>

#include "tokenizer/bpe_tokenizer.h"
#include "tokenizer/stream_decoder.h"

namespace minigen {

class SequenceOutput {
 public:
  // `tokenizer` must outlive the output. Special tokens (eos) are not text.
  SequenceOutput(const Tokenizer& tokenizer, std::vector<std::string> stop);

  struct Text {
    std::string text;      // what may be sent now (possibly empty)
    bool stopped = false;  // a stop string was reached: the sequence ends here, the string itself is not sent
  };
  // The text `token` completes. `last`: the sequence ends with this token, so whatever was held is sent.
  Text push(int token, bool last);

 private:
  StreamDecoder decoder_;
  std::vector<std::string> stop_;
  std::string text_;         // decoded so far (kept only when there are stop strings)
  std::size_t emitted_ = 0;  // bytes of text_ already sent
};

}  // namespace minigen
