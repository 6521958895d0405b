#pragma once
// The pieces of llama.cpp's GGUF file format (ggml's docs/gguf.md, version 3) that minigen's reader and writer share.
//
//   header    "GGUF", uint32 version (3), uint64 tensor count, uint64 metadata count
//   metadata  per entry: string key, uint32 value type, value   (string = uint64 length + UTF-8 bytes, no NUL;
//             array = uint32 element type, uint64 count, elements)
//   tensors   per tensor: string name, uint32 dimension count, uint64 dims (ne[0], the fastest-varying, first),
//             uint32 ggml type, uint64 offset into the data section (a multiple of the alignment)
//   padding   to the alignment (metadata "general.alignment", uint32, default 32), then the data section
//
// A PyTorch matrix [rows][cols] is stored with dims {cols, rows}: the same row-major bytes, dims reversed.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace minigen {

enum class GgufValueType : uint32_t {
  kUint8 = 0,
  kInt8 = 1,
  kUint16 = 2,
  kInt16 = 3,
  kUint32 = 4,
  kInt32 = 5,
  kFloat32 = 6,
  kBool = 7,
  kString = 8,
  kArray = 9,
  kUint64 = 10,
  kInt64 = 11,
  kFloat64 = 12,
};

// A metadata value: a scalar holds one element, an array any number, in the vector that matches its element type
// (integers and bools in `integers`, floats in `floats`, strings in `strings`). Arrays of arrays are valid GGUF but
// no key minigen reads uses them; the reader refuses them.
struct GgufValue {
  GgufValueType type = GgufValueType::kUint32;
  GgufValueType element_type = GgufValueType::kUint32;  // arrays only
  std::vector<int64_t> integers;
  std::vector<double> floats;
  std::vector<std::string> strings;

  bool is_array() const { return type == GgufValueType::kArray; }
  GgufValueType scalar_type() const { return is_array() ? element_type : type; }

  static GgufValue string(std::string text) { return {GgufValueType::kString, {}, {}, {}, {std::move(text)}}; }
  static GgufValue uint32(uint32_t value) { return {GgufValueType::kUint32, {}, {value}, {}, {}}; }
  static GgufValue int32(int32_t value) { return {GgufValueType::kInt32, {}, {value}, {}, {}}; }
  static GgufValue float32(float value) { return {GgufValueType::kFloat32, {}, {}, {value}, {}}; }
  static GgufValue boolean(bool value) { return {GgufValueType::kBool, {}, {value ? 1 : 0}, {}, {}}; }
  static GgufValue strings_array(std::vector<std::string> texts) {
    return {GgufValueType::kArray, GgufValueType::kString, {}, {}, std::move(texts)};
  }
  static GgufValue int32_array(std::vector<int64_t> values) {
    return {GgufValueType::kArray, GgufValueType::kInt32, std::move(values), {}, {}};
  }
};

// Metadata in file order (the format allows any order; the writer keeps the caller's).
using GgufMetadata = std::vector<std::pair<std::string, GgufValue>>;

// The ggml tensor types minigen reads and writes (ggml's numbering). Q8_0 and Q4_0 are blocks of 32 values along
// ne[0]: Q8_0 = {fp16 d; int8 q[32]} (34 bytes), value = d · q; Q4_0 = {fp16 d; uint8 qs[16]} (18 bytes), value j
// (j < 16) = d · ((qs[j] & 0x0F) − 8) and value j + 16 = d · ((qs[j] >> 4) − 8).
enum class GgufTensorType : uint32_t { kF32 = 0, kF16 = 1, kQ4_0 = 2, kQ8_0 = 8, kBF16 = 30 };

inline constexpr uint32_t kGgufDefaultAlignment = 32;
inline constexpr int kGgufQuantBlock = 32;

// Bytes of `count` values (count a multiple of 32 for the block types).
inline uint64_t gguf_type_bytes(GgufTensorType type, uint64_t count) {
  switch (type) {
    case GgufTensorType::kF32:
      return 4 * count;
    case GgufTensorType::kF16:
    case GgufTensorType::kBF16:
      return 2 * count;
    case GgufTensorType::kQ8_0:
      return count / kGgufQuantBlock * 34;
    case GgufTensorType::kQ4_0:
      return count / kGgufQuantBlock * 18;
  }
  return 0;
}

inline const char* gguf_type_name(GgufTensorType type) {
  switch (type) {
    case GgufTensorType::kF32:
      return "F32";
    case GgufTensorType::kF16:
      return "F16";
    case GgufTensorType::kQ4_0:
      return "Q4_0";
    case GgufTensorType::kQ8_0:
      return "Q8_0";
    case GgufTensorType::kBF16:
      return "BF16";
  }
  return "?";
}

}  // namespace minigen
