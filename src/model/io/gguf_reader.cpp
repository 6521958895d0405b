#include "model/io/gguf_reader.h"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <set>
#include <string>

#include "core/error.h"

namespace minigen {
namespace {

// No dimension count above ggml's GGML_MAX_DIMS.
constexpr uint32_t kMaxDims = 4;
// The largest alignment accepted: ggml pads with it, so a huge value would only waste the file.
constexpr uint32_t kMaxAlignment = uint32_t{1} << 20;

// Reads little-endian fields in order, each checked against the bytes that are left.
class Cursor {
 public:
  Cursor(std::span<const std::byte> bytes, const std::string& name) : bytes_(bytes), name_(name) {}

  uint64_t position() const { return position_; }
  uint64_t remaining() const { return bytes_.size() - position_; }

  template <typename T>
  T read(const char* what) {
    need(sizeof(T), what);
    T value;
    std::memcpy(&value, bytes_.data() + position_, sizeof(T));  // x86-64 and aarch64 are little-endian, as GGUF is
    position_ += sizeof(T);
    return value;
  }

  std::string string(const std::string& what) {
    const uint64_t length = read<uint64_t>(what.c_str());
    if (length > remaining()) {
      fail(what + ": a string of " + std::to_string(length) + " bytes runs past the end of the file (" +
           std::to_string(remaining()) + " left)");
    }
    std::string text(reinterpret_cast<const char*>(bytes_.data() + position_), length);
    position_ += length;
    return text;
  }

  // The next `size` bytes, inside the input.
  std::span<const std::byte> bytes(uint64_t size, const std::string& what) {
    need(size, what.c_str());
    const std::span<const std::byte> out = bytes_.subspan(position_, size);
    position_ += size;
    return out;
  }

  // A count of items that each take at least `min_item_bytes`: a count the remaining bytes cannot hold is a lie,
  // refused before anything is allocated for it.
  uint64_t count(const std::string& what, uint64_t min_item_bytes) {
    const uint64_t value = read<uint64_t>(what.c_str());
    if (value > remaining() / min_item_bytes) {
      fail(what + " is " + std::to_string(value) + " but only " + std::to_string(remaining()) +
           " bytes are left in the file");
    }
    return value;
  }

  [[noreturn]] void fail(const std::string& message) const { throw Error(name_ + ": GGUF " + message); }

 private:
  void need(uint64_t size, const char* what) const {
    if (size > remaining()) fail(std::string(what) + " runs past the end of the file");
  }

  std::span<const std::byte> bytes_;
  const std::string& name_;
  uint64_t position_ = 0;
};

bool known_value_type(uint32_t type) { return type <= static_cast<uint32_t>(GgufValueType::kFloat64); }

// Appends `count` elements of `type` to `value`: numbers as their bytes (each checked where a bit pattern is not a
// value minigen holds), strings one by one.
void read_elements(Cursor& cursor, GgufValueType type, uint64_t count, GgufValue& value, const std::string& where) {
  if (type == GgufValueType::kArray) cursor.fail(where + ": arrays of arrays are not supported");
  if (type == GgufValueType::kString) {
    value.strings.reserve(count);
    for (uint64_t i = 0; i < count; ++i) value.strings.push_back(cursor.string(where));
    return;
  }
  const std::size_t first = value.numbers.size();
  const std::span<const std::byte> bytes = cursor.bytes(count * gguf_number_bytes(type), where);
  value.numbers.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  for (uint64_t i = first / gguf_number_bytes(type); i < value.size(); ++i) {
    const int64_t element = value.integer(i);
    // Held as int64: no count or id minigen reads comes near 2^63.
    if (type == GgufValueType::kUint64 && element < 0) {
      cursor.fail(where + ": uint64 value " + std::to_string(static_cast<uint64_t>(element)) + " is too large");
    }
    if (type == GgufValueType::kBool && element > 1) {
      cursor.fail(where + ": bool value " + std::to_string(element) + " is neither 0 nor 1");
    }
  }
}

GgufValue read_value(Cursor& cursor, const std::string& key) {
  const std::string where = "metadata '" + key + "'";
  const uint32_t type = cursor.read<uint32_t>(where.c_str());
  if (!known_value_type(type)) cursor.fail(where + " has the unknown value type " + std::to_string(type));
  GgufValue value;
  value.type = static_cast<GgufValueType>(type);
  if (!value.is_array()) {
    read_elements(cursor, value.type, 1, value, where);
    return value;
  }
  const uint32_t element = cursor.read<uint32_t>(where.c_str());
  if (!known_value_type(element))
    cursor.fail(where + " is an array of the unknown value type " + std::to_string(element));
  value.element_type = static_cast<GgufValueType>(element);
  if (value.element_type == GgufValueType::kArray) cursor.fail(where + ": arrays of arrays are not supported");
  // A string takes at least its 8-byte length, a number its own width.
  const uint64_t min_bytes = value.element_type == GgufValueType::kString ? 8 : gguf_number_bytes(value.element_type);
  const uint64_t count = cursor.count(where + "'s element count", min_bytes);
  read_elements(cursor, value.element_type, count, value, where);
  return value;
}

uint32_t read_alignment(const GgufMetadata& metadata, Cursor& cursor) {
  for (const auto& [key, value] : metadata) {
    if (key != "general.alignment") continue;
    if (value.type != GgufValueType::kUint32) cursor.fail("metadata 'general.alignment' must be a uint32");
    const int64_t alignment = value.integer(0);
    // ggml rounds offsets up with a mask, which needs a power of two.
    if (alignment == 0 || (alignment & (alignment - 1)) != 0 || alignment > kMaxAlignment) {
      cursor.fail("metadata 'general.alignment' is " + std::to_string(alignment) +
                  "; it must be a power of two up to " + std::to_string(kMaxAlignment));
    }
    return static_cast<uint32_t>(alignment);
  }
  return kGgufDefaultAlignment;
}

bool supported_tensor_type(uint32_t type) {
  switch (static_cast<GgufTensorType>(type)) {
    case GgufTensorType::kF32:
    case GgufTensorType::kF16:
    case GgufTensorType::kQ4_0:
    case GgufTensorType::kQ4_1:
    case GgufTensorType::kQ5_0:
    case GgufTensorType::kQ5_1:
    case GgufTensorType::kQ8_0:
    case GgufTensorType::kQ4_K:
    case GgufTensorType::kQ5_K:
    case GgufTensorType::kQ6_K:
    case GgufTensorType::kBF16:
      return true;
  }
  return false;
}

// ggml's names for the types minigen does not read, so that a refusal says which one the file holds.
std::string other_ggml_type_name(uint32_t type) {
  static constexpr const char* kNames[] = {
      "F32",  "F16",  "Q4_0", "Q4_1", "",        "",       "Q5_0",    "Q5_1",  "Q8_0",   "Q8_1",  "Q2_K",  "Q3_K",
      "Q4_K", "Q5_K", "Q6_K", "Q8_K", "IQ2_XXS", "IQ2_XS", "IQ3_XXS", "IQ1_S", "IQ4_NL", "IQ3_S", "IQ2_S", "IQ4_XS",
      "I8",   "I16",  "I32",  "I64",  "F64",     "IQ1_M",  "BF16",    "",      "",       "",      "TQ1_0", "TQ2_0"};
  const char* name = type < std::size(kNames) ? kNames[type] : "";
  return *name != '\0' ? std::string(name) + " (" + std::to_string(type) + ")" : std::to_string(type);
}

GgufTensorInfo read_tensor_info(Cursor& cursor, uint32_t alignment) {
  GgufTensorInfo info;
  info.name = cursor.string("a tensor name");
  const std::string where = "tensor '" + info.name + "'";
  const uint32_t dim_count = cursor.read<uint32_t>(where.c_str());
  if (dim_count == 0 || dim_count > kMaxDims) {
    cursor.fail(where + " has " + std::to_string(dim_count) + " dimensions; 1 to " + std::to_string(kMaxDims) +
                " are allowed");
  }
  uint64_t elements = 1;
  for (uint32_t d = 0; d < dim_count; ++d) {
    const uint64_t dim = cursor.read<uint64_t>(where.c_str());
    if (dim == 0 || __builtin_mul_overflow(elements, dim, &elements) || elements > (uint64_t{1} << 48)) {
      cursor.fail(where + " has the dimension " + std::to_string(dim) + ", zero or too large");
    }
    info.dims.push_back(dim);
  }
  const uint32_t type = cursor.read<uint32_t>(where.c_str());
  if (!supported_tensor_type(type)) {
    cursor.fail(where + " has ggml type " + other_ggml_type_name(type) +
                "; minigen reads F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, Q5_K and Q6_K — quantize the "
                "F32 or F16 GGUF again with llama.cpp's llama-quantize to one of Q8_0, Q4_0, Q4_K_M, Q5_K_M or Q6_K");
  }
  info.type = static_cast<GgufTensorType>(type);
  // A block never straddles two rows: ne[0] is a whole number of blocks.
  if (info.dims[0] % gguf_block_values(info.type) != 0) {
    cursor.fail(where + " is " + gguf_type_name(info.type) + " but its first dimension " +
                std::to_string(info.dims[0]) + " is not a multiple of " + std::to_string(gguf_block_values(info.type)) +
                ", the values of one block");
  }
  info.byte_count = gguf_type_bytes(info.type, elements);
  info.offset = cursor.read<uint64_t>(where.c_str());
  if (info.offset % alignment != 0) {
    cursor.fail(where + " starts at data offset " + std::to_string(info.offset) + ", not a multiple of the alignment " +
                std::to_string(alignment));
  }
  return info;
}

void check_no_overlap(const std::vector<GgufTensorInfo>& tensors, Cursor& cursor) {
  std::vector<const GgufTensorInfo*> by_offset;
  for (const GgufTensorInfo& info : tensors) by_offset.push_back(&info);
  std::sort(by_offset.begin(), by_offset.end(),
            [](const GgufTensorInfo* a, const GgufTensorInfo* b) { return a->offset < b->offset; });
  for (std::size_t i = 1; i < by_offset.size(); ++i) {
    if (by_offset[i]->offset < by_offset[i - 1]->offset + by_offset[i - 1]->byte_count) {
      cursor.fail("the data of tensors '" + by_offset[i - 1]->name + "' and '" + by_offset[i]->name + "' overlap");
    }
  }
}

}  // namespace

uint64_t GgufTensorInfo::element_count() const {
  uint64_t count = 1;
  for (uint64_t dim : dims) count *= dim;  // checked against overflow when read
  return count;
}

const GgufValue* GgufFile::find(const std::string& key) const {
  for (const auto& [name, value] : metadata) {
    if (name == key) return &value;
  }
  return nullptr;
}

GgufFile read_gguf(std::span<const std::byte> bytes, const std::string& name) {
  Cursor cursor(bytes, name);
  if (bytes.size() < 4 || std::memcmp(bytes.data(), "GGUF", 4) != 0) {
    throw Error(name + ": not a GGUF file (it does not start with \"GGUF\")");
  }
  cursor.read<uint32_t>("magic");
  GgufFile file;
  file.version = cursor.read<uint32_t>("the version");
  if (file.version != 2 && file.version != 3) {
    cursor.fail("version " + std::to_string(file.version) + " is not supported (2 and 3 are)");
  }
  // A tensor info takes at least 8 (name length) + 4 + 8 + 4 + 8 bytes, a metadata entry 8 + 4 + 1.
  const uint64_t tensor_count = cursor.count("tensor count", 32);
  const uint64_t metadata_count = cursor.count("metadata count", 13);
  std::set<std::string> keys;
  for (uint64_t i = 0; i < metadata_count; ++i) {
    std::string key = cursor.string("a metadata key");
    if (!keys.insert(key).second) cursor.fail("metadata key '" + key + "' appears twice");
    GgufValue value = read_value(cursor, key);
    file.metadata.emplace_back(std::move(key), std::move(value));
  }
  file.alignment = read_alignment(file.metadata, cursor);
  if (tensor_count > cursor.remaining() / 32)
    cursor.fail("tensor count " + std::to_string(tensor_count) + " is too large");
  std::set<std::string> names;
  for (uint64_t i = 0; i < tensor_count; ++i) {
    file.tensors.push_back(read_tensor_info(cursor, file.alignment));
    if (!names.insert(file.tensors.back().name).second) {
      cursor.fail("tensor '" + file.tensors.back().name + "' appears twice");
    }
  }
  const uint64_t data_start = (cursor.position() + file.alignment - 1) / file.alignment * file.alignment;
  if (data_start > bytes.size() && !file.tensors.empty()) {
    cursor.fail("data section would start at byte " + std::to_string(data_start) + ", past the end of the file");
  }
  const uint64_t data_bytes = bytes.size() > data_start ? bytes.size() - data_start : 0;
  for (GgufTensorInfo& info : file.tensors) {
    if (info.offset > data_bytes || info.byte_count > data_bytes - info.offset) {
      cursor.fail("tensor '" + info.name + "' needs bytes [" + std::to_string(info.offset) + ", " +
                  std::to_string(info.offset + info.byte_count) + ") of a data section of " +
                  std::to_string(data_bytes) + " bytes");
    }
    info.bytes = bytes.subspan(data_start + info.offset, info.byte_count);
  }
  check_no_overlap(file.tensors, cursor);
  return file;
}

}  // namespace minigen
