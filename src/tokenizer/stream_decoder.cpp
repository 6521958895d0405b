#include "tokenizer/stream_decoder.h"

#include "core/profiler.h"
#include "tokenizer/utf8.h"

namespace minigen {

StreamDecoder::StreamDecoder(const Tokenizer& tokenizer, bool skip_special_tokens)
    : tokenizer_(&tokenizer), skip_special_tokens_(skip_special_tokens) {}

std::string StreamDecoder::push(int id) {
  ProfileZone zone(Zone::kDetokenise);
  if (skip_special_tokens_ && tokenizer_->is_special(id)) return {};
  pending_ += tokenizer_->token_bytes(id);
  return take_complete_text(false);
}

std::string StreamDecoder::finish() { return take_complete_text(true); }

std::string StreamDecoder::take_complete_text(bool at_end_of_stream) {
  std::string text;
  std::size_t offset = 0;
  while (offset < pending_.size()) {
    const Utf8Step step = decode_utf8_step(pending_, offset);
    if (step.kind == Utf8StepKind::kTruncated && !at_end_of_stream) break;
    if (step.kind == Utf8StepKind::kValid) {
      text.append(pending_, offset, step.length);
    } else {
      append_utf8(text, kReplacementCharacter);
    }
    offset += step.length;
  }
  pending_.erase(0, offset);
  return text;
}

}  // namespace minigen
