#include "core/file_io.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <sstream>
#include <vector>

#include "core/error.h"
#include "core/planted_links_test_util.h"

namespace minigen {
namespace {

namespace fs = std::filesystem;

class FileIoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    directory_ = fs::temp_directory_path() / ("minigen_file_io_test_" + std::to_string(::getpid()));
    fs::create_directories(directory_);
  }
  void TearDown() override { fs::remove_all(directory_); }

  fs::path write(const std::string& name, const std::string& contents) {
    const fs::path path = directory_ / name;
    std::ofstream(path, std::ios::binary) << contents;
    return path;
  }

  static std::string error_of(const std::function<void()>& action) {
    try {
      action();
    } catch (const Error& error) {
      return error.what();
    }
    return "";
  }

  fs::path directory_;
};

TEST_F(FileIoTest, AtomicWriteReplacesTheWholeFile) {
  const fs::path path = directory_ / "atomic.txt";
  write_file_atomically(path, "first version, longer");
  write_file_atomically(path, std::string("second\0", 7));
  EXPECT_EQ(read_whole_file(path, 100, "test file"), std::string("second\0", 7));
  EXPECT_EQ(std::distance(fs::directory_iterator(directory_), fs::directory_iterator()), 1);
}

// The temporary file is written, then renaming it over the target fails (the target is a non-empty directory):
// the error is thrown, and neither the temporary file nor a half-written target stays.
TEST_F(FileIoTest, FailedWriteLeavesNothingBehind) {
  const fs::path target = directory_ / "report.json";
  fs::create_directories(target / "inside");
  EXPECT_THROW(write_file_atomically(target, "x"), Error);
  std::vector<std::string> left;
  for (const auto& entry : fs::directory_iterator(directory_)) left.push_back(entry.path().filename().string());
  EXPECT_EQ(left, std::vector<std::string>{"report.json"});
  EXPECT_TRUE(fs::is_directory(target / "inside"));
}

// Issue 46 item 3: write_file_atomically once wrote PATH.tmp.<pid> through std::ofstream, following a symbolic link
// planted there (or truncating the file a hard link there names) and overwriting a file outside the folder. Links at
// that name, at the other old names and at guesses of the random one are now left as they were.
TEST_F(FileIoTest, AtomicWriteNeverWritesThroughAPlantedLink) {
  testing::PlantedLinks planted(directory_ / "elsewhere");
  const fs::path out = directory_ / "out";
  fs::create_directories(out);
  const fs::path path = out / "report.json";
  for (const fs::path& name : testing::temporary_names_beside(path)) planted.plant(name);
  write_file_atomically(path, "new contents");
  EXPECT_EQ(read_whole_file(path, 100, "test file"), "new contents");
  write_file_atomically(path, [](std::ostream& stream) { stream << "streamed"; });
  EXPECT_EQ(read_whole_file(path, 100, "test file"), "streamed");
  planted.expect_untouched();
  // Only the planted names and the file itself: no temporary file is left.
  EXPECT_EQ(std::distance(fs::directory_iterator(out), fs::directory_iterator()),
            static_cast<long>(2 * testing::temporary_names_beside(path).size() + 1));
  // check_output_file's rule is kept: a link at the final path is refused, and its target is not written.
  const fs::path linked = out / "linked.json";
  planted.plant_symbolic(linked);
  EXPECT_NE(error_of([&] { write_file_atomically(linked, "x"); }).find("(it is a symbolic link)"), std::string::npos);
  planted.expect_untouched();
}

// Issue 46 item 3 for the directories quantize, merge-lora, init-random, tokenizer train and the lab write: their
// files were NAME.partial.<pid> and, inside write_file_atomically, NAME.partial.<pid>.tmp.<pid>.
TEST_F(FileIoTest, OutputDirectoryNeverWritesThroughAPlantedLink) {
  testing::PlantedLinks planted(directory_ / "elsewhere");
  const fs::path out = directory_ / "model";
  fs::create_directories(out);
  for (const char* name : {"tokenizer.json", "model.safetensors"}) {
    for (const fs::path& planted_name : testing::temporary_names_beside(out / name)) planted.plant(planted_name);
  }
  {
    OutputDirectory directory(out, "OUT");
    directory.write("tokenizer.json", "{}");
    directory.write_with("model.safetensors", [](const fs::path& staged) {
      // A writer that takes a path is given one inside a folder only this user can enter.
      struct stat status {};
      ASSERT_EQ(::stat(staged.parent_path().c_str(), &status), 0);
      EXPECT_EQ(status.st_mode & 0777, 0700u);
      write_file_atomically(staged, "weights");
    });
    directory.commit();
  }
  EXPECT_EQ(read_whole_file(out / "tokenizer.json", 100, "test file"), "{}");
  EXPECT_EQ(read_whole_file(out / "model.safetensors", 100, "test file"), "weights");
  planted.expect_untouched();
  for (const auto& entry : fs::directory_iterator(out)) {
    EXPECT_EQ(entry.path().filename().string().find(".minigen-partial"), std::string::npos) << "left over";
  }
}

// A directory that fails before commit leaves neither its private folder nor the files in it.
TEST_F(FileIoTest, OutputDirectoryWithoutCommitLeavesNothing) {
  const fs::path out = directory_ / "never";
  {
    OutputDirectory directory(out, "OUT");
    directory.write("a.txt", "a");
  }
  EXPECT_FALSE(fs::exists(out));
}

// The temporary file is made with O_EXCL, so it has one link when opened; the check on the opened descriptor stands
// in case a file system ever hands back one with more (a hard link to a file elsewhere): it is refused.
TEST_F(FileIoTest, AFileWithTwoLinksIsRefused) {
  const fs::path file = write("linked.txt", "x");
  fs::create_hard_link(file, directory_ / "second-name.txt");
  const int descriptor = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(descriptor, 0);
  EXPECT_EQ(error_of([&] { check_single_link(descriptor, file); }),
            file.string() + " has 2 links (a hard link to another file); refusing to write through it");
  fs::remove(directory_ / "second-name.txt");
  EXPECT_EQ(error_of([&] { check_single_link(descriptor, file); }), "");
  ::close(descriptor);
}

TEST_F(FileIoTest, ExclusiveTemporaryFileIsRemovedUnlessCommitted) {
  const fs::path path = directory_ / "weights.bin";
  {
    ExclusiveTemporaryFile temporary(path);
    EXPECT_EQ(temporary.path().parent_path(), directory_);
    EXPECT_EQ(temporary.path().filename().string().rfind("weights.bin.tmp-", 0), 0u);
    struct stat status {};
    ASSERT_EQ(::lstat(temporary.path().c_str(), &status), 0);
    EXPECT_EQ(status.st_mode & 0022, 0u);  // 0644 less the umask: never writable by others
    temporary.write("abc", 3);
  }
  EXPECT_EQ(std::distance(fs::directory_iterator(directory_), fs::directory_iterator()), 0);
  ExclusiveTemporaryFile temporary(path);
  temporary.write("ab", 2);
  temporary.stream() << "cd";
  temporary.commit(/*sync=*/true);
  EXPECT_EQ(read_whole_file(path, 100, "test file"), "abcd");
  EXPECT_EQ(std::distance(fs::directory_iterator(directory_), fs::directory_iterator()), 1);
}

// Issue 46 item 5: a full disk is reported as such. /dev/full fails every write with ENOSPC, as a full file system
// does; the stream keeps that errno for the message instead of a bare "failed".
TEST_F(FileIoTest, AFullDiskIsReportedWithItsErrno) {
  const int descriptor = ::open("/dev/full", O_WRONLY | O_CLOEXEC);
  if (descriptor < 0) GTEST_SKIP() << "no /dev/full here";
  {
    DescriptorOutputStream stream(descriptor);
    stream << std::string(200000, 'x');
    stream.flush();
    EXPECT_FALSE(stream);
    EXPECT_EQ(stream.write_errno(), ENOSPC);
  }
  ::close(descriptor);
}

// The errno reaches the message end to end: a file size limit (RLIMIT_FSIZE, as a quota or a full disk would) makes
// the write fail with EFBIG, and write_file_atomically says so, leaving nothing behind.
TEST_F(FileIoTest, AFailedWriteSaysWhy) {
  const testing::FileSizeLimit limit(4096);
  const fs::path path = directory_ / "big.bin";
  EXPECT_EQ(error_of([&] { write_file_atomically(path, std::string(100000, 'x')); }),
            "cannot write " + path.string() + ": File too large");
  EXPECT_EQ(std::distance(fs::directory_iterator(directory_), fs::directory_iterator()), 0);
}

TEST_F(FileIoTest, PrivateTemporaryDirectoryIsOnlyOursAndRemoved) {
  fs::path made;
  {
    const PrivateTemporaryDirectory work("minigen-file-io-test");
    made = work.path();
    struct stat status {};
    ASSERT_EQ(::lstat(made.c_str(), &status), 0);
    EXPECT_TRUE(S_ISDIR(status.st_mode));
    EXPECT_EQ(status.st_mode & 0777, 0700u);
    EXPECT_EQ(made.filename().string().rfind("minigen-file-io-test-", 0), 0u);
    write_file_atomically(made / "script.gp", "plot x");
  }
  EXPECT_FALSE(fs::exists(made));
}

TEST_F(FileIoTest, ReadingAMissingFileNamesIt) {
  EXPECT_EQ(error_of([] { read_whole_file("/nonexistent/minigen/in.json", 100, "config.json"); }),
            "/nonexistent/minigen/in.json: cannot open: No such file or directory");
}

TEST_F(FileIoTest, ReadsUpToTheLimitAndRefusesALargerFileBeforeReadingIt) {
  const fs::path path = write("ten.txt", "0123456789");
  EXPECT_EQ(read_whole_file(path, 10, "test file"), "0123456789");
  EXPECT_EQ(read_whole_file(write("empty.txt", ""), 0, "test file"), "");
  EXPECT_EQ(error_of([&] { read_whole_file(path, 9, "tokenizer.json"); }),
            path.string() + " is 10 bytes; a tokenizer.json may be at most 9 bytes");
  EXPECT_EQ(error_of([&] { read_whole_file(path, 0, "x"); }),
            path.string() + " is 10 bytes; a x may be at most 0 bytes");
  EXPECT_EQ(byte_count_text(kMaxTokenizerFileBytes), "64 MiB");
}

// /dev/zero never ends and a FIFO without a writer would block open() itself: both must fail at once, by type.
TEST_F(FileIoTest, RefusesFifosDevicesAndDirectoriesWithoutBlocking) {
  const fs::path fifo = directory_ / "config.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(error_of([&] { read_whole_file(fifo, kMaxConfigFileBytes, "config.json"); }),
            fifo.string() + " is not a regular file (it is a FIFO)");
  EXPECT_EQ(error_of([&] { MappedFile mapped(fifo); }), fifo.string() + " is not a regular file (it is a FIFO)");
  EXPECT_EQ(error_of([&] { LineReader lines(fifo, 100); }), fifo.string() + " is not a regular file (it is a FIFO)");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));

  EXPECT_EQ(error_of([] { read_whole_file("/dev/zero", kMaxConfigFileBytes, "config.json"); }),
            "/dev/zero is not a regular file (it is a character device)");
  EXPECT_EQ(error_of([] { MappedFile mapped("/dev/zero"); }),
            "/dev/zero is not a regular file (it is a character device)");
  EXPECT_EQ(error_of([&] { read_whole_file(directory_, 100, "prompt file"); }),
            directory_.string() + " is not a regular file (it is a directory)");
}

TEST_F(FileIoTest, MapsBytes) {
  const MappedFile file(write("mapped.bin", "minigen"));
  ASSERT_EQ(file.size(), 7u);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(file.data()), file.size()), "minigen");
  EXPECT_EQ(MappedFile(write("empty.bin", "")).size(), 0u);
}

TEST_F(FileIoTest, LineReaderReturnsEveryLineAndRefusesAnOverlongOne) {
  const fs::path path = write("lines.txt", "one\n\nthree\nlast without newline");
  LineReader lines(path, 100);
  std::string line;
  std::vector<std::string> seen;
  while (lines.next(line)) seen.push_back(line);
  EXPECT_EQ(seen, (std::vector<std::string>{"one", "", "three", "last without newline"}));
  EXPECT_EQ(lines.line_number(), 4);

  // A line of 200,000 bytes: longer than the limit and than one read block; the lines before it still come out.
  const fs::path long_line = write("long.txt", "short\n" + std::string(200000, 'x') + "\nafter\n");
  LineReader limited(long_line, 150000);
  ASSERT_TRUE(limited.next(line));
  EXPECT_EQ(line, "short");
  EXPECT_EQ(error_of([&] { limited.next(line); }), long_line.string() + ":2: line is longer than 150000 bytes");

  LineReader roomy(long_line, 200000);
  ASSERT_TRUE(roomy.next(line));
  ASSERT_TRUE(roomy.next(line));
  EXPECT_EQ(line.size(), 200000u);
  ASSERT_TRUE(roomy.next(line));
  EXPECT_EQ(line, "after");
  EXPECT_FALSE(roomy.next(line));
}

TEST_F(FileIoTest, BoundedLineFromAStream) {
  std::istringstream input("hello\nworld");
  std::string line;
  ASSERT_TRUE(read_bounded_line(input, line, 10, "a message"));
  EXPECT_EQ(line, "hello");
  ASSERT_TRUE(read_bounded_line(input, line, 10, "a message"));
  EXPECT_EQ(line, "world");
  EXPECT_FALSE(read_bounded_line(input, line, 10, "a message"));

  std::istringstream endless(std::string(100, '\0'));
  EXPECT_EQ(error_of([&] { read_bounded_line(endless, line, 10, "a chat message"); }),
            "a chat message is longer than 10 bytes");
}

}  // namespace
}  // namespace minigen
