// Writes what a MiniMind learner has on disk, for the doc test (quickstart_test.sh): the two checkpoints MiniMind's
// trainer saves into out/ (fp16 torch.save state dicts) and the tokenizer folder of a MiniMind checkout (model/).
// The weights are the shipped tiny models' (so the answers are readable), written in MiniMind's .pth format.
//   minigen_learner_fixture SOURCE_DIR OUT_DIR
#include <filesystem>
#include <iostream>

#include "model/io/torch_pth_test_writer.h"

namespace fs = std::filesystem;

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: minigen_learner_fixture SOURCE_DIR OUT_DIR\n";
    return 2;
  }
  const fs::path models = fs::path(argv[1]) / "models";
  const fs::path out = argv[2];
  try {
    fs::create_directories(out / "out");
    fs::create_directories(out / "model");
    // MiniMind names its checkpoints after the stage and the hidden size (pretrain_768.pth, full_sft_768.pth).
    const std::pair<const char*, const char*> checkpoints[] = {{"minigen-tiny-base", "pretrain_768.pth"},
                                                               {"minigen-tiny-sft", "full_sft_768.pth"}};
    for (const auto& [model, file] : checkpoints) {
      minigen::testing::write_bytes(
          out / "out" / file,
          minigen::testing::pth_from_safetensors(models / model / "model.safetensors", minigen::DType::kF16));
    }
    for (const char* file : {"tokenizer.json", "tokenizer_config.json"})
      fs::copy_file(models / "minigen-tiny-sft" / file, out / "model" / file, fs::copy_options::overwrite_existing);
  } catch (const std::exception& error) {
    std::cerr << "minigen_learner_fixture: " << error.what() << "\n";
    return 1;
  }
  return 0;
}
