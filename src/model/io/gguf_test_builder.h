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
    if (!value.is_array()) return element(value.type, value, 0);
    u32(static_cast<uint32_t>(value.element_type));
    const std::size_t count =
        value.element_type == GgufValueType::kString ? value.strings.size()
        : (value.element_type == GgufValueType::kFloat32 || value.element_type == GgufValueType::kFloat64)
            ? value.floats.size()
            : value.integers.size();
    u64(count);
    for (std::size_t i = 0; i < count; ++i) element(value.element_type, value, i);
    return *this;
  }

  std::string bytes;

 private:
  GgufBuilder& element(GgufValueType type, const GgufValue& value, std::size_t i) {
    switch (type) {
      case GgufValueType::kUint8:
      case GgufValueType::kInt8:
      case GgufValueType::kBool:
        return put(static_cast<uint8_t>(value.integers[i]));
      case GgufValueType::kUint16:
      case GgufValueType::kInt16:
        return put(static_cast<uint16_t>(value.integers[i]));
      case GgufValueType::kUint32:
      case GgufValueType::kInt32:
        return put(static_cast<uint32_t>(value.integers[i]));
      case GgufValueType::kUint64:
      case GgufValueType::kInt64:
        return put(static_cast<uint64_t>(value.integers[i]));
      case GgufValueType::kFloat32:
        return put(static_cast<float>(value.floats[i]));
      case GgufValueType::kFloat64:
        return put(value.floats[i]);
      case GgufValueType::kString:
        return str(value.strings[i]);
      case GgufValueType::kArray:
        break;
    }
    return *this;
  }
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
