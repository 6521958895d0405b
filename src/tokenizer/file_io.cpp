#include "tokenizer/file_io.h"

#include <unistd.h>

#include <fstream>
#include <sstream>
#include <system_error>

#include "core/error.h"

namespace minigen {

std::string read_whole_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot open " + path.string() + " for reading");
  std::ostringstream contents;
  contents << in.rdbuf();
  if (in.bad()) throw Error("error while reading " + path.string());
  return std::move(contents).str();
}

void write_file_atomically(const std::filesystem::path& path, std::string_view contents) {
  // The temporary name carries the process id so that two writers never share one temporary file.
  std::filesystem::path temporary = path;
  temporary += ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) throw Error("cannot open " + temporary.string() + " for writing");
    out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
    out.close();
    if (!out) {
      std::error_code ignored;
      std::filesystem::remove(temporary, ignored);
      throw Error("error while writing " + temporary.string());
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

}  // namespace minigen
