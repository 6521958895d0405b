#pragma once
// Learner-style models for the lab's tests: a MiniMind-layout tokenizer trained on a few English sentences (so it is
// MiniMind's layout but not minigen-6400's vocabulary), small configs of each family, and .pth state dicts written as
// MiniMind's trainer saves them.
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "checkpoint/model_loader.h"
#include "core/file_io.h"
#include "model/io/torch_pth_test_writer.h"
#include "model/test_models.h"
#include "tokenizer/bpe_trainer.h"
#include "tokenizer/tokenizer_writer.h"

namespace minigen::lab::testing {

namespace fs = std::filesystem;
using nlohmann::json;

inline constexpr int kTokenizerVocabLimit = 420;

// A MiniMind-layout tokenizer (36 added tokens, 256 bytes, merges) with a small vocabulary trained on a few
// sentences: MiniMind's layout, not minigen-6400's vocabulary (the lab picks its Chinese material for it), and the
// genesis text comes out much longer than minigen-6400's 182 tokens. `minimind2_template` writes
// MiniMind2's chat template (recognised by its default system message) instead of minimind-3's.
struct WrittenTokenizer {
  fs::path directory;
  int vocab_size = 0;  // as many as the few sentences allow, up to kTokenizerVocabLimit
};

inline WrittenTokenizer write_tokenizer(const fs::path& directory, bool minimind2_template) {
  const std::vector<std::string> texts = {
      "In the beginning the river ran to the sea, and the sea was wide.",
      "A fool and his money are soon parted; a wise man keeps his counsel.",
      "The light was good, and the evening and the morning were the first day.",
  };
  BpeTrainOptions options;
  options.vocab_size = kTokenizerVocabLimit;
  options.min_frequency = 1;
  const TrainedBpe trained = train_bpe_on_texts(texts, options);
  write_tokenizer_files(trained, directory);
  if (minimind2_template) {
    json config = json::parse(read_whole_file(directory / "tokenizer_config.json", 1 << 20, "tokenizer_config.json"));
    config["chat_template"] =
        "{% if messages[0]['role'] == 'system' %}{{ '<|im_start|>system\\n' + messages[0]['content'] + "
        "'<|im_end|>\\n' }}{% else %}{{ '<|im_start|>system\\nYou are a helpful assistant<|im_end|>\\n' }}{% endif %}";
    write_file_atomically(directory / "tokenizer_config.json", config.dump(2));
  }
  return {directory, static_cast<int>(trained.vocab.size())};
}

// A family's layout (qk-norm or not, GQA ratio, experts) at a test size: two layers, hidden 128, 16-wide heads.
inline ModelConfig small_config(const std::string& family, int vocab_size) {
  ModelConfig config = minigen::testing::test_config(family);
  config.vocab_size = vocab_size;
  config.hidden_size = 128;
  config.head_dim = 16;
  config.intermediate_size = 256;
  if (config.use_moe) config.moe_intermediate_size = 64;
  config.max_position_embeddings = 32768;  // what a .pth load assumes
  return config;
}

// Writes the model as MiniMind's trainer saves it: a state dict in fp16, no config.
inline fs::path write_pth(const fs::path& directory, const std::string& name, const ModelConfig& config,
                          const fs::path& tokenizer) {
  const fs::path hf = directory / (name + "-hf");
  save_model_directory(hf, config, random_weights(config, 7), tokenizer, DType::kF16);
  const fs::path pth = directory / (name + ".pth");
  minigen::testing::write_bytes(pth, minigen::testing::pth_from_safetensors(hf / "model.safetensors", DType::kF16));
  fs::remove_all(hf);
  return pth;
}

}  // namespace minigen::lab::testing
