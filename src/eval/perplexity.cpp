#include "eval/perplexity.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "cache/kv_cache.h"
#include "core/error.h"

namespace minigen {
namespace {

// Enough rows per forward call to keep the matrix products busy, few enough that every position's logits
// (rows × length × vocab floats) stay near 64 MB.
int rows_per_call(int longest, int vocab) {
  constexpr double kLogitBudgetBytes = 64.0 * 1024 * 1024;
  const double per_row = static_cast<double>(longest) * vocab * sizeof(float);
  return std::clamp(static_cast<int>(kLogitBudgetBytes / per_row), 1, 16);
}

// log Σ exp(x), in double.
double log_sum_exp(const float* logits, int vocab) {
  const float top = *std::max_element(logits, logits + vocab);
  double sum = 0;
  for (int i = 0; i < vocab; ++i) sum += std::exp(static_cast<double>(logits[i]) - top);
  return top + std::log(sum);
}

// KL(p_reference ‖ p) for one position.
double kl_divergence(const float* reference, double reference_lse, const float* logits, double lse, int vocab) {
  double kl = 0;
  for (int i = 0; i < vocab; ++i) {
    const double log_p_reference = reference[i] - reference_lse;
    const double log_p = logits[i] - lse;
    kl += std::exp(log_p_reference) * (log_p_reference - log_p);
  }
  return kl;
}

int argmax(const float* logits, int vocab) {
  return static_cast<int>(std::max_element(logits, logits + vocab) - logits);
}

// All positions' logits of each sequence, in one forward call.
std::vector<float> forward_all(Transformer& transformer, std::span<const std::vector<int>> batch, KvDType kv_dtype) {
  std::vector<KvCache> caches;
  caches.reserve(batch.size());
  std::vector<ForwardRow> rows;
  for (const std::vector<int>& sequence : batch) {
    caches.emplace_back(transformer.model().config.kv_layout(kv_dtype), static_cast<int>(sequence.size()));
    rows.push_back({&caches.back(), sequence, /*all_logits=*/true});
  }
  return transformer.forward(rows);
}

}  // namespace

double PerplexityResult::perplexity() const { return std::exp(loss()); }

PerplexitySequences::PerplexitySequences(std::span<const std::vector<int>> sequences) {
  for (const std::vector<int>& sequence : sequences) add(sequence, std::max<std::size_t>(sequence.size(), 1), -1, 1);
}

PerplexitySequences PerplexitySequences::text_windows(std::span<const int> text_tokens, int bos_id, int context) {
  if (context < 1) throw Error("perplexity: the context must be at least 1 token");
  PerplexitySequences sequences;
  const std::size_t width = static_cast<std::size_t>(context);
  sequences.add(text_tokens, width, bos_id, (text_tokens.size() + width - 1) / width);
  return sequences;
}

PerplexitySequences PerplexitySequences::document_pieces(std::span<const std::vector<int>> documents, int context) {
  if (context < 1) throw Error("perplexity: the context must be at least 1 token");
  PerplexitySequences sequences;
  const std::size_t width = static_cast<std::size_t>(context) + 1;
  // Pieces start every `width` tokens while at least two tokens are left, so none is shorter than 2.
  for (const std::vector<int>& document : documents) {
    if (document.size() >= 2) sequences.add(document, width, -1, (document.size() - 1 + width - 1) / width);
  }
  return sequences;
}

PerplexitySequences PerplexitySequences::llama_windows(std::span<const int> tokens, int bos_id, int window,
                                                       int max_windows) {
  if (window < 3) throw Error("perplexity: a llama-perplexity window must be at least 3 tokens");
  const std::size_t width = static_cast<std::size_t>(window);
  if (tokens.size() < 2 * width) {
    throw Error("perplexity: llama-perplexity's windows of " + std::to_string(window) + " tokens need at least " +
                std::to_string(2 * width) + " tokens of text; it has " + std::to_string(tokens.size()));
  }
  std::size_t windows = tokens.size() / width;  // the tail after the last whole window is not scored
  if (max_windows >= 0) windows = std::min(windows, static_cast<std::size_t>(max_windows));
  PerplexitySequences sequences;
  sequences.add(tokens.first(windows * width), width, bos_id, windows);
  Run& run = sequences.runs_.back();
  run.replace_first = bos_id >= 0;
  run.first_target = width / 2 + 1;  // llama-perplexity's `first` = n_ctx / 2 is the first position whose logits count
  sequences.longest_ = width;
  sequences.shortest_ = width;
  return sequences;
}

void PerplexitySequences::add(std::span<const int> tokens, std::size_t width, int lead, std::size_t pieces) {
  if (pieces == 0) return;
  runs_.push_back({tokens, width, lead, size_});
  size_ += pieces;
  const std::size_t led = lead >= 0 ? 1 : 0;
  longest_ = std::max(longest_, std::min(width, tokens.size()) + led);
  shortest_ = std::min(shortest_, tokens.size() - (pieces - 1) * width + led);  // the last piece is the shortest
}

const PerplexitySequences::Run& PerplexitySequences::run_of(std::size_t index) const {
  const auto after =
      std::upper_bound(runs_.begin(), runs_.end(), index, [](std::size_t i, const Run& run) { return i < run.first; });
  return *(after - 1);
}

std::vector<int> PerplexitySequences::at(std::size_t index) const {
  const Run& run = run_of(index);
  const std::size_t start = (index - run.first) * run.width;
  const std::size_t end = std::min(run.tokens.size(), start + run.width);
  std::vector<int> sequence;
  sequence.reserve(end - start + 1);
  if (run.lead >= 0 && !run.replace_first) sequence.push_back(run.lead);
  sequence.insert(sequence.end(), run.tokens.begin() + start, run.tokens.begin() + end);
  if (run.replace_first) sequence.front() = run.lead;
  return sequence;
}

std::size_t PerplexitySequences::first_target(std::size_t index) const { return run_of(index).first_target; }

double percentile(std::vector<double> values, double fraction) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double rank = std::clamp(fraction, 0.0, 1.0) * static_cast<double>(values.size() - 1);
  const std::size_t below = static_cast<std::size_t>(rank);
  const std::size_t above = std::min(below + 1, values.size() - 1);
  const double weight = rank - static_cast<double>(below);
  return (1 - weight) * values[below] + weight * values[above];
}

namespace {

std::vector<std::vector<int>> every_sequence(const PerplexitySequences& sequences) {
  std::vector<std::vector<int>> out;
  for (std::size_t i = 0; i < sequences.size(); ++i) out.push_back(sequences.at(i));
  return out;
}

}  // namespace

std::vector<std::vector<int>> perplexity_sequences_of_documents(std::span<const std::vector<int>> documents,
                                                                int context) {
  return every_sequence(PerplexitySequences::document_pieces(documents, context));
}

std::vector<std::vector<int>> perplexity_sequences_of_text(std::span<const int> text_tokens, int bos_id, int context) {
  return every_sequence(PerplexitySequences::text_windows(text_tokens, bos_id, context));
}

namespace {

// score_perplexity_variants, with score_perplexity's saved reference and logits sink (for the first variant).
std::vector<PerplexityResult> score_variants(std::span<const PerplexityVariant> variants, Transformer* reference,
                                             const PerplexitySequences& sequences, const PerplexityProgress& progress,
                                             const SavedReferenceLogits& saved, const ScoredLogitsSink& sink) {
  if (variants.empty()) throw Error("perplexity: nothing to score");
  const ModelConfig& config = variants.front().transformer->model().config;
  const int vocab = config.vocab_size;
  for (const PerplexityVariant& variant : variants) {
    if (variant.transformer->model().config.vocab_size != vocab ||
        variant.transformer->model().config.max_position_embeddings != config.max_position_embeddings) {
      throw Error("perplexity: the models to compare differ in vocabulary or context");
    }
  }
  if (reference != nullptr && reference->model().config.vocab_size != vocab) {
    throw Error("perplexity: the reference model's vocabulary differs from the model's");
  }
  const std::size_t longest = sequences.longest();
  if (sequences.size() > 0 && sequences.shortest() < 2) throw Error("perplexity: a sequence needs at least 2 tokens");
  if (longest > static_cast<std::size_t>(config.max_position_embeddings)) {
    throw Error("perplexity: a sequence of " + std::to_string(longest) + " tokens exceeds the context of " +
                std::to_string(config.max_position_embeddings));
  }
  std::vector<PerplexityResult> results(variants.size());
  if (saved && reference != nullptr) throw Error("perplexity: a saved reference and a reference model, not both");
  const bool has_reference = reference != nullptr || static_cast<bool>(saved);
  for (PerplexityResult& result : results) result.has_reference = has_reference;
  ThreadPool& pool = variants.front().transformer->pool();
  const std::size_t batch_rows = static_cast<std::size_t>(rows_per_call(static_cast<int>(longest), vocab));
  for (std::size_t first = 0; first < sequences.size(); first += batch_rows) {
    // Built here, one batch at a time (the sequences' whole list may be far larger than the work of a batch).
    std::vector<std::vector<int>> batch;
    for (std::size_t i = first; i < std::min(first + batch_rows, sequences.size()); ++i)
      batch.push_back(sequences.at(i));
    // A copy each: every forward call reuses the Transformer's buffers.
    const std::vector<float> reference_logits =
        reference != nullptr ? forward_all(*reference, batch, KvDType::kF32) : std::vector<float>();
    // Every scored position of the batch: where its logits are and which token it should have predicted.
    // Position t's logits predict token t + 1; a sequence's last position predicts nothing here.
    // Position t's logits predict token t + 1; only targets from the sequence's first_target on count.
    std::vector<std::pair<std::size_t, int>> scored;
    std::size_t position = 0;  // over every row's positions, in row order
    for (std::size_t row = 0; row < batch.size(); ++row) {
      const std::vector<int>& sequence = batch[row];
      for (std::size_t t = sequences.first_target(first + row) - 1; t + 1 < sequence.size(); ++t)
        scored.emplace_back(position + t, sequence[t + 1]);
      position += sequence.size();
    }
    // The saved reference's rows of this batch's targets, numbered as they were written: in target order.
    const std::vector<float> saved_logits =
        saved ? saved(results.front().targets, static_cast<int64_t>(scored.size())) : std::vector<float>();
    if (saved && saved_logits.size() != scored.size() * static_cast<std::size_t>(vocab))
      throw Error("perplexity: the saved reference has the wrong number of logits for a batch");
    const auto reference_row = [&](std::size_t i) {
      return saved ? saved_logits.data() + i * vocab : reference_logits.data() + scored[i].first * vocab;
    };
    for (std::size_t v = 0; v < variants.size(); ++v) {
      const bool is_reference = variants[v].transformer == reference && variants[v].kv_dtype == KvDType::kF32;
      const std::vector<float> own_logits =
          is_reference ? std::vector<float>() : forward_all(*variants[v].transformer, batch, variants[v].kv_dtype);
      const std::vector<float>& logits = is_reference ? reference_logits : own_logits;
      if (v == 0 && sink) {
        std::vector<float> rows(scored.size() * static_cast<std::size_t>(vocab));
        for (std::size_t i = 0; i < scored.size(); ++i)
          std::copy_n(logits.data() + scored[i].first * vocab, vocab, rows.data() + i * vocab);
        sink(rows);
      }
      // The softmaxes in parallel (a vocabulary of exps per position is most of the work after the forward), the
      // sums in position order afterwards, so the result is the same on any number of threads.
      std::vector<double> losses(scored.size()), divergences(scored.size());
      std::vector<char> agreements(scored.size());
      pool.parallel_for(static_cast<int64_t>(scored.size()), [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
          const auto [at, target] = scored[i];
          const float* row = logits.data() + at * vocab;
          const double lse = log_sum_exp(row, vocab);
          losses[i] = lse - row[target];
          if (has_reference) {
            const float* base = reference_row(static_cast<std::size_t>(i));
            divergences[i] = kl_divergence(base, log_sum_exp(base, vocab), row, lse, vocab);
            agreements[i] = argmax(base, vocab) == argmax(row, vocab);
          }
        }
      });
      PerplexityResult& result = results[v];
      for (std::size_t i = 0; i < scored.size(); ++i) {
        result.loss_sum += losses[i];
        result.kl_sum += divergences[i];
        result.top1_agreements += agreements[i];
        if (has_reference) result.kl_values.push_back(divergences[i]);
      }
      result.targets += static_cast<int64_t>(scored.size());
      result.sequences += static_cast<int64_t>(batch.size());
    }
    if (progress) progress(static_cast<int64_t>(first + batch.size()), static_cast<int64_t>(sequences.size()));
  }
  return results;
}

}  // namespace

PerplexityResult score_perplexity(Transformer& transformer, Transformer* reference,
                                  const PerplexitySequences& sequences, const PerplexityProgress& progress,
                                  KvDType kv_dtype, const SavedReferenceLogits& saved, const ScoredLogitsSink& sink) {
  const PerplexityVariant variant{&transformer, kv_dtype};
  return score_variants({&variant, 1}, reference, sequences, progress, saved, sink).front();
}

std::vector<PerplexityResult> score_perplexity_variants(std::span<const PerplexityVariant> variants,
                                                        Transformer* reference, const PerplexitySequences& sequences,
                                                        const PerplexityProgress& progress) {
  return score_variants(variants, reference, sequences, progress, {}, {});
}

}  // namespace minigen
