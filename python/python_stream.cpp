#include "python_stream.h"

#include "core/error.h"
#include "tokenizer/stream_decoder.h"

namespace minigen::python {
namespace {

// Thrown from the token callback to leave generate() when Python stops iterating.
struct Cancelled {};

}  // namespace

TextStream::TextStream(std::shared_ptr<PythonModel> model, RunRequest request)
    : model_(std::move(model)), worker_([this, request = std::move(request)] { run(request); }) {}

TextStream::~TextStream() {
  {
    const std::lock_guard lock(mutex_);
    cancelled_ = true;
  }
  worker_.join();
}

void TextStream::run(const RunRequest& request) {
  StreamDecoder decoder(model_->tokenizer(), /*skip_special_tokens=*/true);  // as the CLI prints
  const auto hand_over = [this](std::string piece) {
    const std::lock_guard lock(mutex_);
    if (cancelled_) throw Cancelled{};
    if (piece.empty()) return;  // a character still incomplete: nothing to show yet
    pieces_.push_back(std::move(piece));
    ready_.notify_one();
  };
  nlohmann::json summary;
  std::exception_ptr error;
  try {
    summary = model_->generate(request, [&](const TokenEvent& event) { hand_over(decoder.push(event.token)); });
    hand_over(decoder.finish());
  } catch (const Cancelled&) {
  } catch (...) {
    error = std::current_exception();
  }
  const std::lock_guard lock(mutex_);
  summary_ = std::move(summary);
  error_ = error;
  done_ = true;
  ready_.notify_one();
}

std::optional<std::string> TextStream::next() {
  std::unique_lock lock(mutex_);
  ready_.wait(lock, [this] { return !pieces_.empty() || done_; });
  if (!pieces_.empty()) {
    std::string piece = std::move(pieces_.front());
    pieces_.pop_front();
    return piece;
  }
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
  return std::nullopt;
}

nlohmann::json TextStream::summary() const {
  const std::lock_guard lock(mutex_);
  if (summary_.is_null()) throw Error("the stream has not finished yet: iterate it to the end first");
  return summary_;
}

}  // namespace minigen::python
