#pragma once
// The reference distribution of `minigen perplexity --kl-base-out FILE`, read back by `--kl-base FILE`: the f32 run of
// a model is saved once and every quantized setting is compared with it later, on the same targets, as
// llama-perplexity's --kl-divergence-base / --kl-divergence do. minigen's own format, not llama.cpp's: llama.cpp
// stores each log-probability in 16 bits (and drops those below e^-16), so a model compared with its own file would
// not give KL 0; this one keeps the logits as the model computed them, so it does, exactly.
//
// Layout, little-endian: "MGKLBASE", then uint32 version (1), window, windows, vocab; int32 tokens[windows × window]
// (the text's tokens as cut into windows, before bos replaces the first of each); float32 logits[targets × vocab],
// targets = windows × (window − 1 − window / 2), in scoring order (window by window, position by position).
#include <cstdint>
#include <filesystem>
#include <memory>
#include <ostream>
#include <span>
#include <vector>

#include "core/file_io.h"

namespace minigen {

struct KlBaseShape {
  int window = 0;   // llama-perplexity's -c
  int windows = 0;  // its chunks
  int vocab = 0;
  int64_t targets() const;  // windows × (window − 1 − window / 2)
};

// Writes the header and tokens at once, then the logits as they come; finish() checks that every target's row came.
class KlBaseWriter {
 public:
  KlBaseWriter(std::ostream& out, const KlBaseShape& shape, std::span<const int> tokens);
  void append(std::span<const float> logits);
  void finish() const;  // throws minigen::Error when fewer or more rows were written than the shape holds

 private:
  std::ostream& out_;
  KlBaseShape shape_;
  int64_t floats_written_ = 0;
};

// A file written by KlBaseWriter, mapped. Every header field and the file's size are checked when it is opened;
// each error names the file ("base.bin: not a minigen KL base file (--kl-base-out writes one)").
class KlBaseFile {
 public:
  explicit KlBaseFile(const std::filesystem::path& path);

  const KlBaseShape& shape() const { return shape_; }
  std::vector<int> tokens() const;
  // The logits of targets [first, first + count), count × vocab floats; throws minigen::Error for a non-finite value.
  std::vector<float> logits(int64_t first, int64_t count) const;

 private:
  MappedFile file_;
  KlBaseShape shape_;
};

}  // namespace minigen
