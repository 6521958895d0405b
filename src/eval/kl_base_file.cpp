#include "eval/kl_base_file.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <string>

#include "core/error.h"

namespace minigen {
namespace {

// The file is read by memcpy of native values, so its byte order is the machine's; minigen targets x86-64 and ARM64.
static_assert(std::endian::native == std::endian::little, "the KL base file is little-endian");

constexpr char kMagic[8] = {'M', 'G', 'K', 'L', 'B', 'A', 'S', 'E'};
constexpr uint32_t kVersion = 1;
constexpr std::size_t kHeaderBytes = sizeof(kMagic) + 4 * sizeof(uint32_t);

void put_u32(std::ostream& out, uint32_t value) { out.write(reinterpret_cast<const char*>(&value), sizeof(value)); }

uint32_t get_u32(const std::byte* at) {
  uint32_t value = 0;
  std::memcpy(&value, at, sizeof(value));
  return value;
}

}  // namespace

int64_t KlBaseShape::targets() const { return int64_t{windows} * (window - 1 - window / 2); }

KlBaseWriter::KlBaseWriter(std::ostream& out, const KlBaseShape& shape, std::span<const int> tokens)
    : out_(out), shape_(shape) {
  if (tokens.size() != static_cast<std::size_t>(shape.window) * static_cast<std::size_t>(shape.windows))
    throw Error("KL base: the tokens do not fill the windows");
  out_.write(kMagic, sizeof(kMagic));
  put_u32(out_, kVersion);
  put_u32(out_, static_cast<uint32_t>(shape.window));
  put_u32(out_, static_cast<uint32_t>(shape.windows));
  put_u32(out_, static_cast<uint32_t>(shape.vocab));
  static_assert(sizeof(int) == sizeof(int32_t));
  out_.write(reinterpret_cast<const char*>(tokens.data()), static_cast<std::streamsize>(tokens.size_bytes()));
}

void KlBaseWriter::append(std::span<const float> logits) {
  out_.write(reinterpret_cast<const char*>(logits.data()), static_cast<std::streamsize>(logits.size_bytes()));
  floats_written_ += static_cast<int64_t>(logits.size());
}

void KlBaseWriter::finish() const {
  if (floats_written_ != shape_.targets() * shape_.vocab)
    throw Error("KL base: " + std::to_string(floats_written_) + " logits written, " +
                std::to_string(shape_.targets() * shape_.vocab) + " expected");
}

KlBaseFile::KlBaseFile(const std::filesystem::path& path) : file_(path) {
  const std::string name = path.string();
  const std::span<const std::byte> bytes = file_.bytes();
  if (bytes.size() < kHeaderBytes || std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0)
    throw Error(name + ": not a minigen KL base file (--kl-base-out writes one)");
  const std::byte* at = bytes.data() + sizeof(kMagic);
  if (const uint32_t version = get_u32(at); version != kVersion)
    throw Error(name + ": KL base file version " + std::to_string(version) + ", this minigen reads version 1");
  const uint32_t window = get_u32(at + 4), windows = get_u32(at + 8), vocab = get_u32(at + 12);
  // Bounds that keep every product below in 64 bits: a context of 2^20, a vocabulary of 2^24, 2^31 windows.
  if (window < 3 || window > (1u << 20) || windows < 1 || windows > INT32_MAX || vocab < 1 || vocab > (1u << 24))
    throw Error(name + ": KL base header out of range (window " + std::to_string(window) + ", windows " +
                std::to_string(windows) + ", vocabulary " + std::to_string(vocab) + ")");
  shape_ = {static_cast<int>(window), static_cast<int>(windows), static_cast<int>(vocab)};
  const uint64_t token_bytes = uint64_t{window} * windows * sizeof(int32_t);
  const uint64_t expected = kHeaderBytes + token_bytes + static_cast<uint64_t>(shape_.targets()) * vocab * 4;
  if (bytes.size() != expected)
    throw Error(name + ": KL base file of " + std::to_string(bytes.size()) + " bytes; its header (window " +
                std::to_string(window) + ", " + std::to_string(windows) + " windows, vocabulary " +
                std::to_string(vocab) + ") needs " + std::to_string(expected));
}

std::vector<int> KlBaseFile::tokens() const {
  std::vector<int> tokens(static_cast<std::size_t>(shape_.window) * static_cast<std::size_t>(shape_.windows));
  std::memcpy(tokens.data(), file_.data() + kHeaderBytes, tokens.size() * sizeof(int));
  return tokens;
}

std::vector<float> KlBaseFile::logits(int64_t first, int64_t count) const {
  if (first < 0 || count < 0 || first + count > shape_.targets())
    throw Error(file_.path().string() + ": the KL base holds " + std::to_string(shape_.targets()) + " targets, not " +
                std::to_string(first + count));
  const std::size_t vocab = static_cast<std::size_t>(shape_.vocab);
  const std::size_t offset = kHeaderBytes + static_cast<std::size_t>(shape_.window) * shape_.windows * 4 +
                             static_cast<std::size_t>(first) * vocab * 4;
  std::vector<float> logits(static_cast<std::size_t>(count) * vocab);
  std::memcpy(logits.data(), file_.data() + offset, logits.size() * sizeof(float));
  for (std::size_t i = 0; i < logits.size(); ++i) {
    if (!std::isfinite(logits[i]))
      throw Error(file_.path().string() + ": logit " + std::to_string(i % vocab) + " of target " +
                  std::to_string(first + static_cast<int64_t>(i / vocab)) + " is not finite");
  }
  return logits;
}

}  // namespace minigen
