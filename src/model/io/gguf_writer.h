#pragma once
// Writes a GGUF v3 file (model/io/gguf_types.h): the metadata in the caller's order, the tensor infos, then each
// tensor's bytes at the next multiple of the alignment. The bytes are the caller's, already in the tensor's type.
#include <filesystem>
#include <string>
#include <vector>

#include "model/io/gguf_types.h"

namespace minigen {

struct GgufTensorToWrite {
  std::string name;
  std::vector<uint64_t> dims;  // ggml order: dims[0] varies fastest
  GgufTensorType type = GgufTensorType::kF32;
  std::string bytes;  // gguf_type_bytes(type, product of dims) bytes
};

// The alignment is the metadata's "general.alignment" when it holds one (a uint32 power of two), else 32.
// Throws minigen::Error when a tensor's byte count does not match its dims and type.
std::string gguf_bytes(const GgufMetadata& metadata, const std::vector<GgufTensorToWrite>& tensors);
// The same into a file, written under a temporary name and renamed into place once complete.
void write_gguf(const std::filesystem::path& path, const GgufMetadata& metadata,
                const std::vector<GgufTensorToWrite>& tensors);

}  // namespace minigen
