#include "serve/request_log.h"

#include <gtest/gtest.h>

namespace minigen {
namespace {

using namespace std::chrono_literals;

TEST(RequestLog, OneLineWithEveryField) {
  const RequestTimer::Clock::time_point start{};
  RequestTimer timer(start);
  JobEvent token;
  token.token = 17;
  timer.on_event(token, start + 12ms);
  for (int i = 0; i < 14; ++i) timer.on_event(token, start + 20ms + i * 4ms);
  JobEvent last = token;
  last.finished = true;
  last.finish_reason = "length";
  timer.on_event(last, start + 80ms);
  const FinishedRequest request = timer.finish("cmpl-7", 5, "", start + 80ms);
  EXPECT_EQ(request.new_tokens, 16);
  EXPECT_EQ(request_log_line(request),
            "[minigen] request cmpl-7: prompt_tokens=5 new_tokens=16 ttft_ms=12.0 total_ms=80.0 tokens_per_s=200.0 "
            "finish_reason=length");
  timer.set_adapter("identity");
  EXPECT_EQ(request_log_line(timer.finish("cmpl-8", 5, "", start + 80ms)),
            "[minigen] request cmpl-8: prompt_tokens=5 new_tokens=16 ttft_ms=12.0 total_ms=80.0 tokens_per_s=200.0 "
            "finish_reason=length lora=identity");
}

TEST(RequestLog, EachChoicesReasonAndTheEndsWithoutAnAnswer) {
  const RequestTimer::Clock::time_point start{};
  RequestTimer timer(start);
  JobEvent second;
  second.choice = 1;
  second.finished = true;
  second.finish_reason = "stop";  // a final event without a token
  timer.on_event(second, start + 5ms);
  JobEvent first = second;
  first.choice = 0;
  first.finish_reason = "length";
  timer.on_event(first, start + 6ms);
  EXPECT_EQ(timer.finish("chatcmpl-2", 9, "", start + 8ms).finish_reason, "length,stop");
  EXPECT_EQ(request_log_line(timer.finish("chatcmpl-2", 9, "cancelled", start + 8ms)),
            "[minigen] request chatcmpl-2: prompt_tokens=9 new_tokens=0 ttft_ms=- total_ms=8.0 tokens_per_s=0.0 "
            "finish_reason=cancelled");
}

}  // namespace
}  // namespace minigen
