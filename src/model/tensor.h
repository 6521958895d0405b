#pragma once
// Named tensors as read from (or written to) a model file. Values are always held as fp32 in memory;
// `stored_dtype` remembers what the file held, so `minigen info` can report it.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace minigen {

enum class DType { F32, F16, BF16 };

const char* dtype_name(DType dtype);      // "F32", "F16", "BF16" (safetensors spelling)
std::size_t dtype_size_bytes(DType dtype);

struct HostTensor {
  std::vector<int64_t> shape;
  std::vector<float> values;  // row-major, product(shape) elements
  DType stored_dtype = DType::F32;

  int64_t element_count() const;
};

// Ordered by name so that files are written in a stable order.
using TensorMap = std::map<std::string, HostTensor>;

std::string shape_string(const std::vector<int64_t>& shape);  // "[6400, 256]"

// A whole file mapped read-only into memory, so that readers of weight files of hundreds of MB can look at any
// byte without copying the file first. Throws minigen::Error naming the file if it cannot be opened or mapped.
class MappedFile {
 public:
  explicit MappedFile(const std::filesystem::path& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const std::byte* data() const { return data_; }
  std::size_t size() const { return size_; }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  const std::byte* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace minigen
