#include "model/io/torch_pth.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/memory_limit_test_util.h"
#include "model/io/torch_pth_test_writer.h"

namespace minigen {
namespace {

namespace fs = std::filesystem;
using testing::Bytes;
using testing::PickleTestWriter;
using testing::PthWriteOptions;
using testing::TestTensor;

fs::path pth_path(const std::string& name) { return testing::scratch_path(name); }

using TorchPthTest = testing::ScratchFileTest;

fs::path write_pth(const std::string& name, const std::vector<TestTensor>& tensors,
                   const PthWriteOptions& options = {}) {
  const fs::path path = pth_path(name);
  testing::write_bytes(path, testing::pth_archive(tensors, options));
  return path;
}

std::vector<float> iota(int count, float scale = 1.0f, float shift = 0.0f) {
  std::vector<float> values(count);
  for (int i = 0; i < count; ++i) values[i] = static_cast<float>(i) * scale + shift;
  return values;
}

// A state dict like MiniMind's: one tensor of each dtype, contiguous.
std::vector<TestTensor> simple_state_dict() {
  return {
      {"model.embed_tokens.weight", DType::kF16, "0", iota(12, 0.5f, -3.0f), 0, {4, 3}, {3, 1}},
      {"model.norm.weight", DType::kBF16, "1", {1.0f, -0.5f, 2.0f}, 0, {3}, {1}},
      {"lm_head.weight", DType::kF32, "2", iota(12, 0.25f), 0, {4, 3}, {3, 1}},
  };
}

std::string pth_read_error(const fs::path& path) {
  try {
    read_torch_pth(path);
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

TEST_F(TorchPthTest, ReadsEveryDtype) {
  for (const bool deflate : {false, true}) {
    for (const bool zip64 : {false, true}) {
      SCOPED_TRACE(std::string(deflate ? "deflate" : "stored") + (zip64 ? " zip64" : ""));
      PthWriteOptions options;
      options.deflate = deflate;
      options.zip64 = zip64;
      const TensorMap tensors = read_torch_pth(write_pth("simple.pth", simple_state_dict(), options));
      ASSERT_EQ(tensors.size(), 3u);
      const HostTensor& embed = tensors.at("model.embed_tokens.weight");
      EXPECT_EQ(embed.shape, (std::vector<int64_t>{4, 3}));
      EXPECT_EQ(embed.stored_dtype, DType::kF16);
      EXPECT_EQ(embed.values, iota(12, 0.5f, -3.0f));
      EXPECT_EQ(tensors.at("model.norm.weight").stored_dtype, DType::kBF16);
      EXPECT_EQ(tensors.at("model.norm.weight").values, (std::vector<float>{1.0f, -0.5f, 2.0f}));
      EXPECT_EQ(tensors.at("lm_head.weight").stored_dtype, DType::kF32);
      EXPECT_EQ(tensors.at("lm_head.weight").values, iota(12, 0.25f));
    }
  }
}

TEST_F(TorchPthTest, CopiesStridedAndSharedViews) {
  const std::vector<float> storage = iota(24);
  const std::vector<TestTensor> tensors = {
      // The transpose of a [3, 4] matrix: shape [4, 3], strides (1, 4).
      {"transposed", DType::kF32, "0", iota(12), 0, {4, 3}, {1, 4}},
      // Two views of one storage: rows 0-1 and rows 2-5 of a [6, 4] matrix (offset 8).
      {"first_rows", DType::kF16, "1", storage, 0, {2, 4}, {4, 1}},
      {"last_rows", DType::kF16, "1", storage, 8, {4, 4}, {4, 1}},
      // Every other column, starting at column 1, of a [4, 6] view of the same storage.
      {"odd_columns", DType::kF16, "1", storage, 1, {4, 3}, {6, 2}},
      // A [2, 3, 2] tensor with permuted strides and a size-1 dimension with an arbitrary stride.
      {"permuted", DType::kBF16, "2", iota(12), 0, {2, 1, 3, 2}, {1, 99, 4, 2}},
      {"scalar", DType::kF32, "3", {0.0f, 42.0f}, 1, {}, {}},
      {"empty", DType::kF32, "4", {}, 0, {0, 5}, {5, 1}},
  };
  const TensorMap read = read_torch_pth(write_pth("views.pth", tensors));
  EXPECT_EQ(read.at("transposed").values, (std::vector<float>{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}));
  EXPECT_EQ(read.at("first_rows").values, iota(8));
  EXPECT_EQ(read.at("last_rows").values, iota(16, 1.0f, 8.0f));
  EXPECT_EQ(read.at("odd_columns").values, (std::vector<float>{1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23}));
  // element [a][0][b][c] = a + 4b + 2c
  EXPECT_EQ(read.at("permuted").values, (std::vector<float>{0, 2, 4, 6, 8, 10, 1, 3, 5, 7, 9, 11}));
  EXPECT_EQ(read.at("permuted").shape, (std::vector<int64_t>{2, 1, 3, 2}));
  EXPECT_EQ(read.at("scalar").values, std::vector<float>{42.0f});
  EXPECT_TRUE(read.at("scalar").shape.empty());
  EXPECT_TRUE(read.at("empty").values.empty());
  EXPECT_EQ(read.at("empty").shape, (std::vector<int64_t>{0, 5}));
}

TEST_F(TorchPthTest, AcceptsAStateDictNestedUnderModel) {
  // {"epoch": 3, "model": OrderedDict(w = tensor)} in protocol 4 style (SHORT_BINUNICODE, MEMOIZE, STACK_GLOBAL).
  const std::vector<TestTensor> tensors = {{"w", DType::kF32, "0", {1.0f, 2.0f}, 0, {2}, {1}}};
  PickleTestWriter pickle;
  pickle.proto(4).op('}').op(0x94).op(0x28);
  pickle.op(0x8c).byte(5).raw("epoch").integer(3);
  pickle.op(0x8c).byte(5).raw("model");
  pickle.op(0x8c).byte(11).raw("collections").op(0x8c).byte(11).raw("OrderedDict").op(0x93).op(0x94);
  pickle.empty_tuple().op('R').mark().op(0x8c).byte(1).raw("w");
  pickle.global("torch._utils", "_rebuild_tensor_v2").mark().mark().string("storage").global("torch", "FloatStorage");
  pickle.string("0").string("cpu").integer(2).tuple().op('Q').integer(0).int_tuple({2}).int_tuple({1}).op(0x89);
  pickle.get(1).empty_tuple().op('R').tuple().op('R').op('u').op('u').stop();
  PthWriteOptions options;
  options.prefix = "checkpoint/";
  options.pickle_override = pickle.bytes();
  const TensorMap read = read_torch_pth(write_pth("nested.pth", tensors, options));
  ASSERT_EQ(read.size(), 1u);
  EXPECT_EQ(read.at("w").values, (std::vector<float>{1.0f, 2.0f}));
}

TEST_F(TorchPthTest, ReadsUntypedStorageWithRebuildTensorV3) {
  // _rebuild_tensor_v3(storage, offset, size, stride, requires_grad, hooks, dtype): the storage is raw bytes.
  const std::vector<TestTensor> tensors = {{"w", DType::kBF16, "0", {3.0f, -1.0f, 0.5f}, 0, {3}, {1}}};
  PickleTestWriter pickle;
  pickle.proto().op('}').put(0).string("w").global("torch._utils", "_rebuild_tensor_v3").mark().mark();
  pickle.string("storage").global("torch", "UntypedStorage").string("0").string("cpu").integer(6).tuple().op('Q');
  pickle.integer(1).int_tuple({2}).int_tuple({1}).op(0x89).op('}').global("torch", "bfloat16").tuple().op('R');
  pickle.op('s').stop();
  PthWriteOptions options;
  options.pickle_override = pickle.bytes();
  const TensorMap read = read_torch_pth(write_pth("untyped.pth", tensors, options));
  EXPECT_EQ(read.at("w").values, (std::vector<float>{-1.0f, 0.5f}));
  EXPECT_EQ(read.at("w").stored_dtype, DType::kBF16);
}

// Files written by real torch.save (tools/reference/make_pth_fixture.py), compared with what torch.load returned.
void expect_matches_torch_reference(const TensorMap& tensors) {
  std::ifstream expected_file(fs::path(MINIGEN_TEST_DATA_DIR) / "pth" / "expected.json");
  ASSERT_TRUE(expected_file) << "missing tests/data/pth/expected.json";
  const nlohmann::json expected = nlohmann::json::parse(expected_file)["tensors"];
  ASSERT_EQ(tensors.size(), expected.size());
  for (const auto& [name, reference] : expected.items()) {
    SCOPED_TRACE(name);
    ASSERT_EQ(tensors.count(name), 1u);
    const HostTensor& tensor = tensors.at(name);
    EXPECT_EQ(tensor.shape, reference["shape"].get<std::vector<int64_t>>());
    EXPECT_EQ(tensor.values, reference["values"].get<std::vector<float>>());
    const std::string dtype = reference["dtype"];
    const DType expected_dtype = dtype == "float16" ? DType::kF16 : dtype == "bfloat16" ? DType::kBF16 : DType::kF32;
    EXPECT_EQ(tensor.stored_dtype, expected_dtype);
  }
  EXPECT_EQ(tensors.at("model.layers.0.self_attn.q_norm.weight").values[2], 65504.0f);
}

TEST_F(TorchPthTest, ReadsARealTorchSaveFile) {
  expect_matches_torch_reference(read_torch_pth(fs::path(MINIGEN_TEST_DATA_DIR) / "pth" / "state_dict.pth"));
}

TEST_F(TorchPthTest, ReadsARealNestedProtocol4File) {
  expect_matches_torch_reference(read_torch_pth(fs::path(MINIGEN_TEST_DATA_DIR) / "pth" / "nested_protocol4.pth"));
}

TEST_F(TorchPthTest, RejectsBrokenArchives) {
  const fs::path not_zip = pth_path("not_a_zip.pth");
  testing::write_bytes(not_zip, "this is plainly not a zip archive, just some text that is long enough");
  EXPECT_NE(pth_read_error(not_zip).find("not a zip archive"), std::string::npos) << pth_read_error(not_zip);

  const fs::path legacy = pth_path("legacy.pth");
  testing::write_bytes(legacy, Bytes("\x80\x02\x8a\x0a", 4) + "legacy");  // PROTO 2, LONG1: torch's old magic
  EXPECT_NE(pth_read_error(legacy).find("legacy torch.save format"), std::string::npos) << pth_read_error(legacy);

  testing::ZipTestWriter no_pickle;
  no_pickle.add("archive/data/0", "abcd");
  const fs::path missing_pickle = pth_path("missing_pickle.pth");
  testing::write_bytes(missing_pickle, no_pickle.finish());
  EXPECT_NE(pth_read_error(missing_pickle).find("no data.pkl"), std::string::npos);

  PthWriteOptions omit;
  omit.omit_storages = {"1"};
  const std::string missing_storage = pth_read_error(write_pth("missing_storage.pth", simple_state_dict(), omit));
  EXPECT_NE(missing_storage.find("storage '1' is missing"), std::string::npos) << missing_storage;

  EXPECT_NE(pth_read_error(pth_path("does_not_exist.pth")).find("cannot open"), std::string::npos);
}

TEST_F(TorchPthTest, EveryTruncationIsAnError) {
  const Bytes archive = testing::pth_archive(simple_state_dict());
  const fs::path path = pth_path("truncated.pth");
  for (std::size_t length = 0; length < archive.size(); ++length) {
    testing::write_bytes(path, archive.substr(0, length));
    EXPECT_THROW(read_torch_pth(path), Error) << "length " << length;
  }
}

// Flipping any byte must give either a (possibly different) result or a minigen::Error, never a crash: this runs
// under ASan/UBSan in CI.
TEST_F(TorchPthTest, SurvivesEveryFlippedByte) {
  for (const bool deflate : {false, true}) {
    PthWriteOptions options;
    options.deflate = deflate;
    const Bytes archive = testing::pth_archive(simple_state_dict(), options);
    const fs::path path = pth_path("flipped.pth");
    for (std::size_t position = 0; position < archive.size(); ++position) {
      for (const unsigned char mask : {0x01, 0x80, 0xff}) {
        Bytes damaged = archive;
        damaged[position] = static_cast<char>(damaged[position] ^ mask);
        testing::write_bytes(path, damaged);
        try {
          read_torch_pth(path);
        } catch (const Error&) {
        } catch (const std::exception& other) {
          ADD_FAILURE() << "byte " << position << ": unexpected exception " << other.what();
        }
      }
    }
  }
}

TEST_F(TorchPthTest, RejectsTensorsOutsideTheirStorage) {
  struct Case {
    const char* name;
    TestTensor tensor;
    const char* expected_message;
  };
  const std::vector<Case> cases = {
      {"size_too_big", {"t", DType::kF16, "0", iota(6), 0, {7}, {1}}, "reaches element 6 but its storage holds only 6"},
      {"offset_too_big", {"t", DType::kF16, "0", iota(6), 4, {3}, {1}}, "reaches element 6"},
      {"stride_too_big", {"t", DType::kF32, "0", iota(6), 0, {2, 3}, {3, 2}}, "reaches element 7"},
      {"expanded", {"t", DType::kF32, "0", iota(2), 0, {1000}, {0}}, "more elements than its storage"},
      {"declared_longer_than_entry", {"t", DType::kF32, "0", iota(4), 0, {4}, {1}, 5}, "fewer than its 5 elements"},
      {"entry_longer_than_declared",
       {"t", DType::kF32, "0", iota(5), 0, {4}, {1}, 4},
       "holds 20 bytes, more than its 4 elements of float32 need"},
  };
  for (const Case& test_case : cases) {
    const std::string message = pth_read_error(write_pth(std::string(test_case.name) + ".pth", {test_case.tensor}));
    EXPECT_NE(message.find(test_case.expected_message), std::string::npos)
        << test_case.name << ": got '" << message << "'";
    EXPECT_NE(message.find("tensor 't'"), std::string::npos) << test_case.name << ": " << message;
  }
}

// A hostile archive of 200 tensors whose storage entries all point at one compressed MiB of zeros (the review's
// 511 KB file that made minigen allocate 2.1 GB): refused when the archive is opened, nothing inflated.
TEST_F(TorchPthTest, RefusesStoragesThatShareArchiveBytes) {
  constexpr int kTensors = 200;
  constexpr int64_t kElements = 1 << 18;  // 1 MiB of float32 per storage
  std::vector<TestTensor> tensors;
  for (int i = 0; i < kTensors; ++i) {
    const std::string key = std::to_string(i);
    tensors.push_back({"tensor_" + key, DType::kF32, key, {0.0f}, 0, {1}, {1}, kElements});
  }
  testing::ZipTestWriter zip;
  zip.add("archive/data.pkl", testing::state_dict_pickle(tensors));
  zip.add("archive/data/0", Bytes(kElements * 4, '\0'), /*deflate=*/true);
  for (int i = 1; i < kTensors; ++i) zip.add_alias("archive/data/" + std::to_string(i), 1);
  zip.add("archive/byteorder", "little");
  const fs::path path = pth_path("aliased_storages.pth");
  testing::write_bytes(path, zip.finish());
  const std::string expected = path.string() +
                               ": entries 'archive/data/0' and 'archive/data/1' overlap (a zip "
                               "entry's header and data must not share bytes with another's)";
  EXPECT_EQ(pth_read_error(path), expected);
  if (testing::kAddressSpaceLimitWorks) {
    const testing::LimitedRun run = testing::run_with_memory_limit(64 << 20, [&] { read_torch_pth(path); });
    EXPECT_EQ(run.outcome, testing::LimitedRun::Outcome::kError);
    EXPECT_EQ(run.message, expected);
  }
}

// A zip bomb: one storage of 2^28 float32 (1 GiB) whose entry is 1.05 MB declaring 1 GiB. Refused from the sizes,
// before the gigabyte is allocated.
TEST_F(TorchPthTest, RefusesAStorageThatWouldInflateFarBeyondTheFileSize) {
  constexpr int64_t kElements = int64_t{1} << 28;
  const std::vector<TestTensor> tensors = {{"t", DType::kF32, "0", {0.0f}, 0, {1}, {1}, kElements}};
  testing::ZipTestWriter zip;
  zip.add("archive/data.pkl", testing::state_dict_pickle(tensors));
  zip.add_raw("archive/data/0", 8, Bytes(1100000, 'x'), uint64_t{4} * kElements);
  const fs::path path = pth_path("bomb.pth");
  testing::write_bytes(path, zip.finish());
  const std::string message = pth_read_error(path);
  EXPECT_NE(message.find("entry 'archive/data/0' would inflate to 1073741824 bytes"), std::string::npos) << message;
  EXPECT_NE(message.find("more than 32 bytes per archive byte"), std::string::npos) << message;
  if (testing::kAddressSpaceLimitWorks) {
    const testing::LimitedRun run = testing::run_with_memory_limit(64 << 20, [&] { read_torch_pth(path); });
    EXPECT_EQ(run.outcome, testing::LimitedRun::Outcome::kError);
    EXPECT_EQ(run.message, message);
  }
}

TEST_F(TorchPthTest, ReadsFromMemoryLikeFromAFile) {
  const Bytes archive = testing::pth_archive(simple_state_dict());
  const TensorMap tensors = read_torch_pth(std::as_bytes(std::span(archive.data(), archive.size())), "in-memory.pth");
  const TensorMap from_file = read_torch_pth(write_pth("same.pth", simple_state_dict()));
  ASSERT_EQ(tensors.size(), from_file.size());
  for (const auto& [name, tensor] : from_file) {
    EXPECT_EQ(tensors.at(name).shape, tensor.shape) << name;
    EXPECT_EQ(tensors.at(name).values, tensor.values) << name;
  }
  EXPECT_EQ(tensors.at("model.norm.weight").values, (std::vector<float>{1.0f, -0.5f, 2.0f}));
  try {
    read_torch_pth(std::as_bytes(std::span(archive.data(), 10)), "in-memory.pth");
    ADD_FAILURE() << "expected an Error";
  } catch (const Error& error) {
    EXPECT_EQ(std::string(error.what()), "in-memory.pth: not a zip archive (too small)");
  }
}

std::string pickle_error(const Bytes& pickle) {
  PthWriteOptions options;
  options.pickle_override = pickle;
  return pth_read_error(write_pth("pickle_case.pth", simple_state_dict(), options));
}

TEST_F(TorchPthTest, RejectsBadPickles) {
  EXPECT_NE(pickle_error(PickleTestWriter().proto().op('I').raw("12\n").stop().bytes()).find("opcode 0x49"),
            std::string::npos);
  EXPECT_NE(pickle_error("garbage that is not a pickle").find("data.pkl"), std::string::npos);
  EXPECT_NE(pickle_error(PickleTestWriter().proto().global("os", "system").stop().bytes())
                .find("unsupported global 'os.system'"),
            std::string::npos);
  EXPECT_NE(pickle_error(PickleTestWriter().proto().integer(5).stop().bytes()).find("holds a int, not a state dict"),
            std::string::npos);
  // A dict without tensors, and a nested state dict with a value that is not a tensor.
  EXPECT_NE(pickle_error(PickleTestWriter().proto().op('}').string("x").integer(1).op('s').stop().bytes())
                .find("holds no tensors"),
            std::string::npos);
  const Bytes nested =
      PickleTestWriter().proto().op('}').string("model").op('}').string("x").integer(1).op('s').op('s').stop().bytes();
  EXPECT_NE(pickle_error(nested).find("tensor 'x' is a int, not a tensor"), std::string::npos) << pickle_error(nested);
  // A persistent id of the wrong form.
  EXPECT_NE(pickle_error(PickleTestWriter().proto().integer(1).op('Q').stop().bytes()).find("persistent id"),
            std::string::npos);
  // A storage type minigen does not convert.
  std::vector<TestTensor> doubles = {{"d", DType::kF32, "0", iota(2), 0, {1}, {1}}};
  Bytes pickle = testing::state_dict_pickle(doubles);
  pickle.replace(pickle.find("FloatStorage"), 12, "DoubleStorag");  // same length keeps the pickle valid
  EXPECT_NE(pickle_error(pickle).find("unsupported global 'torch.DoubleStorag'"), std::string::npos);
  pickle = testing::state_dict_pickle(doubles);
  pickle.replace(pickle.find("FloatStorage"), 12, "LongStorage\n");
  pickle.erase(pickle.find("LongStorage\n") + 12, 1);  // drop the old newline
  PthWriteOptions options;
  options.pickle_override = pickle;
  const std::string message = pth_read_error(write_pth("long_storage.pth", doubles, options));
  EXPECT_NE(message.find("tensor 'd' has dtype int64"), std::string::npos) << message;
}

}  // namespace
}  // namespace minigen
