#include "tokenizer/file_io.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "core/error.h"

namespace minigen {
namespace {

TEST(FileIoTest, AtomicWriteReplacesTheWholeFile) {
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("minigen_file_io_test_" + std::to_string(::getpid()) + ".txt");
  write_file_atomically(path, "first version, longer");
  write_file_atomically(path, std::string("second\0", 7));
  EXPECT_EQ(read_whole_file(path), std::string("second\0", 7));
  std::filesystem::remove(path);
}

TEST(FileIoTest, FailedWriteLeavesNothingBehind) {
  const std::filesystem::path directory = "/nonexistent/minigen";
  EXPECT_THROW(write_file_atomically(directory / "out.json", "x"), Error);
  EXPECT_FALSE(std::filesystem::exists(directory));
}

TEST(FileIoTest, ReadingAMissingFileNamesIt) {
  try {
    read_whole_file("/nonexistent/minigen/in.json");
    ADD_FAILURE() << "expected an Error";
  } catch (const Error& error) {
    EXPECT_STREQ(error.what(), "cannot open /nonexistent/minigen/in.json for reading");
  }
}

}  // namespace
}  // namespace minigen
