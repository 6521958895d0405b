#include "model/tensor.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/error.h"

namespace minigen {

int64_t HostTensor::element_count() const {
  int64_t count = 1;
  for (int64_t dim : shape) {
    if (__builtin_mul_overflow(count, dim, &count)) throw Error("tensor shape " + shape_string(shape) + " overflows");
  }
  return count;
}

std::string shape_string(const std::vector<int64_t>& shape) {
  std::string text = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) text += ", ";
    text += std::to_string(shape[i]);
  }
  return text + "]";
}

MappedFile::MappedFile(const std::filesystem::path& path) : path_(path) {
  const int descriptor = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (descriptor < 0) throw Error(path.string() + ": cannot open: " + std::strerror(errno));
  struct stat status {};
  if (::fstat(descriptor, &status) != 0 || !S_ISREG(status.st_mode)) {
    ::close(descriptor);
    throw Error(path.string() + ": not a regular file");
  }
  size_ = static_cast<std::size_t>(status.st_size);
  // mmap rejects a zero length; an empty file simply has no bytes to look at.
  if (size_ > 0) {
    void* mapping = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, descriptor, 0);
    if (mapping == MAP_FAILED) {
      const int mmap_errno = errno;
      ::close(descriptor);
      throw Error(path.string() + ": cannot map the file into memory: " + std::strerror(mmap_errno));
    }
    data_ = static_cast<const std::byte*>(mapping);
  }
  ::close(descriptor);  // the mapping stays valid without the descriptor
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(const_cast<std::byte*>(data_), size_);
}

}  // namespace minigen
