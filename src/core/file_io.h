#pragma once
// Every file minigen reads goes through here, so that one place decides what a file may be. A path is opened
// without blocking (open() of a FIFO would otherwise wait for a writer forever) and refused unless it is a regular
// file (a FIFO, /dev/zero or a terminal never ends, so "read it whole" would hang or grow without bound). Files read
// whole into memory are refused above a stated size; model weights are mapped, not read; long files are streamed.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <memory>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace minigen {

// Size caps of the files read whole. Each is far above any real file of its kind and low enough that the bytes (and
// the JSON tree nlohmann builds from them, some 10× the text) fit comfortably in memory.
// config.json and tokenizer_config.json: real ones are 1–200 KB (a chat template and the added tokens).
inline constexpr uint64_t kMaxConfigFileBytes = uint64_t{16} << 20;
// tokenizer.json: MiniMind's is 0.4 MB, a 150k-token vocabulary about 11 MB, Gemma's 262k vocabulary 33 MB.
inline constexpr uint64_t kMaxTokenizerFileBytes = uint64_t{64} << 20;
// A prompt file (-f): MiniMind's context of 32,768 tokens is about 130 KB of text; 16 MB is about 4 M tokens.
inline constexpr uint64_t kMaxPromptFileBytes = uint64_t{16} << 20;
// One line of a streamed text file (a JSONL record, a chat message typed on stdin).
inline constexpr uint64_t kMaxLineBytes = uint64_t{16} << 20;

// "16 MiB" for sizes that are whole MiB, else "123 bytes": how error messages state a limit.
std::string byte_count_text(uint64_t bytes);

// A regular file open for reading. Throws minigen::Error "PATH: cannot open: REASON" or "PATH is not a regular
// file (a FIFO, device or directory)".
class RegularFile {
 public:
  explicit RegularFile(const std::filesystem::path& path);
  ~RegularFile();
  RegularFile(const RegularFile&) = delete;
  RegularFile& operator=(const RegularFile&) = delete;

  const std::filesystem::path& path() const { return path_; }
  int descriptor() const { return descriptor_; }
  uint64_t size() const { return size_; }  // as fstat saw it right after opening
  // Reads up to `buffer.size()` bytes; returns how many (0 at the end). Throws minigen::Error on a read error.
  std::size_t read_some(std::span<char> buffer);

 private:
  std::filesystem::path path_;
  int descriptor_ = -1;
  uint64_t size_ = 0;
};

// The whole file. `what` names its role ("tokenizer.json", "prompt file") in the error thrown when the file is larger
// than `max_bytes` (checked before reading, and again while reading in case the file grows meanwhile).
std::string read_whole_file(const std::filesystem::path& path, uint64_t max_bytes, std::string_view what);

// A regular file read line by line (without the '\n'), any number of lines, each at most `max_line_bytes`.
class LineReader {
 public:
  LineReader(const std::filesystem::path& path, uint64_t max_line_bytes);
  // The next line; false at the end of the file. Throws minigen::Error naming the file and line number when a line
  // is longer than the limit.
  bool next(std::string& line);
  int line_number() const { return line_number_; }

 private:
  RegularFile file_;
  uint64_t max_line_bytes_;
  std::string buffer_;
  std::size_t buffer_start_ = 0;
  bool at_end_ = false;
  int line_number_ = 0;
};

// Reads one line (without the '\n') from a stream such as stdin, at most `max_line_bytes`; false at the end of the
// input. Throws minigen::Error when the line is longer, so that endless input without newlines cannot grow memory.
bool read_bounded_line(std::istream& input, std::string& line, uint64_t max_line_bytes, std::string_view what);

// A whole regular file mapped read-only into memory, so that readers of weight files of hundreds of MB can look at
// any byte without copying the file first. Throws minigen::Error naming the file if it cannot be opened or mapped.
class MappedFile {
 public:
  explicit MappedFile(const std::filesystem::path& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const std::byte* data() const { return data_; }
  std::size_t size() const { return size_; }
  std::span<const std::byte> bytes() const { return {data_, size_}; }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  const std::byte* data_ = nullptr;
  std::size_t size_ = 0;
};

// Every file minigen writes follows one rule: a path that exists must be a regular file, which is replaced whole; a
// device, FIFO, socket, directory or symbolic link there is refused, since renaming over it would replace the node
// (a /dev node, a link's name) rather than write what it points to. Throws minigen::Error "PATH exists and is not a
// regular file (it is a symbolic link); remove it or choose another path".
void check_output_file(const std::filesystem::path& path);

// An output stream over a file descriptor it does not own, which keeps the errno of the first failed write (ENOSPC on
// a full disk, EIO, EFBIG) so that the message can say why; the stream goes bad at that failure.
class DescriptorOutputStream : public std::ostream {
 public:
  explicit DescriptorOutputStream(int descriptor);
  ~DescriptorOutputStream() override;
  int write_errno() const;  // 0 while every write succeeded

 private:
  class Buffer;
  std::unique_ptr<Buffer> buffer_;
};

// Refuses an open file with more than one name (a hard link to it elsewhere, which writing would change too): throws
// minigen::Error "PATH has N links (a hard link to another file); refusing to write through it".
void check_single_link(int descriptor, const std::filesystem::path& path);

// A new file beside `destination` (same directory, so that the rename is atomic) under a random name no other process
// can predict, DESTINATION.tmp-XXXXXXXXXXXX. It is made with O_CREAT | O_EXCL | O_NOFOLLOW: a symbolic or hard link
// planted at any name is never followed or truncated (a name that exists is drawn again), and the opened file must
// have one link (check_single_link). Mode 0644 less the umask. commit() renames it over `destination`; destroyed
// without commit() (an error on the way), it is removed.
class ExclusiveTemporaryFile {
 public:
  explicit ExclusiveTemporaryFile(const std::filesystem::path& destination);
  ~ExclusiveTemporaryFile();
  ExclusiveTemporaryFile(const ExclusiveTemporaryFile&) = delete;
  ExclusiveTemporaryFile& operator=(const ExclusiveTemporaryFile&) = delete;

  const std::filesystem::path& path() const { return path_; }
  // Buffered writes; a failure is thrown by commit() with its errno ("cannot write DESTINATION: No space left on
  // device").
  std::ostream& stream() { return *stream_; }
  // Unbuffered: throws minigen::Error with the errno at once.
  void write(const void* data, std::size_t size);
  // Flushes (and with `sync`, fsyncs), closes and renames the file over `destination`. Throws minigen::Error.
  void commit(bool sync = false);

 private:
  [[noreturn]] void fail(const std::string& what, int error_number);
  std::filesystem::path destination_;
  std::filesystem::path path_;
  int descriptor_ = -1;
  std::unique_ptr<DescriptorOutputStream> stream_;
  bool committed_ = false;
};

// A new directory only this user can enter (mkdtemp, mode 0700) in the system's temporary directory, named
// PREFIX-XXXXXX: the work files of a child process (the lab's gnuplot scripts, the bench's captured output) live
// there under fixed names that no other user can plant a link at. Removed with everything in it when destroyed.
class PrivateTemporaryDirectory {
 public:
  explicit PrivateTemporaryDirectory(const std::string& prefix);
  ~PrivateTemporaryDirectory();
  PrivateTemporaryDirectory(const PrivateTemporaryDirectory&) = delete;
  PrivateTemporaryDirectory& operator=(const PrivateTemporaryDirectory&) = delete;

  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// Writes `contents` to a temporary file beside `path` (an ExclusiveTemporaryFile), then renames it over `path`: a
// reader sees the old file or the complete new one, never half of it, and a failed write leaves nothing behind.
// Throws minigen::Error on failure with the reason ("cannot write PATH: No space left on device"; check_output_file's
// included).
void write_file_atomically(const std::filesystem::path& path, std::string_view contents);
// The same for a file written piece by piece by `write` (a large model file is not first assembled in memory); a
// stream left failed by `write` counts as a failed write.
void write_file_atomically(const std::filesystem::path& path, const std::function<void(std::ostream&)>& write);

// Refuses an output directory that exists and is not a directory, before any work is done for it. `what` ("OUT",
// "--out") starts the message.
void check_output_directory(const std::filesystem::path& directory, const std::string& what);

// The files of one output directory, written into a private folder inside it (DIRECTORY/.minigen-partial-XXXXXX,
// mkdtemp, mode 0700: no other user can plant a link there) and renamed into place together by commit(), in the order
// they were written. Destroyed without commit() (an error on the way), it removes that folder with every file in it,
// and the directory itself if it made it: a failed command leaves no half-written output behind.
class OutputDirectory {
 public:
  // Makes `directory` if it is missing. `what` ("OUT", "--out") starts the error when it exists and is not a
  // directory, or cannot be made.
  OutputDirectory(std::filesystem::path directory, const std::string& what);
  ~OutputDirectory();
  OutputDirectory(const OutputDirectory&) = delete;
  OutputDirectory& operator=(const OutputDirectory&) = delete;

  const std::filesystem::path& path() const { return directory_; }
  void write(const std::string& name, std::string_view contents);
  // `write_file` writes the file at the path it is given, inside the private folder (for writers that take a path;
  // minigen's own write through an ExclusiveTemporaryFile there and rename it to that path).
  void write_with(const std::string& name, const std::function<void(const std::filesystem::path&)>& write_file);
  void commit();

 private:
  std::filesystem::path directory_;
  std::filesystem::path staging_;  // the private folder, made at the first write
  bool made_directory_ = false;
  bool committed_ = false;
  std::vector<std::pair<std::filesystem::path, std::filesystem::path>> staged_;  // temporary, final
};

}  // namespace minigen
