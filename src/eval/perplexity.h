#pragma once
// Perplexity: how well a model predicts a text, token by token, as llama-perplexity and MiniMind's evaluation
// measure it. Each sequence is scored from its second token on: the loss of a target is −log p(target | the tokens
// before it in its sequence), with the softmax in double precision. Optionally against a reference forward pass (the
// same model in fp32 weights): the KL divergence of its distribution from the reference's, and how often their top-1
// tokens agree — what quantizing weights or the cache gives up.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string_view>
#include <vector>

#include "model/transformer.h"

namespace minigen {

// The sequences to score, described by where they lie rather than copied out, so that memory follows one batch and
// not the count of sequences (`--ctx 1` over 50 MB of text is 21 M two-token windows, 1.5 GB as vectors). Each
// sequence is a piece of a run of tokens: consecutive pieces of at most `width` tokens, each optionally led by bos.
// The tokens must outlive this object.
class PerplexitySequences {
 public:
  // Sequences already built, each scored whole (implicit, so that callers pass their vectors as they are).
  PerplexitySequences(std::span<const std::vector<int>> sequences);
  PerplexitySequences(const std::vector<std::vector<int>>& sequences)
      : PerplexitySequences(std::span<const std::vector<int>>(sequences)) {}
  // A plain text: its tokens cut into non-overlapping windows of `context` tokens, each led by bos (so context
  // tokens of the text are targets in every window).
  static PerplexitySequences text_windows(std::span<const int> text_tokens, int bos_id, int context);
  // Documents, each bos + text + eos (every token after bos a target, as MiniMind's pretraining loss); one longer
  // than context + 1 tokens is cut into pieces of at most context + 1, each scored on its own.
  static PerplexitySequences document_pieces(std::span<const std::vector<int>> documents, int context);
  // llama-perplexity's windows (examples/perplexity, build b4748): `tokens` is the text as it tokenizes it (bos first
  // when the model adds one), cut into floor(size / window) windows of `window` tokens, at most `max_windows` (−1:
  // all), the rest of the text unused; the first token of each window is replaced by `bos_id` (−1: kept), and only
  // the second half is scored, the targets at positions window / 2 + 1 … window − 1 (window − 1 − window / 2 each).
  // Throws minigen::Error for fewer than 2 × window tokens, as llama-perplexity refuses them.
  static PerplexitySequences llama_windows(std::span<const int> tokens, int bos_id, int window, int max_windows);

  std::size_t size() const { return size_; }
  std::size_t longest() const { return longest_; }
  std::size_t shortest() const { return shortest_; }
  std::vector<int> at(std::size_t index) const;
  // The position in sequence `index` of its first target: 1 (every token after the first), or window / 2 + 1 in
  // llama_windows.
  std::size_t first_target(std::size_t index) const;

 private:
  PerplexitySequences() = default;
  // A run of tokens cut into pieces of `width`, each led by `lead` when it is not −1 (put in front, or in place of
  // the piece's first token with `replace_first`).
  struct Run {
    std::span<const int> tokens;
    std::size_t width = 0;
    int lead = -1;
    std::size_t first = 0;  // index of its first piece among all sequences
    bool replace_first = false;
    std::size_t first_target = 1;
  };
  void add(std::span<const int> tokens, std::size_t width, int lead, std::size_t pieces);
  const Run& run_of(std::size_t index) const;

  std::vector<Run> runs_;
  std::size_t size_ = 0;
  std::size_t longest_ = 0;
  std::size_t shortest_ = SIZE_MAX;
};

// PerplexitySequences::document_pieces and text_windows built out, for callers that keep a few hundred sequences.
std::vector<std::vector<int>> perplexity_sequences_of_documents(std::span<const std::vector<int>> documents,
                                                                int context);
std::vector<std::vector<int>> perplexity_sequences_of_text(std::span<const int> text_tokens, int bos_id, int context);

struct PerplexityResult {
  int64_t sequences = 0;
  int64_t targets = 0;
  double loss_sum = 0;  // nats
  // With a reference: Σ KL(p_reference ‖ p) in nats, and the targets whose argmax tokens agree.
  double kl_sum = 0;
  int64_t top1_agreements = 0;
  bool has_reference = false;
  std::vector<double> kl_values;  // each target's KL, in target order (for its percentiles)

  double loss() const { return targets > 0 ? loss_sum / static_cast<double>(targets) : 0; }
  double perplexity() const;
  double mean_kl() const { return targets > 0 ? kl_sum / static_cast<double>(targets) : 0; }
  double top1_agreement() const {
    return targets > 0 ? static_cast<double>(top1_agreements) / static_cast<double>(targets) : 0;
  }
};

// The value below which `fraction` of `values` lie, interpolated linearly between the two nearest ranks
// (fraction × (n − 1)), as llama-perplexity reports its KLD percentiles; 0 for no values.
double percentile(std::vector<double> values, double fraction);

// Called after each batch with (sequences done, sequences in all).
using PerplexityProgress = std::function<void(int64_t done, int64_t total)>;

// A reference distribution saved earlier (`minigen perplexity --kl-base FILE`): the logits of targets [first, first +
// count), numbered in scoring order, count × vocab floats.
using SavedReferenceLogits = std::function<std::vector<float>(int64_t first, int64_t count)>;
// Receives the model's logits at each batch's targets, in target order (count × vocab floats): --kl-base-out.
using ScoredLogitsSink = std::function<void(std::span<const float> logits)>;

// Scores every sequence (each at least 2 tokens, at most the model's context), several per forward call. `reference`,
// if given, must have the same vocabulary; it always caches K and V in f32, the model in `kv_dtype`. `saved`, if
// given, is the reference instead (then `reference` must be null); `sink` sees the model's logits. Throws
// minigen::Error for a sequence the model cannot take.
PerplexityResult score_perplexity(Transformer& transformer, Transformer* reference,
                                  const PerplexitySequences& sequences, const PerplexityProgress& progress = {},
                                  KvDType kv_dtype = KvDType::kF32, const SavedReferenceLogits& saved = {},
                                  const ScoredLogitsSink& sink = {});

// One model setting to score: its weights (the Transformer) and its cache's type.
struct PerplexityVariant {
  Transformer* transformer = nullptr;
  KvDType kv_dtype = KvDType::kF32;
};

// Several settings against one reference, batch by batch: the reference's logits are computed once per batch and
// shared, and a variant that is the reference itself (same Transformer, f32 cache) reuses them instead of running
// the same forward again. Each result equals what score_perplexity gives for that variant alone.
std::vector<PerplexityResult> score_perplexity_variants(std::span<const PerplexityVariant> variants,
                                                        Transformer* reference, const PerplexitySequences& sequences,
                                                        const PerplexityProgress& progress = {});

}  // namespace minigen
