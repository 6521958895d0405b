// The zip reader (src/model/zip_reader.*). Beyond "no crash" and "only minigen::Error": names are unique and find()
// returns each entry; every entry's [local header, end of data) lies before the central directory and shares no
// byte with another's; a read gives exactly the declared uncompressed size (a STORED entry as a view into the
// input, at its data offset); all reads together inflate at most 32 bytes per archive byte + 1 MiB.
#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "core/error.h"
#include "fuzz_check.h"
#include "model/io/zip_reader.h"

using namespace minigen;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto bytes = fuzz::as_bytes(data, size);
  std::optional<ZipReader> opened;
  try {
    opened.emplace(bytes, "fuzz.zip");
  } catch (const Error&) {
    return 0;
  }
  const ZipReader& zip = *opened;
  std::vector<std::pair<uint64_t, uint64_t>> spans;
  for (const ZipEntry& entry : zip.entries()) {
    fuzz::check(zip.find(entry.name) == &entry, "find() returns the entry of that name");
    fuzz::check(entry.data_offset + entry.compressed_size <= size, "entry data inside the archive");
    spans.emplace_back(entry.local_header_offset, entry.data_offset + entry.compressed_size);
  }
  std::sort(spans.begin(), spans.end());
  for (std::size_t i = 1; i < spans.size(); ++i) fuzz::check(spans[i].first >= spans[i - 1].second, "disjoint");

  uint64_t inflated = 0;
  for (const ZipEntry& entry : zip.entries()) {
    try {
      const ZipEntryData read = zip.read(entry);
      fuzz::check(read.bytes().size() == entry.uncompressed_size, "read gives the declared size");
      if (entry.method == 0) {
        fuzz::check(read.bytes().data() == bytes.data() + entry.data_offset, "stored entry is a view of its data");
      } else {
        inflated += entry.uncompressed_size;
      }
    } catch (const Error&) {
    }
  }
  fuzz::check(inflated <= ZipReader::kMaxInflatedBytesPerArchiveByte * size + ZipReader::kInflateAllowanceBytes,
              "inflation budget");
  return 0;
}
