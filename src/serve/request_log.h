#pragma once
// `minigen serve`'s one stderr line per finished request, as llama-server and vLLM print them:
//   [minigen] request cmpl-7: prompt_tokens=5 new_tokens=16 ttft_ms=12.4 total_ms=80.3 tokens_per_s=199.3
//   finish_reason=length
// (one line). tokens_per_s is new_tokens over the whole request's time, queueing and prefill included; ttft_ms is
// "-" when no token came. finish_reason lists each choice's, comma-separated ("stop", "length"), or "error" /
// "cancelled" when the request ended without an answer. A request served with a LoRA adapter ends with lora=NAME.
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "request/job.h"

namespace minigen {

struct FinishedRequest {
  std::string id;
  int prompt_tokens = 0;
  int new_tokens = 0;
  std::optional<double> ttft_ms;  // none when no token was generated
  double total_ms = 0;
  std::string finish_reason;
  std::string adapter;  // the LoRA adapter it ran with; empty: the base model
};

// The line, without its newline.
std::string request_log_line(const FinishedRequest& request);

// Follows one request's events from its arrival to its end.
class RequestTimer {
 public:
  using Clock = std::chrono::steady_clock;
  explicit RequestTimer(Clock::time_point start = Clock::now()) : start_(start) {}
  // A token event counts as a new token (the first one sets the TTFT); a finished one records its reason.
  void on_event(const JobEvent& event, Clock::time_point now = Clock::now());
  // The request as it ended: `outcome` replaces the finish reasons when not empty ("error", "cancelled").
  FinishedRequest finish(std::string id, int prompt_tokens, const std::string& outcome = "",
                         Clock::time_point now = Clock::now()) const;
  // The request runs with this LoRA adapter (its line says lora=NAME).
  void set_adapter(std::string name) { adapter_ = std::move(name); }

 private:
  Clock::time_point start_;
  std::optional<Clock::time_point> first_token_;
  int new_tokens_ = 0;
  std::vector<std::string> finish_reasons_;  // by choice index
  std::string adapter_;
};

}  // namespace minigen
