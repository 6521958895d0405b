#include "tokenizer/tokenizer_writer.h"

#include <nlohmann/json.hpp>
#include <system_error>

#include "core/error.h"
#include "core/file_io.h"
#include "tokenizer/chat_template.h"
#include "tokenizer/minimind_vocab_layout.h"

namespace minigen {
namespace {

// Insertion-ordered, so the files read like HF's own: fields in the usual order, vocab by id.
using OrderedJson = nlohmann::ordered_json;

OrderedJson byte_level_fields() {
  OrderedJson fields;
  fields["type"] = "ByteLevel";
  fields["add_prefix_space"] = false;
  fields["trim_offsets"] = true;
  fields["use_regex"] = true;
  return fields;
}

void check_layout(const TrainedBpe& trained) {
  const auto added = minimind_added_tokens();
  if (trained.vocab.size() < added.size() + 256) {
    throw Error("a trained vocabulary needs at least " + std::to_string(added.size() + 256) + " tokens, got " +
                std::to_string(trained.vocab.size()));
  }
  for (std::size_t id = 0; id < added.size(); ++id) {
    if (trained.vocab[id] != added[id].content) {
      throw Error("token " + std::to_string(id) + " is \"" + trained.vocab[id] + "\" but minimind-3 has \"" +
                  std::string(added[id].content) + "\" there");
    }
  }
}

}  // namespace

OrderedJson added_token_json(std::size_t id, std::string_view content, bool special) {
  OrderedJson fields;
  fields["id"] = id;
  fields["content"] = content;
  fields["single_word"] = false;
  fields["lstrip"] = false;
  fields["rstrip"] = false;
  fields["normalized"] = false;
  fields["special"] = special;
  return fields;
}

OrderedJson byte_level_bpe_json(OrderedJson added_tokens, OrderedJson vocab, OrderedJson merges) {
  OrderedJson model;
  model["type"] = "BPE";
  model["dropout"] = nullptr;
  model["unk_token"] = nullptr;
  model["continuing_subword_prefix"] = nullptr;
  model["end_of_word_suffix"] = nullptr;
  model["fuse_unk"] = false;
  model["byte_fallback"] = false;
  model["ignore_merges"] = false;
  model["vocab"] = std::move(vocab);
  model["merges"] = std::move(merges);

  OrderedJson root;
  root["version"] = "1.0";
  root["truncation"] = nullptr;
  root["padding"] = nullptr;
  root["added_tokens"] = std::move(added_tokens);
  root["normalizer"] = nullptr;
  root["pre_tokenizer"] = byte_level_fields();
  root["post_processor"] = nullptr;
  root["decoder"] = byte_level_fields();
  root["model"] = std::move(model);
  return root;
}

std::string tokenizer_json_text(const TrainedBpe& trained) {
  check_layout(trained);
  const auto added = minimind_added_tokens();
  OrderedJson added_tokens = OrderedJson::array();
  for (std::size_t id = 0; id < added.size(); ++id) {
    added_tokens.push_back(added_token_json(id, added[id].content, added[id].special));
  }
  OrderedJson vocab = OrderedJson::object();
  for (std::size_t id = 0; id < trained.vocab.size(); ++id) vocab[trained.vocab[id]] = id;
  OrderedJson merges = OrderedJson::array();
  for (const auto& [left, right] : trained.merges) merges.push_back({left, right});
  return byte_level_bpe_json(std::move(added_tokens), std::move(vocab), std::move(merges)).dump(2) + "\n";
}

std::string tokenizer_config_json_text() {
  const auto added = minimind_added_tokens();
  OrderedJson added_tokens_decoder = OrderedJson::object();
  OrderedJson additional_special_tokens = OrderedJson::array();
  for (std::size_t id = 0; id < added.size(); ++id) {
    OrderedJson fields = added_token_json(id, added[id].content, added[id].special);
    fields.erase("id");  // the key says it
    added_tokens_decoder[std::to_string(id)] = std::move(fields);
    if (added[id].special && added[id].content != kMinimindPadToken) {
      additional_special_tokens.push_back(added[id].content);
    }
  }

  OrderedJson config;
  config["add_bos_token"] = false;  // bos is part of the chat template and of encode_base_prompt, not implicit
  config["add_eos_token"] = false;
  config["add_prefix_space"] = false;
  config["added_tokens_decoder"] = std::move(added_tokens_decoder);
  config["additional_special_tokens"] = std::move(additional_special_tokens);
  config["bos_token"] = kMinimindBosToken;
  config["eos_token"] = kMinimindEosToken;
  config["pad_token"] = kMinimindPadToken;
  config["unk_token"] = kMinimindPadToken;
  config["clean_up_tokenization_spaces"] = false;
  config["spaces_between_special_tokens"] = false;
  config["model_max_length"] = kMinimindModelMaxLength;
  config["tokenizer_class"] = "PreTrainedTokenizerFast";
  config["chat_template"] = chatml_jinja_template();
  return config.dump(2) + "\n";
}

void write_tokenizer_files(const TrainedBpe& trained, const std::filesystem::path& directory) {
  // Render both before writing either, so a bad vocabulary leaves the directory untouched.
  const std::string tokenizer_json = tokenizer_json_text(trained);
  const std::string config_json = tokenizer_config_json_text();
  OutputDirectory out(directory, "--out");
  out.write("tokenizer.json", tokenizer_json);
  out.write("tokenizer_config.json", config_json);
  out.commit();
}

}  // namespace minigen
