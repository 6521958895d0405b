#include "core/file_io.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <istream>
#include <limits>
#include <random>
#include <system_error>

#include "core/error.h"

namespace minigen {
namespace {

const char* file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a plain file";
}

}  // namespace

std::string byte_count_text(uint64_t bytes) {
  constexpr uint64_t kMiB = uint64_t{1} << 20;
  if (bytes >= kMiB && bytes % kMiB == 0) return std::to_string(bytes / kMiB) + " MiB";
  return std::to_string(bytes) + " bytes";
}

RegularFile::RegularFile(const std::filesystem::path& path) : path_(path) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait until some process opens it for writing.
  descriptor_ = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (descriptor_ < 0) throw Error(path.string() + ": cannot open: " + std::strerror(errno));
  struct stat status {};
  if (::fstat(descriptor_, &status) != 0) {
    const int stat_errno = errno;
    ::close(descriptor_);
    throw Error(path.string() + ": cannot stat: " + std::strerror(stat_errno));
  }
  // Checked on the opened descriptor, not the name, so that the file cannot be swapped between check and read.
  if (!S_ISREG(status.st_mode)) {
    ::close(descriptor_);
    throw Error(path.string() + " is not a regular file (it is " + file_kind(status.st_mode) + ")");
  }
  // Reads of a regular file never block; clear the flag anyway so that the descriptor behaves as usual.
  ::fcntl(descriptor_, F_SETFL, ::fcntl(descriptor_, F_GETFL) & ~O_NONBLOCK);
  size_ = static_cast<uint64_t>(status.st_size);
}

RegularFile::~RegularFile() {
  if (descriptor_ >= 0) ::close(descriptor_);
}

std::size_t RegularFile::read_some(std::span<char> buffer) {
  while (true) {
    const ssize_t got = ::read(descriptor_, buffer.data(), buffer.size());
    if (got >= 0) return static_cast<std::size_t>(got);
    if (errno != EINTR) throw Error(path_.string() + ": read error: " + std::strerror(errno));
  }
}

std::string read_whole_file(const std::filesystem::path& path, uint64_t max_bytes, std::string_view what) {
  RegularFile file(path);
  auto too_large = [&](uint64_t size) {
    return Error(path.string() + " is " + std::to_string(size) + " bytes; a " + std::string(what) + " may be at most " +
                 byte_count_text(max_bytes));
  };
  if (file.size() > max_bytes) throw too_large(file.size());
  std::string contents(static_cast<std::size_t>(file.size()), '\0');
  std::size_t done = 0;
  while (true) {
    // The file may grow after fstat; keep reading to its real end, but never past the limit.
    if (done == contents.size()) {
      if (contents.size() > max_bytes) throw too_large(contents.size());
      contents.resize(static_cast<std::size_t>(std::min<uint64_t>(max_bytes + 1, contents.size() + 65536)));
    }
    const std::size_t got = file.read_some(std::span<char>(contents.data() + done, contents.size() - done));
    if (got == 0) break;
    done += got;
  }
  contents.resize(done);
  if (done > max_bytes) throw too_large(done);
  return contents;
}

LineReader::LineReader(const std::filesystem::path& path, uint64_t max_line_bytes)
    : file_(path), max_line_bytes_(max_line_bytes) {}

bool LineReader::next(std::string& line) {
  constexpr std::size_t kReadBytes = std::size_t{1} << 16;
  std::size_t searched = buffer_start_;
  while (true) {
    const std::size_t newline = buffer_.find('\n', searched);
    if (newline != std::string::npos || at_end_) {
      if (newline == std::string::npos && buffer_start_ == buffer_.size()) return false;
      const std::size_t end = newline == std::string::npos ? buffer_.size() : newline;
      if (end - buffer_start_ > max_line_bytes_) break;
      line.assign(buffer_, buffer_start_, end - buffer_start_);
      buffer_start_ = newline == std::string::npos ? buffer_.size() : newline + 1;
      ++line_number_;
      return true;
    }
    searched = buffer_.size();
    if (searched - buffer_start_ > max_line_bytes_) break;
    // Drop the lines already returned before reading more, so the buffer holds at most one line and one block.
    buffer_.erase(0, buffer_start_);
    searched -= buffer_start_;
    buffer_start_ = 0;
    const std::size_t old_size = buffer_.size();
    buffer_.resize(old_size + kReadBytes);
    const std::size_t got = file_.read_some(std::span<char>(buffer_.data() + old_size, kReadBytes));
    buffer_.resize(old_size + got);
    if (got == 0) at_end_ = true;
  }
  throw Error(file_.path().string() + ":" + std::to_string(line_number_ + 1) + ": line is longer than " +
              byte_count_text(max_line_bytes_));
}

bool read_bounded_line(std::istream& input, std::string& line, uint64_t max_line_bytes, std::string_view what) {
  line.clear();
  std::istream::int_type character;
  while ((character = input.get()) != std::istream::traits_type::eof()) {
    if (character == '\n') return true;
    if (line.size() >= max_line_bytes) {
      throw Error(std::string(what) + " is longer than " + byte_count_text(max_line_bytes));
    }
    line.push_back(static_cast<char>(character));
  }
  return !line.empty();
}

MappedFile::MappedFile(const std::filesystem::path& path) : path_(path) {
  const RegularFile file(path);
  if (file.size() > std::numeric_limits<std::size_t>::max()) throw Error(path.string() + ": too large to map");
  size_ = static_cast<std::size_t>(file.size());
  // mmap rejects a zero length; an empty file simply has no bytes to look at. The mapping stays valid after the
  // descriptor is closed.
  if (size_ > 0) {
    void* mapping = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, file.descriptor(), 0);
    if (mapping == MAP_FAILED) {
      throw Error(path.string() + ": cannot map the file into memory: " + std::strerror(errno));
    }
    data_ = static_cast<const std::byte*>(mapping);
  }
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(const_cast<std::byte*>(data_), size_);
}

void check_output_file(const std::filesystem::path& path) {
  struct stat status {};
  // lstat: a symbolic link is judged as itself, since rename() would replace the link, not its target.
  if (::lstat(path.c_str(), &status) != 0) {
    if (errno == ENOENT) return;
    throw Error(path.string() + ": cannot write here: " + std::strerror(errno));
  }
  if (S_ISREG(status.st_mode)) return;
  const char* kind = S_ISLNK(status.st_mode) ? "a symbolic link" : file_kind(status.st_mode);
  throw Error(path.string() + " exists and is not a regular file (it is " + kind +
              "); remove it or choose another path");
}

class DescriptorOutputStream::Buffer : public std::streambuf {
 public:
  explicit Buffer(int descriptor) : descriptor_(descriptor), bytes_(std::size_t{1} << 16) {
    setp(bytes_.data(), bytes_.data() + bytes_.size());
  }
  int write_errno() const { return write_errno_; }

 protected:
  int_type overflow(int_type c) override {
    if (!drain()) return traits_type::eof();
    if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
    *pptr() = traits_type::to_char_type(c);
    pbump(1);
    return c;
  }
  int sync() override { return drain() ? 0 : -1; }

 private:
  // Writes what is buffered; false (and the errno kept) at the first failure.
  bool drain() {
    if (write_errno_ != 0) return false;
    const char* next = pbase();
    while (next < pptr()) {
      const ssize_t written = ::write(descriptor_, next, static_cast<std::size_t>(pptr() - next));
      if (written < 0 && errno == EINTR) continue;
      if (written <= 0) {
        write_errno_ = written < 0 ? errno : EIO;
        return false;
      }
      next += written;
    }
    setp(bytes_.data(), bytes_.data() + bytes_.size());
    return true;
  }

  int descriptor_;
  std::vector<char> bytes_;
  int write_errno_ = 0;
};

DescriptorOutputStream::DescriptorOutputStream(int descriptor)
    : std::ostream(nullptr), buffer_(std::make_unique<Buffer>(descriptor)) {
  rdbuf(buffer_.get());
}

DescriptorOutputStream::~DescriptorOutputStream() = default;

int DescriptorOutputStream::write_errno() const { return buffer_->write_errno(); }

void check_single_link(int descriptor, const std::filesystem::path& path) {
  struct stat status {};
  if (::fstat(descriptor, &status) != 0) throw Error(path.string() + ": cannot stat: " + std::strerror(errno));
  if (status.st_nlink > 1) {
    throw Error(path.string() + " has " + std::to_string(status.st_nlink) +
                " links (a hard link to another file); refusing to write through it");
  }
}

ExclusiveTemporaryFile::ExclusiveTemporaryFile(const std::filesystem::path& destination) : destination_(destination) {
  // 12 characters of 64 each are 72 random bits: a name nobody can plant a link at in advance. A name that exists
  // anyway (O_EXCL fails with EEXIST) is drawn again, never opened.
  static constexpr char kAlphabet[] = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-_";
  std::random_device entropy;
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::string suffix = ".tmp-";
    for (int i = 0; i < 12; ++i) suffix += kAlphabet[entropy() % 64];
    path_ = destination_;
    path_ += suffix;
    // 0644 less the umask, as before; O_NOFOLLOW as well as O_EXCL, so that no kernel follows a link here.
    descriptor_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (descriptor_ >= 0 || errno != EEXIST) break;
  }
  if (descriptor_ < 0) throw Error("cannot create " + path_.string() + ": " + std::strerror(errno));
  try {
    check_single_link(descriptor_, path_);
  } catch (...) {
    ::close(descriptor_);
    ::unlink(path_.c_str());
    throw;
  }
  stream_ = std::make_unique<DescriptorOutputStream>(descriptor_);
}

ExclusiveTemporaryFile::~ExclusiveTemporaryFile() {
  stream_.reset();
  if (descriptor_ >= 0) ::close(descriptor_);
  if (!committed_) ::unlink(path_.c_str());
}

void ExclusiveTemporaryFile::write(const void* data, std::size_t size) {
  stream_->flush();
  if (stream_->write_errno() != 0) fail("cannot write", stream_->write_errno());
  const char* bytes = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t written = ::write(descriptor_, bytes, size);
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) fail("cannot write", written < 0 ? errno : EIO);
    bytes += written;
    size -= static_cast<std::size_t>(written);
  }
}

void ExclusiveTemporaryFile::commit(bool sync) {
  stream_->flush();
  if (stream_->write_errno() != 0 || !*stream_) fail("cannot write", stream_->write_errno());
  if (sync && ::fsync(descriptor_) != 0) fail("cannot flush", errno);
  const int descriptor = descriptor_;
  descriptor_ = -1;
  if (::close(descriptor) != 0) fail("cannot write", errno);  // NFS and some others report a full disk only here
  if (::rename(path_.c_str(), destination_.c_str()) != 0) {
    const int rename_errno = errno;
    throw Error("cannot rename " + path_.string() + " to " + destination_.string() + ": " +
                std::strerror(rename_errno));
  }
  committed_ = true;
}

void ExclusiveTemporaryFile::fail(const std::string& what, int error_number) {
  throw Error(what + " " + destination_.string() + ": " + std::strerror(error_number != 0 ? error_number : EIO));
}

PrivateTemporaryDirectory::PrivateTemporaryDirectory(const std::string& prefix) {
  std::string pattern = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw Error("cannot create a temporary directory " + pattern + ": " + std::strerror(errno));
  }
  path_ = pattern;
}

PrivateTemporaryDirectory::~PrivateTemporaryDirectory() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

void write_file_atomically(const std::filesystem::path& path, std::string_view contents) {
  write_file_atomically(
      path, [&](std::ostream& out) { out.write(contents.data(), static_cast<std::streamsize>(contents.size())); });
}

void write_file_atomically(const std::filesystem::path& path, const std::function<void(std::ostream&)>& write) {
  check_output_file(path);
  ExclusiveTemporaryFile temporary(path);
  write(temporary.stream());
  temporary.commit();
}

void check_output_directory(const std::filesystem::path& directory, const std::string& what) {
  if (directory.empty()) throw Error(what + ": give a directory to write");
  std::error_code error;
  const std::filesystem::file_status status = std::filesystem::status(directory, error);
  if (std::filesystem::exists(status) && !std::filesystem::is_directory(status)) {
    throw Error(what + ": " + directory.string() + " exists and is not a directory; choose a new or empty directory");
  }
}

OutputDirectory::OutputDirectory(std::filesystem::path directory, const std::string& what)
    : directory_(std::move(directory)) {
  check_output_directory(directory_, what);
  std::error_code error;
  if (std::filesystem::is_directory(directory_, error)) return;
  made_directory_ = std::filesystem::create_directories(directory_, error);
  if (error) throw Error(what + ": cannot create " + directory_.string() + ": " + error.message());
}

OutputDirectory::~OutputDirectory() {
  std::error_code ignored;
  if (!staging_.empty()) std::filesystem::remove_all(staging_, ignored);  // our own folder: nothing else is in it
  if (!committed_ && made_directory_) std::filesystem::remove(directory_, ignored);  // only if empty
}

void OutputDirectory::write(const std::string& name, std::string_view contents) {
  write_with(name, [&](const std::filesystem::path& staged) { write_file_atomically(staged, contents); });
}

void OutputDirectory::write_with(const std::string& name,
                                 const std::function<void(const std::filesystem::path&)>& write_file) {
  const std::filesystem::path final_path = directory_ / name;
  check_output_file(final_path);
  if (staging_.empty()) {
    std::string pattern = (directory_ / ".minigen-partial-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      throw Error("cannot create a temporary folder in " + directory_.string() + ": " + std::strerror(errno));
    }
    staging_ = pattern;
  }
  const std::filesystem::path staged = staging_ / name;
  staged_.emplace_back(staged, final_path);
  write_file(staged);
}

void OutputDirectory::commit() {
  for (const auto& [staged, final_path] : staged_) {
    std::error_code error;
    std::filesystem::rename(staged, final_path, error);
    if (error) throw Error("cannot rename " + staged.string() + " to " + final_path.string() + ": " + error.message());
  }
  committed_ = true;
}

}  // namespace minigen
