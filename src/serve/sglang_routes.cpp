// SGLang's native routes on minigen's server: /generate (the rollout route of MiniMind's SGLangRolloutEngine) and
// the small routes its clients poll. The bodies are serve/sglang_generate.h's; this file waits for the engine.
#include <chrono>
#include <cstdio>
#include <mutex>

#include "core/error.h"
#include "core/json_text.h"
#include "openai/sglang_generate.h"
#include "serve/api_server.h"

namespace minigen {

using nlohmann::json;

http::Response ApiServer::native_info(const std::string& path) {
  const ModelConfig& config = engine_.config();
  if (path == "/health_generate") {
    const EngineStatus status = engine_.status();
    return json_response(200, {{"status", "ok"}, {"running", status.running}, {"waiting", status.waiting}});
  }
  if (path == "/get_model_info") {
    std::string model_path;
    {
      std::lock_guard lock(model_path_mutex_);
      model_path = model_path_;
    }
    return json_response(200, {{"model_path", model_path},
                               {"tokenizer_path", adapters_.base_name()},
                               {"is_generation", true},
                               {"weight_version", engine_.weight_version()},
                               {"context_length", config.max_position_embeddings},
                               {"vocab_size", config.vocab_size}});
  }
  const EngineStatus status = engine_.status();
  return json_response(200, {{"engine", "minigen"},
                             {"served_model_name", adapters_.base_name()},
                             {"context_length", config.max_position_embeddings},
                             {"running_requests", status.running},
                             {"kv_blocks_total", status.kv_blocks_total},
                             {"kv_blocks_used", status.kv_blocks_used},
                             {"kv_block_tokens", BlockPool::kBlockTokens},
                             {"weight_type", options_.weight_type},
                             {"activations", options_.activations.empty() ? json(nullptr) : json(options_.activations)},
                             {"weight_version", engine_.weight_version()}});
}

void ApiServer::update_weights(const http::Request& http_request, http::ResponseWriter& writer) {
  auto answer = [&](const http::Response& response) {
    http::Response sent = response;
    add_cors_headers(http_request, sent.headers);
    writer.send(sent);
  };
  if (!options_.update_weights) {
    return answer(error(400, "this server cannot update its weights from disk"));
  }
  if (!loopback_only_ && options_.api_key.empty()) {
    // The route opens a path the client names: on a server anyone on the network reaches, only with a key.
    return answer(error(403,
                        "updating the weights from disk on a server listening beyond loopback needs an API key "
                        "(--api-key or $MINIGEN_API_KEY)",
                        "", "permission_denied"));
  }
  UpdateWeightsRequest request;
  try {
    request = parse_update_weights_request(http_request.body);
  } catch (const ApiError& failure) {
    return answer(error(failure.status, failure.what(), failure.param));
  }
  WeightUpdateReport report;
  try {
    report = options_.update_weights(request.model_path, request.weight_version, request.abort_all_requests);
  } catch (const Error& failure) {  // the old weights keep serving
    return answer(error(400, failure.what(), "model_path"));
  }
  {
    std::lock_guard lock(model_path_mutex_);
    model_path_ = request.model_path;
  }
  if (options_.log_requests) {
    std::fprintf(stderr, "[minigen] weights updated from %s: version %s (load %.3f s, switch %.3f s)\n",
                 request.model_path.c_str(), report.weight_version.c_str(), report.load_seconds, report.switch_seconds);
  }
  answer(json_response(200, {{"success", true},
                             {"message", "Succeeded to update model weights."},
                             {"weight_version", report.weight_version},
                             {"load_seconds", report.load_seconds},
                             {"switch_seconds", report.switch_seconds},
                             {"num_paused_requests", 0}}));
}

void ApiServer::native_generate(const http::Request& http_request, http::ResponseWriter& writer) {
  const auto started = std::chrono::steady_clock::now();
  auto fail = [&](const http::Response& response) {
    http::Response answer = response;
    add_cors_headers(http_request, answer.headers);
    writer.send(answer);
  };
  GenerateRequest request;
  std::vector<std::shared_ptr<JobStream>> streams;
  try {
    request = parse_generate_request(http_request.body, tokenizer_, options_.grammar_vocabulary);
    streams = engine_.submit_all(request.jobs);
  } catch (const ApiError& failure) {
    return fail(error(failure.status, failure.what(), failure.param));
  } catch (const EngineBusy& failure) {
    return fail(error(429, failure.what()));
  } catch (const InvalidSamplingParam& invalid) {
    const ApiError failure = sampling_param_error(invalid);
    return fail(error(failure.status, failure.what(), failure.param));
  } catch (const Error& failure) {  // the scheduler's checks: context, pool size
    return fail(error(400, failure.what()));
  }
  const auto cancel_all = [&] {
    for (const auto& stream : streams) engine_.cancel(stream);
  };
  // Sequences in request order: job k's choice j at offset[k] + j.
  std::vector<std::size_t> offset;
  std::size_t total = 0;
  for (const Job& job : request.jobs) {
    offset.push_back(total);
    total += static_cast<std::size_t>(job.choices);
  }
  std::vector<RolloutSequence> sequences(total);
  for (std::size_t k = 0; k < streams.size(); ++k) {
    for (int j = 0; j < request.jobs[k].choices; ++j) {
      sequences[offset[k] + j].prompt_tokens = static_cast<int>(request.jobs[k].prompt.size());
    }
  }
  const bool streaming = request.stream;
  if (streaming) {
    http::Headers headers = sse_headers();
    add_cors_headers(http_request, headers);
    if (!writer.begin_stream(200, headers)) return cancel_all();
  }
  const auto seconds_so_far = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  };
  auto last_sent = std::chrono::steady_clock::now();
  // Streaming: a sequence's result so far after each of its tokens; false when the client is gone.
  const auto send_update = [&](std::size_t index) {
    json update = sequence_result(request, index, sequences[index], tokenizer_, seconds_so_far());
    update["index"] = index;
    last_sent = std::chrono::steady_clock::now();
    return writer.write("data: " + to_json_text(update) + "\n\n");
  };
  const auto end_with_error = [&](int status, const std::string& message) {
    cancel_all();
    if (!streaming) return fail(error(status, message));
    writer.write("data: " + error(status, message).body + "\n\n");
    writer.end_stream();
  };
  std::size_t finished = 0;
  JobEvent event;
  while (finished < total) {
    if (writer.cancelled()) {  // the client hung up (or the server drains): its rows leave the batch now
      return end_with_error(503, "the server is shutting down");
    }
    bool any = false;
    for (std::size_t k = 0; k < streams.size(); ++k) {
      while (streams[k]->next(event, std::chrono::milliseconds(0))) {
        any = true;
        if (!event.error.empty()) return end_with_error(event.error_status, event.error);
        const std::size_t index = offset[k] + static_cast<std::size_t>(event.choice);
        RolloutSequence& sequence = sequences[index];
        if (sequence.tokens.empty()) sequence.weight_version = streams[k]->weight_version();  // one per job
        if (event.token >= 0) {
          if (sequence.tokens.empty()) sequence.cached_tokens = event.cached_tokens;
          sequence.text += event.text;
          sequence.tokens.push_back(event);
        }
        if (event.finished) {
          sequence.finish_reason = event.finish_reason;
          sequence.abort_message = event.abort_message;
          ++finished;
        }
        if (streaming && !send_update(index)) return cancel_all();
      }
    }
    if (!any && finished < total) {
      // Wait on the first unfinished stream for a moment; the others are drained on the next pass.
      for (std::size_t k = 0; k < streams.size(); ++k) {
        bool open = false;
        for (int j = 0; j < request.jobs[k].choices; ++j) open |= sequences[offset[k] + j].finish_reason.empty();
        if (!open) continue;
        streams[k]->wait(std::chrono::milliseconds(20));
        break;
      }
      // Nothing to send for a while: a comment keeps proxies from timing out and finds a vanished client.
      if (streaming && std::chrono::steady_clock::now() - last_sent > std::chrono::milliseconds(250)) {
        last_sent = std::chrono::steady_clock::now();
        if (!writer.write(": keep-alive\n\n")) return cancel_all();
      }
    }
  }
  if (streaming) {
    writer.write("data: [DONE]\n\n");
    writer.end_stream();
    return;
  }
  http::Response response = json_response(200, generate_response(request, sequences, tokenizer_, seconds_so_far()));
  add_cors_headers(http_request, response.headers);
  writer.send(response);
}

}  // namespace minigen
