#pragma once
// A reader for the zip archives torch.save writes: the central directory (with zip64 records when present), and
// each entry's bytes either in place (STORED, the usual case for torch) or inflated with zlib (DEFLATE).
#include <cstdint>
#include <filesystem>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "model/tensor.h"

namespace minigen {

struct ZipEntry {
  std::string name;
  uint16_t method = 0;  // 0 STORED, 8 DEFLATE
  uint64_t compressed_size = 0;
  uint64_t uncompressed_size = 0;
  uint64_t local_header_offset = 0;
};

// The bytes of one entry: a view into the mapped archive for a STORED entry, an inflated copy otherwise.
class ZipEntryData {
 public:
  ZipEntryData() = default;
  explicit ZipEntryData(std::span<const std::byte> view) : view_(view) {}
  explicit ZipEntryData(std::vector<std::byte> owned) : owned_(std::move(owned)), view_(owned_) {}
  ZipEntryData(ZipEntryData&& other) noexcept = default;  // moving a vector keeps its buffer, so view_ stays valid
  ZipEntryData& operator=(ZipEntryData&& other) noexcept = default;
  ZipEntryData(const ZipEntryData&) = delete;
  ZipEntryData& operator=(const ZipEntryData&) = delete;

  std::span<const std::byte> bytes() const { return view_; }

 private:
  std::vector<std::byte> owned_;
  std::span<const std::byte> view_;
};

class ZipReader {
 public:
  // Maps the archive and reads its central directory; throws minigen::Error naming the file if it is not a zip
  // archive this reader can handle (multi-disk, encrypted, or compressed other than STORED/DEFLATE).
  explicit ZipReader(const std::filesystem::path& path);

  const std::filesystem::path& path() const { return file_.path(); }
  std::size_t file_size() const { return file_.size(); }
  const std::vector<ZipEntry>& entries() const { return entries_; }
  const ZipEntry* find(std::string_view name) const;  // nullptr if absent
  // The entry's uncompressed bytes; throws minigen::Error if the local header or the data is damaged.
  ZipEntryData read(const ZipEntry& entry) const;

 private:
  void read_central_directory();

  MappedFile file_;
  std::vector<ZipEntry> entries_;
  std::map<std::string, std::size_t, std::less<>> index_by_name_;
  uint64_t central_directory_offset_ = 0;  // entry data must lie before it
};

}  // namespace minigen
