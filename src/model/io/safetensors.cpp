#include "model/io/safetensors.h"

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <vector>

#include "core/error.h"
#include "core/file_io.h"
#include "core/process_memory.h"
#include "model/dtype.h"

namespace minigen {
namespace {

using nlohmann::json;

// The reference implementation refuses headers above 100 MB; a real header is a few hundred bytes per tensor.
constexpr uint64_t kMaxHeaderBytes = uint64_t{100} << 20;
// {"name": {"shape": [...]}} nests three levels; anything much deeper is not a safetensors header.
constexpr int kMaxHeaderDepth = 8;
// JSON values in the header: a tensor entry has about 15 (dtype, a few dims, two offsets, keys), so this allows some
// 250,000 tensors, while keeping the parsed tree (~16 bytes a value) near 64 MB instead of the ~1 GB that 100 MB of
// "[0,0,0,…" would build.
constexpr uint64_t kMaxHeaderValues = uint64_t{1} << 22;
constexpr const char* kMetadataKey = "__metadata__";

struct TensorRecord {
  std::string name;
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
  uint64_t begin = 0;  // byte range within the data section
  uint64_t end = 0;
};

struct ParsedFile {
  std::vector<TensorRecord> tensors;
  std::map<std::string, std::string> metadata;
  const std::byte* data = nullptr;  // first byte after the header
};

std::optional<DType> parse_dtype(const std::string& name) { return value_named(kDTypeNames, name); }

uint64_t read_u64_le(const std::byte* bytes) {
  uint64_t value = 0;
  for (int i = 7; i >= 0; --i) value = (value << 8) | std::to_integer<uint64_t>(bytes[i]);
  return value;
}

json parse_header_json(std::span<const std::byte> file, const std::string& file_name, uint64_t header_bytes) {
  std::set<std::string> top_level_names;
  uint64_t values = 0;
  // The callback sees every top-level key, which a plain parse would silently let a later duplicate overwrite.
  auto check_event = [&](int depth, json::parse_event_t event, json& parsed) {
    if (depth > kMaxHeaderDepth) throw Error(file_name + ": safetensors header is nested too deeply");
    if (event == json::parse_event_t::value && ++values > kMaxHeaderValues) {
      throw Error(file_name + ": safetensors header holds more than " + std::to_string(kMaxHeaderValues) +
                  " JSON values");
    }
    if (event == json::parse_event_t::key && depth == 1) {
      const auto& name = parsed.get_ref<const std::string&>();
      if (!top_level_names.insert(name).second) {
        throw Error(file_name + ": tensor '" + name + "' appears twice in the safetensors header");
      }
    }
    return true;
  };
  const char* text = reinterpret_cast<const char*>(file.data() + 8);  // the caller checked 8 + header_bytes
  try {
    return json::parse(text, text + header_bytes, check_event);
  } catch (const json::exception& error) {
    throw Error(file_name + ": safetensors header is not valid JSON: " + error.what());
  }
}

std::vector<int64_t> parse_shape(const json& shape_json, const std::string& where) {
  if (!shape_json.is_array()) throw Error(where + ": \"shape\" must be an array");
  std::vector<int64_t> shape;
  for (const json& dim : shape_json) {
    if (!dim.is_number_integer()) throw Error(where + ": \"shape\" holds a non-integer dimension");
    if (dim.is_number_unsigned() ? dim.get<uint64_t>() > INT64_MAX : dim.get<int64_t>() < 0) {
      throw Error(where + ": \"shape\" holds a negative or too large dimension " + dim.dump());
    }
    shape.push_back(dim.get<int64_t>());
  }
  return shape;
}

TensorRecord parse_tensor_record(const std::string& name, const json& entry, const std::string& file_name,
                                 uint64_t data_bytes) {
  const std::string where = file_name + ": tensor '" + name + "'";
  if (!entry.is_object()) throw Error(where + ": header entry is not an object");
  TensorRecord record;
  record.name = name;

  const auto dtype_it = entry.find("dtype");
  if (dtype_it == entry.end() || !dtype_it->is_string()) throw Error(where + ": missing string field \"dtype\"");
  const auto dtype = parse_dtype(dtype_it->get<std::string>());
  if (!dtype) {
    throw Error(where + " has dtype " + dtype_it->get<std::string>() +
                "; only F32, F16, BF16, I8 and U8 are supported");
  }
  record.dtype = *dtype;

  const auto shape_it = entry.find("shape");
  if (shape_it == entry.end()) throw Error(where + ": missing field \"shape\"");
  record.shape = parse_shape(*shape_it, where);

  const auto offsets_it = entry.find("data_offsets");
  if (offsets_it == entry.end() || !offsets_it->is_array() || offsets_it->size() != 2 ||
      !(*offsets_it)[0].is_number_unsigned() || !(*offsets_it)[1].is_number_unsigned()) {
    throw Error(where + ": \"data_offsets\" must be two non-negative integers");
  }
  record.begin = (*offsets_it)[0].get<uint64_t>();
  record.end = (*offsets_it)[1].get<uint64_t>();
  if (record.begin > record.end) throw Error(where + ": data_offsets begin > end");
  if (record.end > data_bytes) {
    throw Error(where + ": data_offsets end " + std::to_string(record.end) + " is beyond the " +
                std::to_string(data_bytes) + " data bytes in the file");
  }

  uint64_t expected_bytes = dtype_size_bytes(record.dtype);
  for (int64_t dim : record.shape) {
    if (__builtin_mul_overflow(expected_bytes, static_cast<uint64_t>(dim), &expected_bytes)) {
      throw Error(where + ": shape " + shape_string(record.shape) + " is too large");
    }
  }
  if (record.end - record.begin != expected_bytes) {
    throw Error(where + ": shape " + shape_string(record.shape) + " of " + dtype_name(record.dtype) + " needs " +
                std::to_string(expected_bytes) + " bytes but data_offsets give " +
                std::to_string(record.end - record.begin));
  }
  return record;
}

std::map<std::string, std::string> parse_metadata(const json& metadata_json, const std::string& file_name) {
  if (!metadata_json.is_object()) throw Error(file_name + ": \"__metadata__\" must be an object of strings");
  std::map<std::string, std::string> metadata;
  for (const auto& [key, value] : metadata_json.items()) {
    if (!value.is_string()) throw Error(file_name + ": \"__metadata__\" value of '" + key + "' is not a string");
    metadata[key] = value.get<std::string>();
  }
  return metadata;
}

// Ranges must not share bytes: otherwise a file could alias one tensor's data as another's.
void check_no_overlap(std::vector<TensorRecord>& tensors, const std::string& file_name) {
  std::vector<const TensorRecord*> by_offset;
  for (const TensorRecord& record : tensors) {
    if (record.end > record.begin) by_offset.push_back(&record);  // empty tensors hold no bytes
  }
  std::sort(by_offset.begin(), by_offset.end(),
            [](const TensorRecord* a, const TensorRecord* b) { return a->begin < b->begin; });
  for (std::size_t i = 1; i < by_offset.size(); ++i) {
    if (by_offset[i]->begin < by_offset[i - 1]->end) {
      throw Error(file_name + ": the data of tensors '" + by_offset[i - 1]->name + "' and '" + by_offset[i]->name +
                  "' overlap");
    }
  }
}

ParsedFile parse_file(std::span<const std::byte> file, const std::string& file_name) {
  if (file.size() < 8) {
    throw Error(file_name + ": too small to be a safetensors file (" + std::to_string(file.size()) + " bytes)");
  }
  const uint64_t header_bytes = read_u64_le(file.data());
  if (header_bytes > file.size() - 8) {
    throw Error(file_name + ": safetensors header length " + std::to_string(header_bytes) +
                " is beyond the end of the file (" + std::to_string(file.size()) + " bytes)");
  }
  if (header_bytes > kMaxHeaderBytes) {
    throw Error(file_name + ": safetensors header length " + std::to_string(header_bytes) + " exceeds 100 MB");
  }
  const json header = parse_header_json(file, file_name, header_bytes);
  if (!header.is_object()) throw Error(file_name + ": safetensors header is not a JSON object");

  ParsedFile parsed;
  parsed.data = file.data() + 8 + header_bytes;
  const uint64_t data_bytes = file.size() - 8 - header_bytes;
  for (const auto& [name, entry] : header.items()) {
    if (name == kMetadataKey) {
      parsed.metadata = parse_metadata(entry, file_name);
    } else {
      parsed.tensors.push_back(parse_tensor_record(name, entry, file_name, data_bytes));
    }
  }
  check_no_overlap(parsed.tensors, file_name);
  return parsed;
}

// The 8-byte length and the JSON header (padded with spaces to a multiple of 8, which keeps the data 8-byte aligned)
// of `tensors` written in name order, each as `dtype`, or as its own stored_dtype when `dtype` is empty.
// `file_name` starts error messages.
DType written_dtype(const HostTensor& tensor, std::optional<DType> dtype) {
  return dtype.value_or(tensor.stored_dtype);
}

std::string header_bytes_for(const TensorMap& tensors, std::optional<DType> dtype,
                             const std::map<std::string, std::string>& metadata, const std::string& file_name) {
  json header = json::object();
  if (!metadata.empty()) header[kMetadataKey] = metadata;
  uint64_t offset = 0;
  for (const auto& [name, tensor] : tensors) {
    const uint64_t element_bytes = dtype_size_bytes(written_dtype(tensor, dtype));
    if (name == kMetadataKey) throw Error(file_name + ": a tensor cannot be named \"__metadata__\"");
    for (int64_t dim : tensor.shape) {
      if (dim < 0) throw Error(file_name + ": tensor '" + name + "' has a negative dimension");
    }
    const int64_t count = tensor.element_count();
    if (static_cast<uint64_t>(count) != tensor.values.size()) {
      throw Error(file_name + ": tensor '" + name + "' has shape " + shape_string(tensor.shape) + " but " +
                  std::to_string(tensor.values.size()) + " values");
    }
    const uint64_t bytes = static_cast<uint64_t>(count) * element_bytes;
    header[name] = {{"dtype", dtype_name(written_dtype(tensor, dtype))},
                    {"shape", tensor.shape},
                    {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }

  std::string header_text;
  try {
    header_text = header.dump();
  } catch (const json::exception& error) {  // e.g. a name that is not valid UTF-8
    throw Error(file_name + ": cannot write the safetensors header: " + error.what());
  }
  header_text.append((8 - header_text.size() % 8) % 8, ' ');
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((header_text.size() >> (8 * i)) & 0xff);
  return out + header_text;
}

}  // namespace

TensorMap read_safetensors(std::span<const std::byte> bytes, const std::string& name,
                           const TensorReadOptions& options) {
  const ParsedFile parsed = parse_file(bytes, name);
  TensorMap tensors;
  for (const TensorRecord& record : parsed.tensors) {
    HostTensor tensor;
    tensor.shape = record.shape;
    tensor.stored_dtype = record.dtype;
    // The byte count was checked against shape · dtype size, so the element count cannot overflow here.
    const std::size_t count = (record.end - record.begin) / dtype_size_bytes(record.dtype);
    if (options.shapes_only) {
      tensor.shape_only = true;
      tensors.emplace(record.name, std::move(tensor));
      continue;
    }
    if (options.keep_fp16_matrices && record.dtype == DType::kF16 && record.shape.size() == 2) {
      const std::byte* data = parsed.data + record.begin;
      tensor.f16_bits.resize(count);
      if (count > 0) std::memcpy(tensor.f16_bits.data(), data, count * sizeof(uint16_t));  // little-endian, as the file
      tensors.emplace(record.name, std::move(tensor));
      continue;
    }
    tensor.values.reserve(count);
    prefer_huge_pages(tensor.values.data(), count * sizeof(float));
    tensor.values.resize(count);
    decode_to_f32(record.dtype, parsed.data + record.begin, count, tensor.values.data());
    tensors.emplace(record.name, std::move(tensor));
  }
  return tensors;
}

TensorMap read_safetensors(const std::filesystem::path& path, const TensorReadOptions& options) {
  const MappedFile file(path);
  return read_safetensors(file.bytes(), path.string(), options);
}

std::map<std::string, std::string> read_safetensors_metadata(std::span<const std::byte> bytes,
                                                             const std::string& name) {
  return parse_file(bytes, name).metadata;
}

std::map<std::string, std::string> read_safetensors_metadata(const std::filesystem::path& path) {
  const MappedFile file(path);
  return read_safetensors_metadata(file.bytes(), path.string());
}

std::string safetensors_bytes(const TensorMap& tensors, DType dtype,
                              const std::map<std::string, std::string>& metadata) {
  std::string out = header_bytes_for(tensors, dtype, metadata, "safetensors");
  const uint64_t element_bytes = dtype_size_bytes(dtype);
  for (const auto& [name, tensor] : tensors) {
    const std::size_t start = out.size();
    out.resize(start + tensor.values.size() * element_bytes);
    encode_from_f32(dtype, tensor.values.data(), tensor.values.size(),
                    reinterpret_cast<std::byte*>(out.data() + start));
  }
  return out;
}

namespace {

void write_tensors(const std::filesystem::path& path, const TensorMap& tensors, std::optional<DType> dtype,
                   const std::map<std::string, std::string>& metadata) {
  const std::string header = header_bytes_for(tensors, dtype, metadata, path.string());
  check_output_file(path);
  // A new file under a random name beside `path` (never a link planted there), renamed into place when complete.
  ExclusiveTemporaryFile output(path);
  output.write(header.data(), header.size());
  // Convert in chunks so that writing a large model does not need a second full-size buffer.
  constexpr std::size_t kChunkElements = std::size_t{1} << 18;
  std::vector<std::byte> chunk(kChunkElements * sizeof(float));
  for (const auto& [name, tensor] : tensors) {
    const DType element = written_dtype(tensor, dtype);
    for (std::size_t start = 0; start < tensor.values.size(); start += kChunkElements) {
      const std::size_t count = std::min(kChunkElements, tensor.values.size() - start);
      encode_from_f32(element, tensor.values.data() + start, count, chunk.data());
      output.write(chunk.data(), count * dtype_size_bytes(element));
    }
  }
  output.commit(/*sync=*/true);
}

}  // namespace

void write_safetensors(const std::filesystem::path& path, const TensorMap& tensors, DType dtype,
                       const std::map<std::string, std::string>& metadata) {
  write_tensors(path, tensors, dtype, metadata);
}

void write_safetensors_as_stored(const std::filesystem::path& path, const TensorMap& tensors,
                                 const std::map<std::string, std::string>& metadata) {
  write_tensors(path, tensors, std::nullopt, metadata);
}

}  // namespace minigen
