#include "serve/api_server.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <optional>

#include "core/ascii.h"
#include "core/error.h"
#include "core/json_parse.h"
#include "core/json_text.h"
#include "core/profiler.h"
#include "serve/loopback_host.h"
#include "serve/metrics.h"
#include "serve/web_page.h"

namespace minigen {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;

std::string next_request_id(const char* prefix) {
  static std::atomic<uint64_t> counter{0};
  return std::string(prefix) + std::to_string(++counter);
}

// Compares every byte whatever the first difference, so the time taken does not tell how much of a key was right.
bool constant_time_equal(std::string_view a, std::string_view b) {
  unsigned difference = a.size() == b.size() ? 0u : 1u;
  const std::size_t length = std::max(a.size(), b.size());
  for (std::size_t i = 0; i < length; ++i) {
    const auto x = static_cast<unsigned char>(i < a.size() ? a[i] : 0);
    const auto y = static_cast<unsigned char>(i < b.size() ? b[i] : 0);
    difference |= static_cast<unsigned>(x ^ y);
  }
  return difference == 0;
}

bool is_json_content_type(const std::string* value) {
  if (value == nullptr) return false;
  std::string_view media_type = *value;
  media_type = media_type.substr(0, media_type.find(';'));
  while (!media_type.empty() && media_type.back() == ' ') media_type.remove_suffix(1);
  return ascii_lower(media_type) == "application/json";
}

}  // namespace

http::Headers sse_headers() {
  // The charset is named: without it Python's requests decodes the events as ISO-8859-1, so iter_lines(
  // decode_unicode=True) turns every Chinese character into mojibake.
  return {{"Content-Type", "text/event-stream; charset=utf-8"},
          {"Cache-Control", "no-cache"},
          {"X-Accel-Buffering", "no"}};  // nginx: pass each event on at once
}

ApiServer::ApiServer(Engine& engine, const Tokenizer& tokenizer, AdapterRegistry& adapters, ApiServerOptions options)
    : engine_(engine),
      tokenizer_(tokenizer),
      adapters_(adapters),
      options_(std::move(options)),
      http_([this](const http::Request& request) { return route(request); },
            [this](int status, const std::string& message) { return error(status, message); }, options_.http),
      model_path_(adapters.base_name()) {}

int ApiServer::bind(const std::string& host, int port) {
  loopback_only_ = is_loopback_address(host);
  return http_.bind(host, port);
}

http::Response ApiServer::json_response(int status, const json& body) const {
  http::Response response;
  response.status = status;
  response.set("Content-Type", "application/json");
  response.body = to_json_text(body);
  return response;
}

http::Response ApiServer::error(int status, const std::string& message, const std::string& param,
                                const std::string& code) const {
  const char* type = status == 429   ? "rate_limit_error"
                     : status == 401 ? "authentication_error"
                     : status >= 500 ? "server_error"
                                     : "invalid_request_error";
  json body = error_body(message, type, param);
  if (!code.empty()) body["error"]["code"] = code;
  http::Response response = json_response(status, body);
  if (status == 401) response.set("WWW-Authenticate", "Bearer");
  return response;
}

bool ApiServer::host_allowed(const http::Request& request) const {
  if (!loopback_only_) return true;
  const std::string* host = request.header("host");
  if (host == nullptr) return request.version_minor == 0;  // HTTP/1.1 requires Host; 1.0 clients may omit it
  return is_loopback_host_header(*host);
}

bool ApiServer::authorized(const http::Request& request) const {
  if (options_.api_key.empty()) return true;
  const std::string* header = request.header("authorization");
  if (header == nullptr || header->size() < 7 || ascii_lower(header->substr(0, 7)) != "bearer ") return false;
  return constant_time_equal(std::string_view(*header).substr(7), options_.api_key);
}

void ApiServer::add_cors_headers(const http::Request& request, http::Headers& headers) const {
  if (options_.cors_origin.empty()) return;
  const std::string* origin = request.header("origin");
  if (origin == nullptr) return;
  if (options_.cors_origin == "*") {
    headers.emplace_back("Access-Control-Allow-Origin", "*");
  } else if (*origin == options_.cors_origin) {
    headers.emplace_back("Access-Control-Allow-Origin", *origin);
    headers.emplace_back("Vary", "Origin");
  }
}

http::Routed ApiServer::route(const http::Request& request) {
  http::Routed routed = [&]() -> http::Routed {
    if (!host_allowed(request)) {
      return error(403, "this server answers only requests addressed to localhost (Host header: '" +
                            (request.header("host") ? *request.header("host") : std::string()) +
                            "'); bind it to a public address with --host to serve other names");
    }
    struct Route {
      const char* path;
      const char* method;
    };
    static constexpr Route kRoutes[] = {{"/", "GET"},
                                        {"/health", "GET"},
                                        {"/metrics", "GET"},
                                        {"/v1/models", "GET"},
                                        {"/v1/completions", "POST"},
                                        {"/v1/chat/completions", "POST"},
                                        {"/generate", "POST"},
                                        {"/flush_cache", "POST"},
                                        {"/update_weights_from_disk", "POST"},
                                        {"/health_generate", "GET"},
                                        {"/get_model_info", "GET"},
                                        {"/get_server_info", "GET"}};
    static constexpr Route kAdapterRoutes[] = {{"/v1/load_lora_adapter", "POST"}, {"/v1/unload_lora_adapter", "POST"}};
    const Route* found = nullptr;
    for (const Route& route : kRoutes) {
      if (request.path == route.path) found = &route;
    }
    for (const Route& route : kAdapterRoutes) {
      if (options_.allow_runtime_lora && request.path == route.path) found = &route;
    }
    const bool native = request.path == "/generate" || request.path == "/flush_cache" ||
                        request.path == "/update_weights_from_disk" || request.path == "/get_model_info" ||
                        request.path == "/get_server_info";
    const bool api = request.path.rfind("/v1/", 0) == 0 || native;
    if (request.method == "OPTIONS" && found != nullptr && !options_.cors_origin.empty()) {
      http::Response preflight;
      preflight.status = 204;
      preflight.set("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
          .set("Access-Control-Allow-Headers", "Authorization, Content-Type")
          .set("Access-Control-Max-Age", "600");
      return preflight;
    }
    if (std::count_if(request.headers.begin(), request.headers.end(),
                      [](const auto& header) { return header.first == "authorization"; }) > 1) {
      return error(400, "the request has more than one Authorization header; send one");
    }
    if (api && !authorized(request)) {
      return error(401, "a valid API key is required: send 'Authorization: Bearer <key>'", "", "invalid_api_key");
    }
    if (found == nullptr) return error(404, "no route for " + request.path);
    if (request.method != found->method) {
      http::Response response =
          error(405, request.method + " is not allowed on " + request.path + "; use " + found->method);
      response.set("Allow", found->method);
      return response;
    }
    const std::string path = request.path;
    if (path == "/") {
      http::Response page;
      page.set("Content-Type", "text/html; charset=utf-8");
      page.body = std::string(web_page_html());
      return page;
    }
    if (path == "/health") return json_response(200, {{"status", "ok"}, {"model", adapters_.base_name()}});
    if (path == "/metrics") {
      http::Response metrics;
      metrics.set("Content-Type", "text/plain; version=0.0.4");
      metrics.body = metrics_text(engine_.status(), http_.stats(), adapters_.list(),
                                  profiling_enabled() ? std::optional(profile_snapshot()) : std::nullopt);
      return metrics;
    }
    if (path == "/v1/models") return json_response(200, models());
    if (path == "/health_generate" || path == "/get_model_info" || path == "/get_server_info") {
      return native_info(path);
    }
    if (path == "/flush_cache") {  // SGLang sends no body here: no Content-Type to check
      const int forgotten = engine_.flush_prefix_cache();
      http::Response flushed;
      flushed.set("Content-Type", "text/plain");
      flushed.body = "Cache flushed: " + std::to_string(forgotten) + " KV blocks forgotten.\n";
      return flushed;
    }
    if (!is_json_content_type(request.header("content-type"))) {
      return error(415, "send the request body as JSON with 'Content-Type: application/json'");
    }
    if (path == "/v1/load_lora_adapter") {  // reads a file of any size: on a worker thread, never the event loop
      return http::Handler([this](const http::Request& http_request, http::ResponseWriter& writer) {
        http::Response response = load_adapter(http_request);
        add_cors_headers(http_request, response.headers);
        writer.send(response);
      });
    }
    if (path == "/v1/unload_lora_adapter") return unload_adapter(request);
    if (path == "/update_weights_from_disk") {  // reads and packs for a while: on a worker thread
      return http::Handler([this](const http::Request& http_request, http::ResponseWriter& writer) {
        update_weights(http_request, writer);
      });
    }
    if (path == "/generate") {
      return http::Handler([this](const http::Request& http_request, http::ResponseWriter& writer) {
        native_generate(http_request, writer);
      });
    }
    const Endpoint endpoint = path == "/v1/completions" ? Endpoint::kCompletions : Endpoint::kChatCompletions;
    return http::Handler([this, endpoint](const http::Request& http_request, http::ResponseWriter& writer) {
      generate(endpoint, http_request, writer);
    });
  }();
  if (auto* response = std::get_if<http::Response>(&routed)) add_cors_headers(request, response->headers);
  return routed;
}

ResponseIdentity ApiServer::identity(const ApiRequest& request) const {
  return {next_request_id(request.endpoint == Endpoint::kChatCompletions ? "chatcmpl-" : "cmpl-"), request.model,
          options_.system_fingerprint};
}

// As vLLM lists them: the base model, then each adapter with the base as its parent and its file as its root (the
// file's name only: the server's directories are not the client's business).
json ApiServer::models() const {
  const std::string& base = adapters_.base_name();
  const int context = engine_.config().max_position_embeddings;
  json data = json::array();
  data.push_back({{"id", base},
                  {"object", "model"},
                  {"owned_by", "minigen"},
                  {"root", base},
                  {"parent", nullptr},
                  {"max_model_len", context}});
  for (const ServedAdapter& adapter : adapters_.list()) {
    data.push_back({{"id", adapter.name},
                    {"object", "model"},
                    {"owned_by", "minigen"},
                    {"root", std::filesystem::path(adapter.weights->source).filename().string()},
                    {"parent", base},
                    {"max_model_len", context},
                    {"lora",
                     {{"format", adapter.weights->format},
                      {"rank", adapter.weights->max_rank()},
                      {"parameters", adapter.weights->parameter_count()}}}});
  }
  return {{"object", "list"}, {"data", data}};
}

namespace {

// The body of an admin route: a JSON object whose fields are all strings, `required` among them.
json admin_body(const http::Request& request, std::initializer_list<const char*> required) {
  json body = parse_untrusted_json<json>(request.body);  // throws minigen::Error: not JSON, too deep
  if (!body.is_object()) throw Error("the request body must be a JSON object");
  for (const char* name : required) {
    const auto value = body.find(name);
    if (value == body.end() || !value->is_string() || value->get<std::string>().empty()) {
      throw Error(std::string("'") + name + "' is required, a non-empty string");
    }
  }
  return body;
}

}  // namespace

http::Response ApiServer::load_adapter(const http::Request& request) {
  try {
    const json body = admin_body(request, {"lora_name", "lora_path"});
    // A path is at most PATH_MAX on Linux; anything longer would only be echoed back in the error.
    if (body["lora_path"].get<std::string>().size() > 4096) throw Error("'lora_path' is longer than 4096 bytes");
    // One load at a time: each may hold a file's tensors in memory until they are checked and packed.
    bool expected = false;
    if (!adapter_loading_.compare_exchange_strong(expected, true)) {
      return error(409, "another adapter is being loaded; send this one when it is done");
    }
    struct Done {
      std::atomic<bool>& flag;
      ~Done() { flag = false; }
    } done{adapter_loading_};
    const ServedAdapter added =
        adapters_.load(body["lora_name"].get<std::string>(), body["lora_path"].get<std::string>());
    if (options_.log_requests) {
      std::fprintf(stderr, "[minigen] loaded LoRA adapter %s: %s\n", added.name.c_str(),
                   added.weights->summary().c_str());
    }
    return json_response(200, {{"object", "lora_adapter"},
                               {"id", added.name},
                               {"status", "loaded"},
                               {"message", "adapter '" + added.name + "' loaded: " + added.weights->summary()}});
  } catch (const Error& failure) {
    return error(400, failure.what(), "lora_path");
  }
}

http::Response ApiServer::unload_adapter(const http::Request& request) {
  json body;
  try {
    body = admin_body(request, {"lora_name"});
  } catch (const Error& failure) {
    return error(400, failure.what(), "lora_name");
  }
  const std::string name = body["lora_name"].get<std::string>();
  if (!adapters_.remove(name)) {
    return error(404, "no adapter named '" + name.substr(0, 80) + "' is loaded", "lora_name", "model_not_found");
  }
  if (options_.log_requests) std::fprintf(stderr, "[minigen] unloaded LoRA adapter %s\n", name.c_str());
  return json_response(200, {{"object", "lora_adapter"}, {"id", name}, {"status", "unloaded"}});
}

void ApiServer::log_finished(const RequestTimer& timer, const std::string& id, const JobStream& stream,
                             const std::string& outcome) const {
  if (!options_.log_requests) return;
  const std::string line = request_log_line(timer.finish(id, stream.prompt_tokens(), outcome)) + "\n";
  std::fputs(line.c_str(), stderr);  // one call per line: lines of concurrent requests do not interleave
}

void ApiServer::generate(Endpoint endpoint, const http::Request& http_request, http::ResponseWriter& writer) {
  RequestTimer timer;  // from the request's arrival: the TTFT includes parsing, queueing and prefill
  ApiRequest request;
  std::shared_ptr<JobStream> stream;
  auto fail = [&](const http::Response& response) {
    http::Response answer = response;
    add_cors_headers(http_request, answer.headers);
    writer.send(answer);
  };
  try {
    request = parse_api_request(endpoint, http_request.body, tokenizer_, options_.grammar_vocabulary);
    const std::optional<ServedAdapter> served = adapters_.resolve(request.model);
    if (!served) {
      std::string names = adapters_.base_name();
      for (const ServedAdapter& adapter : adapters_.list()) names += ", " + adapter.name;
      return fail(
          error(404, "the model '" + request.model.substr(0, 80) + "' does not exist; this server answers for " + names,
                "model", "model_not_found"));
    }
    request.model = served->name;
    request.job.settings.adapter = served->weights;
    request.job.settings.prefix_root = served->prefix_root;
    if (served->weights != nullptr) timer.set_adapter(served->name);
    stream = engine_.submit(request.job);
  } catch (const ApiError& failure) {
    return fail(error(failure.status, failure.what(), failure.param));
  } catch (const EngineBusy& failure) {
    return fail(error(429, failure.what()));
  } catch (const InvalidSamplingParam& invalid) {  // what only the model's vocabulary shows (logit_bias ids, bans)
    const ApiError failure = sampling_param_error(invalid);
    return fail(error(failure.status, failure.what(), failure.param));
  } catch (const Error& failure) {  // the scheduler's own checks: context, pool size
    return fail(error(400, failure.what()));
  }
  if (request.stream) {
    respond_streaming(request, stream, http_request, writer, timer);
  } else {
    respond_whole(request, stream, http_request, writer, timer);
  }
}

void ApiServer::respond_whole(const ApiRequest& request, const std::shared_ptr<JobStream>& stream,
                              const http::Request& http_request, http::ResponseWriter& writer, RequestTimer& timer) {
  const ResponseIdentity response_identity = identity(request);
  std::vector<ChoiceResult> choices(request.job.choices);
  JobEvent event;
  for (int finished = 0; finished < request.job.choices;) {
    // Between steps: a client that hung up gives no other sign until the answer is written, hours of tokens later.
    if (writer.cancelled()) {
      engine_.cancel(stream);
      writer.send(error(503, "the server is shutting down"));  // goes nowhere if the client has gone
      return log_finished(timer, response_identity.id, *stream, "cancelled");
    }
    if (!stream->next(event, milliseconds(100))) continue;
    timer.on_event(event);
    if (event.finished) ++finished;
    if (!event.error.empty()) {
      log_finished(timer, response_identity.id, *stream, "error");
      engine_.cancel(stream);
      http::Response failure = error(event.error_status, event.error);
      add_cors_headers(http_request, failure.headers);
      writer.send(failure);
      return;
    }
    ChoiceResult& choice = choices[event.choice];
    choice.text += event.text;
    if (event.token >= 0) choice.tokens.push_back(event);
    if (event.finished) choice.finish_reason = event.finish_reason;
  }
  http::Response response =
      json_response(200, completion_response(request, response_identity, choices, stream->prompt_tokens(), tokenizer_));
  add_cors_headers(http_request, response.headers);
  writer.send(response);
  log_finished(timer, response_identity.id, *stream);
}

void ApiServer::respond_streaming(const ApiRequest& request, const std::shared_ptr<JobStream>& stream,
                                  const http::Request& http_request, http::ResponseWriter& writer,
                                  RequestTimer& timer) {
  http::Headers headers = sse_headers();
  add_cors_headers(http_request, headers);
  const ResponseIdentity same_for_every_chunk = identity(request);
  const auto cancel = [&] {
    engine_.cancel(stream);
    log_finished(timer, same_for_every_chunk.id, *stream, "cancelled");
  };
  if (!writer.begin_stream(200, headers)) return cancel();
  const bool chat = request.endpoint == Endpoint::kChatCompletions;
  std::vector<ChoiceStream> choice_streams;  // chat: each choice's reply parser
  for (int i = 0; chat && i < request.job.choices; ++i) {
    choice_streams.push_back({ReplyStreamParser(reply_options(request, same_for_every_chunk))});
  }
  int completion_tokens = 0;
  JobEvent event;
  for (int finished = 0; finished < request.job.choices;) {
    if (writer.cancelled()) {
      cancel();
      writer.write("data: " + to_json_text(error_body("the server is shutting down", "server_error", "")) + "\n\n");
      writer.end_stream();
      return;
    }
    if (!stream->next(event, milliseconds(250))) {
      // Nothing to send: a comment keeps proxies from timing out and finds a vanished client.
      if (!writer.write(": keep-alive\n\n")) return cancel();
      continue;
    }
    timer.on_event(event);  // a failed choice ends with finish_reason "error": the line says so
    if (event.finished) ++finished;
    if (event.token >= 0) ++completion_tokens;
    const json chunk =
        !event.error.empty()
            ? error_body(event.error, event.error_status >= 500 ? "server_error" : "invalid_request_error", "")
        : chat ? chat_stream_chunk(request, same_for_every_chunk, event, tokenizer_, choice_streams[event.choice])
               : stream_chunk(request, same_for_every_chunk, event, tokenizer_);
    if (!writer.write("data: " + to_json_text(chunk) + "\n\n")) return cancel();
  }
  if (request.include_usage) {
    const json usage = usage_chunk(request, same_for_every_chunk, stream->prompt_tokens(), completion_tokens);
    if (!writer.write("data: " + to_json_text(usage) + "\n\n")) return;
  }
  writer.write("data: [DONE]\n\n");
  writer.end_stream();
  log_finished(timer, same_for_every_chunk.id, *stream);
}

}  // namespace minigen
