#include "model/io/safetensors.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <string>

#include "core/error.h"
#include "core/planted_links_test_util.h"
#include "model/dtype.h"
#include "model/io/torch_pth_test_writer.h"  // scratch files
#include "ops/float_formats.h"

namespace minigen {
namespace {

namespace fs = std::filesystem;

fs::path safetensors_path(const std::string& name) { return testing::scratch_path(name); }

using SafetensorsTest = testing::ScratchFileTest;

std::string read_file_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Writes a file with the given header text and data bytes; `declared_header_bytes` overrides the length field.
fs::path write_raw(const std::string& name, const std::string& header, const std::string& data,
                   std::optional<uint64_t> declared_header_bytes = std::nullopt) {
  const fs::path path = safetensors_path(name);
  std::ofstream out(path, std::ios::binary);
  const uint64_t length = declared_header_bytes.value_or(header.size());
  for (int i = 0; i < 8; ++i) out.put(static_cast<char>((length >> (8 * i)) & 0xff));
  out << header << data;
  return path;
}

std::string f32_bytes(std::initializer_list<float> values) {
  std::string bytes;
  for (float value : values) {
    char buffer[4];
    encode_from_f32(DType::kF32, &value, 1, reinterpret_cast<std::byte*>(buffer));
    bytes.append(buffer, 4);
  }
  return bytes;
}

HostTensor make_tensor(std::vector<int64_t> shape, std::vector<float> values) {
  HostTensor tensor;
  tensor.shape = std::move(shape);
  tensor.values = std::move(values);
  return tensor;
}

TensorMap sample_tensors() {
  TensorMap tensors;
  tensors["model.embed_tokens.weight"] = make_tensor({3, 2}, {1.0f, -2.0f, 0.5f, 0.25f, 1024.0f, -0.125f});
  tensors["model.norm.weight"] = make_tensor({2}, {1.5f, 3.0f});
  tensors["empty"] = make_tensor({0, 4}, {});
  tensors["scalar"] = make_tensor({}, {7.0f});
  return tensors;
}

TEST_F(SafetensorsTest, RoundTripsEveryDtypeWithMetadata) {
  const TensorMap tensors = sample_tensors();
  for (DType dtype : {DType::kF32, DType::kF16, DType::kBF16}) {
    const fs::path path = safetensors_path(std::string("round_trip_") + dtype_name(dtype) + ".safetensors");
    write_safetensors(path, tensors, dtype, {{"format", "pt"}, {"producer", "minigen"}});
    const TensorMap read = read_safetensors(path);
    ASSERT_EQ(read.size(), tensors.size());
    for (const auto& [name, tensor] : tensors) {
      SCOPED_TRACE(name);
      const HostTensor& back = read.at(name);
      EXPECT_EQ(back.shape, tensor.shape);
      EXPECT_EQ(back.values, tensor.values);  // every sample value is exact in all three dtypes
      EXPECT_EQ(back.stored_dtype, dtype);
    }
    const auto metadata = read_safetensors_metadata(path);
    EXPECT_EQ(metadata.at("format"), "pt");
    EXPECT_EQ(metadata.at("producer"), "minigen");
  }
}

// 100 MB of header is allowed (as by the reference implementation), but not 100 MB of tiny JSON values, whose
// parsed tree would take ten times that.
TEST_F(SafetensorsTest, RefusesAHeaderOfMillionsOfValues) {
  std::string header = "{\"__metadata__\":{\"x\":\"y\"},\"t\":{\"dtype\":\"F32\",\"shape\":[";
  for (int i = 0; i < (1 << 22); ++i) header += "1,";
  header += "1],\"data_offsets\":[0,4]}}";
  std::string file(8, '\0');
  for (int i = 0; i < 8; ++i) file[i] = static_cast<char>((header.size() >> (8 * i)) & 0xff);
  file += header + std::string(4, '\0');
  try {
    read_safetensors(std::as_bytes(std::span(file.data(), file.size())), "many.safetensors");
    ADD_FAILURE() << "expected an Error";
  } catch (const Error& error) {
    EXPECT_EQ(std::string(error.what()), "many.safetensors: safetensors header holds more than 4194304 JSON values");
  }
}

// The in-memory writer produces the file write_safetensors writes, and the in-memory reader reads it like the file.
TEST_F(SafetensorsTest, InMemoryBytesEqualTheWrittenFile) {
  const TensorMap tensors = sample_tensors();
  const std::map<std::string, std::string> metadata = {{"format", "pt"}};
  const fs::path path = safetensors_path("in_memory.safetensors");
  write_safetensors(path, tensors, DType::kBF16, metadata);
  const std::string bytes = safetensors_bytes(tensors, DType::kBF16, metadata);
  EXPECT_EQ(bytes, read_file_bytes(path));
  const auto view = std::as_bytes(std::span(bytes.data(), bytes.size()));
  const TensorMap read = read_safetensors(view, "memory");
  ASSERT_EQ(read.size(), tensors.size());
  for (const auto& [name, tensor] : tensors) EXPECT_EQ(read.at(name).values, tensor.values) << name;
  EXPECT_EQ(read_safetensors_metadata(view, "memory"), metadata);
  EXPECT_THROW(read_safetensors(view.first(7), "memory"), Error);
}

TEST_F(SafetensorsTest, WritesPaddedHeaderAndDataInNameOrder) {
  TensorMap tensors;
  tensors["b"] = make_tensor({2}, {3.0f, 4.0f});
  tensors["a"] = make_tensor({1}, {1.0f});
  const fs::path path = safetensors_path("layout.safetensors");
  write_safetensors(path, tensors, DType::kF32);
  const std::string bytes = read_file_bytes(path);
  uint64_t header_bytes = 0;
  for (int i = 7; i >= 0; --i) header_bytes = (header_bytes << 8) | static_cast<unsigned char>(bytes[i]);
  EXPECT_EQ(header_bytes % 8, 0u);
  ASSERT_EQ(bytes.size(), 8 + header_bytes + 12);
  const std::string header = bytes.substr(8, header_bytes);
  EXPECT_NE(header.find("\"a\":{\"data_offsets\":[0,4],\"dtype\":\"F32\",\"shape\":[1]}"), std::string::npos) << header;
  EXPECT_NE(header.find("\"b\":{\"data_offsets\":[4,12]"), std::string::npos) << header;
  EXPECT_EQ(bytes.substr(8 + header_bytes), f32_bytes({1.0f, 3.0f, 4.0f}));  // "a" first
  // No temporary file is left behind next to the result.
  for (const auto& entry : fs::directory_iterator(path.parent_path())) {
    EXPECT_EQ(entry.path().string().find(path.filename().string() + ".tmp"), std::string::npos) << entry.path();
  }
}

TEST_F(SafetensorsTest, ConvertsValuesWhenWritingHalfPrecision) {
  TensorMap tensors;
  tensors["x"] = make_tensor({2}, {1.0f + std::ldexp(1.0f, -11), 70000.0f});
  const fs::path path = safetensors_path("rounding.safetensors");
  write_safetensors(path, tensors, DType::kF16);
  const TensorMap read = read_safetensors(path);
  EXPECT_EQ(read.at("x").values[0], 1.0f);  // tie to even
  EXPECT_TRUE(std::isinf(read.at("x").values[1]));
}

// keep_fp16_matrices (a weight update of a model served as f16): 2-D fp16 tensors keep the file's bits and no fp32
// values; vectors, and tensors of other dtypes, are read as always.
TEST_F(SafetensorsTest, KeepsTheBitsOfFp16MatricesWhenAsked) {
  const fs::path path = safetensors_path("fp16_matrices.safetensors");
  write_safetensors(path, sample_tensors(), DType::kF16);
  const TensorMap plain = read_safetensors(path);
  const TensorMap kept = read_safetensors(path, TensorReadOptions{.keep_fp16_matrices = true});
  const HostTensor& matrix = kept.at("model.embed_tokens.weight");
  EXPECT_TRUE(matrix.values.empty());
  EXPECT_EQ(matrix.stored_dtype, DType::kF16);
  ASSERT_EQ(matrix.f16_bits.size(), 6u);
  EXPECT_EQ(matrix.f16_bits[1], 0xc000);  // −2.0
  for (std::size_t i = 0; i < 6; ++i)
    EXPECT_EQ(f16_to_float(matrix.f16_bits[i]), plain.at("model.embed_tokens.weight").values[i]);
  EXPECT_EQ(kept.at("model.norm.weight").values, (std::vector<float>{1.5f, 3.0f}));
  EXPECT_TRUE(kept.at("empty").f16_bits.empty());  // [0, 4]: a matrix of no values
  EXPECT_TRUE(kept.at("model.norm.weight").f16_bits.empty());
}

TEST_F(SafetensorsTest, ReadsAHandWrittenFile) {
  // Header with __metadata__, trailing space padding and tensors listed out of offset order.
  const std::string header = R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[4,12]},"__metadata__":{"k":"v"},)"
                             R"("v":{"dtype":"BF16","shape":[1,1],"data_offsets":[0,2]},)"
                             R"("z":{"dtype":"F16","shape":[1],"data_offsets":[2,4]}}   )";
  std::string data;
  data += std::string("\x80\x3f", 2);  // bf16 1.0 = 0x3f80
  data += std::string("\x00\xc0", 2);  // f16 -2.0 = 0xc000
  data += f32_bytes({0.5f, -8.0f});
  const TensorMap tensors = read_safetensors(write_raw("hand_written.safetensors", header, data));
  ASSERT_EQ(tensors.size(), 3u);
  EXPECT_EQ(tensors.at("v").values, std::vector<float>{1.0f});
  EXPECT_EQ(tensors.at("v").shape, (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(tensors.at("v").stored_dtype, DType::kBF16);
  EXPECT_EQ(tensors.at("z").values, std::vector<float>{-2.0f});
  EXPECT_EQ(tensors.at("w").values, (std::vector<float>{0.5f, -8.0f}));
  EXPECT_EQ(read_safetensors_metadata(safetensors_path("hand_written.safetensors")).at("k"), "v");
}

// The message of the Error `read_safetensors` throws for a file, or "" if it reads fine.
std::string safetensors_read_error(const fs::path& path) {
  try {
    read_safetensors(path);
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

TEST_F(SafetensorsTest, RejectsMalformedFiles) {
  const std::string good_data = f32_bytes({1.0f, 2.0f});
  const std::string good_tensor = R"("t":{"dtype":"F32","shape":[2],"data_offsets":[0,8]})";
  struct Case {
    const char* name;
    std::string header;
    std::string data;
    std::optional<uint64_t> declared_length;
    const char* expected_message;
  };
  const std::vector<Case> cases = {
      {"header_beyond_file", "{" + good_tensor + "}", good_data, 1000, "beyond the end of the file"},
      {"huge_header_length", "{}", "", ~uint64_t{0}, "beyond the end of the file"},
      {"truncated_header", R"({"t":{"dtype":"F32","sha)", "", std::nullopt, "not valid JSON"},
      {"invalid_json", R"({"t": nonsense})", "", std::nullopt, "not valid JSON"},
      {"not_an_object", "[1, 2]", "", std::nullopt, "not a JSON object"},
      {"entry_not_object", R"({"t": 3})", "", std::nullopt, "not an object"},
      {"offsets_out_of_range", R"({"t":{"dtype":"F32","shape":[2],"data_offsets":[0,16]}})", good_data, std::nullopt,
       "beyond the 8 data bytes"},
      {"begin_after_end", R"({"t":{"dtype":"F32","shape":[0],"data_offsets":[8,0]}})", good_data, std::nullopt,
       "begin > end"},
      {"negative_offset", R"({"t":{"dtype":"F32","shape":[2],"data_offsets":[-8,0]}})", good_data, std::nullopt,
       "two non-negative integers"},
      {"unknown_dtype", R"({"t":{"dtype":"I64","shape":[1],"data_offsets":[0,8]}})", good_data, std::nullopt,
       "tensor 't' has dtype I64"},
      {"size_mismatch", R"({"t":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", good_data, std::nullopt,
       "needs 12 bytes but data_offsets give 8"},
      {"negative_dim", R"({"t":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", good_data, std::nullopt,
       "negative"},
      {"float_dim", R"({"t":{"dtype":"F32","shape":[2.5],"data_offsets":[0,8]}})", good_data, std::nullopt,
       "non-integer"},
      {"shape_overflow", R"({"t":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,8]}})", good_data,
       std::nullopt, "too large"},
      {"overlap",
       R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
       good_data, std::nullopt, "overlap"},
      {"duplicate_name", "{" + good_tensor + "," + good_tensor + "}", good_data, std::nullopt, "appears twice"},
      {"missing_dtype", R"({"t":{"shape":[2],"data_offsets":[0,8]}})", good_data, std::nullopt, "\"dtype\""},
      {"bad_metadata", R"({"__metadata__":{"k":1}})", "", std::nullopt, "is not a string"},
      {"too_deep", std::string(50, '[') + std::string(50, ']'), "", std::nullopt, "nested too deeply"},
  };
  for (const Case& test_case : cases) {
    const fs::path path = write_raw(std::string(test_case.name) + ".safetensors", test_case.header, test_case.data,
                                    test_case.declared_length);
    const std::string message = safetensors_read_error(path);
    EXPECT_NE(message.find(test_case.expected_message), std::string::npos)
        << test_case.name << ": got '" << message << "'";
    EXPECT_NE(message.find(path.string()), std::string::npos) << test_case.name << ": message names no file";
  }
  // Shorter than the length field itself.
  const fs::path tiny = safetensors_path("tiny.safetensors");
  std::ofstream(tiny, std::ios::binary) << "abc";
  EXPECT_NE(safetensors_read_error(tiny).find("too small"), std::string::npos);
  EXPECT_THROW(read_safetensors(safetensors_path("missing.safetensors")), Error);
}

TEST_F(SafetensorsTest, WriterRejectsInconsistentTensorsAndLeavesNoFile) {
  TensorMap tensors;
  tensors["bad"] = make_tensor({2, 2}, {1.0f});
  const fs::path path = safetensors_path("never_written.safetensors");
  fs::remove(path);
  EXPECT_THROW(write_safetensors(path, tensors), Error);
  EXPECT_FALSE(fs::exists(path));

  TensorMap reserved;
  reserved["__metadata__"] = make_tensor({1}, {1.0f});
  EXPECT_THROW(write_safetensors(path, reserved), Error);

  TensorMap invalid_name;
  invalid_name["\xff\xfe"] = make_tensor({1}, {1.0f});
  EXPECT_THROW(write_safetensors(path, invalid_name), Error);
  EXPECT_FALSE(fs::exists(path));

  // A directory that does not exist: the temporary file cannot be created.
  EXPECT_THROW(write_safetensors(safetensors_path("no_such_directory") / "x.safetensors", sample_tensors()), Error);
}

TEST_F(SafetensorsTest, ReplacesAnExistingFile) {
  const fs::path path = safetensors_path("replaced.safetensors");
  write_safetensors(path, sample_tensors());
  TensorMap smaller;
  smaller["only"] = make_tensor({1}, {42.0f});
  write_safetensors(path, smaller, DType::kBF16);
  const TensorMap read = read_safetensors(path);
  ASSERT_EQ(read.size(), 1u);
  EXPECT_EQ(read.at("only").values, std::vector<float>{42.0f});
}

// Issue 46 item 3: the writer's temporary PATH.tmp.<pid>.<n> was predictable; now a random name made with O_EXCL |
// O_NOFOLLOW beside the file. Links planted at the old names and at guesses of the new are left as they were.
TEST_F(SafetensorsTest, NeverWritesThroughAPlantedLink) {
  const fs::path folder = safetensors_path("planted_folder");
  fs::create_directories(folder);
  testing::PlantedLinks planted(safetensors_path("planted_victims"));
  const fs::path path = folder / "model.safetensors";
  for (const fs::path& name : testing::temporary_names_beside(path)) planted.plant(name);
  write_safetensors(path, sample_tensors());
  EXPECT_EQ(read_safetensors(path).at("model.norm.weight").values, (std::vector<float>{1.5f, 3.0f}));
  planted.expect_untouched();
  // A link at the final path is refused (renaming over it would replace the link), and its target is not written.
  const fs::path linked = folder / "linked.safetensors";
  planted.plant_symbolic(linked);
  EXPECT_THROW(write_safetensors(linked, sample_tensors()), Error);
  planted.expect_untouched();
  fs::remove_all(folder);
  fs::remove_all(safetensors_path("planted_victims"));
}

}  // namespace
}  // namespace minigen
