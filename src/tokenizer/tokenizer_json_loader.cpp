// Reading a Hugging Face tokenizer.json (and tokenizer_config.json) into a Tokenizer. Anything minigen would encode
// differently from HF is refused with a message rather than silently accepted.
#include <cstdint>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <unordered_map>

#include "core/error.h"
#include "core/file_io.h"
#include "core/json_parse.h"
#include "tokenizer/bpe_tokenizer.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/minimind_vocab_layout.h"

namespace minigen {

using nlohmann::json;

class TokenizerJsonLoader {
 public:
  TokenizerJsonLoader(std::string tokenizer_source, std::string config_source)
      : tokenizer_source_(std::move(tokenizer_source)), config_source_(std::move(config_source)) {}

  Tokenizer load(std::string_view tokenizer_text, std::optional<std::string_view> config_text) {
    try {
      return load_checked(tokenizer_text, config_text);
    } catch (const json::exception& error) {
      // A field of an unexpected JSON type that no check below anticipated.
      throw Error(tokenizer_source_ + " (or its config) has an unexpected structure: " + error.what());
    }
  }

 private:
  Tokenizer load_checked(std::string_view tokenizer_text, std::optional<std::string_view> config_text) {
    const json root = parse(tokenizer_text, tokenizer_source_);
    if (!root.is_object()) fail("the top level must be a JSON object");
    const json& model = require_member(root, "model", "the model section");
    check_supported_pipeline(root, model);

    Tokenizer tokenizer;
    read_vocab(model, tokenizer);
    read_added_tokens(root, tokenizer);
    index_tokens(tokenizer);
    read_merges(model, tokenizer);
    tokenizer.ignore_merges_ = flag(model, "ignore_merges", false);

    std::optional<json> config;
    if (config_text) {
      config = parse(*config_text, config_source_);
      if (!config->is_object()) fail_config("the top level must be a JSON object");
    }
    read_roles_and_template(config, tokenizer);
    return tokenizer;
  }

  // Largest id accepted: far above any real vocabulary, low enough that a typo cannot allocate gigabytes.
  static constexpr std::int64_t kMaxTokenId = (1 << 24) - 1;

  [[noreturn]] void fail(const std::string& message) const { throw Error(tokenizer_source_ + ": " + message); }
  [[noreturn]] void fail_config(const std::string& message) const { throw Error(config_source_ + ": " + message); }

  static json parse(std::string_view text, const std::string& source) {
    try {
      return parse_untrusted_json<json>(text);
    } catch (const Error& error) {
      throw Error(source + " " + error.what());
    }
  }

  const json& require_member(const json& object, const char* key, const std::string& what) const {
    const auto found = object.find(key);
    if (found == object.end() || found->is_null()) fail("missing " + what + " (\"" + key + "\")");
    return *found;
  }

  static bool flag(const json& object, const char* key, bool default_value) {
    const auto found = object.find(key);
    return found == object.end() || !found->is_boolean() ? default_value : found->get<bool>();
  }

  // The string member `key`, or "" when it is absent or not a string.
  static std::string text_field(const json& object, const char* key) {
    const auto found = object.find(key);
    return found == object.end() || !found->is_string() ? std::string() : found->get<std::string>();
  }

  void check_supported_pipeline(const json& root, const json& model) const {
    if (!model.is_object()) fail("\"model\" must be an object");
    if (const auto type = model.find("type"); type != model.end() && *type != "BPE") {
      fail("model type " + type->dump() + " is not supported; minigen reads only byte-level BPE");
    }
    if (const auto normalizer = root.find("normalizer"); normalizer != root.end() && !normalizer->is_null()) {
      fail("a normalizer is not supported; minigen reads only tokenizers with \"normalizer\": null");
    }
    const auto pre_tokenizer = root.find("pre_tokenizer");
    if (pre_tokenizer == root.end() || !pre_tokenizer->is_object() ||
        text_field(*pre_tokenizer, "type") != "ByteLevel") {
      fail("the pre_tokenizer must be ByteLevel; minigen implements only the GPT-2 byte-level pre-tokenizer");
    }
    // HF's defaults when the fields are absent: add_prefix_space true, use_regex true.
    if (flag(*pre_tokenizer, "add_prefix_space", true)) {
      fail("ByteLevel with add_prefix_space true is not supported; set it to false");
    }
    if (!flag(*pre_tokenizer, "use_regex", true)) fail("ByteLevel with use_regex false is not supported");
    for (const char* option : {"continuing_subword_prefix", "end_of_word_suffix"}) {
      if (const auto found = model.find(option); found != model.end() && !found->is_null()) {
        fail(std::string("the BPE option \"") + option + "\" is not supported");
      }
    }
  }

  int checked_id(const json& value, const std::string& what) const {
    if (!value.is_number_integer()) fail(what + " has an id that is not an integer: " + value.dump());
    const std::int64_t id = value.get<std::int64_t>();
    if (id < 0 || id > kMaxTokenId) fail(what + " has an id out of range: " + std::to_string(id));
    return static_cast<int>(id);
  }

  void place(Tokenizer& tokenizer, int id) const {
    if (static_cast<std::size_t>(id) >= tokenizer.tokens_.size()) tokenizer.tokens_.resize(id + std::size_t{1});
  }

  void read_vocab(const json& model, Tokenizer& tokenizer) {
    const json& vocab = require_member(model, "vocab", "the vocabulary (model.vocab)");
    if (!vocab.is_object() || vocab.empty()) fail("model.vocab must be a non-empty object of token → id");
    for (const auto& [spelling, value] : vocab.items()) {
      const int id = checked_id(value, "vocabulary entry \"" + spelling + "\"");
      place(tokenizer, id);
      Tokenizer::TokenEntry& token = tokenizer.tokens_[static_cast<std::size_t>(id)];
      if (token.kind != Tokenizer::TokenKind::kUnused) {
        fail("id " + std::to_string(id) + " appears twice in model.vocab");
      }
      token.kind = Tokenizer::TokenKind::kVocab;
      id_by_spelling_.emplace(spelling, id);
      spelling_by_id_.emplace(id, spelling);
    }
  }

  void read_added_tokens(const json& root, Tokenizer& tokenizer) {
    const auto added_tokens = root.find("added_tokens");
    if (added_tokens == root.end() || added_tokens->is_null()) return;
    if (!added_tokens->is_array()) fail("\"added_tokens\" must be an array");
    for (const json& added : *added_tokens) {
      if (!added.is_object() || !added.contains("content") || !added["content"].is_string() ||
          added["content"].get<std::string>().empty()) {
        fail("every added token needs a non-empty \"content\" string; found " + added.dump());
      }
      const std::string content = added["content"].get<std::string>();
      const int id = checked_id(added.value("id", json()), "added token \"" + content + "\"");
      for (const char* option : {"lstrip", "rstrip", "single_word"}) {
        if (flag(added, option, false)) {
          fail("added token \"" + content + "\" sets \"" + option + "\", which minigen does not implement");
        }
      }
      place(tokenizer, id);
      Tokenizer::TokenEntry& token = tokenizer.tokens_[static_cast<std::size_t>(id)];
      // One id, one text: an added token may share its id only with the vocabulary entry of its own spelling (HF
      // lists added tokens in model.vocab too). Otherwise decode would give the added text for ids that encode
      // produced for other bytes (found by fuzz_tokenizer_json: "!" and "<tts_text_bos>" both at id 36).
      if (token.kind == Tokenizer::TokenKind::kAddedSpecial || token.kind == Tokenizer::TokenKind::kAddedPlain) {
        fail("id " + std::to_string(id) + " is given to two added tokens, \"" + token.bytes + "\" and \"" + content +
             "\"");
      }
      if (const auto vocab_entry = spelling_by_id_.find(id); vocab_entry != spelling_by_id_.end() &&
                                                             vocab_entry->second != content &&
                                                             byte_level_to_bytes(vocab_entry->second) != content) {
        fail("added token \"" + content + "\" has id " + std::to_string(id) + ", which model.vocab gives to \"" +
             vocab_entry->second + "\"");
      }
      token.kind =
          flag(added, "special", false) ? Tokenizer::TokenKind::kAddedSpecial : Tokenizer::TokenKind::kAddedPlain;
      token.bytes = content;
      tokenizer.added_tokens_.add(content, id);
    }
  }

  // Gives every vocabulary token its raw bytes and builds the byte → id and bytes → id lookups.
  void index_tokens(Tokenizer& tokenizer) const {
    for (const auto& [id, spelling] : spelling_by_id_) {
      Tokenizer::TokenEntry& token = tokenizer.tokens_[static_cast<std::size_t>(id)];
      if (token.kind != Tokenizer::TokenKind::kVocab) continue;  // an added token: its content is its text
      std::optional<std::string> bytes = byte_level_to_bytes(spelling);
      if (!bytes) fail("vocabulary entry \"" + spelling + "\" is not a byte-level (GPT-2 mapped) token");
      token.bytes = std::move(*bytes);
      tokenizer.id_by_bytes_.emplace(token.bytes, id);
    }
    for (int id = 0; id < tokenizer.vocab_size(); ++id) {
      const Tokenizer::TokenEntry& token = tokenizer.tokens_[static_cast<std::size_t>(id)];
      const bool added =
          token.kind == Tokenizer::TokenKind::kAddedSpecial || token.kind == Tokenizer::TokenKind::kAddedPlain;
      if (added) tokenizer.id_by_bytes_[token.bytes] = id;
    }
    for (int byte = 0; byte < 256; ++byte) {
      const auto found = id_by_spelling_.find(bytes_to_byte_level(std::string(1, static_cast<char>(byte))));
      if (found == id_by_spelling_.end()) {
        char hex[8];
        std::snprintf(hex, sizeof hex, "0x%02X", byte);
        fail(std::string("model.vocab lacks the symbol for byte ") + hex + "; a byte-level vocabulary needs all 256");
      }
      tokenizer.byte_token_ids_[static_cast<std::size_t>(byte)] = found->second;
    }
  }

  int vocab_id(const std::string& spelling, std::size_t rank, const std::string& merge_text) const {
    const auto found = id_by_spelling_.find(spelling);
    if (found == id_by_spelling_.end()) {
      fail("merge #" + std::to_string(rank) + " (" + merge_text + ") uses \"" + spelling +
           "\", which is not in model.vocab");
    }
    return found->second;
  }

  void read_merges(const json& model, Tokenizer& tokenizer) const {
    const json& merges = require_member(model, "merges", "the merge list (model.merges)");
    if (!merges.is_array()) fail("model.merges must be an array");
    tokenizer.merges_by_pair_.reserve(merges.size());
    for (std::size_t rank = 0; rank < merges.size(); ++rank) {
      const json& merge = merges[rank];
      std::string left;
      std::string right;
      // Both HF spellings: "left right" (older files) and ["left", "right"] (newer ones).
      if (merge.is_string()) {
        const std::string text = merge.get<std::string>();
        const std::size_t space = text.find(' ');
        if (space == std::string::npos || text.find(' ', space + 1) != std::string::npos) {
          fail("merge #" + std::to_string(rank) + " \"" + text + "\" is not two tokens separated by one space");
        }
        left = text.substr(0, space);
        right = text.substr(space + 1);
      } else if (merge.is_array() && merge.size() == 2 && merge[0].is_string() && merge[1].is_string()) {
        left = merge[0].get<std::string>();
        right = merge[1].get<std::string>();
      } else {
        fail("merge #" + std::to_string(rank) + " must be \"a b\" or [\"a\", \"b\"]; found " + merge.dump());
      }
      const std::string merge_text = merge.dump();
      const int left_id = vocab_id(left, rank, merge_text);
      const int right_id = vocab_id(right, rank, merge_text);
      const int merged_id = vocab_id(left + right, rank, merge_text);
      // A repeated pair keeps its last rank, as HF's and GPT-2's own loaders do.
      tokenizer.merges_by_pair_[Tokenizer::pair_key(left_id, right_id)] = {static_cast<int>(rank), merged_id};
    }
  }

  // bos/eos/pad token names may be a string, an object with "content" (older HF files) or null.
  std::optional<std::string> role_token_name(const std::optional<json>& config, const char* key) const {
    if (!config) return std::nullopt;
    const auto found = config->find(key);
    if (found == config->end() || found->is_null()) return std::nullopt;
    if (found->is_string()) return found->get<std::string>();
    if (found->is_object() && found->contains("content") && (*found)["content"].is_string()) {
      return (*found)["content"].get<std::string>();
    }
    fail_config(std::string("\"") + key + "\" must be a token string; found " + found->dump());
  }

  int resolve_role(const Tokenizer& tokenizer, const std::optional<json>& config, const char* key,
                   std::string_view minimind_name) const {
    if (const std::optional<std::string> name = role_token_name(config, key)) {
      const std::optional<int> id = tokenizer.find_token(*name);
      if (!id) fail_config(std::string(key) + " \"" + *name + "\" is not a token of " + tokenizer_source_);
      return *id;
    }
    return tokenizer.find_token(minimind_name).value_or(-1);
  }

  void read_roles_and_template(const std::optional<json>& config, Tokenizer& tokenizer) const {
    tokenizer.bos_id_ = resolve_role(tokenizer, config, "bos_token", kMinimindBosToken);
    tokenizer.eos_id_ = resolve_role(tokenizer, config, "eos_token", kMinimindEosToken);
    tokenizer.pad_id_ = resolve_role(tokenizer, config, "pad_token", kMinimindPadToken);
    if (!config) return;
    const auto chat_template = config->find("chat_template");
    if (chat_template == config->end() || chat_template->is_null()) return;
    if (chat_template->is_string()) {
      tokenizer.chat_template_ = chat_template->get<std::string>();
      return;
    }
    // Newer HF files may hold several named templates: take "default", else the first.
    if (chat_template->is_array()) {
      for (const json& named : *chat_template) {
        if (!named.is_object() || !named.contains("template") || !named["template"].is_string()) continue;
        if (tokenizer.chat_template_.empty() || text_field(named, "name") == "default") {
          tokenizer.chat_template_ = named["template"].get<std::string>();
        }
      }
      return;
    }
    fail_config("\"chat_template\" must be a string or a list of named templates");
  }

  std::string tokenizer_source_;
  std::string config_source_;
  std::unordered_map<std::string, int> id_by_spelling_;
  std::map<int, std::string> spelling_by_id_;
};

Tokenizer Tokenizer::from_json_text(std::string_view tokenizer_json,
                                    std::optional<std::string_view> tokenizer_config_json) {
  return TokenizerJsonLoader("tokenizer.json", "tokenizer_config.json").load(tokenizer_json, tokenizer_config_json);
}

Tokenizer Tokenizer::from_files(const std::filesystem::path& tokenizer_json,
                                const std::optional<std::filesystem::path>& tokenizer_config_json) {
  const std::string tokenizer_text = read_whole_file(tokenizer_json, kMaxTokenizerFileBytes, "tokenizer.json");
  std::optional<std::string> config_text;
  if (tokenizer_config_json) {
    config_text = read_whole_file(*tokenizer_config_json, kMaxConfigFileBytes, "tokenizer_config.json");
  }
  TokenizerJsonLoader loader(tokenizer_json.string(),
                             tokenizer_config_json ? tokenizer_config_json->string() : std::string());
  return config_text ? loader.load(tokenizer_text, std::string_view(*config_text)) : loader.load(tokenizer_text, {});
}

}  // namespace minigen
