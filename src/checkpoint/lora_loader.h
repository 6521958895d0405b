#pragma once
// Reads LoRA adapters in the formats people have (model/lora_adapter.h holds the result):
//   - MiniMind's: a torch.save state dict of `<module>.lora.A.weight` / `<module>.lora.B.weight` (model_lora.py's
//     save_lora; fp16; no scaling), e.g. out/lora/lora_identity_768.pth;
//   - Hugging Face PEFT's: a folder with adapter_config.json (r, lora_alpha, target_modules …) and
//     adapter_model.safetensors (`base_model.model.<module>.lora_A.weight` / `.lora_B.weight`), scale lora_alpha / r
//     (alpha / √r with use_rslora);
//   - a GGUF adapter as llama.cpp reads them (general.type = adapter, adapter.type = lora, adapter.lora.alpha).
#include <filesystem>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "model/config.h"
#include "model/lora_adapter.h"
#include "model/tensor.h"

namespace minigen {

// The format is told by the path: a folder or a file beside adapter_config.json is PEFT, *.gguf is GGUF, anything
// else a MiniMind .pth. The adapter's name is the file's stem (the folder's name for PEFT). Throws minigen::Error
// naming the file and the problem.
std::shared_ptr<const LoraAdapter> load_lora_adapter(const std::filesystem::path& path, const ModelConfig& config);

// The steps after the file is read, for tests and the fuzzer: the tensors of a MiniMind adapter state dict; PEFT's
// adapter_config.json and tensors.
LoraAdapter lora_from_minimind_tensors(TensorMap tensors, const ModelConfig& config, const std::string& source);
LoraAdapter lora_from_peft(const nlohmann::json& adapter_config, TensorMap tensors, const ModelConfig& config,
                           const std::string& source);

}  // namespace minigen
