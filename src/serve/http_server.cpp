#include "serve/http_server.h"

#include <httplib.h>

#include <sys/socket.h>

#include <atomic>
#include <cstdint>
#include <iomanip>
#include <sstream>

#include "core/error.h"
#include "serve/openai_api.h"
#include "serve/web_page.h"

namespace minigen {
namespace {

using nlohmann::json;

void send_json(httplib::Response& response, int status, const json& body) {
  response.status = status;
  response.set_content(body.dump(), "application/json");
}

void send_error(httplib::Response& response, int status, const std::string& message, const std::string& param = "") {
  const char* type = status == 429 ? "rate_limit_error" : status >= 500 ? "server_error" : "invalid_request_error";
  send_json(response, status, error_body(message, type, param));
}

std::string next_request_id(const char* prefix) {
  static std::atomic<uint64_t> counter{0};
  return std::string(prefix) + std::to_string(++counter);
}

}  // namespace

std::string metrics_text(const EngineStatus& status) {
  std::ostringstream out;
  out << std::setprecision(17);  // counters beyond a million must not turn into 1.23457e+06
  auto metric = [&](const char* name, const char* type, const char* help, double value) {
    out << "# HELP " << name << ' ' << help << "\n# TYPE " << name << ' ' << type << '\n' << name << ' ';
    if (value == static_cast<double>(static_cast<int64_t>(value))) {
      out << static_cast<int64_t>(value) << '\n';
    } else {
      out << value << '\n';
    }
  };
  metric("minigen_requests_running", "gauge", "Sequences in the running batch.", status.running);
  metric("minigen_requests_waiting", "gauge", "Sequences and requests waiting to be scheduled.", status.waiting);
  metric("minigen_kv_blocks_total", "gauge", "KV cache blocks in the pool (16 positions each).", status.kv_blocks_total);
  metric("minigen_kv_blocks_used", "gauge", "KV blocks referenced by a sequence.", status.kv_blocks_used);
  metric("minigen_kv_blocks_free", "gauge", "KV blocks a new sequence can take (free or evictable).",
         status.kv_blocks_total - status.kv_blocks_used);
  metric("minigen_kv_blocks_cached", "gauge", "KV blocks registered in the prefix cache.", status.kv_blocks_cached);
  metric("minigen_prefix_cache_lookups_total", "counter", "Prefix-cache block lookups.",
         static_cast<double>(status.prefix_lookups));
  metric("minigen_prefix_cache_hits_total", "counter", "Prefix-cache block hits.", static_cast<double>(status.prefix_hits));
  metric("minigen_prefix_cache_hit_rate", "gauge", "Hits per lookup since start.",
         status.prefix_lookups > 0 ? static_cast<double>(status.prefix_hits) / status.prefix_lookups : 0.0);
  metric("minigen_prompt_tokens_cached_total", "counter", "Prompt tokens taken from the prefix cache.",
         static_cast<double>(status.counters.prefix_cached_tokens));
  metric("minigen_prefill_tokens_total", "counter", "Prompt tokens computed.",
         static_cast<double>(status.counters.prefill_tokens));
  metric("minigen_generation_tokens_total", "counter", "Tokens generated.",
         static_cast<double>(status.counters.generated_tokens));
  metric("minigen_generation_tokens_per_second", "gauge", "Tokens generated per second over the last 5 s.",
         status.generated_tokens_per_second);
  metric("minigen_steps_total", "counter", "Forward calls (scheduler steps).", static_cast<double>(status.counters.steps));
  metric("minigen_preemptions_total", "counter", "Sequences preempted for lack of KV blocks.",
         static_cast<double>(status.counters.preemptions));
  metric("minigen_requests_total", "counter", "Requests accepted.", static_cast<double>(status.jobs_submitted));
  metric("minigen_requests_rejected_total", "counter", "Requests refused because the queue was full.",
         static_cast<double>(status.jobs_rejected));
  return out.str();
}

HttpServer::HttpServer(Engine& engine, const Tokenizer& tokenizer, std::string model_name)
    : engine_(engine), tokenizer_(tokenizer), model_name_(std::move(model_name)),
      server_(std::make_unique<httplib::Server>()) {
  // One thread per open connection: a streaming request holds its thread until the last token.
  server_->new_task_queue = [] { return new httplib::ThreadPool(128); };
  server_->set_payload_max_length(8u << 20);
  // Debian's compiled cpp-httplib listens with a backlog of 5: a burst of clients overflows the accept queue and
  // waits for TCP's 1 s retransmit. Keep the socket (the callback replaces httplib's defaults, so set
  // SO_REUSEADDR here too) and listen again with the system's maximum once bound.
  server_->set_socket_options([this](socket_t socket) {
    int yes = 1;
    ::setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    listening_socket_ = socket;
  });
  add_routes();
}

HttpServer::~HttpServer() { stop(); }

int HttpServer::bind(const std::string& host, int port) {
  const int bound = port == 0 ? server_->bind_to_any_port(host) : (server_->bind_to_port(host, port) ? port : -1);
  if (bound <= 0) throw Error("cannot listen on " + host + ":" + std::to_string(port));
  if (listening_socket_ >= 0) ::listen(listening_socket_, SOMAXCONN);
  return bound;
}

void HttpServer::serve() { server_->listen_after_bind(); }

void HttpServer::stop() {
  if (server_) server_->stop();
}

void HttpServer::add_routes() {
  httplib::Server& server = *server_;
  server.Get("/", [](const httplib::Request&, httplib::Response& response) {
    response.set_content(std::string(web_page_html()), "text/html; charset=utf-8");
  });
  server.Get("/health", [](const httplib::Request&, httplib::Response& response) {
    send_json(response, 200, {{"status", "ok"}});
  });
  server.Get("/metrics", [this](const httplib::Request&, httplib::Response& response) {
    response.set_content(metrics_text(engine_.status()), "text/plain; version=0.0.4");
  });
  server.Get("/v1/models", [this](const httplib::Request&, httplib::Response& response) {
    send_json(response, 200,
              {{"object", "list"},
               {"data", json::array({{{"id", model_name_}, {"object", "model"}, {"owned_by", "minigen"}}})}});
  });

  auto generate = [this](Endpoint endpoint, const httplib::Request& http_request, httplib::Response& response) {
    ApiRequest request;
    std::shared_ptr<JobStream> stream;
    try {
      request = parse_api_request(endpoint, http_request.body, tokenizer_);
      stream = engine_.submit(request.job);
    } catch (const ApiError& error) {
      return send_error(response, error.status, error.what(), error.param);
    } catch (const EngineBusy& error) {
      return send_error(response, 429, error.what());
    } catch (const std::exception& error) {  // the scheduler's own checks: context, pool size, sampling values
      return send_error(response, 400, error.what());
    }
    const std::string id = next_request_id(endpoint == Endpoint::kChatCompletions ? "chatcmpl-" : "cmpl-");

    if (!request.stream) {
      std::vector<ChoiceResult> choices(request.job.choices);
      JobEvent event;
      for (int finished = 0; finished < request.job.choices;) {
        if (!stream->next(event, std::chrono::milliseconds(1000))) continue;
        if (event.finished) ++finished;
        ChoiceResult& choice = choices[event.choice];
        if (!event.error.empty()) {
          engine_.cancel(stream);
          return send_error(response, 500, event.error);
        }
        choice.text += event.text;
        if (event.token >= 0) choice.tokens.push_back(event);
        if (event.finished) choice.finish_reason = event.finish_reason;
      }
      return send_json(response, 200,
                       completion_response(request, id, model_name_, choices, stream->prompt_tokens(), tokenizer_));
    }

    response.set_header("Cache-Control", "no-cache");
    response.set_chunked_content_provider(
        "text/event-stream",
        [this, request, stream, id](std::size_t, httplib::DataSink& sink) {
          JobEvent event;
          for (int finished = 0; finished < request.job.choices;) {
            if (!stream->next(event, std::chrono::milliseconds(250))) {
              // Nothing to send: probe the connection so a vanished client frees its KV blocks promptly.
              static const char kKeepAlive[] = ": keep-alive\n\n";
              if (!sink.write(kKeepAlive, sizeof kKeepAlive - 1)) {
                engine_.cancel(stream);
                return false;
              }
              continue;
            }
            if (event.finished) ++finished;
            const std::string chunk =
                "data: " + stream_chunk(request, id, model_name_, event, tokenizer_).dump() + "\n\n";
            if (!sink.write(chunk.data(), chunk.size())) {
              engine_.cancel(stream);
              return false;
            }
          }
          static const char kDone[] = "data: [DONE]\n\n";
          sink.write(kDone, sizeof kDone - 1);
          sink.done();
          return true;
        },
        [this, stream](bool success) {
          if (!success) engine_.cancel(stream);
        });
  };
  server.Post("/v1/completions", [generate](const httplib::Request& request, httplib::Response& response) {
    generate(Endpoint::kCompletions, request, response);
  });
  server.Post("/v1/chat/completions", [generate](const httplib::Request& request, httplib::Response& response) {
    generate(Endpoint::kChatCompletions, request, response);
  });
  server.set_error_handler([](const httplib::Request&, httplib::Response& response) {
    if (response.body.empty()) {
      send_error(response, response.status, "no route for this method and path (status " +
                                                std::to_string(response.status) + ")");
    }
  });
}

}  // namespace minigen
