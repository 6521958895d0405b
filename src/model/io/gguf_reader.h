#pragma once
// Reads a GGUF file's header (model/io/gguf_types.h) and checks every field, as the safetensors reader does: a
// magic or version it does not know, counts or string lengths past the end of the file, unknown value or tensor
// types, duplicate keys or names, offsets that are unaligned, overlapping or beyond the data each give one
// minigen::Error naming the file and the field. Tensor data is not converted here (checkpoint/gguf_model does that).
#include <cstddef>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "model/io/gguf_types.h"

namespace minigen {

struct GgufTensorInfo {
  std::string name;
  std::vector<uint64_t> dims;  // ggml order: dims[0] varies fastest
  GgufTensorType type = GgufTensorType::kF32;
  uint64_t offset = 0;  // within the data section
  uint64_t byte_count = 0;
  std::span<const std::byte> bytes;  // the tensor's data, inside the file's bytes

  uint64_t element_count() const;
};

struct GgufFile {
  uint32_t version = 3;
  uint32_t alignment = kGgufDefaultAlignment;
  GgufMetadata metadata;
  std::vector<GgufTensorInfo> tensors;

  const GgufValue* find(const std::string& key) const;
};

// Parses `bytes` (which must outlive the result: the tensors point into it); `name` starts error messages. GGUF
// versions 2 and 3 share this layout and are accepted.
GgufFile read_gguf(std::span<const std::byte> bytes, const std::string& name);

}  // namespace minigen
