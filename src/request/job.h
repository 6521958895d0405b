#pragma once
// What a request asks the engine for and what comes back, as plain data: the scheduler, the engine and the OpenAI
// layer (which turns JSON into a Job and JobEvents into JSON) all speak it, so the OpenAI layer needs no engine.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "grammar/compiled_grammar.h"
#include "sampling/candidates.h"
#include "sampling/raw_logprobs.h"
#include "sampling/sampling_params.h"

namespace minigen {

struct LoraAdapter;  // model/lora_adapter.h: the request layer only carries it to the engine

struct SequenceRequest {
  std::vector<int> prompt;
  int max_new_tokens = 16;
  SamplingParams sampling;
  uint64_t rng_row = 0;  // the sequence's index within its own request (choice index for n > 1)
  bool ignore_eos = false;
  int top_candidates = 0;  // report the this-many most likely kept candidates of every step (logprobs)
  // ≥ 0: report every token's raw log-probability (sampling/raw_logprobs.h) and this many most likely raw tokens.
  int raw_logprobs = -1;
  std::vector<int> stop_token_ids;  // ids that end the sequence like eos (SGLang's stop_token_ids)
  // false: forget the K/V after every token, so each step re-feeds the whole sequence (the no-cache cost, live).
  bool use_cache = true;
  // Structured output (response_format, a forced tool call): the grammar every token must keep the text inside;
  // each sequence walks it with its own matcher. nullptr: free text.
  std::shared_ptr<const CompiledGrammar> grammar;
  // serve's LoRA adapters: the one this sequence runs with (nullptr: the base model) — held here, so an adapter
  // unloaded while the sequence runs stays alive until it ends — and the prefix cache's root for its blocks. Each
  // loaded adapter has its own root (serve/adapter_registry.h): K and V computed under one adapter differ from the
  // same tokens' under another, so the prefix cache must never hand one's blocks to the other. 0: the base's root.
  std::shared_ptr<const LoraAdapter> adapter;
  int64_t prefix_root = 0;
};

struct Job {
  std::vector<int> prompt;
  SequenceRequest settings;  // everything but prompt and rng_row
  int choices = 1;
  // Choice i draws with rng row first_rng_row + i: the prompts of one SGLang /generate request are rows of one
  // rollout, so G copies of a prompt draw differently and the whole rollout repeats under one seed.
  uint64_t first_rng_row = 0;
  std::vector<std::string> stop;  // generation of a choice ends before the first of these strings
};

// One event of one choice: new text (with the token that completed it), or the end of the choice.
struct JobEvent {
  int choice = 0;
  int token = -1;    // −1 for the final event of a choice when it carries no token
  std::string text;  // newly completed UTF-8 text (may be empty while a character is incomplete)
  float probability = 0;
  int kept_candidates = 0;
  int grammar_allowed = -1;  // with a grammar: how many ids its mask allowed at this step; −1 without one
  std::vector<Candidate> top;
  bool has_raw_logprob = false;  // raw: log_softmax of the raw logits (when the request asked for it)
  RawLogprobs raw;
  int cached_tokens = 0;  // prompt tokens this choice borrowed from the prefix cache (on its first token's event)
  bool finished = false;
  std::string finish_reason;  // "stop", "length", "abort" (weights switched, Engine::replace_weights) or "error"
  std::string abort_message;  // why, for "abort"
  std::string error;
  int error_status = 500;  // the HTTP status an error maps to (503 when the server is shutting down)
};

}  // namespace minigen
