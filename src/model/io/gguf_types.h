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
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/enum_names.h"

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

// Bytes of one element of a number type (integers, bool, floats); 0 for strings and arrays.
inline std::size_t gguf_number_bytes(GgufValueType type) {
  switch (type) {
    case GgufValueType::kUint8:
    case GgufValueType::kInt8:
    case GgufValueType::kBool:
      return 1;
    case GgufValueType::kUint16:
    case GgufValueType::kInt16:
      return 2;
    case GgufValueType::kUint32:
    case GgufValueType::kInt32:
    case GgufValueType::kFloat32:
      return 4;
    case GgufValueType::kUint64:
    case GgufValueType::kInt64:
    case GgufValueType::kFloat64:
      return 8;
    case GgufValueType::kString:
    case GgufValueType::kArray:
      return 0;
  }
  return 0;
}

inline bool gguf_is_float(GgufValueType type) {
  return type == GgufValueType::kFloat32 || type == GgufValueType::kFloat64;
}

// A metadata value: a scalar holds one element, an array any number. Numbers (integers, bools, floats) are kept as
// the file stores them, little-endian elements of scalar_type() one after another in `numbers`: a u8 array of 20 MB
// takes 20 MB here, where widening each element to an int64 took 8 bytes per byte of file. Strings are in `strings`.
// Arrays of arrays are valid GGUF but no key minigen reads uses them; the reader refuses them.
struct GgufValue {
  GgufValueType type = GgufValueType::kUint32;
  GgufValueType element_type = GgufValueType::kUint32;  // arrays only
  std::string numbers;
  std::vector<std::string> strings;

  bool is_array() const { return type == GgufValueType::kArray; }
  GgufValueType scalar_type() const { return is_array() ? element_type : type; }
  std::size_t size() const {
    const std::size_t width = gguf_number_bytes(scalar_type());
    return width == 0 ? strings.size() : numbers.size() / width;
  }
  // Element `index` of an integer or bool value (a uint64 above 2^63 − 1 comes out negative; the reader refuses
  // those), or of a float value.
  int64_t integer(std::size_t index) const;
  double number(std::size_t index) const;

  static GgufValue string(std::string text) { return {GgufValueType::kString, {}, {}, {std::move(text)}}; }
  static GgufValue uint32(uint32_t value) { return {GgufValueType::kUint32, {}, raw(value), {}}; }
  static GgufValue int32(int32_t value) { return {GgufValueType::kInt32, {}, raw(value), {}}; }
  static GgufValue float32(float value) { return {GgufValueType::kFloat32, {}, raw(value), {}}; }
  static GgufValue boolean(bool value) { return {GgufValueType::kBool, {}, raw(uint8_t{value}), {}}; }
  static GgufValue strings_array(std::vector<std::string> texts) {
    return {GgufValueType::kArray, GgufValueType::kString, {}, std::move(texts)};
  }
  static GgufValue int32_array(const std::vector<int32_t>& values) {
    GgufValue value{GgufValueType::kArray, GgufValueType::kInt32, {}, {}};
    for (const int32_t element : values) value.numbers += raw(element);
    return value;
  }

 private:
  template <typename T>
  static std::string raw(T value) {  // x86-64 and aarch64 are little-endian, as GGUF is
    std::string bytes(sizeof(T), '\0');
    std::memcpy(bytes.data(), &value, sizeof(T));
    return bytes;
  }
};

inline int64_t GgufValue::integer(std::size_t index) const {
  const GgufValueType element = scalar_type();
  const char* at = numbers.data() + index * gguf_number_bytes(element);
  auto read = [at]<typename T>(T) {
    T value;
    std::memcpy(&value, at, sizeof(T));
    return static_cast<int64_t>(value);
  };
  switch (element) {
    case GgufValueType::kUint8:
    case GgufValueType::kBool:
      return read(uint8_t{});
    case GgufValueType::kInt8:
      return read(int8_t{});
    case GgufValueType::kUint16:
      return read(uint16_t{});
    case GgufValueType::kInt16:
      return read(int16_t{});
    case GgufValueType::kUint32:
      return read(uint32_t{});
    case GgufValueType::kInt32:
      return read(int32_t{});
    case GgufValueType::kUint64:
      return read(uint64_t{});
    case GgufValueType::kInt64:
      return read(int64_t{});
    default:
      return 0;
  }
}

inline double GgufValue::number(std::size_t index) const {
  if (scalar_type() == GgufValueType::kFloat64) {
    double value;
    std::memcpy(&value, numbers.data() + index * 8, 8);
    return value;
  }
  float value;
  std::memcpy(&value, numbers.data() + index * 4, 4);
  return value;
}

// Metadata in file order (the format allows any order; the writer keeps the caller's).
using GgufMetadata = std::vector<std::pair<std::string, GgufValue>>;

// The ggml tensor types minigen reads (ggml's numbering); it writes F32, F16, BF16, Q8_0 and Q4_0. Q8_0 and Q4_0
// are blocks of 32 values along ne[0]: Q8_0 = {fp16 d; int8 q[32]} (34 bytes), value = d · q; Q4_0 = {fp16 d; uint8
// qs[16]} (18 bytes), value j (j < 16) = d · ((qs[j] & 0x0F) − 8) and value j + 16 = d · ((qs[j] >> 4) − 8). Q4_1,
// Q5_0 and Q5_1 are blocks of 32 too (model/io/gguf_legacy_quants.h); Q4_K, Q5_K and Q6_K super-blocks of 256
// (model/io/gguf_kquants.h).
enum class GgufTensorType : uint32_t {
  kF32 = 0,
  kF16 = 1,
  kQ4_0 = 2,
  kQ4_1 = 3,
  kQ5_0 = 6,
  kQ5_1 = 7,
  kQ8_0 = 8,
  kQ4_K = 12,
  kQ5_K = 13,
  kQ6_K = 14,
  kBF16 = 30
};
inline constexpr EnumName<GgufTensorType> kGgufTensorTypeNames[] = {
    {GgufTensorType::kF32, "F32"},   {GgufTensorType::kF16, "F16"},   {GgufTensorType::kQ4_0, "Q4_0"},
    {GgufTensorType::kQ4_1, "Q4_1"}, {GgufTensorType::kQ5_0, "Q5_0"}, {GgufTensorType::kQ5_1, "Q5_1"},
    {GgufTensorType::kQ8_0, "Q8_0"}, {GgufTensorType::kQ4_K, "Q4_K"}, {GgufTensorType::kQ5_K, "Q5_K"},
    {GgufTensorType::kQ6_K, "Q6_K"}, {GgufTensorType::kBF16, "BF16"}};

inline constexpr uint32_t kGgufDefaultAlignment = 32;
inline constexpr int kGgufQuantBlock = 32;
inline constexpr int kGgufSuperBlock = 256;

inline bool gguf_is_k_quant(GgufTensorType type) {
  return type == GgufTensorType::kQ4_K || type == GgufTensorType::kQ5_K || type == GgufTensorType::kQ6_K;
}
// Q4_1, Q5_0 and Q5_1: ggml's other blocks of 32, which minigen reads as values (Q8_0 and Q4_0 are its own codes).
inline bool gguf_is_legacy_quant(GgufTensorType type) {
  return type == GgufTensorType::kQ4_1 || type == GgufTensorType::kQ5_0 || type == GgufTensorType::kQ5_1;
}

// How many values along ne[0] one block holds: 1 for the float types, 32 for Q8_0, Q4_0, Q4_1, Q5_0 and Q5_1, 256
// for the K-quants. A
// tensor's first dimension must be a multiple of it (ggml never lets a block straddle two rows).
inline uint64_t gguf_block_values(GgufTensorType type) {
  if (gguf_is_k_quant(type)) return kGgufSuperBlock;
  if (type == GgufTensorType::kQ8_0 || type == GgufTensorType::kQ4_0 || gguf_is_legacy_quant(type)) {
    return kGgufQuantBlock;
  }
  return 1;
}

// Bytes of `count` values (count a multiple of gguf_block_values(type)).
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
    case GgufTensorType::kQ4_1:
      return count / kGgufQuantBlock * 20;
    case GgufTensorType::kQ5_0:
      return count / kGgufQuantBlock * 22;
    case GgufTensorType::kQ5_1:
      return count / kGgufQuantBlock * 24;
    case GgufTensorType::kQ4_K:
      return count / kGgufSuperBlock * 144;
    case GgufTensorType::kQ5_K:
      return count / kGgufSuperBlock * 176;
    case GgufTensorType::kQ6_K:
      return count / kGgufSuperBlock * 210;
  }
  return 0;
}

// The table's names are string literals, so the view's data is a terminated C string.
inline const char* gguf_type_name(GgufTensorType type) { return name_in(kGgufTensorTypeNames, type).data(); }

}  // namespace minigen
