#pragma once
// The ten sections of `minigen lab`, one experiment of the KV-cache and sampling module each. Every section
// measures with generate() and the cache/config APIs, and returns its paragraphs, tables, plots and numbers.
#include <string>
#include <vector>

#include "generate/generate.h"
#include "lab/lab_context.h"
#include "lab/lab_report.h"

namespace minigen::lab {

// One batch of section 5 (same prompt in every row, one temperature setting), kept for section 7's eos padding.
struct TemperatureBatch {
  int prompt_index = 0;
  std::string setting;    // "greedy" or "T = 0.7"
  GenerateResult result;  // step logits already released
};

ReportSection cache_equivalence_section(LabContext& lab);  // 1
// How many settings sections 5 and 6 run one after another (for the work estimate).
int temperature_section_settings();
int top_p_section_runs();
// The lengths of section 1's prompts with the base model's tokenizer (for the work estimate).
std::vector<int> cache_equivalence_prompt_lengths(const LabContext& lab);
ReportSection forward_tokens_section(LabContext& lab);                                       // 2
ReportSection timing_section(LabContext& lab);                                               // 3
ReportSection cache_bytes_section(LabContext& lab);                                          // 4
ReportSection temperature_section(LabContext& lab, std::vector<TemperatureBatch>& batches);  // 5
ReportSection top_p_section(LabContext& lab);                                                // 6
ReportSection eos_padding_section(const std::vector<TemperatureBatch>& batches);             // 7
ReportSection seed_section(LabContext& lab);                                                 // 8
ReportSection shrinking_section(LabContext& lab);                                            // 9
ReportSection constraining_section(LabContext& lab);                                         // 10

// Section 1's base-model prompts, which section 9 also decodes.
std::vector<std::vector<int>> cache_equivalence_prompts(const LabContext& lab);
// Section 9's sizes, for the work estimate: the types it compares, how often each weight type's decode is timed
// (the fastest run counts) and the prompt that decode continues.
inline constexpr int kShrinkingKvTypes = 4;
inline constexpr int kShrinkingWeightTypes = 4;
inline constexpr int kShrinkingTimedDecodes = 2;
inline constexpr int kShrinkingDecodePromptTokens = 32;

}  // namespace minigen::lab
