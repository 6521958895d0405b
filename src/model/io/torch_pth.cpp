#include "model/io/torch_pth.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/error.h"
#include "core/process_memory.h"
#include "model/dtype.h"
#include "model/io/pickle_reader.h"
#include "model/io/zip_reader.h"

namespace minigen {
namespace {

// Host object tags (PickleValue::text of a kHostObject); int_value indexes the matching table or vector.
constexpr std::string_view kGlobalTag = "global";
constexpr std::string_view kStorageTag = "storage";
constexpr std::string_view kTensorTag = "tensor";

// Keys under which training scripts commonly nest the state dict in a larger checkpoint.
constexpr std::array<std::string_view, 4> kNestedStateDictKeys = {"model", "state_dict", "model_state_dict", "module"};
// A tensor may not be bigger than its storage (no expanded views), and all tensors together may not expand the file
// more than this many fp32 elements per file byte (storages shared by many tensors), so that a small hostile file
// cannot demand unbounded memory. Real state dicts stay near 0.5 (fp16) or 0.25 (fp32).
constexpr uint64_t kMaxElementsPerFileByte = 8;

// What one element of a storage or tensor is. `dtype` is empty for element types minigen does not convert.
struct ElementType {
  std::string_view torch_name;
  std::optional<DType> dtype;
  uint64_t size_bytes;
};

enum class GlobalRole { kOrderedDict, kRebuildTensorV2, kRebuildTensorV3, kRebuildParameter, kStorageType, kDtype };

struct KnownGlobal {
  std::string_view module;
  std::string_view name;
  GlobalRole role;
  ElementType element{};  // for kStorageType and kDtype
};

// The globals a state dict pickle uses. torch names storages by legacy typed classes (torch.HalfStorage) and, for a
// storage saved untyped, torch.UntypedStorage with the dtype then given to _rebuild_tensor_v3.
constexpr KnownGlobal kKnownGlobals[] = {
    {"collections", "OrderedDict", GlobalRole::kOrderedDict},
    {"torch._utils", "_rebuild_tensor_v2", GlobalRole::kRebuildTensorV2},
    {"torch._utils", "_rebuild_tensor_v3", GlobalRole::kRebuildTensorV3},
    {"torch._utils", "_rebuild_parameter", GlobalRole::kRebuildParameter},
    {"torch", "HalfStorage", GlobalRole::kStorageType, {"float16", DType::kF16, 2}},
    {"torch", "BFloat16Storage", GlobalRole::kStorageType, {"bfloat16", DType::kBF16, 2}},
    {"torch", "FloatStorage", GlobalRole::kStorageType, {"float32", DType::kF32, 4}},
    {"torch", "DoubleStorage", GlobalRole::kStorageType, {"float64", std::nullopt, 8}},
    {"torch", "LongStorage", GlobalRole::kStorageType, {"int64", std::nullopt, 8}},
    {"torch", "IntStorage", GlobalRole::kStorageType, {"int32", std::nullopt, 4}},
    {"torch", "ShortStorage", GlobalRole::kStorageType, {"int16", std::nullopt, 2}},
    {"torch", "CharStorage", GlobalRole::kStorageType, {"int8", std::nullopt, 1}},
    {"torch", "ByteStorage", GlobalRole::kStorageType, {"uint8", std::nullopt, 1}},
    {"torch", "BoolStorage", GlobalRole::kStorageType, {"bool", std::nullopt, 1}},
    {"torch", "UntypedStorage", GlobalRole::kStorageType, {"untyped bytes", std::nullopt, 1}},
    {"torch.storage", "UntypedStorage", GlobalRole::kStorageType, {"untyped bytes", std::nullopt, 1}},
    {"torch", "float16", GlobalRole::kDtype, {"float16", DType::kF16, 2}},
    {"torch", "half", GlobalRole::kDtype, {"float16", DType::kF16, 2}},
    {"torch", "bfloat16", GlobalRole::kDtype, {"bfloat16", DType::kBF16, 2}},
    {"torch", "float32", GlobalRole::kDtype, {"float32", DType::kF32, 4}},
    {"torch", "float", GlobalRole::kDtype, {"float32", DType::kF32, 4}},
    {"torch", "float64", GlobalRole::kDtype, {"float64", std::nullopt, 8}},
    {"torch", "double", GlobalRole::kDtype, {"float64", std::nullopt, 8}},
    {"torch", "int64", GlobalRole::kDtype, {"int64", std::nullopt, 8}},
    {"torch", "long", GlobalRole::kDtype, {"int64", std::nullopt, 8}},
    {"torch", "int32", GlobalRole::kDtype, {"int32", std::nullopt, 4}},
    {"torch", "int", GlobalRole::kDtype, {"int32", std::nullopt, 4}},
    {"torch", "int16", GlobalRole::kDtype, {"int16", std::nullopt, 2}},
    {"torch", "short", GlobalRole::kDtype, {"int16", std::nullopt, 2}},
    {"torch", "int8", GlobalRole::kDtype, {"int8", std::nullopt, 1}},
    {"torch", "uint8", GlobalRole::kDtype, {"uint8", std::nullopt, 1}},
    {"torch", "bool", GlobalRole::kDtype, {"bool", std::nullopt, 1}},
    {"torch", "float8_e4m3fn", GlobalRole::kDtype, {"float8_e4m3fn", std::nullopt, 1}},
    {"torch", "float8_e5m2", GlobalRole::kDtype, {"float8_e5m2", std::nullopt, 1}},
};

struct StorageRecord {
  std::string key;  // the archive entry is <prefix>data/<key>
  ElementType element;
  uint64_t element_count = 0;
};

struct TensorRecord {
  std::size_t storage = 0;  // index into storages
  ElementType element;      // the storage's, or the dtype _rebuild_tensor_v3 names
  int64_t offset = 0;       // in elements of `element`
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;
};

// Gives meaning to the globals, calls and persistent ids of a state dict pickle, and refuses everything else.
class TorchPickleHost : public PickleHost {
 public:
  explicit TorchPickleHost(std::string source) : source_(std::move(source)) {}

  const std::vector<StorageRecord>& storages() const { return storages_; }
  const std::vector<TensorRecord>& tensors() const { return tensors_; }

  PickleValue* global(PickleArena& arena, const std::string& module, const std::string& name) override {
    for (std::size_t index = 0; index < std::size(kKnownGlobals); ++index) {
      if (kKnownGlobals[index].module == module && kKnownGlobals[index].name == name) {
        return host_object(arena, kGlobalTag, index);
      }
    }
    fail("unsupported global '" + module + "." + name + "' (only state dicts of tensors can be read)");
  }

  PickleValue* call(PickleArena& arena, const PickleValue& callable, const PickleValue& arguments) override {
    if (!callable.is_host_object(kGlobalTag)) fail(std::string("call of a ") + pickle_kind_name(callable.kind));
    const KnownGlobal& function = kKnownGlobals[static_cast<std::size_t>(callable.int_value)];
    switch (function.role) {
      case GlobalRole::kOrderedDict:
        return make_ordered_dict(arena, arguments);
      case GlobalRole::kRebuildTensorV2:
        return rebuild_tensor(arena, arguments, /*dtype_argument=*/std::nullopt);
      case GlobalRole::kRebuildTensorV3:
        return rebuild_tensor(arena, arguments, /*dtype_argument=*/6);
      case GlobalRole::kRebuildParameter:
        // nn.Parameter(data, requires_grad, hooks): the data is the tensor.
        if (arguments.items.empty() || !arguments.items[0]->is_host_object(kTensorTag)) {
          fail("_rebuild_parameter without a tensor");
        }
        return arguments.items[0];
      case GlobalRole::kStorageType:
      case GlobalRole::kDtype:
        break;
    }
    fail("'" + std::string(function.module) + "." + std::string(function.name) + "' cannot be called");
  }

  // torch writes ('storage', storage_type, key, location, element_count), newer versions with a sixth item that
  // is None unless the storage is a view.
  PickleValue* persistent_load(PickleArena& arena, const PickleValue& persistent_id) override {
    const auto& items = persistent_id.items;
    if (persistent_id.kind != PickleKind::kTuple || items.size() < 5 || items.size() > 6 || !items[0]->is_string() ||
        items[0]->text != kStorageTag) {
      fail("persistent id is not a ('storage', type, key, location, size) tuple");
    }
    const KnownGlobal* storage_type = known_global(*items[1], GlobalRole::kStorageType);
    if (storage_type == nullptr) fail("persistent id names no storage type");
    if (!items[2]->is_string() || !items[3]->is_string()) fail("persistent id has a non-string key or location");
    if (items[4]->kind != PickleKind::kInt || items[4]->int_value < 0) fail("persistent id has an invalid size");
    if (items.size() == 6 && items[5]->kind != PickleKind::kNone) fail("storage views are not supported");

    // Tensors sharing a storage repeat its persistent id; they must agree on what it is.
    const std::string& key = items[2]->text;
    const auto [found, inserted] = storage_index_by_key_.emplace(key, storages_.size());
    if (inserted) {
      storages_.push_back({key, storage_type->element, static_cast<uint64_t>(items[4]->int_value)});
    } else if (storages_[found->second].element.torch_name != storage_type->element.torch_name ||
               storages_[found->second].element_count != static_cast<uint64_t>(items[4]->int_value)) {
      fail("storage '" + key + "' is declared twice with different types or sizes");
    }
    return host_object(arena, kStorageTag, found->second);
  }

  // OrderedDict keeps attributes such as a state dict's `_metadata` in its BUILD state, and tensors with Python
  // attributes do the same; none of it matters for the values.
  void build(PickleValue& object, const PickleValue&) override {
    if (object.kind != PickleKind::kDict && !object.is_host_object(kTensorTag)) {
      fail(std::string("BUILD on a ") + pickle_kind_name(object.kind));
    }
  }

  [[noreturn]] void fail(const std::string& problem) const { throw Error(source_ + ": " + problem); }

 private:
  static PickleValue* host_object(PickleArena& arena, std::string_view tag, std::size_t index) {
    PickleValue* value = arena.make(PickleKind::kHostObject);
    value->text = tag;
    value->int_value = static_cast<int64_t>(index);
    return value;
  }

  static const KnownGlobal* known_global(const PickleValue& value, GlobalRole role) {
    if (!value.is_host_object(kGlobalTag)) return nullptr;
    const KnownGlobal& known = kKnownGlobals[static_cast<std::size_t>(value.int_value)];
    return known.role == role ? &known : nullptr;
  }

  PickleValue* make_ordered_dict(PickleArena& arena, const PickleValue& arguments) {
    PickleValue* dict = arena.make(PickleKind::kDict);
    if (arguments.items.empty()) return dict;
    // OrderedDict([(key, value), ...]), as older picklers wrote it.
    const PickleValue& pairs = *arguments.items[0];
    if (arguments.items.size() != 1 || (pairs.kind != PickleKind::kList && pairs.kind != PickleKind::kTuple)) {
      fail("OrderedDict called with unexpected arguments");
    }
    for (const PickleValue* pair : pairs.items) {
      if (pair->kind != PickleKind::kTuple || pair->items.size() != 2) fail("OrderedDict item is not a pair");
      dict->entries.emplace_back(pair->items[0], pair->items[1]);
    }
    return dict;
  }

  std::vector<int64_t> int_tuple(const PickleValue& value, const char* what) const {
    if (value.kind != PickleKind::kTuple) fail(std::string("tensor ") + what + " is not a tuple");
    std::vector<int64_t> numbers;
    for (const PickleValue* item : value.items) {
      if (item->kind != PickleKind::kInt || item->int_value < 0) {
        fail(std::string("tensor ") + what + " holds a negative or non-integer entry");
      }
      numbers.push_back(item->int_value);
    }
    return numbers;
  }

  // _rebuild_tensor_v2(storage, offset, size, stride, requires_grad, backward_hooks[, metadata]) and
  // _rebuild_tensor_v3(..., backward_hooks, dtype[, metadata]).
  PickleValue* rebuild_tensor(PickleArena& arena, const PickleValue& arguments, std::optional<std::size_t> dtype_at) {
    const auto& items = arguments.items;
    const std::size_t required = dtype_at ? 7 : 6;
    if (items.size() < required || items.size() > required + 1) fail("tensor rebuild call has the wrong arity");
    if (!items[0]->is_host_object(kStorageTag)) fail("tensor rebuild call without a storage");
    if (items[1]->kind != PickleKind::kInt || items[1]->int_value < 0) fail("tensor has an invalid storage offset");
    TensorRecord tensor;
    tensor.storage = static_cast<std::size_t>(items[0]->int_value);
    tensor.element = storages_[tensor.storage].element;
    tensor.offset = items[1]->int_value;
    tensor.sizes = int_tuple(*items[2], "size");
    tensor.strides = int_tuple(*items[3], "stride");
    if (tensor.sizes.size() != tensor.strides.size()) fail("tensor size and stride differ in length");
    if (dtype_at) {
      const KnownGlobal* dtype = known_global(*items[*dtype_at], GlobalRole::kDtype);
      if (dtype == nullptr) fail("_rebuild_tensor_v3 without a dtype");
      tensor.element = dtype->element;
    }
    tensors_.push_back(std::move(tensor));
    return host_object(arena, kTensorTag, tensors_.size() - 1);
  }

  std::string source_;
  std::vector<StorageRecord> storages_;
  std::unordered_map<std::string, std::size_t> storage_index_by_key_;
  std::vector<TensorRecord> tensors_;
};

bool holds_tensor(const PickleValue& dict) {
  for (const auto& [key, value] : dict.entries) {
    if (value->is_host_object(kTensorTag)) return true;
  }
  return false;
}

// The dict of tensors in the pickle: the pickled object itself, or a dict under one of the usual keys.
const PickleValue& find_state_dict(const PickleValue& root, const std::string& source) {
  if (root.kind != PickleKind::kDict) {
    throw Error(source + ": holds a " + pickle_kind_name(root.kind) + ", not a state dict");
  }
  if (root.entries.empty() || holds_tensor(root)) return root;
  for (std::string_view key : kNestedStateDictKeys) {
    const PickleValue* nested = root.find(key);
    if (nested != nullptr && nested->kind == PickleKind::kDict) return *nested;
  }
  throw Error(source + ": holds no tensors, neither at the top level nor under 'model' or 'state_dict'");
}

// Loads each storage's archive entry once, however many tensors view it.
class StorageBytes {
 public:
  StorageBytes(const ZipReader& archive, std::string prefix, const std::vector<StorageRecord>& storages)
      : archive_(archive), prefix_(std::move(prefix)), storages_(storages), loaded_(storages.size()) {}

  // The storage's bytes: exactly element_count · element size, which the archive entry must hold, no more and no
  // less (checked on the central directory's size, before anything is inflated). `where` names the tensor that
  // needs them, for the error message.
  std::span<const std::byte> get(std::size_t index, const std::string& where) {
    const StorageRecord& storage = storages_[index];
    const std::string entry_name = prefix_ + "data/" + storage.key;
    if (!loaded_[index]) {
      const ZipEntry* entry = archive_.find(entry_name);
      if (entry == nullptr) {
        throw Error(where + ": its storage '" + storage.key + "' is missing (no entry '" + entry_name + "')");
      }
      uint64_t declared_bytes = 0;
      const bool overflow = __builtin_mul_overflow(storage.element_count, storage.element.size_bytes, &declared_bytes);
      if (overflow || declared_bytes != entry->uncompressed_size) {
        const char* relation = overflow || declared_bytes > entry->uncompressed_size ? "fewer" : "more";
        throw Error(where + ": storage entry '" + entry_name + "' holds " + std::to_string(entry->uncompressed_size) +
                    " bytes, " + relation + " than its " + std::to_string(storage.element_count) + " elements of " +
                    std::string(storage.element.torch_name) + " need");
      }
      loaded_[index] = archive_.read(*entry, declared_bytes);
    }
    return loaded_[index]->bytes();
  }

 private:
  const ZipReader& archive_;
  std::string prefix_;
  const std::vector<StorageRecord>& storages_;
  std::vector<std::optional<ZipEntryData>> loaded_;
};

void check_supported_dtype(const TensorRecord& record, const std::string& where) {
  if (!record.element.dtype) {
    throw Error(where + " has dtype " + std::string(record.element.torch_name) +
                "; only float16, bfloat16 and float32 can be read");
  }
}

// A 2-D fp16 view's bits, row-major (TensorReadOptions::keep_fp16_matrices); materialize has checked its reach.
void keep_fp16_bits(const TensorRecord& record, std::span<const std::byte> storage, std::size_t count,
                    HostTensor& tensor) {
  tensor.f16_bits.resize(count);
  if (count == 0) return;
  const std::byte* base = storage.data() + static_cast<uint64_t>(record.offset) * sizeof(uint16_t);
  const int64_t rows = record.sizes[0], cols = record.sizes[1];
  for (int64_t r = 0; r < rows; ++r) {
    uint16_t* out = tensor.f16_bits.data() + r * cols;
    const std::byte* row = base + static_cast<uint64_t>(r * record.strides[0]) * sizeof(uint16_t);
    if (record.strides[1] == 1 || cols == 1) {
      std::memcpy(out, row, static_cast<std::size_t>(cols) * sizeof(uint16_t));
      continue;
    }
    for (int64_t c = 0; c < cols; ++c) {
      std::memcpy(out + c, row + static_cast<uint64_t>(c * record.strides[1]) * sizeof(uint16_t), sizeof(uint16_t));
    }
  }
}

// Copies a (possibly strided) view out of its storage, after checking that every element it reaches lies inside.
// `max_count` is how many more values the caller may still hold; a larger tensor is refused before it is allocated.
HostTensor materialize(const TensorRecord& record, std::span<const std::byte> storage, const std::string& where,
                       uint64_t max_count, const TensorReadOptions& options) {
  check_supported_dtype(record, where);
  const DType dtype = *record.element.dtype;
  const uint64_t element_bytes = record.element.size_bytes;
  const uint64_t storage_elements = storage.size() / element_bytes;

  uint64_t count = 1;
  uint64_t last_index = static_cast<uint64_t>(record.offset);  // offset + Σ (size − 1) · stride
  bool overflow = false;
  for (std::size_t dim = 0; dim < record.sizes.size(); ++dim) {
    const uint64_t size = static_cast<uint64_t>(record.sizes[dim]);
    overflow |= __builtin_mul_overflow(count, size, &count);
    uint64_t reach = 0;
    if (size > 0) overflow |= __builtin_mul_overflow(size - 1, static_cast<uint64_t>(record.strides[dim]), &reach);
    overflow |= __builtin_add_overflow(last_index, reach, &last_index);
  }
  const std::string shape_text = shape_string(record.sizes);
  if (overflow) throw Error(where + ": shape " + shape_text + " with its strides is too large");
  if (count > 0 && last_index >= storage_elements) {
    throw Error(where + ": shape " + shape_text + " at offset " + std::to_string(record.offset) + " reaches element " +
                std::to_string(last_index) + " but its storage holds only " + std::to_string(storage_elements));
  }
  if (count > storage_elements) {
    throw Error(where + ": has more elements than its storage (expanded views are not supported)");
  }
  if (count > max_count) {
    throw Error(where +
                ": the tensors hold far more values than the file has bytes (storages shared by many "
                "tensors?)");
  }

  HostTensor tensor;
  tensor.shape = record.sizes;
  tensor.stored_dtype = dtype;
  if (options.shapes_only) {
    tensor.shape_only = true;
    return tensor;
  }
  if (options.keep_fp16_matrices && dtype == DType::kF16 && record.sizes.size() == 2) {
    keep_fp16_bits(record, storage, static_cast<std::size_t>(count), tensor);
    return tensor;
  }
  tensor.values.reserve(static_cast<std::size_t>(count));
  prefer_huge_pages(tensor.values.data(), static_cast<std::size_t>(count) * sizeof(float));
  tensor.values.resize(static_cast<std::size_t>(count));
  if (count == 0) return tensor;

  bool contiguous = true;
  int64_t expected_stride = 1;
  for (std::size_t dim = record.sizes.size(); dim-- > 0;) {
    if (record.sizes[dim] != 1 && record.strides[dim] != expected_stride) contiguous = false;
    expected_stride *= record.sizes[dim];
  }
  const std::byte* base = storage.data() + static_cast<uint64_t>(record.offset) * element_bytes;
  if (contiguous) {
    decode_to_f32(dtype, base, tensor.values.size(), tensor.values.data());
    return tensor;
  }
  // Walk the index like an odometer, keeping the storage position in step; the bounds check above covers all.
  std::vector<int64_t> index(record.sizes.size(), 0);
  uint64_t position = 0;
  for (float& value : tensor.values) {
    decode_to_f32(dtype, base + position * element_bytes, 1, &value);
    for (std::size_t dim = record.sizes.size(); dim-- > 0;) {
      const uint64_t stride = static_cast<uint64_t>(record.strides[dim]);
      if (++index[dim] < record.sizes[dim]) {
        position += stride;
        break;
      }
      position -= stride * static_cast<uint64_t>(index[dim] - 1);
      index[dim] = 0;
    }
  }
  return tensor;
}

// torch names the archive's top folder after the file (1.x) or "archive" (2.x); find it through data.pkl.
std::string find_archive_prefix(const ZipReader& archive) {
  std::optional<std::string> prefix;
  for (const ZipEntry& entry : archive.entries()) {
    const std::string_view name = entry.name;
    constexpr std::string_view kPickleName = "data.pkl";
    if (!name.ends_with(kPickleName)) continue;
    const std::string_view folder = name.substr(0, name.size() - kPickleName.size());
    const bool top_level = folder.empty() || (folder.ends_with('/') && folder.find('/') == folder.size() - 1);
    if (!top_level) continue;
    if (prefix) throw Error(archive.name() + ": archive holds more than one data.pkl");
    prefix = std::string(folder);
  }
  if (!prefix) throw Error(archive.name() + ": not a torch.save archive (it holds no data.pkl)");
  return *prefix;
}

void check_byte_order(const ZipReader& archive, const std::string& prefix) {
  const ZipEntry* byte_order = archive.find(prefix + "byteorder");
  if (byte_order == nullptr) return;  // older torch wrote none, and only little-endian
  const ZipEntryData data = archive.read(*byte_order, /*max_bytes=*/16);  // "little" or "big"
  const std::string_view text(reinterpret_cast<const char*>(data.bytes().data()), data.bytes().size());
  if (text != "little") throw Error(archive.name() + ": tensors are stored big-endian; not supported");
}

}  // namespace

TensorMap read_torch_pth(std::span<const std::byte> bytes, const std::string& name, const TensorReadOptions& options) {
  std::optional<ZipReader> opened;
  try {
    opened.emplace(bytes, name);
  } catch (const Error&) {
    // torch.save before PyTorch 1.6 wrote a bare pickle stream, not a zip archive; name that case plainly.
    if (!bytes.empty() && bytes[0] == std::byte{0x80}) {
      throw Error(name +
                  ": legacy torch.save format (before PyTorch 1.6) is not supported; re-save it with a newer "
                  "torch");
    }
    throw;
  }
  const ZipReader& archive = *opened;
  const std::string prefix = find_archive_prefix(archive);
  check_byte_order(archive, prefix);

  const std::string pickle_name = prefix + "data.pkl";
  const std::string source = name + " (" + pickle_name + ")";
  const ZipEntryData pickle_bytes = archive.read(*archive.find(pickle_name));
  // Every opcode makes at most one value, so twice the pickle's size bounds what a valid pickle can need; the fixed
  // cap (about 400 MB of values, some 200,000 tensors' worth) bounds what a hostile one can make us hold.
  constexpr std::size_t kMaxPickleValues = std::size_t{1} << 22;
  PickleArena arena(std::min(pickle_bytes.bytes().size() * 2 + 1024, kMaxPickleValues), source);
  TorchPickleHost host(source);
  const PickleValue* root = read_pickle(pickle_bytes.bytes(), host, arena, source);
  const PickleValue& state_dict = find_state_dict(*root, source);

  StorageBytes storages(archive, prefix, host.storages());
  const uint64_t max_total_elements = kMaxElementsPerFileByte * archive.archive_size() + 1024;
  uint64_t total_elements = 0;
  TensorMap tensors;
  for (const auto& [key, value] : state_dict.entries) {
    if (!key->is_string()) throw Error(source + ": state dict key is a " + pickle_kind_name(key->kind));
    const std::string where = name + ": tensor '" + key->text + "'";
    if (!value->is_host_object(kTensorTag)) {
      throw Error(where + " is a " + pickle_kind_name(value->kind) + ", not a tensor");
    }
    const TensorRecord& record = host.tensors()[static_cast<std::size_t>(value->int_value)];
    check_supported_dtype(record, where);
    HostTensor tensor =
        materialize(record, storages.get(record.storage, where), where, max_total_elements - total_elements, options);
    total_elements += static_cast<uint64_t>(tensor.element_count());
    tensors[key->text] = std::move(tensor);
  }
  return tensors;
}

TensorMap read_torch_pth(const std::filesystem::path& path, const TensorReadOptions& options) {
  const MappedFile file(path);
  return read_torch_pth(file.bytes(), path.string(), options);
}

}  // namespace minigen
