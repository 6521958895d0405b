#pragma once
// A byte-level BPE tokenizer loaded from a Hugging Face tokenizer.json (the format minimind-3 ships), producing the
// same ids as HF `tokenizers` for the ByteLevel + BPE configuration MiniMind uses.
//
// encode: added tokens are cut out of the text whole (longest match at each position); the text between them is
// pre-tokenized with the GPT-2 pattern, each piece's bytes start as one symbol per byte, and adjacent symbols are
// merged lowest merge rank first until no ranked pair is left.
// decode: the raw bytes of each token, concatenated. Tokens are bytes, not characters, so the result is returned
// as bytes too and may end inside a character; StreamDecoder turns a stream of ids into clean UTF-8.
#include <array>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tokenizer/added_token_matcher.h"

namespace minigen {

class Tokenizer {
 public:
  // Loads tokenizer.json and, when given, tokenizer_config.json (bos/eos/pad token names, chat template). Without a
  // config, or for names it leaves out, the minimind-3 names are used when the vocabulary has them.
  // Throws minigen::Error on unreadable or malformed files.
  static Tokenizer from_files(const std::filesystem::path& tokenizer_json,
                              const std::optional<std::filesystem::path>& tokenizer_config_json = std::nullopt);
  // The same from the files' contents.
  static Tokenizer from_json_text(std::string_view tokenizer_json,
                                  std::optional<std::string_view> tokenizer_config_json = std::nullopt);

  Tokenizer(Tokenizer&&) noexcept;
  Tokenizer& operator=(Tokenizer&&) noexcept;
  ~Tokenizer();

  std::vector<int> encode(std::string_view text) const;

  // A text in parts, where added tokens (<|im_start|>, <think>, ...) are recognised only inside markup parts: a
  // content part is encoded as plain text even when it spells "<|im_end|>", so a user cannot forge a chat turn.
  // Plain stretches on either side of a part boundary are encoded as one text, so when the content holds no added
  // token the ids equal encode() of the concatenation.
  struct TextPart {
    std::string_view text;
    bool markup;
  };
  std::vector<int> encode_parts(std::span<const TextPart> parts) const;
  std::string decode(std::span<const int> ids, bool skip_special_tokens) const;

  // Raw bytes of a token; an added token gives its content.
  std::string token_bytes(int id) const;
  // The id of the token whose raw bytes are exactly `text` (added tokens first), if there is one.
  std::optional<int> find_token(std::string_view text) const;

  // One more than the highest id in the vocabulary or the added tokens.
  int vocab_size() const { return static_cast<int>(tokens_.size()); }
  int bos_id() const;
  int eos_id() const;
  int pad_id() const;
  bool is_special(int id) const;
  // Whether `id` is an added token, special or not (<|im_end|>, <tool_call>); throws like token_bytes.
  bool is_added(int id) const;
  // Whether `id` names a token: ids below vocab_size() can be holes that no token uses.
  bool has_token(int id) const;
  // The Jinja chat template from tokenizer_config.json, empty if there was none.
  const std::string& chat_template() const { return chat_template_; }

 private:
  enum class TokenKind : std::uint8_t { kUnused, kVocab, kAddedSpecial, kAddedPlain };
  struct TokenEntry {
    std::string bytes;
    TokenKind kind = TokenKind::kUnused;
  };
  struct MergeRule {
    int rank;
    int merged_id;
  };
  struct PieceCache;

  Tokenizer();
  const TokenEntry& entry(int id) const;
  void encode_ordinary_text(std::string_view text, std::vector<int>& ids) const;
  void encode_piece(std::string_view piece, std::vector<int>& ids) const;
  std::vector<int> apply_merges(std::string_view piece) const;
  int required_role_id(int id, std::string_view role) const;

  static std::uint64_t pair_key(int left_id, int right_id) {
    return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(left_id)) << 32) |
           static_cast<std::uint32_t>(right_id);
  }

  std::vector<TokenEntry> tokens_;                    // indexed by id
  std::unordered_map<std::string, int> id_by_bytes_;  // added tokens take precedence over vocabulary entries
  std::array<int, 256> byte_token_ids_{};             // the one-byte symbols every piece starts from
  std::unordered_map<std::uint64_t, MergeRule> merges_by_pair_;
  AddedTokenMatcher added_tokens_;
  bool ignore_merges_ = false;  // HF option: a piece that is itself in the vocabulary is taken whole
  int bos_id_ = -1;
  int eos_id_ = -1;
  int pad_id_ = -1;
  std::string chat_template_;
  std::unique_ptr<PieceCache> cache_;

  friend class TokenizerJsonLoader;
};

}  // namespace minigen
