#pragma once
// Trains a byte-level BPE vocabulary in minimind-3's layout: the 36 added tokens at ids 0–35, the 256 byte symbols at
// ids 36–291 (ordered by the code point that spells each byte in the GPT-2 map, as HF's trainer orders its alphabet:
// '!' is 36, 'Ń' — byte 0xAD — is 291), then one new token per merge. Text is cut exactly as the Tokenizer cuts it
// (added tokens out, then the GPT-2 pre-tokenizer), so merges never cross a piece boundary. That shared cutting is
// why the trainer lives in tokenizer/, beside the tokenizer it trains for, rather than in a tools folder.
//
// Each step merges the adjacent pair with the highest count, summed over all pieces weighted by how often each piece
// occurs. Ties go to the pair whose left token's bytes sort first, then the right token's (plain byte order), so the
// result does not depend on the order of the input or of any hash table. Training stops at vocab_size tokens or when
// no pair occurs min_frequency times. As in HF, a merge whose result is already a token reuses that token's id, so
// there can be more merges than new ids.
#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace minigen {

struct BpeTrainOptions {
  int vocab_size = 6400;  // total, including the 36 added tokens and 256 byte symbols (so at least 292)
  int min_frequency = 2;  // a pair seen fewer times than this is never merged
  // Called after each new token with (tokens learned so far, vocab_size − 292); may be empty.
  std::function<void(int done, int total)> progress;
};

struct TrainedBpe {
  // Token spellings as tokenizer.json writes them, indexed by id: the added tokens' contents, then byte-level
  // (GPT-2 mapped) strings such as "Ġthe".
  std::vector<std::string> vocab;
  // Merge rules in rank order (lowest first), as pairs of spellings from `vocab`.
  std::vector<std::pair<std::string, std::string>> merges;
};

// Trains on UTF-8 text files, read in blocks so that a corpus larger than memory is fine (only the distinct pieces
// and their counts are kept). Throws minigen::Error for an unreadable file or a vocab_size below 292.
TrainedBpe train_bpe(std::span<const std::filesystem::path> text_files, const BpeTrainOptions& options);

// The same on texts held in memory, each one an independent document.
TrainedBpe train_bpe_on_texts(std::span<const std::string> texts, const BpeTrainOptions& options);

}  // namespace minigen
