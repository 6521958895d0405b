#pragma once
// `minigen bench-serve`: a load test of the server through its public HTTP API, the way real clients use it.
//
// Many streaming requests at once (chat and completions, short to long prompts, half behind one shared system
// prompt so the prefix cache is exercised, some closed by the client mid-stream), then three checks a serving
// engine must pass: every request that was not cancelled ends with `data: [DONE]`, no KV block stays referenced
// once the server is idle (cancelled sequences must give theirs back), and a batch of requests finishes much
// faster together than one at a time. Everything is measured from the client side, except what only the server
// can know (KV blocks, prefix-cache hits), which is read from GET /metrics.
#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "serve/server_stack.h"

namespace minigen::load_test {

// ---- the pieces, pure and tested on their own ----

// The p-th percentile (p in [0, 100]) with linear interpolation between the two nearest ranks (numpy's default):
// rank = p/100 · (n − 1). NaN for no values.
double percentile(std::vector<double> values, double p);

// Prometheus text exposition: `name value` or `name{labels} value` lines; `#` lines are comments. The key is the
// name with its labels as written. Throws minigen::Error for a line whose value is not a number.
std::map<std::string, double> parse_prometheus_text(std::string_view text);

// Server-sent events arrive in pieces cut anywhere (TCP does not respect lines). The parser keeps the unfinished
// line between calls and emits the data of each event once its blank line arrives. Comment lines (`: keep-alive`)
// and fields other than `data` are skipped; several data lines of one event are joined with '\n'.
class SseParser {
 public:
  void feed(std::string_view bytes, std::vector<std::string>& events);
  // True when no partial line or event is pending: a stream that ends here ended cleanly.
  bool at_event_boundary() const { return line_.empty() && !has_data_; }

 private:
  void take_line(std::string_view line, std::vector<std::string>& events);

  std::string line_;
  std::string data_;
  bool has_data_ = false;
};

// ---- the requests ----

// One request the load test sends: its JSON body and what the client will do with the answer.
struct LoadRequest {
  bool chat = false;           // /v1/chat/completions, else /v1/completions
  bool shared_prefix = false;  // starts with the shared system prompt
  std::string length_class;    // "short", "medium" or "long"
  int max_tokens = 16;
  uint64_t seed = 0;
  bool ignore_eos = false;      // run to max_tokens whatever the model says (minigen's API extension)
  int cancel_after_tokens = 0;  // > 0: close the connection after receiving this many tokens
  std::string body;
};

struct RequestMix {
  int count = 0;
  int max_tokens = 64;
  double cancel_fraction = 0;
  uint64_t seed = 1;
  bool always_ignore_eos = false;
  std::string label = {};  // starts every user text: two sets with the same seed then share no prompt prefix
  // Short prompts and exactly max_tokens new tokens each: the decode-bound work continuous batching speeds up
  // (a prompt's prefill is already one batched forward, alone or not).
  bool decode_heavy = false;
  std::string model =
      {};  // the "model" every request names (a LoRA adapter of the server); empty: none, the base model
};
// `count` requests drawn from `seed`: alternating shared prefix (exactly half), chat or completion and prompt
// length at random, max_tokens in [min(16, max_tokens), max_tokens], and floor(count · cancel_fraction) of them,
// spread evenly, cancelled after 1 to max_tokens/4 tokens. Temperature 0.8 with a seed per request, so a request
// always produces the same tokens. About a quarter may stop at eos (none if always_ignore_eos, nor cancelled ones).
std::vector<LoadRequest> make_requests(const RequestMix& mix);

// What the client saw of one request.
struct RequestOutcome {
  int status = 0;          // HTTP status (0: no response)
  bool done = false;       // `data: [DONE]` arrived
  bool cancelled = false;  // the client closed the connection on purpose
  int tokens = 0;          // chunks received (each carries one generated token)
  double ttft_ms = -1;     // send → first chunk; −1 without one
  double latency_ms = -1;  // send → [DONE]; −1 without it
  std::string text;
  std::string finish_reason;
  std::string error;  // non-empty: the request failed (non-200, malformed chunk, no [DONE], ...)
};

// Sends one streaming request to `url` (scheme://host:port) and reads it to the end, or until
// cancel_after_tokens tokens have arrived.
RequestOutcome run_request(const std::string& url, const LoadRequest& request);

// ---- the phases and the report ----

struct PhaseResult {
  int concurrency = 1;
  double wall_seconds = 0;  // first send → last request finished
  std::vector<RequestOutcome> outcomes;

  int64_t tokens() const;
  int errors() const;
  int cancelled() const;
  double tokens_per_second() const;
  double requests_per_second() const;
  // Over requests that produced a token / reached [DONE]; NaN when there are none.
  double ttft_percentile_ms(double p) const;
  double latency_percentile_ms(double p) const;
};

// Sends every request, `concurrency` at a time (each client thread takes the next unsent request).
PhaseResult run_phase(const std::string& url, const std::vector<LoadRequest>& requests, int concurrency);

// GET /metrics, parsed. Throws minigen::Error when the server does not answer 200.
std::map<std::string, double> fetch_metrics(const std::string& url);

// The server's state once it has nothing left to do.
struct DrainResult {
  bool drained = false;        // running and waiting reached 0 before the timeout
  double seconds = 0;          // how long that took
  int64_t kv_blocks_used = 0;  // referenced blocks left then: leaked, since no sequence should exist
};
DrainResult wait_until_idle(const std::string& url, double timeout_seconds);

// Prefix-cache use during the load phase (differences of the server's counters).
struct PrefixCacheUse {
  int64_t block_lookups = 0;
  int64_t block_hits = 0;
  int64_t prompt_tokens_cached = 0;
  int64_t prompt_tokens_computed = 0;
  double cached_fraction() const;  // cached ÷ (cached + computed): the prompt tokens the cache saved
};

struct LoadTestOptions {
  int requests = 200;
  int concurrency = 32;
  double cancel_fraction = 0.1;
  int max_tokens = 64;
  int compare_requests = 24;  // 0: skip the comparison
  uint64_t seed = 1;
  double drain_timeout_seconds = 30;
  std::string model = {};            // RequestMix::model of every phase
  std::ostream* progress = nullptr;  // one line per phase, when set
};

struct LoadTestReport {
  LoadTestOptions options;
  std::string url;
  std::vector<LoadRequest> requests;
  PhaseResult load;
  DrainResult after_load;
  PrefixCacheUse prefix_cache;
  // The comparison: requests of one mix run one at a time, then at the given concurrency.
  std::vector<LoadRequest> sequential_requests;
  std::vector<LoadRequest> concurrent_requests;
  PhaseResult sequential;
  PhaseResult concurrent;
  DrainResult at_end;

  int errors() const;             // over every phase
  int64_t leaked_blocks() const;  // after the load and at the end
  double speedup() const;         // tokens/s at the concurrency ÷ tokens/s one at a time; NaN without comparison
  bool passed() const { return errors() == 0 && leaked_blocks() == 0; }
};

LoadTestReport run_load_test(const std::string& url, const LoadTestOptions& options);

// Every number of the report (no per-request detail beyond the first errors).
nlohmann::json report_json(const LoadTestReport& report);

// ---- a server in this process ----

using LocalServerOptions = ServeOptions;

// What `minigen serve` assembles, listening on a free port of 127.0.0.1 from a thread of its own, so that the
// load test needs no second process. The constructor returns once /health answers.
class LocalServer {
 public:
  LocalServer(const Model& model, const Tokenizer& tokenizer, std::string model_name, LocalServerOptions options);
  ~LocalServer();
  LocalServer(const LocalServer&) = delete;
  LocalServer& operator=(const LocalServer&) = delete;

  const std::string& url() const { return url_; }
  int threads() { return stack_.threads().num_threads(); }
  int kv_blocks() const { return stack_.blocks().total_blocks(); }

 private:
  ServerStack stack_;
  std::string url_;
  std::thread thread_;
};

}  // namespace minigen::load_test
