#include "model/io/pickle_reader.h"

#include <gtest/gtest.h>

#include <random>

#include "core/error.h"
#include "model/io/torch_pth_test_writer.h"

namespace minigen {
namespace {

using testing::Bytes;
using testing::PickleTestWriter;

// Accepts every global as a host object named "module.name"; calling OrderedDict gives an empty dict, any other
// call a list [callable, arguments]; a persistent id becomes a host object "pid" wrapping it; BUILD is counted.
class RecordingHost : public PickleHost {
 public:
  PickleValue* global(PickleArena& arena, const std::string& module, const std::string& name) override {
    PickleValue* value = arena.make(PickleKind::kHostObject);
    value->text = module + "." + name;
    return value;
  }
  PickleValue* call(PickleArena& arena, const PickleValue& callable, const PickleValue& arguments) override {
    if (callable.text == "collections.OrderedDict") return arena.make(PickleKind::kDict);
    PickleValue* value = arena.make(PickleKind::kList);
    value->items = {const_cast<PickleValue*>(&callable), const_cast<PickleValue*>(&arguments)};
    return value;
  }
  PickleValue* persistent_load(PickleArena& arena, const PickleValue& persistent_id) override {
    PickleValue* value = arena.make(PickleKind::kHostObject);
    value->text = "pid";
    value->items = {const_cast<PickleValue*>(&persistent_id)};
    return value;
  }
  void build(PickleValue&, const PickleValue&) override { ++builds; }

  int builds = 0;
};

struct Parsed {
  PickleArena arena{1 << 16, "test.pkl"};
  RecordingHost host;
  const PickleValue* root = nullptr;
};

std::unique_ptr<Parsed> parse(const Bytes& bytes) {
  auto parsed = std::make_unique<Parsed>();
  parsed->root = read_pickle(std::span(reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()), parsed->host,
                             parsed->arena, "test.pkl");
  return parsed;
}

std::string parse_error(const Bytes& bytes) {
  try {
    parse(bytes);
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

TEST(PickleReaderTest, ReadsIntegersOfEveryWidth) {
  PickleTestWriter pickle;
  pickle.proto().mark().integer(7).integer(300).integer(-5).integer(70000).integer(int64_t{1} << 40);
  pickle.op(0x8a).byte(1).byte(0xff);                            // LONG1 -1
  pickle.op(0x8a).byte(0);                                       // LONG1 0
  pickle.op(0x8a).byte(2).byte(0x00).byte(0x80);                 // LONG1 -32768
  pickle.op(0x8b).raw(Bytes("\x01\x00\x00\x00", 4)).byte(0x7f);  // LONG4 127
  pickle.tuple().stop();
  const auto parsed = parse(pickle.bytes());
  ASSERT_EQ(parsed->root->kind, PickleKind::kTuple);
  std::vector<int64_t> numbers;
  for (const PickleValue* item : parsed->root->items) {
    ASSERT_EQ(item->kind, PickleKind::kInt);
    numbers.push_back(item->int_value);
  }
  EXPECT_EQ(numbers, (std::vector<int64_t>{7, 300, -5, 70000, int64_t{1} << 40, -1, 0, -32768, 127}));
}

TEST(PickleReaderTest, ReadsScalarsStringsAndContainers) {
  PickleTestWriter pickle;
  pickle.proto(4).op(0x95).raw(Bytes(8, '\0'));  // FRAME (its length is only advisory here)
  pickle.op('}').op(0x94);                       // EMPTY_DICT, MEMOIZE as 0
  pickle.op(0x8c).byte(4).raw("none").op('N').op('s');
  pickle.string("flags").op(0x88).op(0x89).op(0x86).op('s');  // (True, False)
  pickle.op(0x8c).byte(5).raw("float").op('G').raw(Bytes("\x3f\xf8\x00\x00\x00\x00\x00\x00", 8)).op('s');  // 1.5
  pickle.op(0x8c).byte(5).raw("bytes").op('C').byte(3).raw("abc").op('s');
  pickle.op(0x8c).byte(6).raw("legacy").op('U').byte(2).raw("hi").op('s');
  pickle.op(0x8c).byte(4).raw("list").op(']').integer(1).op('a').mark().integer(2).integer(3).op('e').op('s');
  pickle.op(0x8c).byte(4).raw("self").get(0).op('s');  // the dict refers to itself through the memo
  pickle.stop();
  const auto parsed = parse(pickle.bytes());
  const PickleValue& dict = *parsed->root;
  ASSERT_EQ(dict.kind, PickleKind::kDict);
  EXPECT_EQ(dict.find("none")->kind, PickleKind::kNone);
  ASSERT_EQ(dict.find("flags")->items.size(), 2u);
  EXPECT_TRUE(dict.find("flags")->items[0]->bool_value);
  EXPECT_FALSE(dict.find("flags")->items[1]->bool_value);
  EXPECT_EQ(dict.find("float")->float_value, 1.5);
  EXPECT_EQ(dict.find("bytes")->kind, PickleKind::kBytes);
  EXPECT_EQ(dict.find("bytes")->text, "abc");
  EXPECT_EQ(dict.find("legacy")->text, "hi");
  ASSERT_EQ(dict.find("list")->items.size(), 3u);
  EXPECT_EQ(dict.find("list")->items[2]->int_value, 3);
  EXPECT_EQ(dict.find("self"), &dict);
  EXPECT_EQ(dict.find("absent"), nullptr);
}

TEST(PickleReaderTest, HandsGlobalsCallsBuildAndPersistentIdsToTheHost) {
  PickleTestWriter pickle;
  pickle.proto().global("collections", "Counter").put(0).empty_tuple().op('R');
  pickle.op(0x8c).byte(6).raw("module").op(0x8c).byte(4).raw("name").op(0x93);  // STACK_GLOBAL
  pickle.mark().string("storage").integer(5).tuple().op('Q');
  pickle.op(0x87);         // TUPLE3
  pickle.op('}').op('b');  // BUILD the tuple with state {}
  pickle.stop();
  const auto parsed = parse(pickle.bytes());
  ASSERT_EQ(parsed->root->kind, PickleKind::kTuple);
  const auto& items = parsed->root->items;
  ASSERT_EQ(items.size(), 3u);
  EXPECT_EQ(items[0]->kind, PickleKind::kList);  // the recorded call
  EXPECT_EQ(items[0]->items[0]->text, "collections.Counter");
  EXPECT_EQ(items[1]->text, "module.name");
  EXPECT_TRUE(items[2]->is_host_object("pid"));
  EXPECT_EQ(items[2]->items[0]->items[0]->text, "storage");
  EXPECT_EQ(parsed->host.builds, 1);
}

TEST(PickleReaderTest, StackOperations) {
  // DUP, POP, POP_MARK and memo round trips: result is (1, 1, 9).
  PickleTestWriter pickle;
  pickle.proto().mark().integer(1).op('2').mark().integer(5).integer(6).op('1').integer(8).op('0');
  pickle.integer(9).op('r').raw(Bytes("\x10\x00\x00\x00", 4)).op('0').op('j').raw(Bytes("\x10\x00\x00\x00", 4));
  pickle.tuple().stop();
  const auto parsed = parse(pickle.bytes());
  ASSERT_EQ(parsed->root->items.size(), 3u);
  EXPECT_EQ(parsed->root->items[1]->int_value, 1);
  EXPECT_EQ(parsed->root->items[2]->int_value, 9);
}

TEST(PickleReaderTest, RejectsMalformedPickles) {
  struct Case {
    const char* name;
    Bytes pickle;
    const char* expected_message;
  };
  const std::vector<Case> cases = {
      {"empty", "", "ends without STOP"},
      {"unknown_opcode", PickleTestWriter().proto().op('I').raw("1\n").stop().bytes(),
       "unsupported pickle opcode 0x49"},
      {"future_protocol", PickleTestWriter().proto(6).stop().bytes(), "protocol 6"},
      {"stop_on_empty_stack", PickleTestWriter().proto().stop().bytes(), "stack underflow"},
      {"memo_before_put", PickleTestWriter().proto().get(3).stop().bytes(), "memo entry 3"},
      {"put_on_empty_stack", PickleTestWriter().proto().put(0).stop().bytes(), "stack underflow"},
      {"append_to_int", PickleTestWriter().proto().integer(1).integer(2).op('a').stop().bytes(), "APPEND applied"},
      {"setitems_odd", PickleTestWriter().proto().op('}').mark().integer(1).op('u').stop().bytes(), "odd number"},
      {"tuple_without_mark", PickleTestWriter().proto().integer(1).tuple().stop().bytes(), "missing MARK"},
      {"tuple2_underflow", PickleTestWriter().proto().integer(1).op(0x86).stop().bytes(), "stack underflow"},
      {"pop_below_mark", PickleTestWriter().proto().integer(1).mark().op('a').stop().bytes(), "stack underflow"},
      {"string_too_long", PickleTestWriter().proto().op('X').raw(Bytes("\xff\xff\x00\x00", 4)).raw("ab").bytes(),
       "beyond the end"},
      {"negative_binstring", PickleTestWriter().proto().op('T').raw(Bytes("\xff\xff\xff\xff", 4)).bytes(),
       "negative length"},
      {"long_too_wide", PickleTestWriter().proto().op(0x8a).byte(9).raw(Bytes(9, '\1')).stop().bytes(),
       "does not fit in 64 bits"},
      {"reduce_with_list", PickleTestWriter().proto().integer(1).op(']').op('R').stop().bytes(), "not a tuple"},
      {"stack_global_ints", PickleTestWriter().proto().integer(1).integer(2).op(0x93).stop().bytes(),
       "STACK_GLOBAL needs two strings"},
      {"global_without_newline", PickleTestWriter().proto().op('c').raw(Bytes(600, 'a')).bytes(), "too long"},
      {"frame_too_long", PickleTestWriter().proto(4).op(0x95).raw(Bytes("\xff\x00\x00\x00\x00\x00\x00\x00", 8)).bytes(),
       "frame extends beyond"},
  };
  for (const Case& test_case : cases) {
    const std::string message = parse_error(test_case.pickle);
    EXPECT_NE(message.find(test_case.expected_message), std::string::npos)
        << test_case.name << ": got '" << message << "'";
    EXPECT_EQ(message.rfind("test.pkl: ", 0), 0u) << test_case.name << ": " << message;
  }
}

TEST(PickleReaderTest, EnforcesItsLimits) {
  // 70,000 nested MARKs.
  EXPECT_NE(parse_error(PickleTestWriter().proto().raw(Bytes(70000, '(')).stop().bytes()).find("too many nested"),
            std::string::npos);
  // More values than the arena allows (1 << 16 in these tests).
  EXPECT_NE(parse_error(PickleTestWriter().proto().raw(Bytes(70000, 'N')).stop().bytes()).find("more than 65536"),
            std::string::npos);
  // A list that contains itself is fine: the arena frees it without recursion.
  PickleTestWriter cycle;
  cycle.proto().op(']').put(0).get(0).op('a').stop();
  const auto parsed = parse(cycle.bytes());
  EXPECT_EQ(parsed->root->items[0], parsed->root);
}

TEST(PickleReaderTest, EveryTruncationIsAnError) {
  const Bytes pickle =
      testing::state_dict_pickle({testing::TestTensor("w", DType::kF16, "0", {1.0f, 2.0f}, 0, {2}, {1})});
  EXPECT_NO_THROW(parse(pickle));
  for (std::size_t length = 0; length < pickle.size(); ++length) {
    EXPECT_THROW(parse(pickle.substr(0, length)), Error) << "length " << length;
  }
}

TEST(PickleReaderTest, RandomBytesNeverCrash) {
  std::mt19937 generator(1234);
  // Bias towards real opcodes so that the random programs get past the first byte.
  const Bytes opcodes = "()012BCGJKMNQRTUX]abcdehjlqrstu}\x80\x81\x85\x86\x87\x88\x89\x8a\x8b\x8c\x8d\x8e\x93\x94\x95";
  for (int round = 0; round < 3000; ++round) {
    Bytes pickle;
    const int length = 1 + static_cast<int>(generator() % 64);
    for (int i = 0; i < length; ++i) {
      pickle.push_back(generator() % 3 == 0 ? static_cast<char>(generator() & 0xff)
                                            : opcodes[generator() % opcodes.size()]);
    }
    try {
      parse(pickle);
    } catch (const Error&) {
    }
  }
}

}  // namespace
}  // namespace minigen
