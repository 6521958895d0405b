#include "model/tensor.h"

#include <gtest/gtest.h>

#include <fstream>

#include "core/error.h"
#include "model/torch_pth_test_writer.h"  // scratch files

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

using MappedFileTest = testing::ScratchFileTest;

TEST_F(MappedFileTest, MapsBytesAndRejectsWhatItCannotMap) {
  const std::filesystem::path path = testing::scratch_path("mapped_file_test.bin");
  {
    std::ofstream out(path, std::ios::binary);
    out << "minigen";
  }
  const MappedFile file(path);
  ASSERT_EQ(file.size(), 7u);
  EXPECT_EQ(static_cast<char>(file.data()[0]), 'm');
  EXPECT_EQ(static_cast<char>(file.data()[6]), 'n');

  const std::filesystem::path empty_path = testing::scratch_path("mapped_file_empty.bin");
  std::ofstream(empty_path).close();
  EXPECT_EQ(MappedFile(empty_path).size(), 0u);

  EXPECT_THROW(MappedFile(testing::scratch_path("does_not_exist.bin")), Error);
  EXPECT_THROW(MappedFile{path.parent_path()}, Error);  // a directory is not a regular file
}

}  // namespace
}  // namespace minigen
