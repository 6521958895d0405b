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
  void bytes(const std::string& raw) { out_ += raw; }

 private:
  std::string& out_;
};

// A value's elements after its type (and, for an array, its element type and count): numbers as the bytes they are
// held in, strings each with its length.
void put_elements(ByteSink& sink, const GgufValue& value) {
  if (value.scalar_type() == GgufValueType::kArray) throw Error("GGUF writer: arrays of arrays are not supported");
  if (value.scalar_type() != GgufValueType::kString) {
    sink.bytes(value.numbers);
    return;
  }
  for (const std::string& text : value.strings) sink.string(text);
}

uint32_t alignment_of(const GgufMetadata& metadata) {
  for (const auto& [key, value] : metadata) {
    if (key == "general.alignment" && value.type == GgufValueType::kUint32 && value.size() == 1) {
      const int64_t alignment = value.integer(0);
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
    if (value.is_array()) {
      sink.put<uint32_t>(static_cast<uint32_t>(value.element_type));
      sink.put<uint64_t>(value.size());
    }
    put_elements(sink, value);
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
