#include "openai/sglang_generate.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "core/error.h"
#include "core/json_parse.h"
#include "openai/api_error.h"
#include "openai/response_format.h"
#include "request/request_error.h"
#include "request/sampling_settings.h"
#include "tokenizer/chat_template.h"
#include "tokenizer/utf8.h"

namespace minigen {
namespace {

using nlohmann::json;

// SGLang's defaults (its SamplingParams), which differ from MiniMind's generate (top_p 0.85, top_k 50,
// temperature 0.85): a learner switching engines switches samplers too, so docs/rl-rollouts.md says so.
constexpr double kDefaultTemperature = 1.0;
constexpr int kDefaultMaxNewTokens = 128;

const std::set<std::string> kRequestFields = {
    "text",   "input_ids", "sampling_params",   "return_logprob",      "top_logprobs_num", "return_text_in_logprobs",
    "stream", "rid",       "logprob_start_len", "logprob_distribution"};
const std::set<std::string> kSamplingFields = {"temperature",
                                               "top_p",
                                               "top_k",
                                               "min_p",
                                               "max_new_tokens",
                                               "stop",
                                               "stop_token_ids",
                                               "ignore_eos",
                                               "repetition_penalty",
                                               "frequency_penalty",
                                               "presence_penalty",
                                               "n",
                                               "json_schema",
                                               "sampling_seed",
                                               "skip_special_tokens",
                                               "spaces_between_special_tokens",
                                               "no_stop_trim"};

ApiError field_error(const std::string& name, const std::string& problem) {
  return ApiError(400, "'" + name + "' " + problem, name);
}

void reject_unknown(const json& object, const std::set<std::string>& known, const std::string& where) {
  for (const auto& [key, value] : object.items()) {
    if (known.count(key) == 0) {
      throw ApiError(
          400,
          where + " has an unknown field '" + key.substr(0, 80) + "' (it takes: " +
              [&] {
                std::string names;
                for (const std::string& name : known) names += (names.empty() ? "" : ", ") + name;
                return names;
              }() +
              ")",
          key.substr(0, 80));
    }
  }
}

const json* present(const json& object, const char* name) {
  const auto found = object.find(name);
  return found == object.end() || found->is_null() ? nullptr : &*found;
}

double number(const json& object, const char* name, double fallback, double low, double high) {
  const json* value = present(object, name);
  if (value == nullptr) return fallback;
  if (!value->is_number()) throw field_error(name, "must be a number");
  const double x = value->get<double>();
  if (!std::isfinite(x) || x < low || x > high) {
    throw field_error(name, "must be in [" + json(low).dump() + ", " + json(high).dump() + "], got " + value->dump());
  }
  return x;
}

// A sampling parameter: number()'s range, then sampling_float's rule for tiny values (1e-320 is not 0, greedy).
float sampling_number(const json& object, SamplingParam param, double fallback, double low, double high) {
  const std::string name(sampling_param_name(param));
  const double x = number(object, name.c_str(), fallback, low, high);
  try {
    return sampling_float(param, x);
  } catch (const InvalidSamplingParam& invalid) {
    throw field_error(name, invalid.problem());
  }
}

int64_t integer(const json& object, const char* name, int64_t fallback, int64_t low, int64_t high) {
  const json* value = present(object, name);
  if (value == nullptr) return fallback;
  if (!value->is_number_integer()) throw field_error(name, "must be an integer");
  if (value->is_number_unsigned() && value->get<uint64_t>() > static_cast<uint64_t>(high)) {
    throw field_error(name, "must be in [" + std::to_string(low) + ", " + std::to_string(high) + "]");
  }
  const int64_t x = value->get<int64_t>();
  if (x < low || x > high) {
    throw field_error(
        name, "must be in [" + std::to_string(low) + ", " + std::to_string(high) + "], got " + std::to_string(x));
  }
  return x;
}

bool boolean(const json& object, const char* name, bool fallback) {
  const json* value = present(object, name);
  if (value == nullptr) return fallback;
  if (!value->is_boolean()) throw field_error(name, "must be true or false");
  return value->get<bool>();
}

std::vector<int> token_ids(const json& ids, const Tokenizer& tokenizer) {
  if (!ids.is_array() || ids.empty()) throw field_error("input_ids", "must be a non-empty list of token ids");
  std::vector<int> out;
  for (const json& id : ids) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() >= tokenizer.vocab_size()) {
      throw field_error("input_ids", "holds " + id.dump().substr(0, 40) + ", not a token id in [0, " +
                                         std::to_string(tokenizer.vocab_size()) + ")");
    }
    out.push_back(id.get<int>());
  }
  return out;
}

// The prompts: "input_ids" (a list of ids, or a list of such lists) or "text" (a string or a list of strings,
// encoded as SGLang's tokenizer call does: no bos added, added tokens typed in the text matched).
std::vector<std::vector<int>> prompts(const json& body, const Tokenizer& tokenizer, bool& list_form) {
  const json* ids = present(body, "input_ids");
  const json* text = present(body, "text");
  if ((ids == nullptr) == (text == nullptr)) {
    throw ApiError(400, "give exactly one of 'text' and 'input_ids'", ids == nullptr ? "text" : "input_ids");
  }
  std::vector<std::vector<int>> out;
  if (ids != nullptr) {
    list_form = ids->is_array() && !ids->empty() && (*ids)[0].is_array();
    if (!list_form) return {token_ids(*ids, tokenizer)};
    if (ids->size() > static_cast<std::size_t>(kMaxGenerateSequences)) {
      throw field_error("input_ids", "holds " + std::to_string(ids->size()) + " prompts; one request takes at most " +
                                         std::to_string(kMaxGenerateSequences) + " sequences");
    }
    for (const json& one : *ids) out.push_back(token_ids(one, tokenizer));
    return out;
  }
  const auto encode = [&](const json& one) {
    if (!one.is_string() || one.get<std::string>().empty()) throw field_error("text", "must hold non-empty strings");
    std::vector<int> encoded = encode_base_prompt(tokenizer, one.get<std::string>());
    encoded.erase(encoded.begin());  // encode_base_prompt's bos: SGLang adds none
    if (encoded.empty()) throw field_error("text", "encodes to no tokens");
    return encoded;
  };
  list_form = text->is_array();
  if (!list_form) return {encode(*text)};
  if (text->empty()) throw field_error("text", "must be a string or a non-empty list of strings");
  if (text->size() > static_cast<std::size_t>(kMaxGenerateSequences)) {
    throw field_error("text", "holds " + std::to_string(text->size()) + " prompts; one request takes at most " +
                                  std::to_string(kMaxGenerateSequences) + " sequences");
  }
  for (const json& one : *text) out.push_back(encode(one));
  return out;
}

std::vector<std::string> stop_strings(const json& params) {
  const json* stop = present(params, "stop");
  if (stop == nullptr) return {};
  std::vector<std::string> out;
  if (stop->is_string()) {
    out.push_back(stop->get<std::string>());
  } else if (stop->is_array() && stop->size() <= 16) {
    for (const json& entry : *stop) {
      if (!entry.is_string()) throw field_error("stop", "must be a string or a list of up to 16 strings");
      out.push_back(entry.get<std::string>());
    }
  } else {
    throw field_error("stop", "must be a string or a list of up to 16 strings");
  }
  for (const std::string& s : out) {
    if (s.empty()) throw field_error("stop", "must not hold an empty string");
  }
  return out;
}

std::vector<int> stop_token_ids(const json& params, const Tokenizer& tokenizer) {
  const json* ids = present(params, "stop_token_ids");
  if (ids == nullptr) return {};
  if (!ids->is_array() || ids->size() > 64) throw field_error("stop_token_ids", "must be a list of up to 64 token ids");
  std::vector<int> out;
  for (const json& id : *ids) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() >= tokenizer.vocab_size()) {
      throw field_error("stop_token_ids", "holds " + id.dump().substr(0, 40) + ", not a token id in [0, " +
                                              std::to_string(tokenizer.vocab_size()) + ")");
    }
    out.push_back(id.get<int>());
  }
  return out;
}

SequenceRequest sequence_settings(const json& params, const Tokenizer& tokenizer,
                                  const std::shared_ptr<const TokenVocabulary>& vocabulary) {
  SequenceRequest settings;
  SamplingParams& sampling = settings.sampling;
  sampling.temperature = sampling_number(params, SamplingParam::kTemperature, kDefaultTemperature, 0.0, 100.0);
  sampling.top_p = sampling_number(params, SamplingParam::kTopP, 1.0, 0.0, 1.0);
  if (sampling.top_p <= 0.0f) throw field_error("top_p", "must be in (0, 1], got 0");
  const int64_t top_k = integer(params, "top_k", -1, -1, 1 << 30);
  if (top_k == 0) throw field_error("top_k", "must be -1 (off) or at least 1, got 0");
  sampling.top_k = top_k < 0 ? 0 : static_cast<int>(top_k);
  sampling.min_p = sampling_number(params, SamplingParam::kMinP, 0.0, 0.0, 1.0);
  sampling.repetition_penalty = sampling_number(params, SamplingParam::kRepetitionPenalty, 1.0, 0.01, 10.0);
  sampling.frequency_penalty = sampling_number(params, SamplingParam::kFrequencyPenalty, 0.0, -2.0, 2.0);
  sampling.presence_penalty = sampling_number(params, SamplingParam::kPresencePenalty, 0.0, -2.0, 2.0);
  const json* seed = present(params, "sampling_seed");
  if (seed != nullptr && !seed->is_number_integer()) throw field_error("sampling_seed", "must be an integer ≥ 0");
  if (seed != nullptr && !seed->is_number_unsigned() && seed->get<int64_t>() < 0) {
    throw field_error("sampling_seed", "must be an integer ≥ 0, got " + seed->dump());
  }
  // No seed: a fresh one per request (SGLang draws from its own generator); meta_info.sampling_seed reports it.
  sampling.seed = seed != nullptr ? seed->get<uint64_t>() : draw_random_seed();
  settings.max_new_tokens = static_cast<int>(integer(params, "max_new_tokens", kDefaultMaxNewTokens, 1, 1 << 20));
  settings.ignore_eos = boolean(params, "ignore_eos", false);
  settings.stop_token_ids = stop_token_ids(params, tokenizer);
  if (!boolean(params, "skip_special_tokens", true)) {
    throw field_error("skip_special_tokens", "false is not supported: minigen's text never holds special tokens");
  }
  boolean(params, "spaces_between_special_tokens", true);  // no special tokens in the text: nothing to space
  if (boolean(params, "no_stop_trim", false)) {
    throw field_error("no_stop_trim", "true is not supported: a stop string is always cut from the text");
  }
  if (const json* schema = present(params, "json_schema")) {
    if (!schema->is_string()) throw field_error("json_schema", "must be a string holding a JSON Schema");
    nlohmann::ordered_json parsed;
    try {
      parsed = parse_untrusted_json<nlohmann::ordered_json>(schema->get<std::string>());
    } catch (const Error& error) {
      throw field_error("json_schema", std::string("is not JSON: ") + error.what());
    }
    const nlohmann::ordered_json format = {{"type", "json_schema"},
                                           {"json_schema", {{"name", "json_schema"}, {"schema", parsed}}}};
    try {
      settings.grammar = response_format_grammar(format, vocabulary);
    } catch (const ApiError& error) {
      throw ApiError(400, error.what(), "json_schema");
    }
  }
  try {
    check_sampling_settings(sampling);
  } catch (const RequestError& error) {
    throw field_error(error.field(), error.what());
  }
  return settings;
}

json token_text(const Tokenizer& tokenizer, int token, bool with_text) {
  return with_text ? json(valid_utf8(tokenizer.token_bytes(token))) : json();
}

json finish_reason(const RolloutSequence& sequence, const Job& job, const Tokenizer& tokenizer) {
  if (sequence.finish_reason == "length") {
    return {{"type", "length"}, {"length", static_cast<int>(sequence.tokens.size())}};
  }
  if (sequence.finish_reason == "abort") return {{"type", "abort"}, {"message", sequence.abort_message}};
  const int last = sequence.tokens.empty() ? -1 : sequence.tokens.back().token;
  const bool stop_token = last == tokenizer.eos_id() ||
                          std::find(job.settings.stop_token_ids.begin(), job.settings.stop_token_ids.end(), last) !=
                              job.settings.stop_token_ids.end();
  if (stop_token || job.stop.empty()) return {{"type", "stop"}, {"matched", last}};
  // A stop string ended it: the earliest one in the decoded output (the text itself ends before it).
  std::vector<int> ids;
  for (const JobEvent& event : sequence.tokens) ids.push_back(event.token);
  const std::string decoded = tokenizer.decode(ids, /*skip_special_tokens=*/true);
  std::size_t best = std::string::npos;
  std::string matched = job.stop.front();
  for (const std::string& stop : job.stop) {
    const std::size_t at = decoded.find(stop);
    if (at < best) best = at, matched = stop;
  }
  return {{"type", "stop"}, {"matched", matched}};
}

// A request body: a JSON object, or an ApiError 400.
json body_object(const std::string& body_text) {
  json body;
  try {
    body = parse_untrusted_json<json>(body_text);
  } catch (const Error& error) {
    throw ApiError(400, std::string("the request body ") + error.what());
  }
  if (!body.is_object()) throw ApiError(400, "the request body must be a JSON object");
  return body;
}

}  // namespace

GenerateRequest parse_generate_request(const std::string& body_text, const Tokenizer& tokenizer,
                                       const std::shared_ptr<const TokenVocabulary>& vocabulary) {
  const json body = body_object(body_text);
  reject_unknown(body, kRequestFields, "the request");
  GenerateRequest request;
  const std::vector<std::vector<int>> prompt_list = prompts(body, tokenizer, request.list_form);
  json params = json::object();
  if (const json* given = present(body, "sampling_params")) {
    if (!given->is_object()) {
      throw field_error("sampling_params", "must be one object (the same settings for every prompt)");
    }
    params = *given;
  }
  reject_unknown(params, kSamplingFields, "'sampling_params'");
  const SequenceRequest settings = sequence_settings(params, tokenizer, vocabulary);
  const int n = static_cast<int>(integer(params, "n", 1, 1, 64));
  if (static_cast<int64_t>(prompt_list.size()) * n > kMaxGenerateSequences) {
    throw field_error("n", "asks for " + std::to_string(prompt_list.size() * n) +
                               " sequences (prompts × n); one request takes at most " +
                               std::to_string(kMaxGenerateSequences));
  }
  request.return_logprob = boolean(body, "return_logprob", false);
  request.top_logprobs_num = static_cast<int>(integer(body, "top_logprobs_num", 0, 0, 20));
  request.text_in_logprobs = boolean(body, "return_text_in_logprobs", false);
  request.stream = boolean(body, "stream", false);
  if (integer(body, "logprob_start_len", -1, -1, -1) != -1) {
    throw field_error("logprob_start_len", "must be -1: prompt logprobs are not returned");
  }
  if (const json* distribution = present(body, "logprob_distribution")) {
    if (!distribution->is_string() || (*distribution != "raw" && *distribution != "sampling")) {
      throw field_error("logprob_distribution",
                        "must be \"raw\" (log_softmax of the raw logits, the default) or "
                        "\"sampling\" (the distribution the token was drawn from)");
    }
    request.raw_logprobs = *distribution == "raw";
  }
  std::vector<std::string> stops = stop_strings(params);
  if (const json* rid = present(body, "rid")) {
    if (rid->is_string() && !request.list_form) {
      request.rids.push_back(rid->get<std::string>().substr(0, 256));
    } else if (rid->is_array() && rid->size() == prompt_list.size() &&
               std::all_of(rid->begin(), rid->end(), [](const json& r) { return r.is_string(); })) {
      for (const json& r : *rid) request.rids.push_back(r.get<std::string>().substr(0, 256));
    } else {
      throw field_error("rid", "must be a string (one prompt) or a list of strings, one per prompt");
    }
  }
  for (std::size_t k = 0; k < prompt_list.size(); ++k) {
    Job job;
    job.prompt = prompt_list[k];
    job.settings = settings;
    job.choices = n;
    job.first_rng_row = static_cast<uint64_t>(k) * static_cast<uint64_t>(n);
    job.stop = stops;
    if (request.return_logprob && request.raw_logprobs) job.settings.raw_logprobs = request.top_logprobs_num;
    if (request.return_logprob && !request.raw_logprobs)
      job.settings.top_candidates = std::max(1, request.top_logprobs_num);
    request.jobs.push_back(std::move(job));
    if (request.rids.size() <= k) request.rids.push_back("");
  }
  return request;
}

json sequence_result(const GenerateRequest& request, std::size_t index, const RolloutSequence& sequence,
                     const Tokenizer& tokenizer, double e2e_latency_seconds) {
  std::size_t k = 0;  // the prompt this sequence is a copy of
  std::size_t first = 0;
  while (first + static_cast<std::size_t>(request.jobs.at(k).choices) <= index) {
    first += static_cast<std::size_t>(request.jobs[k].choices);
    ++k;
  }
  const Job& job = request.jobs[k];
  const int j = static_cast<int>(index - first);
  json output_ids = json::array();
  json logprobs = json::array();
  json top_logprobs = json::array();
  for (const JobEvent& event : sequence.tokens) {
    output_ids.push_back(event.token);
    if (!request.return_logprob) continue;
    const double logprob = request.raw_logprobs    ? static_cast<double>(event.raw.chosen)
                           : event.probability > 0 ? std::log(static_cast<double>(event.probability))
                                                   : -1e30;
    logprobs.push_back(
        json::array({logprob, event.token, token_text(tokenizer, event.token, request.text_in_logprobs)}));
    if (request.top_logprobs_num == 0) continue;
    json top = json::array();
    if (request.raw_logprobs) {
      for (const TokenLogprob& candidate : event.raw.top) {
        top.push_back(json::array(
            {candidate.logprob, candidate.token, token_text(tokenizer, candidate.token, request.text_in_logprobs)}));
      }
    } else {
      for (const Candidate& candidate : event.top) {
        top.push_back(json::array({candidate.probability > 0 ? std::log(candidate.probability) : -1e30, candidate.token,
                                   token_text(tokenizer, candidate.token, request.text_in_logprobs)}));
      }
    }
    top_logprobs.push_back(std::move(top));
  }
  const std::string& rid = request.rids[k];
  json meta = {{"id", rid.empty() ? "minigen-" + std::to_string(index)
                                  : (job.choices > 1 ? rid + "-" + std::to_string(j) : rid)},
               {"finish_reason", sequence.finish_reason.empty() ? json() : finish_reason(sequence, job, tokenizer)},
               {"prompt_tokens", sequence.prompt_tokens},
               {"completion_tokens", static_cast<int>(sequence.tokens.size())},
               {"cached_tokens", sequence.cached_tokens},
               {"output_ids", output_ids},
               {"weight_version", sequence.weight_version},
               {"sampling_seed", job.settings.sampling.seed},
               {"e2e_latency", e2e_latency_seconds}};
  if (request.return_logprob) {
    meta["output_token_logprobs"] = std::move(logprobs);
    if (request.top_logprobs_num > 0) meta["output_top_logprobs"] = std::move(top_logprobs);
  }
  return {{"text", sequence.text}, {"output_ids", std::move(output_ids)}, {"meta_info", std::move(meta)}};
}

json generate_response(const GenerateRequest& request, const std::vector<RolloutSequence>& sequences,
                       const Tokenizer& tokenizer, double e2e_latency_seconds) {
  json results = json::array();
  for (std::size_t index = 0; index < sequences.size(); ++index) {
    results.push_back(sequence_result(request, index, sequences[index], tokenizer, e2e_latency_seconds));
  }
  if (!request.list_form && results.size() == 1) return results[0];
  return results;
}

UpdateWeightsRequest parse_update_weights_request(const std::string& body_text) {
  const json body = body_object(body_text);
  reject_unknown(body, {"model_path", "weight_version", "abort_all_requests", "load_format", "flush_cache"},
                 "the request");
  UpdateWeightsRequest request;
  const json* path = present(body, "model_path");
  if (path == nullptr || !path->is_string() || path->get<std::string>().empty()) {
    throw field_error("model_path", "is required: the directory the new weights were saved to");
  }
  request.model_path = path->get<std::string>();
  // A path is at most PATH_MAX on Linux; anything longer would only be echoed back in the error.
  if (request.model_path.size() > 4096) throw field_error("model_path", "is longer than 4096 bytes");
  if (const json* version = present(body, "weight_version")) {
    if (!version->is_string() || version->get<std::string>().empty() || version->get<std::string>().size() > 128) {
      throw field_error("weight_version", "must be a string of 1 to 128 bytes");
    }
    request.weight_version = version->get<std::string>();
  }
  request.abort_all_requests = boolean(body, "abort_all_requests", false);
  if (const json* format = present(body, "load_format"); format != nullptr && *format != "auto") {
    throw field_error("load_format", "must be \"auto\" (minigen reads what the directory holds)");
  }
  if (!boolean(body, "flush_cache", true)) {
    throw field_error("flush_cache", "cannot be false: KV computed by the old weights must never meet the new ones");
  }
  return request;
}

}  // namespace minigen
