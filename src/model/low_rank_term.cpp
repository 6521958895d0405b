#include "model/low_rank_term.h"

#include <algorithm>
#include <cstring>

#include "ops/matmul.h"

namespace minigen {

void LowRankAdder::add(float* out, std::size_t out_stride, const float* x, std::size_t x_stride,
                       std::span<const LowRankTerm> terms, ThreadPool& pool) {
  pairs_seen_.clear();
  for (const LowRankTerm& term : terms) {
    if (term.pair != nullptr && std::find(pairs_seen_.begin(), pairs_seen_.end(), term.pair) == pairs_seen_.end()) {
      pairs_seen_.push_back(term.pair);
    }
  }
  for (const LoraPair* pair : pairs_seen_) {
    const int in = pair->packed_a.in_features();
    const int rank = pair->rank;
    const int width = pair->packed_b.out_features();
    tokens_.clear();
    float scale = 1.0f;
    for (std::size_t t = 0; t < terms.size(); ++t) {
      if (terms[t].pair == pair) {
        tokens_.push_back(static_cast<int>(t));
        scale = terms[t].scale;
      }
    }
    const int count = static_cast<int>(tokens_.size());
    // The rows go to the kernels side by side; when they already are (every token, x packed densely), as is.
    const float* rows = x;
    if (!(count == static_cast<int>(terms.size()) && x_stride == static_cast<std::size_t>(in))) {
      gathered_.resize(static_cast<std::size_t>(count) * in);
      for (int i = 0; i < count; ++i) {
        std::memcpy(gathered_.data() + static_cast<std::size_t>(i) * in, x + tokens_[i] * x_stride, sizeof(float) * in);
      }
      rows = gathered_.data();
    }
    reduced_.resize(static_cast<std::size_t>(count) * rank);
    expanded_.resize(static_cast<std::size_t>(count) * width);
    matmul(reduced_.data(), rows, pair->packed_a, count, pool);
    matmul(expanded_.data(), reduced_.data(), pair->packed_b, count, pool);
    for (int i = 0; i < count; ++i) {
      float* target = out + tokens_[i] * out_stride;
      const float* term = expanded_.data() + static_cast<std::size_t>(i) * width;
      for (int c = 0; c < width; ++c) target[c] += scale * term[c];  // × 1 (MiniMind's adapters) is exact
    }
  }
}

}  // namespace minigen
