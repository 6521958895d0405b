#include "lab/lab_scale.h"

#include <algorithm>

#include "core/error.h"

namespace minigen::lab {

std::string list_text(const std::vector<int>& values) {
  std::string text;
  for (int value : values) text += (text.empty() ? "" : ", ") + std::to_string(value);
  return text;
}

std::vector<int> drop_above(std::vector<int>& values, int limit) {
  std::vector<int> dropped;
  std::erase_if(values, [&](int value) {
    if (value <= limit) return false;
    dropped.push_back(value);
    return true;
  });
  return dropped;
}

LabScale LabScale::for_run(bool quick) {
  LabScale scale;
  scale.quick = quick;
  // A guard for the run time, not a part of the experiment: the largest point of the full grid (P = 512, N = 256)
  // feeds 163,712 tokens without the cache, about a minute and a half on 2 cores for the shipped model. A grid
  // point above the guard is measured with the cache only; the formula is checked at every point that is run.
  scale.max_uncached_grid_tokens = 200000;
  if (quick) {
    scale.equivalence_sampled_long_prompt = false;
    scale.grid_prompt_tokens = {16, kHeadlinePromptTokens};
    scale.grid_new_tokens = {16, kHeadlineNewTokens};
    scale.sweep_new_tokens = {8, 16, 32, kHeadlineNewTokens};
    scale.timing_repeats = 1;
    scale.ttft_prompt_tokens = {16, 64, kHeadlinePromptTokens, 384};
    scale.kv_max_length = 4096;
    scale.temperature_samples = 10;
    scale.temperature_prompt_count = 2;
    scale.temperature_new_tokens = 40;
    scale.top_p_prompt_count = 2;
    scale.top_p_rows = 2;
    scale.top_p_new_tokens = 40;
    scale.seed_new_tokens = 32;
    scale.constraining_samples = 8;
    scale.shrinking_documents = 20;  // 12 perplexity passes (4 + 4 KV types, 4 weight types; f32 is the reference)
    scale.adapter_new_tokens = 16;
    scale.adapter_timed_steps = 16;
    scale.adapter_timing_repeats = 3;
  } else {
    scale.grid_prompt_tokens = {16, 64, kHeadlinePromptTokens, 512};
    scale.grid_new_tokens = {16, kHeadlineNewTokens, 256};
    scale.sweep_new_tokens = {8, 16, 32, kHeadlineNewTokens, 128, 256};
    scale.timing_repeats = 5;
    scale.ttft_prompt_tokens = {16, 64, 128, kHeadlinePromptTokens, 256, 384, 512};
    scale.kv_max_length = 32768;
    scale.temperature_samples = 30;
    scale.temperature_prompt_count = 4;
    scale.temperature_new_tokens = 128;
    scale.top_p_prompt_count = 4;
    scale.top_p_rows = 4;
    scale.top_p_new_tokens = 96;
    scale.seed_new_tokens = 64;
    scale.shrinking_documents = 400;
  }
  return scale;
}

void fit_to_context(LabScale& scale, int base_context, int sft_context, int longest_chat_prompt) {
  const int headline = kHeadlinePromptTokens + kHeadlineNewTokens;
  if (base_context < headline) {
    throw Error("--base: the model's context is " + std::to_string(base_context) +
                " positions; the lab's experiment needs " + std::to_string(headline) +
                " (a 183-token prompt and 64 new tokens)");
  }
  constexpr int kShortestAnswer = 16;
  if (sft_context < longest_chat_prompt + kShortestAnswer) {
    throw Error("--sft: the model's context is " + std::to_string(sft_context) + " positions; its chat prompts take " +
                std::to_string(longest_chat_prompt) + " and the lab needs room for at least " +
                std::to_string(kShortestAnswer) + " new tokens after them");
  }
  const std::string because = " (the base model's context is " + std::to_string(base_context) + " positions)";
  // The grid is P × N: drop the largest P above 183 first, then the largest N above 64, until every pair fits.
  std::vector<int> dropped_prompts;
  std::vector<int> dropped_new;
  while (scale.grid_prompt_tokens.back() + scale.grid_new_tokens.back() > base_context) {
    if (scale.grid_prompt_tokens.back() > kHeadlinePromptTokens) {
      dropped_prompts.push_back(scale.grid_prompt_tokens.back());
      scale.grid_prompt_tokens.pop_back();
    } else {
      dropped_new.push_back(scale.grid_new_tokens.back());
      scale.grid_new_tokens.pop_back();
    }
  }
  if (!dropped_prompts.empty())
    scale.cuts.push_back("grid prompt lengths P = " + list_text(dropped_prompts) + " left out" + because);
  if (!dropped_new.empty()) scale.cuts.push_back("grid lengths N = " + list_text(dropped_new) + " left out" + because);
  const std::vector<int> sweep = drop_above(scale.sweep_new_tokens, base_context - kHeadlinePromptTokens);
  if (!sweep.empty()) scale.cuts.push_back("N sweep at P = 183: N = " + list_text(sweep) + " left out" + because);
  const std::vector<int> ttft = drop_above(scale.ttft_prompt_tokens, base_context - scale.ttft_new_tokens);
  if (!ttft.empty()) scale.cuts.push_back("TTFT prompt lengths P = " + list_text(ttft) + " left out" + because);
  if (scale.kv_max_length > base_context) scale.kv_max_length = base_context;

  const int room = sft_context - longest_chat_prompt;
  // Section 9 continues the chat prompts too (the base model's prompts fit: 183 + 64 was checked above).
  for (int* new_tokens :
       {&scale.temperature_new_tokens, &scale.top_p_new_tokens, &scale.seed_new_tokens, &scale.shrinking_new_tokens,
        &scale.constraining_new_tokens, &scale.adapter_new_tokens, &scale.adapter_timed_steps}) {
    if (*new_tokens > room) {
      scale.cuts.push_back("SFT answers cut from " + std::to_string(*new_tokens) + " to " + std::to_string(room) +
                           " new tokens (the SFT model's context is " + std::to_string(sft_context) + " positions)");
      *new_tokens = room;
    }
  }
}

}  // namespace minigen::lab
