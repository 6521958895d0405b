#include "model/tensor.h"

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

}  // namespace minigen
