#pragma once
// State dicts written by torch.save in its zip format (PyTorch ≥ 1.6, the format MiniMind's .pth files use): a zip
// archive holding `<prefix>/data.pkl`, a pickle of the dict whose tensors refer to storages by persistent id, and
// one `<prefix>/data/<key>` entry of raw little-endian bytes per storage.
#include <filesystem>
#include <span>
#include <string>

#include "model/tensor.h"

namespace minigen {

// Reads every tensor of the state dict, converting float16, bfloat16 and float32 to fp32 (stored_dtype records which
// one the file held) and copying strided views element by element. The state dict may be the pickled object itself
// or sit under a key "model", "state_dict", "model_state_dict" or "module" of it. Throws minigen::Error naming the
// file and the problem for anything else: a damaged archive or pickle, a global other than those that rebuild
// tensors and ordered dicts, another dtype, or a tensor that reaches outside its storage.
TensorMap read_torch_pth(const std::filesystem::path& path, const TensorReadOptions& options = {});
// The same for an archive in memory; `name` starts error messages.
TensorMap read_torch_pth(std::span<const std::byte> bytes, const std::string& name,
                         const TensorReadOptions& options = {});

}  // namespace minigen
