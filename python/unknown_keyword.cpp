#include "unknown_keyword.h"

#include <algorithm>
#include <numeric>

namespace minigen::python {
namespace {

// Levenshtein distance: insertions, deletions and substitutions, each costing 1.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> previous(b.size() + 1);
  std::iota(previous.begin(), previous.end(), std::size_t{0});
  std::vector<std::size_t> current(b.size() + 1);
  for (std::size_t i = 1; i <= a.size(); ++i) {
    current[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, substitution});
    }
    std::swap(previous, current);
  }
  return previous[b.size()];
}

// A keyword another library uses for something minigen has under another name (or not at all). The advice is given
// only where `applies_with` is accepted: max_length is generate's and stream's business, not tokenize's.
struct ForeignKeyword {
  std::string_view keyword;
  std::string_view applies_with;
  std::string_view advice;
  std::string_view advice_when_false = {};  // when it differs: do_sample=False is a request for greedy decoding
};

constexpr ForeignKeyword kForeignKeywords[] = {
    {"input_ids", "prompt", "pass the token ids as the prompt, the first argument: a list of ints"},
    {"inputs", "prompt", "pass the token ids as the prompt, the first argument: a list of ints"},
    {"max_length", "max_new_tokens", "minigen uses max_new_tokens, which counts the new tokens only (not the prompt)"},
    {"max_tokens", "max_new_tokens", "minigen uses max_new_tokens"},
    {"do_sample", "greedy", "minigen samples unless greedy=True: leave do_sample out",
     "use greedy=True (or temperature=0)"},
    {"n", "num_return_sequences", "minigen uses num_return_sequences"},
    {"num_beams", "num_return_sequences",
     "minigen has no beam search: greedy=True decodes greedily, num_return_sequences=N draws N samples"},
    {"streamer", "max_new_tokens", "use Model.stream(...), which yields the text pieces as they are decoded"},
    {"stream", "max_new_tokens", "use Model.stream(...), which yields the text pieces as they are decoded"},
    {"torch_dtype", "weights", "minigen uses weights='f32', 'f16', 'bf16', 'q8' or 'q4'"},
    {"dtype", "weights", "minigen uses weights='f32', 'f16', 'bf16', 'q8' or 'q4'"},
    {"device", "threads", "minigen runs on the CPU: threads=N sets how many cores (0: one per core)"},
    {"device_map", "threads", "minigen runs on the CPU: threads=N sets how many cores (0: one per core)"},
    {"add_special_tokens", "bos", "minigen uses bos=True or bos=False"},
};

}  // namespace

std::optional<std::string> nearest_name(std::string_view name, const std::vector<std::string>& accepted) {
  // Close: at most one edit per three characters (temprature, top_k for topk), or the start of exactly one name.
  std::optional<std::string> best;
  std::size_t best_distance = 0;
  for (const std::string& candidate : accepted) {
    const std::size_t distance = edit_distance(name, candidate);
    if (3 * distance <= std::max(name.size(), candidate.size()) && (!best || distance < best_distance)) {
      best = candidate;
      best_distance = distance;
    }
  }
  if (best || name.size() < 3) return best;
  std::vector<std::string> extended;
  for (const std::string& candidate : accepted)
    if (candidate.starts_with(name)) extended.push_back(candidate);
  if (extended.size() == 1) return extended.front();
  return std::nullopt;
}

std::string unknown_keyword_message(std::string_view function, std::string_view keyword, bool value_is_true,
                                    const std::vector<std::string>& accepted) {
  std::string message = std::string(function) + ": unknown keyword '" + std::string(keyword) + "'; ";
  for (const ForeignKeyword& foreign : kForeignKeywords) {
    if (foreign.keyword != keyword ||
        std::find(accepted.begin(), accepted.end(), foreign.applies_with) == accepted.end())
      continue;
    const bool use_false_advice = !value_is_true && !foreign.advice_when_false.empty();
    return message + std::string(use_false_advice ? foreign.advice_when_false : foreign.advice);
  }
  if (const std::optional<std::string> nearest = nearest_name(keyword, accepted))
    return message + "did you mean '" + *nearest + "'?";
  message += "the keywords are ";
  for (std::size_t i = 0; i < accepted.size(); ++i) message += (i ? ", " : "") + accepted[i];
  return message;
}

}  // namespace minigen::python
