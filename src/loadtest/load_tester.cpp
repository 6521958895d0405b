#include "loadtest/load_tester.h"

#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "core/error.h"

namespace minigen::load_test {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

double milliseconds_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// splitmix64: the request mix must be the same on every machine and standard library, which
// std::uniform_int_distribution does not promise.
class Random {
 public:
  explicit Random(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  int between(int low, int high) {  // inclusive
    return low + static_cast<int>(next() % static_cast<uint64_t>(high - low + 1));
  }
  template <class T, std::size_t N>
  const T& pick(const T (&items)[N]) {
    return items[next() % N];
  }

 private:
  uint64_t state_;
};

// About 100 tokens, identical in every request that uses it: its full KV blocks are computed once and then
// borrowed from the prefix cache by every later request that starts with it.
constexpr const char* kSystemPrompt =
    "You are a careful assistant for a small dictionary. You answer questions about words, places, animals and "
    "everyday things in one or two short sentences of plain English, without lists, headings or code. When a "
    "question is unclear you give the most common meaning. When you do not know an answer you say so instead of "
    "guessing. You never repeat the question and you never add greetings, apologies or remarks about yourself.";

constexpr const char* kWords[] = {
    "river",    "mountain", "bread",  "garden",  "window",  "letter",  "winter",  "market",  "silver", "forest",
    "candle",   "harbor",   "meadow", "lantern", "kettle",  "village", "thunder", "orchard", "pebble", "ladder",
    "shepherd", "valley",   "copper", "island",  "feather", "wagon",   "morning", "evening", "stone",  "field",
    "water",    "light",    "house",  "road",    "king",    "child",   "seed",    "cloud",   "fire",   "salt"};
constexpr const char* kLinks[] = {"the", "a", "and", "of", "in", "by", "near", "under", "with", "over", "from"};
constexpr const char* kVerbs[] = {"was", "came", "stood", "grew", "fell", "turned", "rested", "carried", "found"};

std::string sentence(Random& random) {
  std::string text;
  const int words = random.between(6, 12);
  for (int i = 0; i < words; ++i) {
    const int slot = i % 3;
    std::string word = slot == 0 ? random.pick(kLinks) : slot == 1 ? random.pick(kWords) : random.pick(kVerbs);
    if (i == 0) word[0] = static_cast<char>(word[0] - 'a' + 'A');
    text += (i == 0 ? "" : " ") + word;
  }
  return text + ".";
}

// Short: a one-line question (~10 tokens). Medium: a few sentences and a question (~50). Long: a passage of a few
// hundred tokens to summarize, so that prefill chunks and decodes share steps.
std::string user_text(Random& random, const std::string& length_class) {
  if (length_class == "short") {
    static const char* const kTemplates[] = {"What does '%' mean?", "Where would you find a %?",
                                             "Is a % useful in winter?", "Describe a % in a few words."};
    std::string question = random.pick(kTemplates);
    return question.replace(question.find('%'), 1, random.pick(kWords));
  }
  std::string text;
  const int sentences = length_class == "medium" ? random.between(3, 5) : random.between(28, 36);
  for (int i = 0; i < sentences; ++i) text += (i == 0 ? "" : " ") + sentence(random);
  return text + (length_class == "medium" ? "\nWhat is this about?" : "\nSummarize the text above in one sentence.");
}

int64_t counter(const std::map<std::string, double>& metrics, const std::string& name) {
  const auto found = metrics.find(name);
  if (found == metrics.end()) throw Error("the server's /metrics has no " + name);
  return static_cast<int64_t>(std::llround(found->second));
}

// Checks one SSE payload against the OpenAI chunk shape and adds it to the outcome; false (with the error set)
// when it is malformed.
bool take_chunk(const std::string& payload, bool chat, RequestOutcome& outcome) {
  const json chunk = json::parse(payload, nullptr, /*allow_exceptions=*/false);
  auto malformed = [&](const std::string& why) {
    outcome.error = "malformed chunk (" + why + "): " + payload.substr(0, 200);
    return false;
  };
  if (chunk.is_discarded() || !chunk.is_object()) return malformed("not a JSON object");
  if (chunk.value("object", "") != (chat ? "chat.completion.chunk" : "text_completion")) {
    return malformed("wrong object type");
  }
  const auto choices = chunk.find("choices");
  if (choices == chunk.end() || !choices->is_array() || choices->size() != 1) return malformed("not one choice");
  const json& choice = (*choices)[0];
  if (!choice.is_object() || choice.value("index", -1) != 0) return malformed("choice index");
  const auto finish = choice.find("finish_reason");
  if (finish == choice.end() || !(finish->is_null() || finish->is_string())) return malformed("finish_reason");
  if (!outcome.finish_reason.empty()) return malformed("a chunk after the finishing one");
  if (chat) {
    const auto delta = choice.find("delta");
    if (delta == choice.end() || !delta->is_object()) return malformed("no delta");
    if (delta->contains("content")) {
      if (!(*delta)["content"].is_string()) return malformed("content is not a string");
      outcome.text += (*delta)["content"].get<std::string>();
    }
  } else {
    const auto text = choice.find("text");
    if (text == choice.end() || !text->is_string()) return malformed("no text");
    outcome.text += text->get<std::string>();
  }
  if (finish->is_string()) outcome.finish_reason = finish->get<std::string>();
  return true;
}

httplib::Client make_client(const std::string& url) {
  httplib::Client client(url);
  if (!client.is_valid()) throw Error("not a usable server address: " + url);
  client.set_connection_timeout(10, 0);
  // Generous: a queued request hears only keep-alive comments until it is scheduled, and those count as reads.
  client.set_read_timeout(120, 0);
  client.set_keep_alive(false);
  return client;
}

json percentiles_json(const PhaseResult& phase) {
  return {{"ttft_p50_ms", phase.ttft_percentile_ms(50)},
          {"ttft_p99_ms", phase.ttft_percentile_ms(99)},
          {"latency_p50_ms", phase.latency_percentile_ms(50)},
          {"latency_p99_ms", phase.latency_percentile_ms(99)}};
}

json phase_json(const PhaseResult& phase) {
  json out = {{"requests", phase.outcomes.size()},
              {"concurrency", phase.concurrency},
              {"wall_seconds", phase.wall_seconds},
              {"generated_tokens", phase.tokens()},
              {"tokens_per_second", phase.tokens_per_second()},
              {"requests_per_second", phase.requests_per_second()},
              {"errors", phase.errors()},
              {"cancelled", phase.cancelled()}};
  out.update(percentiles_json(phase));
  json errors = json::array();
  for (const RequestOutcome& outcome : phase.outcomes) {
    if (!outcome.error.empty() && errors.size() < 5) errors.push_back(outcome.error);
  }
  out["first_errors"] = errors;
  return out;
}

json drain_json(const DrainResult& drain) {
  return {{"drained", drain.drained}, {"seconds", drain.seconds}, {"kv_blocks_used", drain.kv_blocks_used}};
}

}  // namespace

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  if (!(p >= 0 && p <= 100)) throw Error("a percentile must be in [0, 100]");
  std::sort(values.begin(), values.end());
  const double rank = p / 100.0 * static_cast<double>(values.size() - 1);
  const std::size_t below = static_cast<std::size_t>(std::floor(rank));
  const std::size_t above = std::min(below + 1, values.size() - 1);
  const double weight = rank - static_cast<double>(below);
  return values[below] + (values[above] - values[below]) * weight;
}

std::map<std::string, double> parse_prometheus_text(std::string_view text) {
  std::map<std::string, double> metrics;
  int line_number = 0;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    ++line_number;
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
    while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
    if (line.empty() || line.front() == '#') continue;
    // The name runs to the first space, or past its {labels} (whose values may hold spaces).
    std::size_t name_end = line.find_first_of(" {");
    if (name_end != std::string_view::npos && line[name_end] == '{') {
      const std::size_t close = line.find('}', name_end);
      name_end = close == std::string_view::npos ? std::string_view::npos : close + 1;
    }
    if (name_end == std::string_view::npos || name_end >= line.size()) {
      throw Error("metrics line " + std::to_string(line_number) + " has no value: " + std::string(line));
    }
    std::string_view rest = line.substr(name_end);
    while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
    const std::string value_text(rest.substr(0, rest.find(' ')));  // a timestamp may follow
    char* parsed_end = nullptr;
    const double value = std::strtod(value_text.c_str(), &parsed_end);
    if (value_text.empty() || parsed_end != value_text.c_str() + value_text.size()) {
      throw Error("metrics line " + std::to_string(line_number) + " has no numeric value: " + std::string(line));
    }
    metrics[std::string(line.substr(0, name_end))] = value;
  }
  return metrics;
}

void SseParser::feed(std::string_view bytes, std::vector<std::string>& events) {
  while (!bytes.empty()) {
    const std::size_t end = bytes.find('\n');
    if (end == std::string_view::npos) {
      line_.append(bytes);
      return;
    }
    line_.append(bytes.substr(0, end));
    bytes.remove_prefix(end + 1);
    std::string line = std::move(line_);
    line_.clear();
    if (!line.empty() && line.back() == '\r') line.pop_back();
    take_line(line, events);
  }
}

void SseParser::take_line(std::string_view line, std::vector<std::string>& events) {
  if (line.empty()) {  // a blank line ends the event
    if (has_data_) events.push_back(std::move(data_));
    data_.clear();
    has_data_ = false;
    return;
  }
  if (line.front() == ':') return;  // a comment: the server's keep-alive probe
  const std::size_t colon = line.find(':');
  if (line.substr(0, colon) != "data") return;  // event:, id:, retry: carry nothing the load test needs
  std::string_view value = colon == std::string_view::npos ? std::string_view() : line.substr(colon + 1);
  if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  if (has_data_) data_ += '\n';
  data_.append(value);
  has_data_ = true;
}

std::vector<LoadRequest> make_requests(const RequestMix& mix) {
  if (mix.count < 0 || mix.max_tokens < 1) throw Error("the load test needs count >= 0 and max_tokens >= 1");
  if (!(mix.cancel_fraction >= 0 && mix.cancel_fraction <= 1)) throw Error("the cancel fraction must be in [0, 1]");
  static const char* const kLengthClasses[] = {"short", "medium", "long"};
  Random random(mix.seed);
  std::vector<LoadRequest> requests;
  for (int i = 0; i < mix.count; ++i) {
    LoadRequest request;
    request.shared_prefix = i % 2 == 0;
    request.chat = (random.next() & 1) != 0;
    request.length_class = random.pick(kLengthClasses);
    request.max_tokens = random.between(std::min(16, mix.max_tokens), mix.max_tokens);
    if (mix.decode_heavy) {
      request.length_class = "short";
      request.max_tokens = mix.max_tokens;
    }
    request.seed = random.next() % 1'000'000'007;
    // Request i is cancelled when floor(i · f) steps up: exactly floor(count · f) of them, evenly spread.
    if (std::floor((i + 1) * mix.cancel_fraction) > std::floor(i * mix.cancel_fraction)) {
      request.cancel_after_tokens = random.between(1, std::max(1, mix.max_tokens / 4));
    }
    // The tiny model often ends a completion at its first token; ignoring eos lets requests run to max_tokens, so
    // a phase measures decoding (and a planned cancellation always happens). About one in four may still stop at
    // eos, so that path is exercised too.
    const bool may_stop = random.between(0, 3) == 0;
    request.ignore_eos = mix.always_ignore_eos || request.cancel_after_tokens > 0 || !may_stop;
    const std::string user = mix.label + user_text(random, request.length_class);
    json body = {{"stream", true},
                 {"max_tokens", request.max_tokens},
                 {"temperature", 0.8},
                 {"seed", request.seed},
                 {"ignore_eos", request.ignore_eos}};
    if (!mix.model.empty()) body["model"] = mix.model;
    if (request.chat) {
      json messages = json::array();
      if (request.shared_prefix) messages.push_back({{"role", "system"}, {"content", kSystemPrompt}});
      messages.push_back({{"role", "user"}, {"content", user}});
      body["messages"] = messages;
    } else {
      body["prompt"] = request.shared_prefix ? std::string(kSystemPrompt) + "\n\n" + user : user;
    }
    request.body = body.dump();
    requests.push_back(std::move(request));
  }
  return requests;
}

RequestOutcome run_request(const std::string& url, const LoadRequest& request) {
  RequestOutcome outcome;
  httplib::Client client = make_client(url);
  httplib::Request http;
  http.method = "POST";
  http.path = request.chat ? "/v1/chat/completions" : "/v1/completions";
  http.headers = {{"Content-Type", "application/json"}, {"Accept", "text/event-stream"}};
  http.body = request.body;

  SseParser parser;
  std::vector<std::string> events;
  std::string error_body;
  const Clock::time_point sent = Clock::now();
  http.response_handler = [&](const httplib::Response& response) {
    outcome.status = response.status;
    return true;
  };
  http.content_receiver = [&](const char* data, std::size_t size, uint64_t, uint64_t) {
    if (outcome.status != 200) {  // keep the error body for the message
      error_body.append(data, std::min<std::size_t>(size, 500));
      return true;
    }
    events.clear();
    parser.feed(std::string_view(data, size), events);
    for (const std::string& payload : events) {
      if (outcome.done) {
        outcome.error = "data after [DONE]";
        return false;
      }
      if (payload == "[DONE]") {
        outcome.done = true;
        outcome.latency_ms = milliseconds_since(sent);
        continue;
      }
      if (!take_chunk(payload, request.chat, outcome)) return false;
      if (++outcome.tokens == 1) outcome.ttft_ms = milliseconds_since(sent);
      if (request.cancel_after_tokens > 0 && outcome.tokens >= request.cancel_after_tokens &&
          outcome.finish_reason.empty()) {
        outcome.cancelled = true;  // returning false makes httplib close the connection: the client went away
        return false;
      }
    }
    return true;
  };

  httplib::Response response;
  httplib::Error error = httplib::Error::Success;
  const bool completed = client.send(http, response, error);
  if (!outcome.error.empty() || outcome.cancelled) return outcome;
  if (outcome.status != 200 && outcome.status != 0) {
    outcome.error = "HTTP " + std::to_string(outcome.status) + ": " + error_body;
  } else if (!completed) {
    outcome.error = "request failed: " + httplib::to_string(error);
  } else if (!outcome.done) {
    outcome.error = "the stream ended without data: [DONE]";
  } else if (!parser.at_event_boundary()) {
    outcome.error = "the stream ended inside an event";
  } else if (outcome.finish_reason != "stop" && outcome.finish_reason != "length") {
    outcome.error = "finish_reason '" + outcome.finish_reason + "' (expected stop or length)";
  } else if (outcome.tokens > request.max_tokens ||
             (outcome.finish_reason == "length" && outcome.tokens != request.max_tokens) ||
             (request.ignore_eos && outcome.finish_reason != "length")) {
    outcome.error = std::to_string(outcome.tokens) + " tokens with max_tokens " + std::to_string(request.max_tokens) +
                    " and finish_reason " + outcome.finish_reason;
  }
  return outcome;
}

int64_t PhaseResult::tokens() const {
  int64_t total = 0;
  for (const RequestOutcome& outcome : outcomes) total += outcome.tokens;
  return total;
}

int PhaseResult::errors() const {
  return static_cast<int>(
      std::count_if(outcomes.begin(), outcomes.end(), [](const RequestOutcome& o) { return !o.error.empty(); }));
}

int PhaseResult::cancelled() const {
  return static_cast<int>(
      std::count_if(outcomes.begin(), outcomes.end(), [](const RequestOutcome& o) { return o.cancelled; }));
}

double PhaseResult::tokens_per_second() const {
  return wall_seconds > 0 ? static_cast<double>(tokens()) / wall_seconds : 0.0;
}

double PhaseResult::requests_per_second() const {
  return wall_seconds > 0 ? static_cast<double>(outcomes.size()) / wall_seconds : 0.0;
}

double PhaseResult::ttft_percentile_ms(double p) const {
  std::vector<double> values;
  for (const RequestOutcome& outcome : outcomes) {
    if (outcome.ttft_ms >= 0) values.push_back(outcome.ttft_ms);
  }
  return percentile(std::move(values), p);
}

double PhaseResult::latency_percentile_ms(double p) const {
  std::vector<double> values;
  for (const RequestOutcome& outcome : outcomes) {
    if (outcome.latency_ms >= 0) values.push_back(outcome.latency_ms);
  }
  return percentile(std::move(values), p);
}

PhaseResult run_phase(const std::string& url, const std::vector<LoadRequest>& requests, int concurrency) {
  if (concurrency < 1) throw Error("the concurrency must be at least 1");
  PhaseResult phase;
  phase.concurrency = concurrency;
  phase.outcomes.resize(requests.size());
  std::atomic<std::size_t> next{0};
  const Clock::time_point start = Clock::now();
  {
    std::vector<std::jthread> clients;
    for (int i = 0; i < std::min<int>(concurrency, static_cast<int>(requests.size())); ++i) {
      clients.emplace_back([&] {
        for (std::size_t index = next++; index < requests.size(); index = next++) {
          try {
            phase.outcomes[index] = run_request(url, requests[index]);
          } catch (const std::exception& error) {
            phase.outcomes[index].error = error.what();
          }
        }
      });
    }
  }  // the jthreads join here
  phase.wall_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return phase;
}

std::map<std::string, double> fetch_metrics(const std::string& url) {
  httplib::Client client = make_client(url);
  const httplib::Result result = client.Get("/metrics");
  if (!result) throw Error("GET " + url + "/metrics failed: " + httplib::to_string(result.error()));
  if (result->status != 200) throw Error("GET " + url + "/metrics answered " + std::to_string(result->status));
  return parse_prometheus_text(result->body);
}

DrainResult wait_until_idle(const std::string& url, double timeout_seconds) {
  DrainResult drain;
  const Clock::time_point start = Clock::now();
  while (true) {
    const std::map<std::string, double> metrics = fetch_metrics(url);
    drain.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    drain.kv_blocks_used = counter(metrics, "minigen_kv_blocks_used");
    // A cancelled sequence stays "running" until the server's next write to the closed connection fails.
    if (counter(metrics, "minigen_requests_running") == 0 && counter(metrics, "minigen_requests_waiting") == 0) {
      drain.drained = true;
      return drain;
    }
    if (drain.seconds > timeout_seconds) return drain;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

double PrefixCacheUse::cached_fraction() const {
  const int64_t prompt_tokens = prompt_tokens_cached + prompt_tokens_computed;
  return prompt_tokens > 0 ? static_cast<double>(prompt_tokens_cached) / static_cast<double>(prompt_tokens) : 0.0;
}

int LoadTestReport::errors() const { return load.errors() + concurrent.errors() + sequential.errors(); }

int64_t LoadTestReport::leaked_blocks() const { return after_load.kv_blocks_used + at_end.kv_blocks_used; }

double LoadTestReport::speedup() const {
  if (sequential.outcomes.empty() || sequential.tokens_per_second() <= 0) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  return concurrent.tokens_per_second() / sequential.tokens_per_second();
}

LoadTestReport run_load_test(const std::string& url, const LoadTestOptions& options) {
  LoadTestReport report;
  report.options = options;
  report.options.progress = nullptr;
  report.url = url;
  auto progress = [&](const std::string& line) {
    if (options.progress != nullptr) *options.progress << "[bench-serve] " << line << std::endl;
  };

  report.requests = make_requests({.count = options.requests,
                                   .max_tokens = options.max_tokens,
                                   .cancel_fraction = options.cancel_fraction,
                                   .seed = options.seed,
                                   .model = options.model});
  const std::map<std::string, double> before = fetch_metrics(url);
  progress("load: " + std::to_string(options.requests) + " streaming requests, " + std::to_string(options.concurrency) +
           " at a time");
  report.load = run_phase(url, report.requests, options.concurrency);
  report.after_load = wait_until_idle(url, options.drain_timeout_seconds);
  const std::map<std::string, double> after = fetch_metrics(url);
  auto delta = [&](const char* name) { return counter(after, name) - counter(before, name); };
  report.prefix_cache.block_lookups = delta("minigen_prefix_cache_lookups_total");
  report.prefix_cache.block_hits = delta("minigen_prefix_cache_hits_total");
  report.prefix_cache.prompt_tokens_cached = delta("minigen_prompt_tokens_cached_total");
  report.prefix_cache.prompt_tokens_computed = delta("minigen_prefill_tokens_total");

  if (options.compare_requests > 0) {
    // Both runs draw the same mix (same lengths, max_tokens, seeds) but their user texts start with different
    // labels: each run then finds only the shared system prompt in the prefix cache, not the other run's prompts.
    RequestMix mix{.count = options.compare_requests,
                   .max_tokens = options.max_tokens,
                   .seed = options.seed + 1,
                   .always_ignore_eos = true,
                   .label = "(one at a time) ",
                   .decode_heavy = true,
                   .model = options.model};
    report.sequential_requests = make_requests(mix);
    mix.label = "(concurrent) ";
    report.concurrent_requests = make_requests(mix);
    progress("comparison: " + std::to_string(options.compare_requests) + " requests one at a time");
    report.sequential = run_phase(url, report.sequential_requests, 1);
    progress("comparison: " + std::to_string(options.compare_requests) + " requests, " +
             std::to_string(options.concurrency) + " at a time");
    report.concurrent = run_phase(url, report.concurrent_requests, options.concurrency);
  }
  report.at_end = wait_until_idle(url, options.drain_timeout_seconds);
  return report;
}

json report_json(const LoadTestReport& report) {
  const LoadTestOptions& options = report.options;
  int chat = 0, shared = 0, planned_cancellations = 0, done = 0;
  for (std::size_t i = 0; i < report.requests.size(); ++i) {
    chat += report.requests[i].chat;
    shared += report.requests[i].shared_prefix;
    planned_cancellations += report.requests[i].cancel_after_tokens > 0;
    done += report.load.outcomes[i].done;
  }
  json load = phase_json(report.load);
  load["chat_requests"] = chat;
  load["completion_requests"] = static_cast<int>(report.requests.size()) - chat;
  load["shared_prefix_requests"] = shared;
  load["planned_cancellations"] = planned_cancellations;
  load["done_received"] = done;
  json out = {{"url", report.url},
              {"settings",
               {{"requests", options.requests},
                {"concurrency", options.concurrency},
                {"cancel_fraction", options.cancel_fraction},
                {"max_tokens", options.max_tokens},
                {"compare_requests", options.compare_requests},
                {"seed", options.seed}}},
              {"load", load},
              {"after_load", drain_json(report.after_load)},
              {"prefix_cache",
               {{"block_lookups", report.prefix_cache.block_lookups},
                {"block_hits", report.prefix_cache.block_hits},
                {"prompt_tokens_cached", report.prefix_cache.prompt_tokens_cached},
                {"prompt_tokens_computed", report.prefix_cache.prompt_tokens_computed},
                {"cached_fraction", report.prefix_cache.cached_fraction()}}},
              {"at_end", drain_json(report.at_end)},
              {"errors", report.errors()},
              {"leaked_blocks", report.leaked_blocks()},
              {"passed", report.passed()}};
  if (!report.sequential_requests.empty()) {
    out["comparison"] = {{"requests", report.sequential_requests.size()},
                         {"sequential", phase_json(report.sequential)},
                         {"concurrent", phase_json(report.concurrent)},
                         {"speedup", report.speedup()}};
  }
  return out;
}

LocalServer::LocalServer(const Model& model, const Tokenizer& tokenizer, std::string model_name,
                         LocalServerOptions options)
    : stack_(model, tokenizer, std::move(model_name), std::move(options)) {
  const int port = stack_.bind("127.0.0.1", 0);
  url_ = "http://127.0.0.1:" + std::to_string(port);
  // Bound and listening already: clients queue in the backlog until the loop begins.
  thread_ = std::thread([this] { stack_.serve(); });
}

LocalServer::~LocalServer() {
  stack_.stop();
  if (thread_.joinable()) thread_.join();
}

}  // namespace minigen::load_test
