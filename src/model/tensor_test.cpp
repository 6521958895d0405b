#include "model/tensor.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace minigen {
namespace {

TEST(TensorTest, ElementCountAndShapeString) {
  HostTensor tensor;
  tensor.shape = {6400, 256};
  EXPECT_EQ(tensor.element_count(), 1638400);
  EXPECT_EQ(shape_string(tensor.shape), "[6400, 256]");
  tensor.shape = {};
  EXPECT_EQ(tensor.element_count(), 1);  // a scalar
  EXPECT_EQ(shape_string(tensor.shape), "[]");
  tensor.shape = {3, 0, 5};
  EXPECT_EQ(tensor.element_count(), 0);
  tensor.shape = {int64_t{1} << 40, int64_t{1} << 40};
  EXPECT_THROW(tensor.element_count(), Error);
}

}  // namespace
}  // namespace minigen
