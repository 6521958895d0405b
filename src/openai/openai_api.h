#pragma once
// The OpenAI-compatible request and response bodies: JSON in, a validated Job out; events in, JSON out.
// Every check a client can fail raises ApiError with an HTTP status and a message naming the field, so the server
// answers 400 with OpenAI's error shape instead of crashing or guessing.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "grammar/token_vocabulary.h"
#include "openai/api_error.h"
#include "request/job.h"
#include "request/reply_parser.h"
#include "sampling/sampling_params.h"
#include "tokenizer/bpe_tokenizer.h"

namespace minigen {

enum class Endpoint { kCompletions, kChatCompletions };

struct ApiRequest {
  Endpoint endpoint = Endpoint::kCompletions;
  // "model" as sent (empty when absent). The server resolves it to the base model or one of its LoRA adapters
  // (serve/adapter_registry.h) and then writes the name it answers as back here.
  std::string model;
  Job job;
  bool stream = false;
  bool include_usage = false;  // stream_options.include_usage: one last chunk with the usage and no choices
  bool thinking = false;       // chat: the prompt opened a think block (open_thinking / chat_template_kwargs)
  ReplyParserOptions reply;    // chat: how the reply splits into reasoning, content and tool calls
  bool logprobs = false;
  int top_logprobs = 0;
};

// What every response and chunk of one request repeats.
struct ResponseIdentity {
  std::string id;                  // "chatcmpl-…" or "cmpl-…"
  std::string model;               // the served model's name
  std::string system_fingerprint;  // the backend configuration (weights and KV types), as OpenAI's field
};

// Parses and validates a request body (malformed JSON, wrong types and out-of-range values throw ApiError 400).
// Chat messages are rendered with minimind-3's template (tools, tool calls, thinking: openai/chat_api.h); a
// completion prompt is bos + text. `vocabulary` (the model's tokens, for grammars) may be null: then a request for
// structured output or a forced tool call is a 400.
ApiRequest parse_api_request(Endpoint endpoint, const std::string& body, const Tokenizer& tokenizer,
                             const std::shared_ptr<const TokenVocabulary>& vocabulary = nullptr);

nlohmann::json error_body(const std::string& message, const std::string& type, const std::string& param);

// A sampling parameter out of range as the API says it: 400 naming the JSON field ("'logit_bias' bans every …").
ApiError sampling_param_error(const InvalidSamplingParam& invalid);

// Everything a finished (non-streaming) response needs, gathered from the job's events.
struct ChoiceResult {
  std::string text;
  std::string finish_reason;
  std::vector<JobEvent> tokens;  // one per generated token, for logprobs
};

nlohmann::json completion_response(const ApiRequest& request, const ResponseIdentity& identity,
                                   const std::vector<ChoiceResult>& choices, int prompt_tokens,
                                   const Tokenizer& tokenizer);
// One SSE chunk for one event.
nlohmann::json stream_chunk(const ApiRequest& request, const ResponseIdentity& identity, const JobEvent& event,
                            const Tokenizer& tokenizer);
// The reply parser's options for one response: the request's, with tool-call ids made unique by the response's id.
ReplyParserOptions reply_options(const ApiRequest& request, const ResponseIdentity& identity);

// One choice of a streaming chat response: its reply parser, and whether it has sent a tool call.
struct ChoiceStream {
  ReplyStreamParser parser;
  bool made_tool_calls = false;
};
// The chunk one event of a chat choice gives: what the token made certain (reasoning_content, content, a tool call)
// as one delta, {} while text is held back (a tag may be starting); with the choice's finish_reason when it ends
// ("tool_calls" when it called a tool and stopped by itself).
nlohmann::json chat_stream_chunk(const ApiRequest& request, const ResponseIdentity& identity, const JobEvent& event,
                                 const Tokenizer& tokenizer, ChoiceStream& stream);
// The last chunk when stream_options.include_usage is set: "choices": [] and the request's usage, as OpenAI sends.
nlohmann::json usage_chunk(const ApiRequest& request, const ResponseIdentity& identity, int prompt_tokens,
                           int completion_tokens);

}  // namespace minigen
