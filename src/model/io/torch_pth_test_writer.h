#pragma once
// Test-only writer of torch.save-compatible archives, so that the .pth reader can be tested without torch: a zip
// archive (STORED or DEFLATE entries, optionally with zip64 records) and protocol-2 pickles built opcode by opcode,
// including deliberately broken ones.
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "model/dtype.h"
#include "model/io/safetensors.h"
#include "model/tensor.h"

namespace minigen::testing {

using Bytes = std::string;  // raw bytes; std::string keeps the helpers short

inline void append_le(Bytes& out, uint64_t value, int byte_count) {
  for (int i = 0; i < byte_count; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

class ZipTestWriter {
 public:
  // Adds an entry; `deflate` compresses it with zlib's raw DEFLATE.
  void add(const std::string& name, const Bytes& data, bool deflate = false) {
    const uint32_t crc =
        static_cast<uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(data.data()), static_cast<uInt>(data.size())));
    add_raw(name, deflate ? 8 : 0, deflate ? deflate_raw(data) : data, data.size(), crc);
  }

  // Adds an entry whose stored bytes and declared uncompressed size are taken as given (for hostile archives).
  void add_raw(const std::string& name, uint16_t method, const Bytes& stored, uint64_t declared_size,
               uint32_t crc = 0) {
    entries_.push_back({name, method, crc, stored.size(), declared_size, body_.size()});
    const bool zip64 = force_zip64_;
    Bytes extra;
    if (zip64) {
      append_le(extra, 1, 2);
      append_le(extra, 16, 2);
      append_le(extra, declared_size, 8);
      append_le(extra, stored.size(), 8);
    }
    append_le(body_, 0x04034b50, 4);
    append_le(body_, zip64 ? 45 : 20, 2);
    append_le(body_, 0, 2);  // flags
    append_le(body_, method, 2);
    append_le(body_, 0, 4);  // time and date
    append_le(body_, crc, 4);
    append_le(body_, zip64 ? 0xffffffff : stored.size(), 4);
    append_le(body_, zip64 ? 0xffffffff : declared_size, 4);
    append_le(body_, name.size(), 2);
    append_le(body_, extra.size(), 2);
    body_ += name + extra + stored;
  }

  // Lists `name` in the central directory with the local header, data and sizes of entry `existing` (0-based): two
  // directory entries that share their bytes, as a hostile archive can.
  void add_alias(const std::string& name, std::size_t existing) {
    Entry alias = entries_.at(existing);
    alias.name = name;
    entries_.push_back(alias);
  }

  // With zip64 forced, every size and offset goes to zip64 extra fields and the zip64 end records.
  void force_zip64() { force_zip64_ = true; }

  Bytes finish() const {
    Bytes directory;
    for (const Entry& entry : entries_) {
      Bytes extra;
      if (force_zip64_) {
        append_le(extra, 1, 2);
        append_le(extra, 24, 2);
        append_le(extra, entry.uncompressed_size, 8);
        append_le(extra, entry.compressed_size, 8);
        append_le(extra, entry.offset, 8);
      }
      append_le(directory, 0x02014b50, 4);
      append_le(directory, 45, 2);
      append_le(directory, force_zip64_ ? 45 : 20, 2);
      append_le(directory, 0, 2);
      append_le(directory, entry.method, 2);
      append_le(directory, 0, 4);
      append_le(directory, entry.crc, 4);
      append_le(directory, force_zip64_ ? 0xffffffff : entry.compressed_size, 4);
      append_le(directory, force_zip64_ ? 0xffffffff : entry.uncompressed_size, 4);
      append_le(directory, entry.name.size(), 2);
      append_le(directory, extra.size(), 2);
      append_le(directory, 0, 2);  // comment
      append_le(directory, 0, 2);  // disk
      append_le(directory, 0, 2);  // internal attributes
      append_le(directory, 0, 4);  // external attributes
      append_le(directory, force_zip64_ ? 0xffffffff : entry.offset, 4);
      directory += entry.name + extra;
    }
    Bytes archive = body_ + directory;
    const uint64_t directory_offset = body_.size();
    if (force_zip64_) {
      const uint64_t record_offset = archive.size();
      append_le(archive, 0x06064b50, 4);
      append_le(archive, 44, 8);
      append_le(archive, 45, 2);
      append_le(archive, 45, 2);
      append_le(archive, 0, 4);
      append_le(archive, 0, 4);
      append_le(archive, entries_.size(), 8);
      append_le(archive, entries_.size(), 8);
      append_le(archive, directory.size(), 8);
      append_le(archive, directory_offset, 8);
      append_le(archive, 0x07064b50, 4);
      append_le(archive, 0, 4);
      append_le(archive, record_offset, 8);
      append_le(archive, 1, 4);
    }
    append_le(archive, 0x06054b50, 4);
    append_le(archive, 0, 4);  // disk numbers
    append_le(archive, force_zip64_ ? 0xffff : entries_.size(), 2);
    append_le(archive, force_zip64_ ? 0xffff : entries_.size(), 2);
    append_le(archive, force_zip64_ ? 0xffffffff : directory.size(), 4);
    append_le(archive, force_zip64_ ? 0xffffffff : directory_offset, 4);
    append_le(archive, 0, 2);
    return archive;
  }

 private:
  struct Entry {
    std::string name;
    uint16_t method;
    uint32_t crc;
    uint64_t compressed_size;
    uint64_t uncompressed_size;
    uint64_t offset;
  };

  static Bytes deflate_raw(const Bytes& data) {
    z_stream stream{};
    if (deflateInit2(&stream, Z_BEST_COMPRESSION, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
      throw std::runtime_error("deflateInit2 failed");
    }
    Bytes out(deflateBound(&stream, static_cast<uLong>(data.size())), '\0');
    stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
    stream.avail_in = static_cast<uInt>(data.size());
    stream.next_out = reinterpret_cast<Bytef*>(out.data());
    stream.avail_out = static_cast<uInt>(out.size());
    const int status = deflate(&stream, Z_FINISH);
    out.resize(stream.total_out);
    deflateEnd(&stream);
    if (status != Z_STREAM_END) throw std::runtime_error("deflate failed");
    return out;
  }

  std::vector<Entry> entries_;
  Bytes body_;
  bool force_zip64_ = false;
};

// Protocol-2 pickle opcodes, written the way CPython's pickler writes them.
class PickleTestWriter {
 public:
  PickleTestWriter& proto(int version = 2) { return op(0x80).byte(version); }
  PickleTestWriter& op(uint8_t opcode) { return byte(opcode); }
  PickleTestWriter& byte(int value) {
    out_.push_back(static_cast<char>(value & 0xff));
    return *this;
  }
  PickleTestWriter& raw(const Bytes& bytes) {
    out_ += bytes;
    return *this;
  }
  PickleTestWriter& global(const std::string& module, const std::string& name) {
    return op('c').raw(module + "\n" + name + "\n");
  }
  PickleTestWriter& string(const std::string& text) {
    op('X');
    append_le(out_, text.size(), 4);
    return raw(text);
  }
  PickleTestWriter& integer(int64_t value) {
    if (value >= 0 && value < 256) return op('K').byte(static_cast<int>(value));
    if (value >= 0 && value < 65536) {
      op('M');
      append_le(out_, static_cast<uint64_t>(value), 2);
      return *this;
    }
    if (value >= INT32_MIN && value <= INT32_MAX) {
      op('J');
      append_le(out_, static_cast<uint64_t>(value), 4);
      return *this;
    }
    op(0x8a).byte(8);
    append_le(out_, static_cast<uint64_t>(value), 8);
    return *this;
  }
  PickleTestWriter& mark() { return op('('); }
  PickleTestWriter& tuple() { return op('t'); }
  PickleTestWriter& empty_tuple() { return op(')'); }
  PickleTestWriter& int_tuple(const std::vector<int64_t>& values) {
    mark();
    for (int64_t value : values) integer(value);
    return tuple();
  }
  PickleTestWriter& put(int index) { return op('q').byte(index); }
  PickleTestWriter& get(int index) { return op('h').byte(index); }
  PickleTestWriter& stop() { return op('.'); }
  const Bytes& bytes() const { return out_; }

 private:
  Bytes out_;
};

// One tensor of a test state dict: a view (offset, size, stride) into a storage; tensors that name the same
// storage_key share it (the first one's values and dtype are stored).
struct TestTensor {
  TestTensor(std::string name, DType dtype, std::string storage_key, std::vector<float> storage_values, int64_t offset,
             std::vector<int64_t> size, std::vector<int64_t> stride,
             std::optional<int64_t> declared_storage_elements = std::nullopt)
      : name(std::move(name)),
        dtype(dtype),
        storage_key(std::move(storage_key)),
        storage_values(std::move(storage_values)),
        offset(offset),
        size(std::move(size)),
        stride(std::move(stride)),
        declared_storage_elements(declared_storage_elements) {}

  std::string name;
  DType dtype;
  std::string storage_key;
  std::vector<float> storage_values;
  int64_t offset;
  std::vector<int64_t> size;
  std::vector<int64_t> stride;
  // Overrides the element count written in the persistent id (to test storages shorter than declared).
  std::optional<int64_t> declared_storage_elements;
};

inline const char* torch_storage_type(DType dtype) {
  switch (dtype) {
    case DType::kF16:
      return "HalfStorage";
    case DType::kBF16:
      return "BFloat16Storage";
    case DType::kI8:
      return "CharStorage";
    case DType::kU8:
      return "ByteStorage";
    case DType::kF32:
      return "FloatStorage";
  }
  return "FloatStorage";
}

// The pickle torch.save writes for an OrderedDict of these tensors (protocol 2, memoizing as CPython does).
inline Bytes state_dict_pickle(const std::vector<TestTensor>& tensors) {
  PickleTestWriter pickle;
  pickle.proto().global("collections", "OrderedDict").put(0).empty_tuple().op('R').put(1).mark();
  int memo = 2;
  for (const TestTensor& tensor : tensors) {
    pickle.string(tensor.name).put(memo++);
    pickle.global("torch._utils", "_rebuild_tensor_v2").put(memo++);
    pickle.mark().mark().string("storage").global("torch", torch_storage_type(tensor.dtype));
    pickle.string(tensor.storage_key).string("cpu");
    pickle.integer(tensor.declared_storage_elements.value_or(static_cast<int64_t>(tensor.storage_values.size())));
    pickle.tuple().op('Q');  // BINPERSID
    // offset, size, stride, requires_grad=False
    pickle.integer(tensor.offset).int_tuple(tensor.size).int_tuple(tensor.stride).op(0x89);
    pickle.get(0).empty_tuple().op('R');  // backward_hooks = OrderedDict()
    pickle.tuple().op('R');
  }
  pickle.op('u');  // SETITEMS
  // state_dict._metadata, restored with BUILD like a real nn.Module state dict.
  pickle.mark().string("_metadata").get(0).empty_tuple().op('R').mark().string("").op('}').string("version").integer(1);
  pickle.op('s').op('u').op('d').op('b');
  return pickle.stop().bytes();
}

inline Bytes storage_bytes(const TestTensor& tensor) {
  Bytes bytes(tensor.storage_values.size() * dtype_size_bytes(tensor.dtype), '\0');
  encode_from_f32(tensor.dtype, tensor.storage_values.data(), tensor.storage_values.size(),
                  reinterpret_cast<std::byte*>(bytes.data()));
  return bytes;
}

struct PthWriteOptions {
  std::string prefix = "archive/";
  bool deflate = false;
  bool zip64 = false;
  std::optional<Bytes> pickle_override;    // write these bytes as data.pkl instead
  std::vector<std::string> omit_storages;  // storage keys to leave out of the archive
};

inline Bytes pth_archive(const std::vector<TestTensor>& tensors, const PthWriteOptions& options = {}) {
  ZipTestWriter zip;
  if (options.zip64) zip.force_zip64();
  zip.add(options.prefix + "data.pkl", options.pickle_override.value_or(state_dict_pickle(tensors)), options.deflate);
  std::vector<std::string> written;
  for (const TestTensor& tensor : tensors) {
    if (std::find(written.begin(), written.end(), tensor.storage_key) != written.end()) continue;
    written.push_back(tensor.storage_key);
    if (std::find(options.omit_storages.begin(), options.omit_storages.end(), tensor.storage_key) !=
        options.omit_storages.end()) {
      continue;
    }
    zip.add(options.prefix + "data/" + tensor.storage_key, storage_bytes(tensor), options.deflate);
  }
  zip.add(options.prefix + "version", "3\n", options.deflate);
  zip.add(options.prefix + "byteorder", "little", options.deflate);
  return zip.finish();
}

// The tensors of a safetensors file as a MiniMind state dict (what `torch.save(model.state_dict())` writes after
// MiniMind's trainer casts it to `dtype`): one contiguous storage per tensor, the same names.
inline Bytes pth_from_safetensors(const std::filesystem::path& safetensors_file, DType dtype) {
  std::vector<TestTensor> tensors;
  for (const auto& [name, tensor] : read_safetensors(safetensors_file)) {
    std::vector<int64_t> stride(tensor.shape.size(), 1);
    for (int i = static_cast<int>(tensor.shape.size()) - 2; i >= 0; --i)
      stride[i] = stride[i + 1] * tensor.shape[i + 1];
    tensors.emplace_back(name, dtype, std::to_string(tensors.size()), tensor.values, 0, tensor.shape, stride);
  }
  return pth_archive(tensors);
}

// A per-process path for a test file: in memory (/dev/shm) when available, because the fuzz tests rewrite their
// file thousands of times, and named after the process so that concurrent test runs do not collide.
inline std::filesystem::path scratch_path(const std::string& name) {
  std::error_code error;
  const std::filesystem::path shm = "/dev/shm";
  const std::filesystem::path directory = std::filesystem::is_directory(shm, error) && ::access(shm.c_str(), W_OK) == 0
                                              ? shm
                                              : std::filesystem::path(::testing::TempDir());
  return directory / ("minigen-" + std::to_string(::getpid()) + "-" + name);
}

// Removes every file scratch_path made in this process.
inline void remove_scratch_files() {
  const std::string prefix = "minigen-" + std::to_string(::getpid()) + "-";
  const std::filesystem::path directory = scratch_path("x").parent_path();
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(directory, error)) {
    if (entry.path().filename().string().starts_with(prefix)) std::filesystem::remove_all(entry.path(), error);
  }
}

// Gives each test a clean slate of scratch files and removes them afterwards.
class ScratchFileTest : public ::testing::Test {
 protected:
  void TearDown() override { remove_scratch_files(); }
};

inline void write_bytes(const std::filesystem::path& path, const Bytes& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace minigen::testing
