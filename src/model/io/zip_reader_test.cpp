#include "model/io/zip_reader.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "core/memory_limit_test_util.h"
#include "model/io/torch_pth_test_writer.h"

namespace minigen {
namespace {

namespace fs = std::filesystem;
using testing::Bytes;
using testing::ZipTestWriter;
using ZipReaderTest = testing::ScratchFileTest;

std::string entry_text(const ZipReader& zip, const std::string& name) {
  const ZipEntry* entry = zip.find(name);
  if (entry == nullptr) return "<missing>";
  const ZipEntryData data = zip.read(*entry);
  return std::string(reinterpret_cast<const char*>(data.bytes().data()), data.bytes().size());
}

fs::path write_archive(const std::string& name, const Bytes& bytes) {
  const fs::path path = testing::scratch_path(name);
  testing::write_bytes(path, bytes);
  return path;
}

Bytes sample_archive(bool deflate, bool zip64) {
  ZipTestWriter zip;
  if (zip64) zip.force_zip64();
  zip.add("archive/data.pkl", "pickle bytes", deflate);
  zip.add("archive/data/0", Bytes(5000, 'z'), deflate);  // compresses well
  zip.add("archive/empty", "", deflate);
  return zip.finish();
}

TEST_F(ZipReaderTest, ReadsStoredDeflatedAndZip64Archives) {
  for (const bool deflate : {false, true}) {
    for (const bool zip64 : {false, true}) {
      SCOPED_TRACE(std::string(deflate ? "deflate" : "stored") + (zip64 ? " zip64" : ""));
      const ZipReader zip(write_archive("sample.zip", sample_archive(deflate, zip64)));
      ASSERT_EQ(zip.entries().size(), 3u);
      EXPECT_EQ(zip.entries()[1].name, "archive/data/0");
      EXPECT_EQ(zip.entries()[1].uncompressed_size, 5000u);
      EXPECT_EQ(zip.entries()[1].method, deflate ? 8 : 0);
      EXPECT_EQ(zip.entries()[1].compressed_size < 100u, deflate);
      EXPECT_EQ(entry_text(zip, "archive/data.pkl"), "pickle bytes");
      EXPECT_EQ(entry_text(zip, "archive/data/0"), Bytes(5000, 'z'));
      EXPECT_EQ(entry_text(zip, "archive/empty"), "");
      EXPECT_EQ(zip.find("archive/data/1"), nullptr);
    }
  }
}

TEST_F(ZipReaderTest, ToleratesAnArchiveComment) {
  Bytes archive = sample_archive(false, false);
  archive[archive.size() - 2] = 7;  // comment length
  archive += "comment";
  const ZipReader zip(write_archive("commented.zip", archive));
  EXPECT_EQ(entry_text(zip, "archive/data.pkl"), "pickle bytes");
}

std::string open_error(const Bytes& archive) {
  try {
    const ZipReader zip(write_archive("broken.zip", archive));
    for (const ZipEntry& entry : zip.entries()) zip.read(entry);
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

// Offset of the n-th (0-based) occurrence of a 4-byte signature.
std::size_t find_signature(const Bytes& archive, uint32_t signature, int occurrence = 0) {
  Bytes pattern;
  testing::append_le(pattern, signature, 4);
  std::size_t position = archive.find(pattern);
  while (occurrence-- > 0) position = archive.find(pattern, position + 1);
  return position;
}

TEST_F(ZipReaderTest, RejectsDamagedArchives) {
  EXPECT_NE(open_error("short").find("too small"), std::string::npos);
  EXPECT_NE(open_error(Bytes(100, 'x')).find("no end of central directory"), std::string::npos);

  const Bytes good = sample_archive(false, false);
  const std::size_t directory = find_signature(good, 0x02014b50);

  Bytes unsupported_method = good;
  unsupported_method[directory + 10] = 12;  // bzip2
  EXPECT_NE(open_error(unsupported_method).find("compression method 12"), std::string::npos);

  Bytes encrypted = good;
  encrypted[directory + 8] = 1;
  EXPECT_NE(open_error(encrypted).find("is encrypted"), std::string::npos);

  Bytes bad_offset = good;
  bad_offset[directory + 44] = 0x7f;  // local header offset far beyond the file
  EXPECT_NE(open_error(bad_offset).find("local header"), std::string::npos) << open_error(bad_offset);

  Bytes bad_local = good;
  bad_local[0] = 'X';
  EXPECT_NE(open_error(bad_local).find("bad signature"), std::string::npos);

  Bytes directory_outside = good;
  const std::size_t end_record = find_signature(good, 0x06054b50);
  directory_outside[end_record + 19] = 0x40;  // directory offset beyond the end record
  EXPECT_NE(open_error(directory_outside).find("outside the archive"), std::string::npos);

  Bytes too_many_entries = good;
  too_many_entries[end_record + 10] = static_cast<char>(0xff);
  EXPECT_NE(open_error(too_many_entries).find("too small for its"), std::string::npos);

  ZipTestWriter duplicates;
  duplicates.add("a", "1");
  duplicates.add("a", "2");
  EXPECT_NE(open_error(duplicates.finish()).find("appears twice"), std::string::npos);
}

TEST_F(ZipReaderTest, RejectsDamagedDeflateData) {
  const Bytes good = sample_archive(true, false);
  // Corrupt the compressed bytes of the large entry (its local header is the second one).
  Bytes damaged = good;
  const std::size_t local = find_signature(good, 0x04034b50, 1);
  for (std::size_t i = local + 30 + 14; i < local + 30 + 14 + 8; ++i) damaged[i] = static_cast<char>(0xff);
  EXPECT_NE(open_error(damaged).find("damaged DEFLATE data"), std::string::npos) << open_error(damaged);

  // A declared size no DEFLATE stream of that length can produce.
  Bytes inflated_claim = good;
  const std::size_t directory_entry = find_signature(good, 0x02014b50, 1);
  inflated_claim[directory_entry + 27] = 0x7f;  // uncompressed size ≈ 2 GB
  EXPECT_NE(open_error(inflated_claim).find("impossible compression ratio"), std::string::npos);
}

// One local entry listed 500 times in the central directory: before entries had to be disjoint, every listing could
// be inflated on its own, so memory grew with the number of listings.
TEST_F(ZipReaderTest, RefusesEntriesThatShareBytes) {
  ZipTestWriter aliased;
  aliased.add("archive/data/0", Bytes(1 << 20, '\0'), /*deflate=*/true);
  for (int i = 1; i < 500; ++i) aliased.add_alias("archive/data/" + std::to_string(i), 0);
  const fs::path path = write_archive("aliased.zip", aliased.finish());
  std::string message;
  try {
    const ZipReader zip(path);
  } catch (const Error& error) {
    message = error.what();
  }
  EXPECT_EQ(message, path.string() +
                         ": entries 'archive/data/0' and 'archive/data/1' overlap (a zip entry's header and data "
                         "must not share bytes with another's)");

  // A second local header hidden inside the first entry's data, and the directory pointing at it.
  ZipTestWriter inner;
  inner.add("b", "hello");
  Bytes nested_header = inner.finish();
  nested_header.resize(find_signature(nested_header, 0x02014b50));  // the local header and data of "b" only
  ZipTestWriter outer;
  outer.add("a", nested_header);
  outer.add("b", "hello");
  Bytes archive = outer.finish();
  const std::size_t directory_of_b = find_signature(archive, 0x02014b50, 1);
  archive.replace(directory_of_b + 42, 4, Bytes("\x1f\0\0\0", 4));  // 31: where the data of "a" starts
  EXPECT_NE(open_error(archive).find("entries 'a' and 'b' overlap"), std::string::npos) << open_error(archive);

  ZipTestWriter into_directory;
  into_directory.add("a", "0123456789");
  Bytes long_data = into_directory.finish();
  long_data[find_signature(long_data, 0x02014b50) + 20] = 40;  // compressed size 40 reaches into the directory
  long_data[find_signature(long_data, 0x02014b50) + 24] = 40;
  EXPECT_NE(open_error(long_data).find("data of 'a' extends into the central directory"), std::string::npos)
      << open_error(long_data);
}

TEST_F(ZipReaderTest, RefusesAnEntryLargerThanTheCallerAllows) {
  const ZipReader zip(write_archive("sample.zip", sample_archive(true, false)));
  EXPECT_EQ(zip.read(*zip.find("archive/data/0"), 5000).bytes().size(), 5000u);
  try {
    zip.read(*zip.find("archive/data/0"), 4999);
    ADD_FAILURE() << "expected an Error";
  } catch (const Error& error) {
    EXPECT_EQ(std::string(error.what()),
              zip.name() + ": entry 'archive/data/0' holds 5000 bytes, more than the 4999 it may hold");
  }
}

// A zip bomb: 1 MiB of data declaring 1,000 MiB (within what DEFLATE can reach, so only the budget stops it). It must
// be refused from the sizes alone, before the gigabyte is allocated.
TEST_F(ZipReaderTest, RefusesToInflateBeyondItsBudgetBeforeAllocating) {
  ZipTestWriter bomb;
  bomb.add_raw("bomb", 8, Bytes(1 << 20, 'x'), uint64_t{1000} << 20);
  const fs::path path = write_archive("bomb.zip", bomb.finish());
  const ZipReader zip(path);
  const uint64_t budget = 32 * zip.archive_size() + (1 << 20);
  const std::string expected = path.string() +
                               ": entry 'bomb' would inflate to 1048576000 bytes; with the 0 already "
                               "inflated that is more than 32 bytes per archive byte (" +
                               std::to_string(budget) + " bytes; store the entries uncompressed, as torch.save does)";
  try {
    zip.read(zip.entries()[0]);
    ADD_FAILURE() << "expected an Error";
  } catch (const Error& error) {
    EXPECT_EQ(std::string(error.what()), expected);
  }
  if (testing::kAddressSpaceLimitWorks) {
    const testing::LimitedRun run = testing::run_with_memory_limit(64 << 20, [&] { zip.read(zip.entries()[0]); });
    EXPECT_EQ(run.outcome, testing::LimitedRun::Outcome::kError);
    EXPECT_EQ(run.message, expected);
  }

  // Real DEFLATE data: 8 MiB of zeros compress to about 8 KB, far more than 32 bytes per archive byte.
  ZipTestWriter zeros;
  zeros.add("zeros", Bytes(8 << 20, '\0'), /*deflate=*/true);
  EXPECT_NE(open_error(zeros.finish()).find("would inflate to 8388608 bytes"), std::string::npos);

  // The budget is for the reader as a whole: two entries of 600 KiB of zeros fit one at a time, not both.
  ZipTestWriter two;
  two.add("first", Bytes(600 << 10, '\0'), /*deflate=*/true);
  two.add("second", Bytes(600 << 10, '\0'), /*deflate=*/true);
  const ZipReader both(write_archive("two.zip", two.finish()));
  EXPECT_EQ(both.read(*both.find("first")).bytes().size(), 600u << 10);
  try {
    both.read(*both.find("second"));
    ADD_FAILURE() << "expected an Error";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("with the 614400 already inflated"), std::string::npos) << error.what();
  }
}

TEST_F(ZipReaderTest, EveryTruncationIsAnError) {
  for (const bool zip64 : {false, true}) {
    const Bytes archive = sample_archive(true, zip64);
    for (std::size_t length = 0; length < archive.size(); ++length) {
      EXPECT_NE(open_error(archive.substr(0, length)), "") << "length " << length;
    }
  }
}

}  // namespace
}  // namespace minigen
