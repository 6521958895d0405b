#include "core/file_io.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <istream>
#include <limits>
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

void write_file_atomically(const std::filesystem::path& path, std::string_view contents) {
  write_file_atomically(
      path, [&](std::ostream& out) { out.write(contents.data(), static_cast<std::streamsize>(contents.size())); });
}

void write_file_atomically(const std::filesystem::path& path, const std::function<void(std::ostream&)>& write) {
  check_output_file(path);
  // The temporary name carries the process id so that two writers never share one temporary file.
  std::filesystem::path temporary = path;
  temporary += ".tmp." + std::to_string(::getpid());
  {
    errno = 0;
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) throw Error("cannot create " + temporary.string() + ": " + std::strerror(errno));
    try {
      write(out);
    } catch (...) {
      out.close();
      std::error_code ignored;
      std::filesystem::remove(temporary, ignored);
      throw;
    }
    out.flush();
    const int write_errno = errno;
    out.close();
    if (!out) {
      std::error_code ignored;
      std::filesystem::remove(temporary, ignored);
      throw Error("cannot write " + path.string() + ": " + std::strerror(write_errno != 0 ? write_errno : EIO));
    }
  }
  std::error_code rename_error;
  std::filesystem::rename(temporary, path, rename_error);
  if (rename_error) {
    std::error_code ignored;
    std::filesystem::remove(temporary, ignored);
    throw Error("cannot rename " + temporary.string() + " to " + path.string() + ": " + rename_error.message());
  }
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
  if (committed_) return;
  std::error_code ignored;
  for (const auto& [temporary, final_path] : staged_) std::filesystem::remove(temporary, ignored);
  if (made_directory_) std::filesystem::remove(directory_, ignored);  // only if empty: nothing else of ours is there
}

void OutputDirectory::write(const std::string& name, std::string_view contents) {
  write_with(name, [&](const std::filesystem::path& temporary) { write_file_atomically(temporary, contents); });
}

void OutputDirectory::write_with(const std::string& name,
                                 const std::function<void(const std::filesystem::path&)>& write_file) {
  const std::filesystem::path final_path = directory_ / name;
  check_output_file(final_path);
  std::filesystem::path temporary = final_path;
  temporary += ".partial." + std::to_string(::getpid());
  staged_.emplace_back(temporary, final_path);
  write_file(temporary);
}

void OutputDirectory::commit() {
  for (const auto& [temporary, final_path] : staged_) {
    std::error_code error;
    std::filesystem::rename(temporary, final_path, error);
    if (error)
      throw Error("cannot rename " + temporary.string() + " to " + final_path.string() + ": " + error.message());
  }
  committed_ = true;
}

}  // namespace minigen
