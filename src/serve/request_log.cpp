#include "serve/request_log.h"

#include <cstdio>

namespace minigen {
namespace {

std::string one_decimal(double value) {
  char text[64];
  std::snprintf(text, sizeof text, "%.1f", value);
  return text;
}

double milliseconds_between(RequestTimer::Clock::time_point from, RequestTimer::Clock::time_point to) {
  return std::chrono::duration<double, std::milli>(to - from).count();
}

}  // namespace

std::string request_log_line(const FinishedRequest& request) {
  const double tokens_per_s = request.total_ms > 0 ? request.new_tokens * 1000.0 / request.total_ms : 0.0;
  return "[minigen] request " + request.id + ": prompt_tokens=" + std::to_string(request.prompt_tokens) +
         " new_tokens=" + std::to_string(request.new_tokens) +
         " ttft_ms=" + (request.ttft_ms ? one_decimal(*request.ttft_ms) : "-") +
         " total_ms=" + one_decimal(request.total_ms) + " tokens_per_s=" + one_decimal(tokens_per_s) +
         " finish_reason=" + request.finish_reason + (request.adapter.empty() ? "" : " lora=" + request.adapter);
}

void RequestTimer::on_event(const JobEvent& event, Clock::time_point now) {
  if (event.token >= 0) {
    ++new_tokens_;
    if (!first_token_) first_token_ = now;
  }
  if (event.finished) {
    if (static_cast<int>(finish_reasons_.size()) <= event.choice) finish_reasons_.resize(event.choice + 1);
    finish_reasons_[event.choice] = event.finish_reason;
  }
}

FinishedRequest RequestTimer::finish(std::string id, int prompt_tokens, const std::string& outcome,
                                     Clock::time_point now) const {
  FinishedRequest finished;
  finished.id = std::move(id);
  finished.prompt_tokens = prompt_tokens;
  finished.new_tokens = new_tokens_;
  if (first_token_) finished.ttft_ms = milliseconds_between(start_, *first_token_);
  finished.total_ms = milliseconds_between(start_, now);
  finished.adapter = adapter_;
  if (!outcome.empty()) {
    finished.finish_reason = outcome;
  } else {
    for (const std::string& reason : finish_reasons_) {
      finished.finish_reason += (finished.finish_reason.empty() ? "" : ",") + (reason.empty() ? "-" : reason);
    }
  }
  return finished;
}

}  // namespace minigen
