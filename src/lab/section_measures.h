#pragma once
// The eleven sections of `minigen lab` as measurements, one experiment of the KV-cache and sampling module each: every
// function runs generate() and the cache/config APIs through the lab's context and returns plain data
// (section_data.h). None writes prose or files; section_reports.h does that.
#include <string>
#include <vector>

#include "generate/generate.h"
#include "lab/lab_context.h"
#include "lab/section_data.h"

namespace minigen::lab {

// One batch of section 5 (same prompt in every row, one temperature setting), kept for section 7's eos padding.
struct TemperatureBatch {
  int prompt_index = 0;
  std::string setting;    // "greedy" or "T = 0.7"
  GenerateResult result;  // step logits already released
};

CacheEquivalenceData measure_cache_equivalence(LabContext& lab);                               // 1
ForwardTokensData measure_forward_tokens(LabContext& lab);                                     // 2
TimingData measure_timing(LabContext& lab);                                                    // 3
CacheBytesData measure_cache_bytes(LabContext& lab);                                           // 4
TemperatureData measure_temperature(LabContext& lab, std::vector<TemperatureBatch>& batches);  // 5
TopPData measure_top_p(LabContext& lab);                                                       // 6
EosPaddingData measure_eos_padding(const std::vector<TemperatureBatch>& batches);              // 7
SeedData measure_seeds(LabContext& lab);                                                       // 8
ShrinkingData measure_shrinking(LabContext& lab);                                              // 9
ConstrainingData measure_constraining(LabContext& lab);                                        // 10
AdaptersData measure_adapters(LabContext& lab);                                                // 11

}  // namespace minigen::lab
