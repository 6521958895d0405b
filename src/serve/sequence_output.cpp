#include "serve/sequence_output.h"

#include <algorithm>
#include <utility>

namespace minigen {

SequenceOutput::SequenceOutput(const Tokenizer& tokenizer, std::vector<std::string> stop)
    : decoder_(tokenizer, true), stop_(std::move(stop)) {}

SequenceOutput::Text SequenceOutput::push(int token, bool last) {
  std::string text = decoder_.push(token);
  if (last) text += decoder_.finish();
  if (stop_.empty()) return {std::move(text), false};

  text_ += text;
  std::size_t cut = std::string::npos;
  for (const std::string& stop : stop_) {
    const std::size_t from = emitted_ > stop.size() ? emitted_ - stop.size() : 0;
    const std::size_t found = text_.find(stop, from);
    if (found != std::string::npos) cut = std::min(cut, found);
  }
  std::size_t send_until = text_.size();
  if (cut == std::string::npos && !last) {
    std::size_t hold = 0;
    for (const std::string& stop : stop_) hold = std::max(hold, stop.size() - 1);
    send_until = text_.size() > hold ? text_.size() - hold : 0;
    // Never split a UTF-8 character: back up to the start of one.
    while (send_until > emitted_ && send_until < text_.size() &&
           (static_cast<unsigned char>(text_[send_until]) & 0xC0) == 0x80) {
      --send_until;
    }
  } else if (cut != std::string::npos) {
    send_until = cut;
  }
  send_until = std::max(send_until, emitted_);
  Text out{text_.substr(emitted_, send_until - emitted_), cut != std::string::npos};
  emitted_ = send_until;
  return out;
}

}  // namespace minigen
