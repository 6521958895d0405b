#pragma once
// A tiny hand-made tokenizer.json for tests, small enough that every expected id can be worked out on paper:
//   ids 0–4    added tokens <|endoftext|> (special), <|im_start|> (special), <|im_end|> (special), <think> and
//              <think>! (not special; the second checks longest-match)
//   ids 5–260  byte b is id 5 + b
//   ids 261–   one per merge, in rank order: he, ll, hell, hello, Ġw, or, Ġwor, ld, Ġworld, wo
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "tokenizer/byte_level.h"
#include "tokenizer/tokenizer_writer.h"

namespace minigen::tokenizer_testing {

inline int tiny_byte_id(unsigned char byte) { return 5 + byte; }

inline constexpr int kTinyHe = 261;
inline constexpr int kTinyLl = 262;
inline constexpr int kTinyHell = 263;
inline constexpr int kTinyHello = 264;
inline constexpr int kTinySpaceW = 265;
inline constexpr int kTinyOr = 266;
inline constexpr int kTinySpaceWor = 267;
inline constexpr int kTinyLd = 268;
inline constexpr int kTinySpaceWorld = 269;
inline constexpr int kTinyWo = 270;
inline constexpr int kTinyVocabSize = 271;

// The merges as byte-level spellings, in rank order.
inline std::vector<std::pair<std::string, std::string>> tiny_merges() {
  return {{"h", "e"}, {"l", "l"},   {"he", "ll"}, {"hell", "o"},  {"Ġ", "w"},
          {"o", "r"}, {"Ġw", "or"}, {"l", "d"},   {"Ġwor", "ld"}, {"w", "o"}};
}

// The tokenizer.json as a JSON value, so a test can break one field and serialize it.
inline nlohmann::json tiny_tokenizer_json_value(bool merges_as_strings = false) {
  nlohmann::ordered_json added = nlohmann::ordered_json::array();
  const std::vector<std::pair<std::string, bool>> added_tokens = {
      {"<|endoftext|>", true}, {"<|im_start|>", true}, {"<|im_end|>", true}, {"<think>", false}, {"<think>!", false}};
  nlohmann::ordered_json vocab = nlohmann::ordered_json::object();
  for (std::size_t id = 0; id < added_tokens.size(); ++id) {
    added.push_back(added_token_json(id, added_tokens[id].first, added_tokens[id].second));
    vocab[added_tokens[id].first] = id;
  }
  for (int byte = 0; byte < 256; ++byte) {
    vocab[bytes_to_byte_level(std::string(1, static_cast<char>(byte)))] =
        tiny_byte_id(static_cast<unsigned char>(byte));
  }
  nlohmann::ordered_json merges = nlohmann::ordered_json::array();
  int next_id = kTinyHe;
  for (const auto& [left, right] : tiny_merges()) {
    vocab[left + right] = next_id++;
    if (merges_as_strings) {
      merges.push_back(left + " " + right);
    } else {
      merges.push_back({left, right});
    }
  }
  return nlohmann::json(byte_level_bpe_json(std::move(added), std::move(vocab), std::move(merges)));
}

inline std::string tiny_tokenizer_json(bool merges_as_strings = false) {
  return tiny_tokenizer_json_value(merges_as_strings).dump();
}

}  // namespace minigen::tokenizer_testing
