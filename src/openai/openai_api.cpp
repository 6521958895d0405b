#include "openai/openai_api.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <utility>

#include "core/format.h"
#include "core/json_parse.h"
#include "openai/chat_api.h"
#include "openai/response_format.h"
#include "request/output_grammar.h"
#include "request/request_error.h"
#include "request/sampling_settings.h"
#include "tokenizer/chat_template.h"
#include "tokenizer/utf8.h"

namespace minigen {
namespace {

using nlohmann::json;

const json* field(const json& body, const char* name) {
  const auto found = body.find(name);
  return found == body.end() || found->is_null() ? nullptr : &*found;
}

double number_field(const json& body, const char* name, double fallback, double low, double high,
                    bool low_inclusive = true) {
  const json* value = field(body, name);
  if (value == nullptr) return fallback;
  if (!value->is_number()) throw ApiError(400, std::string("'") + name + "' must be a number", name);
  const double number = value->get<double>();
  const bool above = low_inclusive ? number >= low : number > low;
  if (!std::isfinite(number) || !above || number > high) {
    throw ApiError(400,
                   std::string("'") + name + "' must be in " + (low_inclusive ? "[" : "(") + json(low).dump() + ", " +
                       json(high).dump() + "], got " + value->dump(),
                   name);
  }
  return number;
}

int integer_field(const json& body, const char* name, int fallback, int low, int high) {
  const json* value = field(body, name);
  if (value == nullptr) return fallback;
  if (!value->is_number_integer()) throw ApiError(400, std::string("'") + name + "' must be an integer", name);
  const int64_t number = value->get<int64_t>();
  if (number < low || number > high) {
    throw ApiError(400,
                   std::string("'") + name + "' must be in [" + std::to_string(low) + ", " + std::to_string(high) +
                       "], got " + std::to_string(number),
                   name);
  }
  return static_cast<int>(number);
}

bool bool_field(const json& body, const char* name, bool fallback) {
  const json* value = field(body, name);
  if (value == nullptr) return fallback;
  if (!value->is_boolean()) throw ApiError(400, std::string("'") + name + "' must be true or false", name);
  return value->get<bool>();
}

// A token's text and its raw bytes, as OpenAI's logprobs carry them: one token can hold part of a UTF-8 character
// (the first two bytes of 长), so "token" shows such bytes as U+FFFD and "bytes" keeps them exactly; a client joins
// the bytes of consecutive tokens to rebuild the character.
json token_fields(const Tokenizer& tokenizer, int token) {
  const std::string bytes = tokenizer.token_bytes(token);
  json byte_values = json::array();
  for (char byte : bytes) byte_values.push_back(static_cast<unsigned char>(byte));
  return {{"token", valid_utf8(bytes)}, {"bytes", byte_values}, {"token_id", token}};
}

// The eos that ends a choice is counted in usage but is not part of the text, so logprobs do not list it either
// (as OpenAI's do not): logprobs.content joins to exactly the returned text.
bool listed_in_logprobs(const JobEvent& event, const Tokenizer& tokenizer) {
  return event.token >= 0 && !(event.finished && event.token == tokenizer.eos_id());
}

// One token's logprobs entry, and each of its top_logprobs. "logprob" means what OpenAI's and vLLM's (v1, its
// default raw_logprobs) mean: the model's own log-probability — log_softmax of the raw logits, temperature 1, before
// the grammar, the penalties and the filters — so the same text scores the same whatever settings sampled it
// (vLLM's issue 9453: filtered logprobs were incompatible with OpenAI's). top_logprobs are the model's most likely
// tokens by that measure. minigen adds, for learners, the two probabilities side by side: "raw_probability" (the
// model's, exp of logprob) and "kept_probability" (the one the draw used: after temperature, penalties, top-k, top-p
// and min-p, renormalised over the kept set; 0 for a token a filter removed).
json logprob_entry(const JobEvent& event, const Tokenizer& tokenizer) {
  json top = json::array();
  for (const TokenLogprob& candidate : event.raw.top) {
    json entry = token_fields(tokenizer, candidate.token);
    entry["logprob"] = candidate.logprob;
    entry["raw_probability"] = std::exp(static_cast<double>(candidate.logprob));
    entry["kept_probability"] = candidate.kept_probability;
    top.push_back(std::move(entry));
  }
  json entry = token_fields(tokenizer, event.token);
  entry["logprob"] = event.raw.chosen;
  entry["raw_probability"] = std::exp(static_cast<double>(event.raw.chosen));
  entry["kept_probability"] = event.probability;
  entry["kept_candidates"] = event.kept_candidates;
  if (event.grammar_allowed >= 0) entry["grammar_allowed"] = event.grammar_allowed;  // ids the grammar's mask left
  entry["top_logprobs"] = std::move(top);
  return entry;
}

json usage(int prompt_tokens, int completion_tokens) {
  return {{"prompt_tokens", prompt_tokens},
          {"completion_tokens", completion_tokens},
          {"total_tokens", prompt_tokens + completion_tokens}};
}

int64_t unix_seconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// OpenAI's logit_bias: {"token id": bias}; ids inside the vocabulary, biases in [-100, 100].
std::vector<LogitBias> logit_bias_field(const json& body, const Tokenizer& tokenizer) {
  const json* biases = field(body, "logit_bias");
  if (biases == nullptr) return {};
  if (!biases->is_object()) throw ApiError(400, "'logit_bias' must be an object of token id → bias", "logit_bias");
  std::vector<LogitBias> entries;
  for (const auto& [key, value] : biases->items()) {
    const bool digits = !key.empty() && key.size() <= 9 &&
                        std::all_of(key.begin(), key.end(), [](char c) { return c >= '0' && c <= '9'; });
    const int token = digits ? std::stoi(key) : -1;
    if (token < 0 || token >= tokenizer.vocab_size()) {
      throw ApiError(400,
                     "'logit_bias' keys must be token ids in [0, " + std::to_string(tokenizer.vocab_size()) +
                         "), got '" + key + "'",
                     "logit_bias");
    }
    if (!value.is_number() || !(value.get<double>() >= -kMaxLogitBias && value.get<double>() <= kMaxLogitBias)) {
      throw ApiError(400, "'logit_bias' values must be numbers in [-100, 100], got " + value.dump() + " for " + key,
                     "logit_bias");
    }
    try {
      entries.push_back({token, sampling_float(SamplingParam::kLogitBias, value.get<double>())});
    } catch (const InvalidSamplingParam& invalid) {
      throw ApiError(400, "'logit_bias' of token " + key + " " + invalid.problem(), "logit_bias");
    }
  }
  return entries;
}

// What every response and chunk carries around its choices.
// "seed": the one the request's draws used — the request's own, or the one drawn for −1 — so that a random run can
// be repeated.
json envelope(const ApiRequest& request, const ResponseIdentity& identity, const char* object, json choices) {
  return {{"id", identity.id},
          {"object", object},
          {"created", unix_seconds()},
          {"model", identity.model},
          {"system_fingerprint", identity.system_fingerprint},
          {"seed", request.job.settings.sampling.seed},
          {"choices", std::move(choices)}};
}

// Any integer in [0, 2^64 − 1] (nlohmann reads those above 2^63 − 1 as unsigned), or −1 for a random seed; absent: 0.
uint64_t seed_field(const json& body) {
  const json* seed = field(body, "seed");
  if (seed == nullptr) return 0;
  if (seed->is_number_unsigned()) return seed->get<uint64_t>();
  if (seed->is_number_integer() && seed->get<int64_t>() == kRandomSeed) return draw_random_seed();
  throw ApiError(400, "'seed' must be an integer in [0, 18446744073709551615], or -1 for a random seed", "seed");
}

// One streamed token's logprobs entry, or null when they were not asked for or the token is the ending eos.
json token_logprobs(const ApiRequest& request, const JobEvent& event, const Tokenizer& tokenizer) {
  return request.logprobs && listed_in_logprobs(event, tokenizer)
             ? json{{"content", json::array({logprob_entry(event, tokenizer)})}}
             : json();
}

// A sampling setting out of range, named as its JSON field: "'top_p' must be in (0, 1], got 1.5".
ApiError sampling_field_error(const std::string& field, const std::string& problem, bool temperature) {
  return ApiError(400, "'" + field + "' " + problem + (temperature ? " (0 means greedy)" : ""), field);
}

// A sampling field: number_field's range, then sampling_float's rule for tiny values (1e-320 is not 0, greedy).
float sampling_field(const json& body, SamplingParam param, double fallback, double low, double high,
                     bool low_inclusive = true) {
  const std::string name(sampling_param_name(param));
  const double number = number_field(body, name.c_str(), fallback, low, high, low_inclusive);
  try {
    return sampling_float(param, number);
  } catch (const InvalidSamplingParam& invalid) {
    throw sampling_field_error(name, invalid.problem(), param == SamplingParam::kTemperature);
  }
}

}  // namespace

json error_body(const std::string& message, const std::string& type, const std::string& param) {
  return {{"error",
           {{"message", message}, {"type", type}, {"param", param.empty() ? json() : json(param)}, {"code", json()}}}};
}

namespace {

// parse_api_request without the mapping of RequestError.
ApiRequest parse_request_body(Endpoint endpoint, const std::string& body_text, const Tokenizer& tokenizer,
                              const std::shared_ptr<const TokenVocabulary>& vocabulary) {
  if (const std::size_t bad = first_invalid_utf8(body_text); bad != std::string::npos) {
    throw ApiError(400, "the request body is not valid UTF-8 (the byte at offset " + std::to_string(bad) +
                            " does not begin or continue a character)");
  }
  // In the client's key order first: the chat template writes tools' keys as they were sent.
  nlohmann::ordered_json ordered_body;
  try {
    ordered_body = parse_untrusted_json<nlohmann::ordered_json>(body_text);
  } catch (const Error& error) {
    throw ApiError(400, std::string("the request body ") + error.what());
  }
  if (!ordered_body.is_object()) throw ApiError(400, "the request body must be a JSON object");
  const json body = ordered_body;

  ApiRequest request;
  request.endpoint = endpoint;
  if (const json* model = field(body, "model")) {
    if (!model->is_string()) throw ApiError(400, "'model' must be a string", "model");
    request.model = model->get<std::string>();
  }
  Job& job = request.job;
  if (endpoint == Endpoint::kChatCompletions) {
    ChatPromptRequest chat = parse_chat_prompt(ordered_body, tokenizer, vocabulary);
    job.prompt = std::move(chat.prompt);
    request.thinking = chat.thinking;
    request.reply = chat.reply;
    job.settings.grammar = std::move(chat.grammar);
  } else {
    // A string is bos + its encoding, where added tokens typed in the text are matched (a base model's prompt is
    // the caller's own text, not a chat turn); an array of token ids is taken as it is, as OpenAI's API allows.
    const json* prompt = field(body, "prompt");
    if (prompt != nullptr && prompt->is_array() && prompt->size() == 1 && (*prompt)[0].is_string()) {
      prompt = &(*prompt)[0];
    }
    if (prompt != nullptr && prompt->is_string()) {
      job.prompt = encode_base_prompt(tokenizer, prompt->get<std::string>());
    } else if (prompt != nullptr && prompt->is_array() && !prompt->empty() &&
               std::all_of(prompt->begin(), prompt->end(), [](const json& id) { return id.is_number_integer(); })) {
      for (const json& id : *prompt) {
        const int64_t value = id.get<int64_t>();
        if (value < 0 || value >= tokenizer.vocab_size()) {
          throw ApiError(400,
                         "'prompt' holds token id " + std::to_string(value) + ", outside the vocabulary [0, " +
                             std::to_string(tokenizer.vocab_size()) + ")",
                         "prompt");
        }
        job.prompt.push_back(static_cast<int>(value));
      }
    } else {
      throw ApiError(400, "'prompt' must be a string or a non-empty array of token ids (one prompt per request)",
                     "prompt");
    }
  }

  SequenceRequest& settings = job.settings;
  settings.max_new_tokens = integer_field(body,
                                          endpoint == Endpoint::kChatCompletions && field(body, "max_completion_tokens")
                                              ? "max_completion_tokens"
                                              : "max_tokens",
                                          endpoint == Endpoint::kChatCompletions ? 256 : 16, 1, 1 << 20);
  // Defaults are SamplingParams{}'s; the ranges here are the API's own (OpenAI's temperature ≤ 2), the rules that
  // keep the arithmetic defined are SamplingParams::validate()'s, applied once below.
  const SamplingParams defaults;
  settings.sampling.temperature = sampling_field(body, SamplingParam::kTemperature, defaults.temperature, 0.0, 2.0);
  // 0 is greedy decoding: SamplingParams::takes_argmax, the rule the CLI and Python follow too.
  settings.sampling.top_p = sampling_field(body, SamplingParam::kTopP, defaults.top_p, 0.0, 1.0, false);
  settings.sampling.top_k = integer_field(body, "top_k", defaults.top_k, 0, 1 << 20);
  settings.sampling.min_p = sampling_field(body, SamplingParam::kMinP, defaults.min_p, 0.0, 1.0);
  settings.sampling.repetition_penalty =
      sampling_field(body, SamplingParam::kRepetitionPenalty, defaults.repetition_penalty, 0.01, 10.0);
  settings.sampling.frequency_penalty = sampling_field(
      body, SamplingParam::kFrequencyPenalty, defaults.frequency_penalty, -kMaxOpenAiPenalty, kMaxOpenAiPenalty);
  settings.sampling.presence_penalty = sampling_field(body, SamplingParam::kPresencePenalty, defaults.presence_penalty,
                                                      -kMaxOpenAiPenalty, kMaxOpenAiPenalty);
  settings.sampling.logit_bias = logit_bias_field(body, tokenizer);
  settings.sampling.seed = seed_field(body);
  settings.use_cache = bool_field(body, "use_cache", true);
  settings.ignore_eos = bool_field(body, "ignore_eos", false);
  job.choices = integer_field(body, "n", 1, 1, 16);
  if (const auto format = ordered_body.find("response_format"); format != ordered_body.end() && !format->is_null()) {
    try {
      check_one_output_grammar(/*constrains_format=*/true, settings.grammar != nullptr);
    } catch (const RequestError&) {
      throw ApiError(400, "'response_format' cannot be combined with a tool_choice that forces a call",
                     "response_format");
    }
    settings.grammar = response_format_grammar(*format, vocabulary);
  }
  request.stream = bool_field(body, "stream", false);
  if (const json* options = field(body, "stream_options")) {
    if (!request.stream)
      throw ApiError(400, "'stream_options' is only allowed with \"stream\": true", "stream_options");
    if (!options->is_object()) throw ApiError(400, "'stream_options' must be an object", "stream_options");
    for (const auto& [key, value] : options->items()) {
      if (key != "include_usage") {
        throw ApiError(400, "'stream_options' has an unknown field '" + key + "'", "stream_options");
      }
    }
    request.include_usage = bool_field(*options, "include_usage", false);
  }

  if (const json* stop = field(body, "stop")) {
    if (stop->is_string()) {
      job.stop.push_back(*stop);
    } else if (stop->is_array() && stop->size() <= 4) {
      for (const json& entry : *stop) {
        if (!entry.is_string()) throw ApiError(400, "'stop' must be a string or an array of up to 4 strings", "stop");
        job.stop.push_back(entry);
      }
    } else {
      throw ApiError(400, "'stop' must be a string or an array of up to 4 strings", "stop");
    }
    for (const std::string& s : job.stop) {
      if (s.empty()) throw ApiError(400, "stop strings must not be empty", "stop");
    }
  }
  // logprobs: an integer (completions, OpenAI's legacy form) or a bool with top_logprobs (chat).
  if (const json* logprobs = field(body, "logprobs")) {
    if (logprobs->is_boolean()) {
      request.logprobs = logprobs->get<bool>();
      request.top_logprobs = integer_field(body, "top_logprobs", 0, 0, 20);
    } else if (logprobs->is_number_integer()) {
      request.top_logprobs = integer_field(body, "logprobs", 0, 0, 20);
      request.logprobs = true;
    } else {
      throw ApiError(400, "'logprobs' must be a boolean or an integer", "logprobs");
    }
  }
  // The raw row gives logprob and top_logprobs (logprob_entry); one kept candidate makes the engine report the kept
  // set's probability of the chosen token and of each listed one.
  settings.raw_logprobs = request.logprobs ? request.top_logprobs : -1;
  settings.top_candidates = request.logprobs ? 1 : 0;
  try {
    check_sampling_settings(settings.sampling);
  } catch (const RequestError& error) {
    throw sampling_field_error(error.field(), error.what(), is_temperature_error(error));
  }
  return request;
}

}  // namespace

ApiRequest parse_api_request(Endpoint endpoint, const std::string& body_text, const Tokenizer& tokenizer,
                             const std::shared_ptr<const TokenVocabulary>& vocabulary) {
  try {
    return parse_request_body(endpoint, body_text, tokenizer, vocabulary);
  } catch (const RequestError& error) {  // the request layer's checks, in OpenAI's form: the field is the param
    throw ApiError(400, error.what(), error.field());
  }
}

ApiError sampling_param_error(const InvalidSamplingParam& invalid) {
  return sampling_field_error(std::string(sampling_param_name(invalid.param())), invalid.problem(),
                              invalid.param() == SamplingParam::kTemperature);
}

json completion_response(const ApiRequest& request, const ResponseIdentity& identity,
                         const std::vector<ChoiceResult>& choices, int prompt_tokens, const Tokenizer& tokenizer) {
  const bool chat = request.endpoint == Endpoint::kChatCompletions;
  json out_choices = json::array();
  int completion_tokens = 0;
  for (std::size_t i = 0; i < choices.size(); ++i) {
    const ChoiceResult& result = choices[i];
    json choice = {{"index", i}, {"finish_reason", result.finish_reason}};
    if (chat) {
      const ParsedReply reply = parse_reply(result.text, reply_options(request, identity));
      choice["message"] = chat_message(reply);
      if (result.finish_reason == "stop") choice["finish_reason"] = std::string(reply.finish_reason());
    } else {
      choice["text"] = result.text;
    }
    json logprobs;
    if (request.logprobs) {
      json content = json::array();
      for (const JobEvent& event : result.tokens) {
        if (listed_in_logprobs(event, tokenizer)) content.push_back(logprob_entry(event, tokenizer));
      }
      logprobs = {{"content", content}};
    }
    choice["logprobs"] = logprobs;
    completion_tokens += static_cast<int>(result.tokens.size());
    out_choices.push_back(choice);
  }
  json response = envelope(request, identity, chat ? "chat.completion" : "text_completion", std::move(out_choices));
  response["usage"] = usage(prompt_tokens, completion_tokens);
  return response;
}

ReplyParserOptions reply_options(const ApiRequest& request, const ResponseIdentity& identity) {
  ReplyParserOptions options = request.reply;
  options.tool_call_id_prefix = "call_" + identity.id + "_";  // unique in the conversation: the request's id
  return options;
}

json chat_stream_chunk(const ApiRequest& request, const ResponseIdentity& identity, const JobEvent& event,
                       const Tokenizer& tokenizer, ChoiceStream& stream) {
  std::vector<ReplyDelta> deltas = stream.parser.feed(event.text);
  if (event.finished) {
    std::vector<ReplyDelta> rest = stream.parser.finish();
    deltas.insert(deltas.end(), std::make_move_iterator(rest.begin()), std::make_move_iterator(rest.end()));
  }
  // One chunk per token, as before the parser: what this token made certain, merged into one delta (OpenAI's delta
  // may carry reasoning_content, content and tool_calls at once); {} while text is held back.
  json delta = json::object();
  std::string reasoning, content;
  json calls = json::array();
  for (const ReplyDelta& piece : deltas) {
    if (piece.kind == ReplyDelta::Kind::kReasoning) reasoning += piece.text;
    if (piece.kind == ReplyDelta::Kind::kContent) content += piece.text;
    if (piece.kind == ReplyDelta::Kind::kToolCall) calls.push_back(streamed_tool_call(piece.tool_call));
  }
  if (!reasoning.empty()) delta["reasoning_content"] = reasoning;
  if (!content.empty()) delta["content"] = content;
  if (!calls.empty()) {
    stream.made_tool_calls = true;
    delta["tool_calls"] = std::move(calls);
  }
  json finish_reason;
  if (event.finished) {
    finish_reason = stream.made_tool_calls && event.finish_reason == "stop" ? "tool_calls" : event.finish_reason;
  }
  json choice = {{"index", event.choice}, {"delta", std::move(delta)}, {"finish_reason", std::move(finish_reason)}};
  choice["logprobs"] = token_logprobs(request, event, tokenizer);
  return envelope(request, identity, "chat.completion.chunk", json::array({std::move(choice)}));
}

json stream_chunk(const ApiRequest& request, const ResponseIdentity& identity, const JobEvent& event,
                  const Tokenizer& tokenizer) {
  const bool chat = request.endpoint == Endpoint::kChatCompletions;
  json choice = {{"index", event.choice}, {"finish_reason", event.finished ? json(event.finish_reason) : json()}};
  if (chat) {
    choice["delta"] = event.text.empty() && event.finished ? json::object() : json{{"content", event.text}};
  } else {
    choice["text"] = event.text;
  }
  choice["logprobs"] = token_logprobs(request, event, tokenizer);
  return envelope(request, identity, chat ? "chat.completion.chunk" : "text_completion",
                  json::array({std::move(choice)}));
}

json usage_chunk(const ApiRequest& request, const ResponseIdentity& identity, int prompt_tokens,
                 int completion_tokens) {
  json chunk = envelope(request, identity,
                        request.endpoint == Endpoint::kChatCompletions ? "chat.completion.chunk" : "text_completion",
                        json::array());
  chunk["usage"] = usage(prompt_tokens, completion_tokens);
  return chunk;
}

}  // namespace minigen
