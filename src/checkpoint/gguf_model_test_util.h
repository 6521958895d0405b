#pragma once
// For the GGUF tests of checkpoint/: a random model saved as a directory, exported to GGUF through the library as
// `minigen export gguf` does, and a GGUF file read back with its bytes kept alive.
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "checkpoint/gguf_model.h"
#include "checkpoint/gguf_tokenizer.h"
#include "checkpoint/model_loader.h"
#include "core/file_io.h"
#include "model/dtype.h"
#include "model/io/gguf_reader.h"
#include "model/io/gguf_writer.h"
#include "model/io/torch_pth_test_writer.h"
#include "model/test_models.h"

namespace minigen::testing {

// The prompt the GGUF tests score (ids of the minigen-6400 tokenizer).
inline const std::vector<int> kGgufTestPrompt = {1, 2043, 300, 3684, 719, 5, 6399};

inline std::filesystem::path tokenizer_directory() { return minigen_home() / "tokenizers" / "minigen-6400"; }

// A random model of `family` (two layers, test_models.h) saved as a directory, its weights stored as `dtype`.
inline std::filesystem::path save_random_model(const std::string& family, DType dtype = DType::kF32) {
  const ModelConfig config = test_config(family);
  const std::filesystem::path directory = scratch_path(family + "-" + dtype_name(dtype));
  save_model_directory(directory, config, random_weights(config, 7), tokenizer_directory(), dtype);
  return directory;
}

// What `minigen export gguf` does, through the library.
inline std::filesystem::path export_gguf(const LoadedModel& loaded, GgufTensorType type, const std::string& file_name) {
  GgufExport exported = gguf_export(loaded.model->config, loaded.model->weights, type, "test");
  append_gguf_tokenizer(exported.metadata,
                        read_whole_file(tokenizer_directory() / "tokenizer.json", kMaxTokenizerFileBytes, "tokenizer"),
                        *loaded.tokenizer, loaded.model->config.vocab_size);
  const std::filesystem::path path = scratch_path(file_name);
  write_gguf(path, exported.metadata, exported.tensors);
  return path;
}

// The file at `path`, its tensors pointing into `storage`.
inline GgufFile read_file(const std::filesystem::path& path, std::string& storage) {
  storage = read_whole_file(path, uint64_t{1} << 32, "gguf");
  return read_gguf(std::as_bytes(std::span(storage.data(), storage.size())), path.string());
}

}  // namespace minigen::testing
