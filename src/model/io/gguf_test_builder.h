#pragma once
// GGUF bytes written field by field for tests, independently of model/io/gguf_writer: hand-made headers that lie,
// and real files laid out differently (another alignment, metadata in another order, gaps between tensors).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "model/io/gguf_reader.h"

namespace minigen::testing {

class GgufBuilder {
 public:
  template <typename T>
  GgufBuilder& put(T value) {
    char raw[sizeof(T)];
    std::memcpy(raw, &value, sizeof(T));
    bytes.append(raw, sizeof(T));
    return *this;
  }
  GgufBuilder& u32(uint32_t value) { return put(value); }
  GgufBuilder& u64(uint64_t value) { return put(value); }
  GgufBuilder& str(const std::string& text) {
    u64(text.size());
    bytes += text;
    return *this;
  }
  GgufBuilder& pad_to(uint64_t alignment) {
    bytes.resize((bytes.size() + alignment - 1) / alignment * alignment, '\0');
    return *this;
  }
  // A scalar or array value as the file stores it after its key.
  GgufBuilder& value(const GgufValue& value) {
    u32(static_cast<uint32_t>(value.type));
    if (value.is_array()) u32(static_cast<uint32_t>(value.element_type)).u64(value.size());
    bytes += value.numbers;
    for (const std::string& text : value.strings) str(text);
    return *this;
  }

  std::string bytes;
};

// `file` written again by hand: the metadata in reverse order with general.alignment = `alignment` last, the tensor
// infos in reverse order, and one empty alignment unit between consecutive tensors' data.
inline std::string relaid_gguf(const GgufFile& file, uint32_t alignment) {
  GgufMetadata metadata;
  for (auto it = file.metadata.rbegin(); it != file.metadata.rend(); ++it) {
    if (it->first != "general.alignment") metadata.push_back(*it);
  }
  metadata.emplace_back("general.alignment", GgufValue::uint32(alignment));
  GgufBuilder builder;
  builder.bytes = "GGUF";
  builder.u32(3).u64(file.tensors.size()).u64(metadata.size());
  for (const auto& [key, value] : metadata) builder.str(key).value(value);
  std::vector<uint64_t> offsets;
  uint64_t offset = 0;
  for (const GgufTensorInfo& info : file.tensors) {
    offsets.push_back(offset);
    offset += (info.bytes.size() + alignment - 1) / alignment * alignment + alignment;
  }
  for (std::size_t i = file.tensors.size(); i-- > 0;) {
    const GgufTensorInfo& info = file.tensors[i];
    builder.str(info.name).u32(static_cast<uint32_t>(info.dims.size()));
    for (uint64_t dim : info.dims) builder.u64(dim);
    builder.u32(static_cast<uint32_t>(info.type)).u64(offsets[i]);
  }
  builder.pad_to(alignment);
  const std::size_t data_start = builder.bytes.size();
  builder.bytes.resize(data_start + offset, '\x5a');  // the gaps hold junk, which no tensor may read
  for (std::size_t i = 0; i < file.tensors.size(); ++i) {
    std::memcpy(builder.bytes.data() + data_start + offsets[i], file.tensors[i].bytes.data(),
                file.tensors[i].bytes.size());
  }
  return builder.bytes;
}

}  // namespace minigen::testing
