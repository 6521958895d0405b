#include "model/io/gguf_reader.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>

#include "core/error.h"
#include "core/file_io.h"
#include "core/memory_limit_test_util.h"
#include "core/planted_links_test_util.h"
#include "model/io/gguf_test_builder.h"
#include "model/io/gguf_writer.h"

namespace minigen {
namespace {

using testing::GgufBuilder;

std::span<const std::byte> as_bytes(const std::string& text) {
  return std::as_bytes(std::span(text.data(), text.size()));
}

// The message of the minigen::Error reading `bytes` throws, or "" if it reads.
std::string read_error(const std::string& bytes) {
  try {
    read_gguf(as_bytes(bytes), "test.gguf");
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

// A small valid file written by hand: alignment 64 declared after other keys, an array before the scalar keys,
// two tensors whose infos are listed in the opposite order of their data, with a gap between them.
struct HandMadeFile {
  uint64_t tensor_count = 2;
  uint64_t metadata_count = 3;
  uint32_t alignment = 64;
  uint32_t second_type = 8;  // Q8_0
  uint64_t second_offset = 128;
  uint64_t string_length = 5;  // of "hello"
  uint32_t version = 3;

  std::string bytes() const {
    GgufBuilder b;
    b.bytes = "GGUF";
    b.u32(version).u64(tensor_count).u64(metadata_count);
    b.str("test.words").u32(9).u32(8).u64(2).str("a b").u64(string_length).bytes += "hello";
    b.str("general.alignment").u32(4).u32(alignment);
    b.str("general.architecture").u32(8).str("qwen3");
    // Infos: the Q8_0 one (data at 128) first, then the F32 vector (data at 0).
    b.str("blk.0.attn_q.weight").u32(2).u64(32).u64(2).u32(second_type).u64(second_offset);
    b.str("output_norm.weight").u32(1).u64(3).u32(0).u64(0);
    b.pad_to(alignment);
    std::string data(128 + 2 * 34, '\0');
    const float norm[3] = {1.0f, -2.5f, 0.125f};
    std::memcpy(data.data(), norm, sizeof norm);
    for (int row = 0; row < 2; ++row) {
      data[128 + row * 34] = 0x00;  // fp16 1.0 = 0x3c00
      data[128 + row * 34 + 1] = 0x3c;
      for (int k = 0; k < 32; ++k) data[128 + row * 34 + 2 + k] = static_cast<char>(k - 16 + row);
    }
    return b.bytes + data;
  }
};

TEST(GgufReader, AHandWrittenFileWithAlignment64AndMetadataInAnyOrderReads) {
  const std::string bytes = HandMadeFile{}.bytes();
  const GgufFile file = read_gguf(as_bytes(bytes), "test.gguf");
  EXPECT_EQ(file.alignment, 64u);
  ASSERT_EQ(file.metadata.size(), 3u);
  EXPECT_EQ(file.metadata[0].first, "test.words");
  EXPECT_EQ(file.find("test.words")->strings, (std::vector<std::string>{"a b", "hello"}));
  EXPECT_EQ(file.find("general.architecture")->strings.at(0), "qwen3");
  ASSERT_EQ(file.tensors.size(), 2u);
  const GgufTensorInfo& q = file.tensors[0];
  EXPECT_EQ(q.type, GgufTensorType::kQ8_0);
  EXPECT_EQ(q.dims, (std::vector<uint64_t>{32, 2}));
  ASSERT_EQ(q.bytes.size(), 68u);
  EXPECT_EQ(static_cast<int8_t>(q.bytes[34 + 2]), -15);  // row 1, value 0
  const GgufTensorInfo& norm = file.tensors[1];
  float values[3];
  std::memcpy(values, norm.bytes.data(), sizeof values);
  EXPECT_EQ(values[1], -2.5f);
  // Relaid once more (alignment 128, everything reversed, junk in the gaps) it reads the same tensors.
  const std::string relaid = testing::relaid_gguf(file, 128);
  const GgufFile again = read_gguf(as_bytes(relaid), "relaid.gguf");
  EXPECT_EQ(again.alignment, 128u);
  ASSERT_EQ(again.tensors.size(), 2u);
  const GgufTensorInfo& q_again = again.tensors[1];  // the infos are listed in reverse
  EXPECT_EQ(q_again.name, q.name);
  EXPECT_TRUE(std::equal(q_again.bytes.begin(), q_again.bytes.end(), q.bytes.begin(), q.bytes.end()));
}

TEST(GgufReader, WhatTheWriterWritesReadsBack) {
  GgufMetadata metadata = {{"general.architecture", GgufValue::string("llama")},
                           {"x.ids", GgufValue::int32_array({-1, 5, 7})},
                           {"x.eps", GgufValue::float32(1e-5f)},
                           {"x.flag", GgufValue::boolean(true)}};
  GgufTensorToWrite tensor{"t", {4, 3}, GgufTensorType::kF16, std::string(24, '\x01')};
  const std::string bytes =
      gguf_bytes(metadata, {tensor, GgufTensorToWrite{"u", {5}, GgufTensorType::kF32, std::string(20, '\x02')}});
  const GgufFile file = read_gguf(as_bytes(bytes), "written.gguf");
  const GgufValue& ids = *file.find("x.ids");
  ASSERT_EQ(ids.size(), 3u);
  EXPECT_EQ(ids.integer(0), -1);
  EXPECT_EQ(ids.integer(2), 7);
  EXPECT_EQ(file.find("x.eps")->number(0), static_cast<double>(1e-5f));
  EXPECT_EQ(file.find("x.flag")->integer(0), 1);
  ASSERT_EQ(file.tensors.size(), 2u);
  EXPECT_EQ(file.tensors[1].offset, 32u);  // 24 bytes padded to the default alignment
  EXPECT_EQ(std::to_integer<int>(file.tensors[1].bytes[19]), 2);
  EXPECT_THROW(gguf_bytes(metadata, {GgufTensorToWrite{"t", {4, 3}, GgufTensorType::kF32, "short"}}), Error);
}

// Numbers are held at the width the file stores them: a 20 MB u8 array takes 20 MB, where int64 elements took 14×
// that (289 MB) once the vector had grown to hold them.
TEST(GgufReader, AByteArrayTakesItsOwnSizeInMemory) {
  constexpr uint64_t kCount = uint64_t{20} << 20;
  GgufBuilder b;
  b.bytes = "GGUF";
  b.u32(3).u64(0).u64(1);
  b.str("x.bytes").u32(9).u32(0).u64(kCount);
  b.bytes.resize(b.bytes.size() + kCount, '\x07');
  const testing::LimitedRun run = testing::run_with_memory_limit(uint64_t{64} << 20, [&] {
    const GgufFile file = read_gguf(as_bytes(b.bytes), "bytes.gguf");
    const GgufValue& value = *file.find("x.bytes");
    if (value.size() != kCount || value.integer(kCount - 1) != 7) throw Error("read wrong");
    throw Error("read " + std::to_string(value.numbers.size()) + " bytes");
  });
  if (!testing::kAddressSpaceLimitWorks) GTEST_SKIP() << "no address-space limit under AddressSanitizer";
  EXPECT_EQ(run.outcome, testing::LimitedRun::Outcome::kError);
  EXPECT_EQ(run.message, "read 20971520 bytes");
}

// Every lying field gives one error that names it.
TEST(GgufReader, LyingHeadersGiveOneClearError) {
  struct Case {
    const char* what;
    std::function<void(HandMadeFile&)> change;
    const char* message;
  };
  const std::vector<Case> cases = {
      {"version", [](HandMadeFile& f) { f.version = 7; }, "version 7 is not supported"},
      {"tensor count", [](HandMadeFile& f) { f.tensor_count = uint64_t{1} << 60; }, "tensor count"},
      {"metadata count", [](HandMadeFile& f) { f.metadata_count = uint64_t{1} << 40; }, "metadata count"},
      {"fewer metadata", [](HandMadeFile& f) { f.metadata_count = 2; }, "dimensions"},
      {"string length", [](HandMadeFile& f) { f.string_length = uint64_t{1} << 50; }, "runs past the end"},
      {"alignment", [](HandMadeFile& f) { f.alignment = 48; }, "power of two"},
      {"tensor type", [](HandMadeFile& f) { f.second_type = 19; }, "ggml type IQ1_S (19); minigen reads"},
      {"unknown tensor type", [](HandMadeFile& f) { f.second_type = 77; }, "ggml type 77; minigen reads"},
      // {32, 2} is a whole number of Q8_0 blocks per row, but not of K-quant super-blocks.
      {"row of a K-quant", [](HandMadeFile& f) { f.second_type = 14; },
       "tensor 'blk.0.attn_q.weight' is Q6_K but its first dimension 32 is not a multiple of 256"},
      {"unaligned offset", [](HandMadeFile& f) { f.second_offset = 100; }, "not a multiple of the alignment"},
      {"offset past the data", [](HandMadeFile& f) { f.second_offset = 192; }, "of a data section of"},
      {"overlap", [](HandMadeFile& f) { f.second_offset = 0; }, "overlap"},
  };
  for (const Case& c : cases) {
    HandMadeFile file;
    c.change(file);
    const std::string message = read_error(file.bytes());
    EXPECT_NE(message.find(c.message), std::string::npos) << c.what << ": " << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << c.what;
  }
  EXPECT_NE(read_error("GGML").find("not a GGUF file"), std::string::npos);

  GgufBuilder duplicate;
  duplicate.bytes = "GGUF";
  duplicate.u32(3).u64(0).u64(2).str("k").u32(4).u32(1).str("k").u32(4).u32(2);
  EXPECT_NE(read_error(duplicate.bytes).find("'k' appears twice"), std::string::npos);
  GgufBuilder unknown_value;
  unknown_value.bytes = "GGUF";
  unknown_value.u32(3).u64(0).u64(1).str("k").u32(13).u32(1);
  EXPECT_NE(read_error(unknown_value.bytes).find("unknown value type 13"), std::string::npos);
  GgufBuilder long_array;
  long_array.bytes = "GGUF";
  long_array.u32(3).u64(0).u64(1).str("k").u32(9).u32(4).u64(uint64_t{1} << 61);
  EXPECT_NE(read_error(long_array.bytes).find("element count"), std::string::npos);
  GgufBuilder zero_dim;
  zero_dim.bytes = "GGUF";
  zero_dim.u32(3).u64(1).u64(0).str("t").u32(2).u64(4).u64(0).u32(0).u64(0);
  EXPECT_NE(read_error(zero_dim.bytes).find("zero or too large"), std::string::npos);
}

// Every prefix of a valid file is refused with an error, never read past its end.
TEST(GgufReader, EveryTruncationIsAnError) {
  const std::string bytes = HandMadeFile{}.bytes();
  for (std::size_t size = 0; size < bytes.size(); ++size) {
    EXPECT_NE(read_error(bytes.substr(0, size)), "") << size;
  }
}

// Issue 46 item 3: `export gguf` wrote OUT.tmp.<pid> through std::ofstream, following a link planted there. The file
// written now equals gguf_bytes, and links at the old names and at guesses of the random one are left as they were.
TEST(GgufWriter, NeverWritesThroughAPlantedLink) {
  namespace fs = std::filesystem;
  const fs::path folder = fs::temp_directory_path() / ("minigen_gguf_writer_test_" + std::to_string(::getpid()));
  fs::remove_all(folder);
  fs::create_directories(folder / "out");
  testing::PlantedLinks planted(folder / "victims");
  const fs::path path = folder / "out" / "model.gguf";
  for (const fs::path& name : testing::temporary_names_beside(path)) planted.plant(name);
  const GgufMetadata metadata = {{"general.architecture", GgufValue::string("llama")}};
  const std::vector<GgufTensorToWrite> tensors = {{"t", {4, 3}, GgufTensorType::kF16, std::string(24, '\x01')}};
  write_gguf(path, metadata, tensors);
  EXPECT_EQ(read_whole_file(path, 1 << 20, "model.gguf"), gguf_bytes(metadata, tensors));
  planted.expect_untouched();
  fs::remove_all(folder);
}

}  // namespace
}  // namespace minigen
