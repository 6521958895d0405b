#include "model/io/zip_reader.h"

#include <zlib.h>

#include <algorithm>
#include <limits>

#include "core/error.h"

namespace minigen {
namespace {

// Record signatures and fixed sizes from the zip application note (PKWARE APPNOTE.TXT).
constexpr uint32_t kLocalHeaderSignature = 0x04034b50;
constexpr uint32_t kCentralHeaderSignature = 0x02014b50;
constexpr uint32_t kEndRecordSignature = 0x06054b50;
constexpr uint32_t kZip64EndRecordSignature = 0x06064b50;
constexpr uint32_t kZip64LocatorSignature = 0x07064b50;
constexpr uint64_t kLocalHeaderBytes = 30;
constexpr uint64_t kCentralHeaderBytes = 46;
constexpr uint64_t kEndRecordBytes = 22;
constexpr uint64_t kZip64LocatorBytes = 20;
constexpr uint64_t kZip64EndRecordBytes = 56;
constexpr uint64_t kMaxCommentBytes = 0xffff;
constexpr uint16_t kZip64ExtraFieldId = 0x0001;
constexpr uint32_t kZip64Marker32 = 0xffffffff;
constexpr uint16_t kZip64Marker16 = 0xffff;
constexpr uint16_t kEncryptedFlag = 0x0001;
constexpr uint16_t kMethodStored = 0;
constexpr uint16_t kMethodDeflate = 8;
// DEFLATE cannot compress better than about 1032:1; a larger declared size is a damaged or hostile archive, and
// believing it would mean allocating memory the data cannot fill.
constexpr uint64_t kMaxDeflateRatio = 1032;

// Little-endian reads from the mapped archive, every one checked against the archive's size.
class ArchiveBytes {
 public:
  ArchiveBytes(const std::byte* data, uint64_t size, std::string file_name)
      : data_(data), size_(size), file_name_(std::move(file_name)) {}

  void require(uint64_t offset, uint64_t length, const std::string& what) const {
    if (offset > size_ || length > size_ - offset) fail(what + " extends beyond the end of the file");
  }
  uint64_t read_le(uint64_t offset, int byte_count, const std::string& what) const {
    require(offset, static_cast<uint64_t>(byte_count), what);
    uint64_t value = 0;
    for (int i = byte_count - 1; i >= 0; --i) value = (value << 8) | std::to_integer<uint64_t>(data_[offset + i]);
    return value;
  }
  uint16_t u16(uint64_t offset, const std::string& what) const {
    return static_cast<uint16_t>(read_le(offset, 2, what));
  }
  uint32_t u32(uint64_t offset, const std::string& what) const {
    return static_cast<uint32_t>(read_le(offset, 4, what));
  }
  uint64_t u64(uint64_t offset, const std::string& what) const { return read_le(offset, 8, what); }
  const std::byte* at(uint64_t offset) const { return data_ + offset; }
  uint64_t size() const { return size_; }
  [[noreturn]] void fail(const std::string& problem) const { throw Error(file_name_ + ": " + problem); }

 private:
  const std::byte* data_;
  uint64_t size_;
  std::string file_name_;
};

struct DirectoryLocation {
  uint64_t entry_count = 0;
  uint64_t offset = 0;
  uint64_t size = 0;
  uint64_t end = 0;  // where the records after the directory start; the directory must end before
};

uint64_t find_end_record(const ArchiveBytes& bytes) {
  if (bytes.size() < kEndRecordBytes) bytes.fail("not a zip archive (too small)");
  const uint64_t lowest =
      bytes.size() > kEndRecordBytes + kMaxCommentBytes ? bytes.size() - kEndRecordBytes - kMaxCommentBytes : 0;
  // The end record sits at the very end, followed only by an archive comment of at most 64 KB.
  for (uint64_t offset = bytes.size() - kEndRecordBytes + 1; offset-- > lowest;) {
    if (bytes.u32(offset, "end record") != kEndRecordSignature) continue;
    const uint16_t comment_bytes = bytes.u16(offset + 20, "end record");
    if (offset + kEndRecordBytes + comment_bytes <= bytes.size()) return offset;
  }
  bytes.fail("not a zip archive (no end of central directory record)");
}

DirectoryLocation locate_directory(const ArchiveBytes& bytes) {
  const uint64_t end_record = find_end_record(bytes);
  const uint16_t this_disk = bytes.u16(end_record + 4, "end record");
  const uint16_t directory_disk = bytes.u16(end_record + 6, "end record");
  DirectoryLocation location;
  location.entry_count = bytes.u16(end_record + 10, "end record");
  location.size = bytes.u32(end_record + 12, "end record");
  location.offset = bytes.u32(end_record + 16, "end record");
  location.end = end_record;

  const bool has_locator = end_record >= kZip64LocatorBytes &&
                           bytes.u32(end_record - kZip64LocatorBytes, "zip64 locator") == kZip64LocatorSignature;
  if (has_locator) {
    // torch.save always writes the zip64 records; their values replace the 16- and 32-bit ones.
    const uint64_t locator = end_record - kZip64LocatorBytes;
    const uint64_t record = bytes.u64(locator + 8, "zip64 locator");
    if (bytes.u32(locator + 16, "zip64 locator") > 1) bytes.fail("multi-disk zip archives are not supported");
    if (record > locator || locator - record < kZip64EndRecordBytes) {
      bytes.fail("zip64 end record offset is out of range");
    }
    if (bytes.u32(record, "zip64 end record") != kZip64EndRecordSignature) {
      bytes.fail("zip64 end record is missing or damaged");
    }
    if (bytes.u32(record + 16, "zip64 end record") != 0 || bytes.u32(record + 20, "zip64 end record") != 0) {
      bytes.fail("multi-disk zip archives are not supported");
    }
    location.entry_count = bytes.u64(record + 32, "zip64 end record");
    location.size = bytes.u64(record + 40, "zip64 end record");
    location.offset = bytes.u64(record + 48, "zip64 end record");
    location.end = record;
  } else {
    if (this_disk != 0 || directory_disk != 0) bytes.fail("multi-disk zip archives are not supported");
    if (location.entry_count == kZip64Marker16 || location.size == kZip64Marker32 ||
        location.offset == kZip64Marker32) {
      bytes.fail("zip64 archive without a zip64 end record locator");
    }
  }
  if (location.offset > location.end || location.size > location.end - location.offset) {
    bytes.fail("central directory lies outside the archive");
  }
  if (location.entry_count > location.size / kCentralHeaderBytes) {
    bytes.fail("central directory is too small for its " + std::to_string(location.entry_count) + " entries");
  }
  return location;
}

// Replaces the 32-bit fields that hold 0xffffffff with the 64-bit values of the zip64 extra field, which lists
// only those, in the order: uncompressed size, compressed size, local header offset.
void apply_zip64_extra(const ArchiveBytes& bytes, uint64_t extra_offset, uint16_t extra_bytes, ZipEntry& entry,
                       bool needs_uncompressed, bool needs_compressed, bool needs_offset) {
  const std::string what = "zip64 extra field of '" + entry.name + "'";
  uint64_t field = extra_offset;
  const uint64_t extra_end = extra_offset + extra_bytes;
  while (field + 4 <= extra_end) {
    const uint16_t id = bytes.u16(field, what);
    const uint16_t field_bytes = bytes.u16(field + 2, what);
    const uint64_t data = field + 4;
    if (data + field_bytes > extra_end) bytes.fail(what + " is truncated");
    if (id == kZip64ExtraFieldId) {
      uint64_t cursor = data;
      auto next_value = [&]() {
        if (cursor + 8 > data + field_bytes) bytes.fail(what + " is too short");
        const uint64_t value = bytes.u64(cursor, what);
        cursor += 8;
        return value;
      };
      if (needs_uncompressed) entry.uncompressed_size = next_value();
      if (needs_compressed) entry.compressed_size = next_value();
      if (needs_offset) entry.local_header_offset = next_value();
      return;
    }
    field = data + field_bytes;
  }
  if (needs_uncompressed || needs_compressed || needs_offset) {
    bytes.fail("entry '" + entry.name + "' lacks its zip64 sizes");
  }
}

std::vector<std::byte> inflate_entry(const ArchiveBytes& bytes, const ZipEntry& entry, uint64_t data_offset) {
  const std::string what = "entry '" + entry.name + "'";
  if (entry.uncompressed_size > std::numeric_limits<std::size_t>::max()) bytes.fail(what + " is too large");
  std::vector<std::byte> output(static_cast<std::size_t>(entry.uncompressed_size));

  z_stream stream{};
  // zlib refuses a null output pointer even when there is nothing to write, as for an empty entry.
  Bytef empty_output = 0;
  stream.next_out = &empty_output;
  if (inflateInit2(&stream, -MAX_WBITS) != Z_OK) bytes.fail("cannot start zlib for " + what);  // raw deflate
  constexpr uint64_t kMaxChunk = std::numeric_limits<uInt>::max();
  uint64_t input_done = 0;
  uint64_t output_done = 0;
  int status = Z_OK;
  while (status == Z_OK) {
    // zlib counts in 32-bit uInt, so feed archives above 4 GB in pieces.
    if (stream.avail_in == 0 && input_done < entry.compressed_size) {
      const uint64_t chunk = std::min(kMaxChunk, entry.compressed_size - input_done);
      stream.next_in = reinterpret_cast<Bytef*>(const_cast<std::byte*>(bytes.at(data_offset + input_done)));
      stream.avail_in = static_cast<uInt>(chunk);
      input_done += chunk;
    }
    if (stream.avail_out == 0 && output_done < output.size()) {
      const uint64_t chunk = std::min<uint64_t>(kMaxChunk, output.size() - output_done);
      stream.next_out = reinterpret_cast<Bytef*>(output.data() + output_done);
      stream.avail_out = static_cast<uInt>(chunk);
      output_done += chunk;
    }
    status = inflate(&stream, Z_NO_FLUSH);
    if (status == Z_BUF_ERROR && (stream.avail_in > 0 || input_done < entry.compressed_size) &&
        (stream.avail_out > 0 || output_done < output.size())) {
      status = Z_OK;  // zlib asks for more room or input that the next round provides
    }
  }
  const uint64_t produced = output_done - stream.avail_out;
  inflateEnd(&stream);
  if (status != Z_STREAM_END || produced != entry.uncompressed_size) {
    bytes.fail(what + " has damaged DEFLATE data");
  }
  return output;
}

}  // namespace

ZipReader::ZipReader(const std::filesystem::path& path)
    : file_(std::make_unique<MappedFile>(path)), bytes_(file_->bytes()), name_(path.string()) {
  read_central_directory();
}

ZipReader::ZipReader(std::span<const std::byte> bytes, std::string name) : bytes_(bytes), name_(std::move(name)) {
  read_central_directory();
}

void ZipReader::read_central_directory() {
  const ArchiveBytes bytes(bytes_.data(), bytes_.size(), name_);
  const DirectoryLocation directory = locate_directory(bytes);
  central_directory_offset_ = directory.offset;
  const uint64_t directory_end = directory.offset + directory.size;
  entries_.reserve(static_cast<std::size_t>(directory.entry_count));
  uint64_t cursor = directory.offset;
  for (uint64_t index = 0; index < directory.entry_count; ++index) {
    const std::string what = "central directory entry " + std::to_string(index);
    if (cursor + kCentralHeaderBytes > directory_end) bytes.fail(what + " is truncated");
    if (bytes.u32(cursor, what) != kCentralHeaderSignature) bytes.fail(what + " is damaged (bad signature)");
    const uint16_t flags = bytes.u16(cursor + 8, what);
    ZipEntry entry;
    entry.method = bytes.u16(cursor + 10, what);
    const uint32_t compressed32 = bytes.u32(cursor + 20, what);
    const uint32_t uncompressed32 = bytes.u32(cursor + 24, what);
    const uint16_t name_bytes = bytes.u16(cursor + 28, what);
    const uint16_t extra_bytes = bytes.u16(cursor + 30, what);
    const uint16_t comment_bytes = bytes.u16(cursor + 32, what);
    const uint32_t offset32 = bytes.u32(cursor + 42, what);
    const uint64_t variable_bytes = uint64_t{name_bytes} + extra_bytes + comment_bytes;
    if (cursor + kCentralHeaderBytes + variable_bytes > directory_end) bytes.fail(what + " is truncated");
    entry.name.assign(reinterpret_cast<const char*>(bytes.at(cursor + kCentralHeaderBytes)), name_bytes);
    entry.compressed_size = compressed32;
    entry.uncompressed_size = uncompressed32;
    entry.local_header_offset = offset32;
    apply_zip64_extra(bytes, cursor + kCentralHeaderBytes + name_bytes, extra_bytes, entry,
                      uncompressed32 == kZip64Marker32, compressed32 == kZip64Marker32, offset32 == kZip64Marker32);
    if (flags & kEncryptedFlag) bytes.fail("entry '" + entry.name + "' is encrypted");
    if (entry.method != kMethodStored && entry.method != kMethodDeflate) {
      bytes.fail("entry '" + entry.name + "' uses compression method " + std::to_string(entry.method) +
                 " (only STORED and DEFLATE are supported)");
    }
    if (entry.method == kMethodStored && entry.compressed_size != entry.uncompressed_size) {
      bytes.fail("stored entry '" + entry.name + "' has different compressed and uncompressed sizes");
    }
    entries_.push_back(std::move(entry));
    cursor += kCentralHeaderBytes + variable_bytes;
  }
  for (std::size_t index = 0; index < entries_.size(); ++index) {
    if (!index_by_name_.emplace(entries_[index].name, index).second) {
      bytes.fail("entry '" + entries_[index].name + "' appears twice");
    }
  }
  locate_entry_data();
  inflate_budget_ = kMaxInflatedBytesPerArchiveByte * bytes.size() + kInflateAllowanceBytes;
}

void ZipReader::locate_entry_data() {
  const ArchiveBytes bytes(bytes_.data(), bytes_.size(), name_);
  // Each entry occupies [local header, end of its data); the spans must fit before the central directory and be
  // disjoint. Checked here, once, so that read() can trust an entry's range.
  std::vector<std::pair<uint64_t, uint64_t>> spans;  // [begin, end) by entry index
  spans.reserve(entries_.size());
  for (ZipEntry& entry : entries_) {
    const std::string what = "local header of '" + entry.name + "'";
    const uint64_t header = entry.local_header_offset;
    if (header > central_directory_offset_ || central_directory_offset_ - header < kLocalHeaderBytes) {
      bytes.fail(what + " lies outside the archive data");
    }
    if (bytes.u32(header, what) != kLocalHeaderSignature) bytes.fail(what + " is damaged (bad signature)");
    // The local name and extra lengths may differ from the central directory's (torch pads the local extra field
    // so that tensor data starts on a 64-byte boundary); the sizes, though, come from the central directory,
    // because a writer that streams (flag bit 3, as torch does) leaves them zero here.
    entry.data_offset = header + kLocalHeaderBytes + bytes.u16(header + 26, what) + bytes.u16(header + 28, what);
    if (entry.data_offset > central_directory_offset_ ||
        entry.compressed_size > central_directory_offset_ - entry.data_offset) {
      bytes.fail("data of '" + entry.name + "' extends into the central directory or beyond the end of the file");
    }
    spans.emplace_back(header, entry.data_offset + entry.compressed_size);
  }
  std::vector<std::size_t> order(entries_.size());
  for (std::size_t index = 0; index < order.size(); ++index) order[index] = index;
  // Ties broken by index, so that the entries named in the error are the first two listed.
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return spans[a] != spans[b] ? spans[a] < spans[b] : a < b; });
  for (std::size_t i = 1; i < order.size(); ++i) {
    if (spans[order[i]].first < spans[order[i - 1]].second) {
      bytes.fail("entries '" + entries_[order[i - 1]].name + "' and '" + entries_[order[i]].name +
                 "' overlap (a zip entry's header and data must not share bytes with another's)");
    }
  }
}

const ZipEntry* ZipReader::find(std::string_view name) const {
  const auto found = index_by_name_.find(name);
  return found == index_by_name_.end() ? nullptr : &entries_[found->second];
}

ZipEntryData ZipReader::read(const ZipEntry& entry, uint64_t max_bytes) const {
  const ArchiveBytes bytes(bytes_.data(), bytes_.size(), name_);
  const std::string what = "entry '" + entry.name + "'";
  if (entry.uncompressed_size > max_bytes) {
    bytes.fail(what + " holds " + std::to_string(entry.uncompressed_size) + " bytes, more than the " +
               std::to_string(max_bytes) + " it may hold");
  }
  // The range was checked when the directory was read; check again in case `entry` is not one of ours.
  bytes.require(entry.data_offset, entry.compressed_size, "data of '" + entry.name + "'");
  if (entry.method == kMethodStored) {
    return ZipEntryData(
        std::span<const std::byte>(bytes.at(entry.data_offset), static_cast<std::size_t>(entry.compressed_size)));
  }
  if (entry.uncompressed_size > entry.compressed_size * kMaxDeflateRatio + 64) {
    bytes.fail(what + " claims an impossible compression ratio");
  }
  if (entry.uncompressed_size > inflate_budget_ - inflated_bytes_) {
    bytes.fail(what + " would inflate to " + std::to_string(entry.uncompressed_size) + " bytes; with the " +
               std::to_string(inflated_bytes_) + " already inflated that is more than " +
               std::to_string(kMaxInflatedBytesPerArchiveByte) + " bytes per archive byte (" +
               std::to_string(inflate_budget_) + " bytes; store the entries uncompressed, as torch.save does)");
  }
  inflated_bytes_ += entry.uncompressed_size;
  return ZipEntryData(inflate_entry(bytes, entry, entry.data_offset));
}

}  // namespace minigen
