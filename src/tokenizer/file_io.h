#pragma once
// Whole-file reads and crash-safe writes for the tokenizer's JSON files.
#include <filesystem>
#include <string>
#include <string_view>

namespace minigen {

// The file's bytes; throws minigen::Error naming the path when it cannot be read.
std::string read_whole_file(const std::filesystem::path& path);

// Writes `contents` to a temporary file beside `path`, then renames it over `path`: a reader sees the old file or
// the complete new one, never half of it, and a failed write leaves nothing behind. Throws minigen::Error on failure.
void write_file_atomically(const std::filesystem::path& path, std::string_view contents);

}  // namespace minigen
