#pragma once
// A reader for the zip archives torch.save writes: the central directory (with zip64 records when present), and
// each entry's bytes either in place (STORED, the usual case for torch) or inflated with zlib (DEFLATE).
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
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
  uint64_t data_offset = 0;  // where the (compressed) bytes start, after the local header
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

// Reads the central directory when constructed and refuses, before anything is inflated, an archive whose entries
// could make it use more memory than its size justifies: every entry's local header and data must lie before the
// central directory and share no byte with another entry's (so a small file cannot list one compressed stream a
// thousand times), and all the entries read from one reader may inflate to at most kMaxInflatedBytesPerArchiveByte
// times the archive's size, plus kInflateAllowanceBytes, in total.
class ZipReader {
 public:
  // 32: a reader of a .pth keeps at most this many inflated bytes per archive byte, the same 32 bytes per byte
  // that its fp32 tensors may take (torch_pth.cpp). torch writes every entry STORED (no inflation at all); a state
  // dict recompressed with zip compresses 1–2× (weights) or up to ~1000× (all-zero tensors) — the latter has to be
  // re-saved uncompressed. The allowance covers small archives whose pickle and text entries compress well.
  static constexpr uint64_t kMaxInflatedBytesPerArchiveByte = 32;
  static constexpr uint64_t kInflateAllowanceBytes = uint64_t{1} << 20;

  // Maps the archive and reads its central directory; throws minigen::Error naming the file if it is not a zip
  // archive this reader can handle (multi-disk, encrypted, or compressed other than STORED/DEFLATE).
  explicit ZipReader(const std::filesystem::path& path);
  // The same for an archive already in memory; `bytes` must outlive the reader. `name` starts error messages.
  ZipReader(std::span<const std::byte> bytes, std::string name);

  const std::string& name() const { return name_; }
  std::size_t archive_size() const { return bytes_.size(); }
  const std::vector<ZipEntry>& entries() const { return entries_; }
  const ZipEntry* find(std::string_view name) const;  // nullptr if absent
  // The entry's uncompressed bytes; throws minigen::Error if the local data is damaged, if the entry's uncompressed
  // size exceeds `max_bytes` (checked before anything is allocated), or if inflating it would take this reader past
  // its budget of inflated bytes.
  ZipEntryData read(const ZipEntry& entry, uint64_t max_bytes = UINT64_MAX) const;

 private:
  void read_central_directory();
  void locate_entry_data();

  std::unique_ptr<MappedFile> file_;  // when the reader mapped the archive itself
  std::span<const std::byte> bytes_;
  std::string name_;
  std::vector<ZipEntry> entries_;
  std::map<std::string, std::size_t, std::less<>> index_by_name_;
  uint64_t central_directory_offset_ = 0;  // entry data must lie before it
  uint64_t inflate_budget_ = 0;
  mutable uint64_t inflated_bytes_ = 0;  // by read() so far
};

}  // namespace minigen
