#include "model/io/gguf_writer.h"

#include <cstring>
#include <ostream>

#include "core/error.h"
#include "core/file_io.h"

namespace minigen {
namespace {

// Appends little-endian fields (x86-64 and aarch64 are little-endian, as GGUF is).
class ByteSink {
 public:
  explicit ByteSink(std::string& out) : out_(out) {}

  template <typename T>
  void put(T value) {
    char raw[sizeof(T)];
    std::memcpy(raw, &value, sizeof(T));
    out_.append(raw, sizeof(T));
  }
  void string(const std::string& text) {
    put<uint64_t>(text.size());
    out_ += text;
  }

 private:
  std::string& out_;
};

void put_element(ByteSink& sink, GgufValueType type, const GgufValue& value, std::size_t index) {
  switch (type) {
    case GgufValueType::kUint8:
      sink.put<uint8_t>(static_cast<uint8_t>(value.integers.at(index)));
      return;
    case GgufValueType::kInt8:
      sink.put<int8_t>(static_cast<int8_t>(value.integers.at(index)));
      return;
    case GgufValueType::kUint16:
      sink.put<uint16_t>(static_cast<uint16_t>(value.integers.at(index)));
      return;
    case GgufValueType::kInt16:
      sink.put<int16_t>(static_cast<int16_t>(value.integers.at(index)));
      return;
    case GgufValueType::kUint32:
      sink.put<uint32_t>(static_cast<uint32_t>(value.integers.at(index)));
      return;
    case GgufValueType::kInt32:
      sink.put<int32_t>(static_cast<int32_t>(value.integers.at(index)));
      return;
    case GgufValueType::kUint64:
      sink.put<uint64_t>(static_cast<uint64_t>(value.integers.at(index)));
      return;
    case GgufValueType::kInt64:
      sink.put<int64_t>(value.integers.at(index));
      return;
    case GgufValueType::kBool:
      sink.put<uint8_t>(value.integers.at(index) != 0 ? 1 : 0);
      return;
    case GgufValueType::kFloat32:
      sink.put<float>(static_cast<float>(value.floats.at(index)));
      return;
    case GgufValueType::kFloat64:
      sink.put<double>(value.floats.at(index));
      return;
    case GgufValueType::kString:
      sink.string(value.strings.at(index));
      return;
    case GgufValueType::kArray:
      throw Error("GGUF writer: arrays of arrays are not supported");
  }
}

std::size_t element_count(const GgufValue& value) {
  switch (value.element_type) {
    case GgufValueType::kFloat32:
    case GgufValueType::kFloat64:
      return value.floats.size();
    case GgufValueType::kString:
      return value.strings.size();
    default:
      return value.integers.size();
  }
}

uint32_t alignment_of(const GgufMetadata& metadata) {
  for (const auto& [key, value] : metadata) {
    if (key == "general.alignment" && value.type == GgufValueType::kUint32 && !value.integers.empty()) {
      const int64_t alignment = value.integers.front();
      if (alignment <= 0 || (alignment & (alignment - 1)) != 0) {
        throw Error("GGUF writer: general.alignment must be a power of two");
      }
      return static_cast<uint32_t>(alignment);
    }
  }
  return kGgufDefaultAlignment;
}

uint64_t padded(uint64_t size, uint32_t alignment) { return (size + alignment - 1) / alignment * alignment; }

// Everything before the data section, padded to the alignment.
std::string header_bytes(const GgufMetadata& metadata, const std::vector<GgufTensorToWrite>& tensors) {
  const uint32_t alignment = alignment_of(metadata);
  std::string out = "GGUF";
  ByteSink sink(out);
  sink.put<uint32_t>(3);
  sink.put<uint64_t>(tensors.size());
  sink.put<uint64_t>(metadata.size());
  for (const auto& [key, value] : metadata) {
    sink.string(key);
    sink.put<uint32_t>(static_cast<uint32_t>(value.type));
    if (!value.is_array()) {
      put_element(sink, value.type, value, 0);
      continue;
    }
    sink.put<uint32_t>(static_cast<uint32_t>(value.element_type));
    const std::size_t count = element_count(value);
    sink.put<uint64_t>(count);
    for (std::size_t i = 0; i < count; ++i) put_element(sink, value.element_type, value, i);
  }
  uint64_t offset = 0;
  for (const GgufTensorToWrite& tensor : tensors) {
    uint64_t elements = 1;
    for (uint64_t dim : tensor.dims) elements *= dim;
    if (gguf_type_bytes(tensor.type, elements) != tensor.bytes.size()) {
      throw Error("GGUF writer: tensor '" + tensor.name + "' holds " + std::to_string(tensor.bytes.size()) +
                  " bytes, not the " + std::to_string(gguf_type_bytes(tensor.type, elements)) + " its dims need");
    }
    sink.string(tensor.name);
    sink.put<uint32_t>(static_cast<uint32_t>(tensor.dims.size()));
    for (uint64_t dim : tensor.dims) sink.put<uint64_t>(dim);
    sink.put<uint32_t>(static_cast<uint32_t>(tensor.type));
    sink.put<uint64_t>(offset);
    offset = padded(offset + tensor.bytes.size(), alignment);
  }
  out.resize(padded(out.size(), alignment), '\0');
  return out;
}

// The zero bytes after a tensor that bring the next one to the alignment.
std::string padding_after(const GgufTensorToWrite& tensor, uint32_t alignment) {
  return std::string(padded(tensor.bytes.size(), alignment) - tensor.bytes.size(), '\0');
}

}  // namespace

std::string gguf_bytes(const GgufMetadata& metadata, const std::vector<GgufTensorToWrite>& tensors) {
  const uint32_t alignment = alignment_of(metadata);
  std::string out = header_bytes(metadata, tensors);
  for (const GgufTensorToWrite& tensor : tensors) out += tensor.bytes + padding_after(tensor, alignment);
  return out;
}

void write_gguf(const std::filesystem::path& path, const GgufMetadata& metadata,
                const std::vector<GgufTensorToWrite>& tensors) {
  const uint32_t alignment = alignment_of(metadata);
  const std::string header = header_bytes(metadata, tensors);
  write_file_atomically(path, [&](std::ostream& out) {
    out.write(header.data(), static_cast<std::streamsize>(header.size()));
    for (const GgufTensorToWrite& tensor : tensors) {
      const std::string padding = padding_after(tensor, alignment);
      out.write(tensor.bytes.data(), static_cast<std::streamsize>(tensor.bytes.size()));
      out.write(padding.data(), static_cast<std::streamsize>(padding.size()));
    }
  });
}

}  // namespace minigen
