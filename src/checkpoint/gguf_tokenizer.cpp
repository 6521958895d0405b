#include "checkpoint/gguf_tokenizer.h"

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/tokenizer_writer.h"

namespace minigen {
namespace {

using nlohmann::json;

// llama.cpp's llama_token_type values.
enum TokenType : int64_t { kNormal = 1, kControl = 3, kUserDefined = 4, kUnused = 5 };

// The merges of a tokenizer.json as "left right" strings, whichever of HF's two spellings the file uses.
std::vector<std::string> merge_strings(const std::string& tokenizer_json) {
  json root;
  try {
    root = json::parse(tokenizer_json);
  } catch (const json::exception& error) {
    throw Error(std::string("tokenizer.json is not valid JSON: ") + error.what());
  }
  std::vector<std::string> merges;
  try {
    for (const json& merge : root.at("model").at("merges")) {
      merges.push_back(merge.is_string() ? merge.get<std::string>()
                                         : merge.at(0).get<std::string>() + " " + merge.at(1).get<std::string>());
    }
  } catch (const json::exception& error) {
    throw Error(std::string("tokenizer.json's model.merges are not \"a b\" strings or pairs: ") + error.what());
  }
  return merges;
}

const GgufValue& require(const GgufFile& file, const std::string& name, const std::string& key, GgufValueType type,
                         bool array) {
  const GgufValue* value = file.find(key);
  if (value == nullptr) throw Error(name + ": GGUF metadata has no '" + key + "'");
  if (value->is_array() != array || value->scalar_type() != type) {
    throw Error(name + ": GGUF metadata '" + key + "' has the wrong type");
  }
  return *value;
}

bool is_integer_type(GgufValueType type) {
  switch (type) {
    case GgufValueType::kUint8:
    case GgufValueType::kInt8:
    case GgufValueType::kUint16:
    case GgufValueType::kInt16:
    case GgufValueType::kUint32:
    case GgufValueType::kInt32:
    case GgufValueType::kUint64:
    case GgufValueType::kInt64:
      return true;
    case GgufValueType::kFloat32:
    case GgufValueType::kBool:
    case GgufValueType::kString:
    case GgufValueType::kArray:
    case GgufValueType::kFloat64:
      return false;
  }
  return false;
}

// A token id key, if present: an integer naming one of `token_count` ids.
std::optional<int64_t> token_id(const GgufFile& file, const std::string& name, const std::string& key,
                                std::size_t token_count) {
  const GgufValue* value = file.find(key);
  if (value == nullptr) return std::nullopt;
  if (value->is_array() || !is_integer_type(value->type)) {
    throw Error(name + ": GGUF metadata '" + key + "' must be an integer");
  }
  const int64_t id = value->integer(0);
  if (id < 0 || static_cast<uint64_t>(id) >= token_count) {
    throw Error(name + ": GGUF metadata '" + key + "' is " + std::to_string(id) + ", not one of the " +
                std::to_string(token_count) + " token ids");
  }
  return id;
}

}  // namespace

void append_gguf_tokenizer(GgufMetadata& metadata, const std::string& tokenizer_json, const Tokenizer& tokenizer,
                           int vocab_size) {
  if (tokenizer.vocab_size() > vocab_size) {
    throw Error("the tokenizer has more ids (" + std::to_string(tokenizer.vocab_size()) + ") than the model (" +
                std::to_string(vocab_size) + ")");
  }
  std::vector<std::string> tokens;
  std::vector<int32_t> types;
  for (int id = 0; id < vocab_size; ++id) {
    if (!tokenizer.has_token(id)) {
      tokens.push_back("[PAD" + std::to_string(id) + "]");
      types.push_back(kUnused);
    } else if (tokenizer.is_added(id)) {
      tokens.push_back(tokenizer.token_bytes(id));
      types.push_back(tokenizer.is_special(id) ? kControl : kUserDefined);
    } else {
      tokens.push_back(bytes_to_byte_level(tokenizer.token_bytes(id)));
      types.push_back(kNormal);
    }
  }
  metadata.emplace_back("tokenizer.ggml.model", GgufValue::string("gpt2"));
  metadata.emplace_back("tokenizer.ggml.pre", GgufValue::string("gpt-2"));
  metadata.emplace_back("tokenizer.ggml.tokens", GgufValue::strings_array(std::move(tokens)));
  metadata.emplace_back("tokenizer.ggml.token_type", GgufValue::int32_array(types));
  metadata.emplace_back("tokenizer.ggml.merges", GgufValue::strings_array(merge_strings(tokenizer_json)));
  metadata.emplace_back("tokenizer.ggml.bos_token_id", GgufValue::uint32(static_cast<uint32_t>(tokenizer.bos_id())));
  metadata.emplace_back("tokenizer.ggml.eos_token_id", GgufValue::uint32(static_cast<uint32_t>(tokenizer.eos_id())));
  metadata.emplace_back("tokenizer.ggml.padding_token_id",
                        GgufValue::uint32(static_cast<uint32_t>(tokenizer.pad_id())));
  // llama.cpp adds bos itself (gguf_tokenizer.h says why); minigen reads the flag nowhere.
  metadata.emplace_back("tokenizer.ggml.add_bos_token", GgufValue::boolean(true));
  if (!tokenizer.chat_template().empty()) {
    metadata.emplace_back("tokenizer.chat_template", GgufValue::string(tokenizer.chat_template()));
  }
}

GgufTokenizerFiles gguf_tokenizer_files(const GgufFile& file, const std::string& name) {
  const std::string& model = require(file, name, "tokenizer.ggml.model", GgufValueType::kString, false).strings[0];
  if (model != "gpt2") {
    throw Error(name + ": the GGUF tokenizer is '" + model + "'; minigen runs byte-level BPE ('gpt2') only");
  }
  if (const GgufValue* pre = file.find("tokenizer.ggml.pre"); pre != nullptr) {
    const bool gpt2_split = !pre->is_array() && pre->type == GgufValueType::kString &&
                            (pre->strings[0] == "gpt-2" || pre->strings[0] == "default");
    if (!gpt2_split) {
      throw Error(name +
                  ": the GGUF tokenizer's pre-tokenizer is not 'gpt-2'; minigen splits text with GPT-2's "
                  "pattern only, so it would tokenize differently");
    }
  }
  const auto& tokens = require(file, name, "tokenizer.ggml.tokens", GgufValueType::kString, true).strings;
  const auto& merges = require(file, name, "tokenizer.ggml.merges", GgufValueType::kString, true).strings;
  const GgufValue* types = file.find("tokenizer.ggml.token_type");
  if (types != nullptr &&
      (!types->is_array() || !is_integer_type(types->element_type) || types->size() != tokens.size())) {
    throw Error(name + ": GGUF metadata 'tokenizer.ggml.token_type' must be one integer per token");
  }
  nlohmann::ordered_json vocab = nlohmann::ordered_json::object();
  nlohmann::ordered_json added = nlohmann::ordered_json::array();
  for (std::size_t id = 0; id < tokens.size(); ++id) {
    const int64_t type = types != nullptr ? types->integer(id) : kNormal;
    if (type == kUnused) continue;
    if (type == kControl || type == kUserDefined) {
      added.push_back(added_token_json(id, tokens[id], type == kControl));
    } else {
      vocab[tokens[id]] = id;
    }
  }
  const nlohmann::ordered_json tokenizer_json = byte_level_bpe_json(std::move(added), std::move(vocab), merges);
  json config = json::object();
  for (const auto& [key, role] :
       {std::pair{"tokenizer.ggml.bos_token_id", "bos_token"}, std::pair{"tokenizer.ggml.eos_token_id", "eos_token"},
        std::pair{"tokenizer.ggml.padding_token_id", "pad_token"}}) {
    if (const auto id = token_id(file, name, key, tokens.size())) config[role] = tokens[static_cast<std::size_t>(*id)];
  }
  if (const GgufValue* chat_template = file.find("tokenizer.chat_template"); chat_template != nullptr) {
    if (chat_template->is_array() || chat_template->type != GgufValueType::kString) {
      throw Error(name + ": GGUF metadata 'tokenizer.chat_template' must be a string");
    }
    config["chat_template"] = chat_template->strings[0];
  }
  // Invalid UTF-8 in a token is refused by dump() rather than written on.
  try {
    return {tokenizer_json.dump(), config.dump()};
  } catch (const json::exception& error) {
    throw Error(name + ": the GGUF tokenizer holds text that is not UTF-8: " + error.what());
  }
}

}  // namespace minigen
