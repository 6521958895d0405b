#include "model/io/pickle_reader.h"

#include <bit>
#include <cstdio>
#include <unordered_map>

#include "core/error.h"

namespace minigen {
namespace {

// Opcodes by CPython's names (Lib/pickletools.py documents each one).
enum Opcode : uint8_t {
  kMark = '(',
  kStop = '.',
  kPop = '0',
  kPopMark = '1',
  kDup = '2',
  kBinBytes = 'B',
  kShortBinBytes = 'C',
  kBinFloat = 'G',
  kBinInt = 'J',
  kBinInt1 = 'K',
  kBinInt2 = 'M',
  kNone = 'N',
  kBinPersId = 'Q',
  kReduce = 'R',
  kBinString = 'T',
  kShortBinString = 'U',
  kBinUnicode = 'X',
  kEmptyList = ']',
  kAppend = 'a',
  kBuild = 'b',
  kGlobal = 'c',
  kDict = 'd',
  kAppends = 'e',
  kBinGet = 'h',
  kLongBinGet = 'j',
  kList = 'l',
  kBinPut = 'q',
  kLongBinPut = 'r',
  kSetItem = 's',
  kTuple = 't',
  kSetItems = 'u',
  kEmptyDict = '}',
  kEmptyTuple = ')',
  kProto = 0x80,
  kNewObj = 0x81,
  kTuple1 = 0x85,
  kTuple2 = 0x86,
  kTuple3 = 0x87,
  kNewTrue = 0x88,
  kNewFalse = 0x89,
  kLong1 = 0x8a,
  kLong4 = 0x8b,
  kShortBinUnicode = 0x8c,
  kBinUnicode8 = 0x8d,
  kBinBytes8 = 0x8e,
  kStackGlobal = 0x93,
  kMemoize = 0x94,
  kFrame = 0x95,
};

constexpr int kHighestProtocol = 5;
// Bounds on what a hostile pickle can make the reader hold; a torch state dict needs a small fraction of each.
constexpr std::size_t kMaxStackDepth = std::size_t{1} << 20;
constexpr std::size_t kMaxOpenMarks = std::size_t{1} << 16;
constexpr std::size_t kMaxGlobalNameBytes = 512;

class PickleMachine {
 public:
  PickleMachine(std::span<const std::byte> bytes, PickleHost& host, PickleArena& arena, const std::string& source)
      : bytes_(bytes), host_(host), arena_(arena), source_(source) {}

  PickleValue* run() {
    while (true) {
      opcode_position_ = position_;
      const uint8_t opcode = read_byte();
      if (opcode == kStop) return pop();
      execute(opcode);
    }
  }

 private:
  void execute(uint8_t opcode) {
    switch (opcode) {
      case kProto: {
        const uint8_t protocol = read_byte();
        if (protocol > kHighestProtocol) fail("pickle protocol " + std::to_string(protocol) + " is not supported");
        return;
      }
      case kFrame: {
        // Frames only group opcodes for buffered reading; the opcodes inside are read as usual.
        const uint64_t frame_bytes = read_le(8);
        if (frame_bytes > remaining()) fail("frame extends beyond the end of the pickle");
        return;
      }
      case kMark:
        if (marks_.size() >= kMaxOpenMarks) fail("too many nested MARKs");
        marks_.push_back(stack_.size());
        return;
      case kPop:
        if (stack_.size() > frame_base()) {
          stack_.pop_back();
        } else {
          pop_mark();  // Python's POP discards the innermost mark when its frame is empty
        }
        return;
      case kPopMark:
        pop_to_mark();
        return;
      case kDup:
        push(top());
        return;
      case kNone:
        push(arena_.make(PickleKind::kNone));
        return;
      case kNewTrue:
      case kNewFalse: {
        PickleValue* value = arena_.make(PickleKind::kBool);
        value->bool_value = opcode == kNewTrue;
        push(value);
        return;
      }
      case kBinInt:
        push_int(static_cast<int32_t>(read_le(4)));
        return;
      case kBinInt1:
        push_int(static_cast<int64_t>(read_le(1)));
        return;
      case kBinInt2:
        push_int(static_cast<int64_t>(read_le(2)));
        return;
      case kLong1:
        push_int(read_long(read_le(1)));
        return;
      case kLong4:
        push_int(read_long(read_le(4)));
        return;
      case kBinFloat: {
        // The only big-endian field in a pickle.
        uint64_t bits = 0;
        for (int i = 0; i < 8; ++i) bits = (bits << 8) | read_byte();
        PickleValue* value = arena_.make(PickleKind::kFloat);
        value->float_value = std::bit_cast<double>(bits);
        push(value);
        return;
      }
      case kBinUnicode:
        push_text(PickleKind::kString, read_le(4));
        return;
      case kShortBinUnicode:
        push_text(PickleKind::kString, read_le(1));
        return;
      case kBinUnicode8:
        push_text(PickleKind::kString, read_le(8));
        return;
      case kBinString: {
        const int32_t length = static_cast<int32_t>(read_le(4));
        if (length < 0) fail("BINSTRING with a negative length");
        push_text(PickleKind::kString, static_cast<uint64_t>(length));
        return;
      }
      case kShortBinString:
        push_text(PickleKind::kString, read_le(1));
        return;
      case kBinBytes:
        push_text(PickleKind::kBytes, read_le(4));
        return;
      case kShortBinBytes:
        push_text(PickleKind::kBytes, read_le(1));
        return;
      case kBinBytes8:
        push_text(PickleKind::kBytes, read_le(8));
        return;
      case kEmptyTuple:
        push(arena_.make(PickleKind::kTuple));
        return;
      case kTuple1:
      case kTuple2:
      case kTuple3: {
        const std::size_t count = opcode - kTuple1 + 1u;
        if (stack_.size() < frame_base() + count) fail("stack underflow");
        PickleValue* tuple = arena_.make(PickleKind::kTuple);
        tuple->items.assign(stack_.end() - static_cast<std::ptrdiff_t>(count), stack_.end());
        stack_.resize(stack_.size() - count);
        push(tuple);
        return;
      }
      case kTuple:
      case kList: {
        PickleValue* sequence = arena_.make(opcode == kTuple ? PickleKind::kTuple : PickleKind::kList);
        sequence->items = pop_to_mark();
        push(sequence);
        return;
      }
      case kEmptyList:
        push(arena_.make(PickleKind::kList));
        return;
      case kAppend: {
        PickleValue* value = pop();
        expect_kind(*top(), PickleKind::kList, "APPEND")->items.push_back(value);
        return;
      }
      case kAppends: {
        std::vector<PickleValue*> values = pop_to_mark();
        PickleValue* list = expect_kind(*top(), PickleKind::kList, "APPENDS");
        list->items.insert(list->items.end(), values.begin(), values.end());
        return;
      }
      case kEmptyDict:
        push(arena_.make(PickleKind::kDict));
        return;
      case kDict: {
        std::vector<PickleValue*> items = pop_to_mark();
        PickleValue* dict = arena_.make(PickleKind::kDict);
        add_pairs(*dict, items);
        push(dict);
        return;
      }
      case kSetItem: {
        PickleValue* value = pop();
        PickleValue* key = pop();
        expect_kind(*top(), PickleKind::kDict, "SETITEM")->entries.emplace_back(key, value);
        return;
      }
      case kSetItems: {
        std::vector<PickleValue*> items = pop_to_mark();
        add_pairs(*expect_kind(*top(), PickleKind::kDict, "SETITEMS"), items);
        return;
      }
      case kGlobal: {
        const std::string module = read_line();
        const std::string name = read_line();
        push(checked(host_.global(arena_, module, name)));
        return;
      }
      case kStackGlobal: {
        const PickleValue* name = pop();
        const PickleValue* module = pop();
        if (!name->is_string() || !module->is_string()) fail("STACK_GLOBAL needs two strings");
        push(checked(host_.global(arena_, module->text, name->text)));
        return;
      }
      case kReduce:
      case kNewObj: {
        const PickleValue* arguments = pop();
        const PickleValue* callable = pop();
        if (arguments->kind != PickleKind::kTuple) fail("call arguments are not a tuple");
        push(checked(host_.call(arena_, *callable, *arguments)));
        return;
      }
      case kBuild: {
        const PickleValue* state = pop();
        host_.build(*top(), *state);
        return;
      }
      case kBinPersId: {
        const PickleValue* persistent_id = pop();
        push(checked(host_.persistent_load(arena_, *persistent_id)));
        return;
      }
      case kBinPut:
        memo_[read_le(1)] = top();
        return;
      case kLongBinPut:
        memo_[read_le(4)] = top();
        return;
      case kMemoize:
        memo_[memo_.size()] = top();
        return;
      case kBinGet:
        push(memo_get(read_le(1)));
        return;
      case kLongBinGet:
        push(memo_get(read_le(4)));
        return;
      default: {
        char hex[8];
        std::snprintf(hex, sizeof(hex), "0x%02x", opcode);
        fail(std::string("unsupported pickle opcode ") + hex);
      }
    }
  }

  [[noreturn]] void fail(const std::string& problem) const {
    throw Error(source_ + ": " + problem + " (at byte " + std::to_string(opcode_position_) + " of the pickle)");
  }

  std::size_t remaining() const { return bytes_.size() - position_; }

  uint8_t read_byte() {
    if (position_ >= bytes_.size()) fail("pickle ends without STOP");
    return std::to_integer<uint8_t>(bytes_[position_++]);
  }

  uint64_t read_le(int byte_count) {
    if (remaining() < static_cast<std::size_t>(byte_count)) fail("pickle is truncated");
    uint64_t value = 0;
    for (int i = byte_count - 1; i >= 0; --i) value = (value << 8) | std::to_integer<uint64_t>(bytes_[position_ + i]);
    position_ += static_cast<std::size_t>(byte_count);
    return value;
  }

  // LONG1 / LONG4: a little-endian two's-complement integer of `byte_count` bytes.
  int64_t read_long(uint64_t byte_count) {
    if (byte_count > 8) fail("integer of " + std::to_string(byte_count) + " bytes does not fit in 64 bits");
    if (byte_count == 0) return 0;
    const int count = static_cast<int>(byte_count);
    uint64_t value = read_le(count);
    if (count < 8 && (value >> (8 * count - 1)) & 1) value |= ~uint64_t{0} << (8 * count);  // sign-extend
    return static_cast<int64_t>(value);
  }

  std::string read_line() {
    std::string line;
    while (true) {
      const uint8_t byte = read_byte();
      if (byte == '\n') return line;
      if (line.size() >= kMaxGlobalNameBytes) fail("GLOBAL name is too long");
      line.push_back(static_cast<char>(byte));
    }
  }

  void push_int(int64_t number) {
    PickleValue* value = arena_.make(PickleKind::kInt);
    value->int_value = number;
    push(value);
  }

  void push_text(PickleKind kind, uint64_t length) {
    if (length > remaining()) fail("string extends beyond the end of the pickle");
    PickleValue* value = arena_.make(kind);
    value->text.assign(reinterpret_cast<const char*>(bytes_.data() + position_), static_cast<std::size_t>(length));
    position_ += static_cast<std::size_t>(length);
    push(value);
  }

  std::size_t frame_base() const { return marks_.empty() ? 0 : marks_.back(); }

  void push(PickleValue* value) {
    if (stack_.size() >= kMaxStackDepth) fail("pickle stack is too deep");
    stack_.push_back(value);
  }

  PickleValue* top() {
    if (stack_.size() <= frame_base()) fail("stack underflow");
    return stack_.back();
  }

  PickleValue* pop() {
    PickleValue* value = top();
    stack_.pop_back();
    return value;
  }

  void pop_mark() {
    if (marks_.empty()) fail("stack underflow (no MARK)");
    marks_.pop_back();
  }

  std::vector<PickleValue*> pop_to_mark() {
    if (marks_.empty()) fail("missing MARK");
    const std::size_t base = marks_.back();
    marks_.pop_back();
    std::vector<PickleValue*> items(stack_.begin() + static_cast<std::ptrdiff_t>(base), stack_.end());
    stack_.resize(base);
    return items;
  }

  PickleValue* memo_get(uint64_t index) {
    const auto found = memo_.find(index);
    if (found == memo_.end()) fail("memo entry " + std::to_string(index) + " is used before it is set");
    return found->second;
  }

  PickleValue* expect_kind(PickleValue& value, PickleKind kind, const char* opcode_name) {
    if (value.kind != kind) {
      fail(std::string(opcode_name) + " applied to a " + pickle_kind_name(value.kind) + " instead of a " +
           pickle_kind_name(kind));
    }
    return &value;
  }

  void add_pairs(PickleValue& dict, const std::vector<PickleValue*>& items) {
    if (items.size() % 2 != 0) fail("odd number of items for a dict");
    for (std::size_t i = 0; i < items.size(); i += 2) dict.entries.emplace_back(items[i], items[i + 1]);
  }

  PickleValue* checked(PickleValue* value) const {
    if (value == nullptr) fail("the pickle host produced no value");
    return value;
  }

  std::span<const std::byte> bytes_;
  PickleHost& host_;
  PickleArena& arena_;
  const std::string& source_;
  std::size_t position_ = 0;
  std::size_t opcode_position_ = 0;
  std::vector<PickleValue*> stack_;
  std::vector<std::size_t> marks_;
  std::unordered_map<uint64_t, PickleValue*> memo_;
};

}  // namespace

const PickleValue* PickleValue::find(std::string_view key) const {
  for (auto entry = entries.rbegin(); entry != entries.rend(); ++entry) {
    if (entry->first->is_string() && entry->first->text == key) return entry->second;
  }
  return nullptr;
}

const char* pickle_kind_name(PickleKind kind) {
  switch (kind) {
    case PickleKind::kNone:
      return "None";
    case PickleKind::kBool:
      return "bool";
    case PickleKind::kInt:
      return "int";
    case PickleKind::kFloat:
      return "float";
    case PickleKind::kString:
      return "str";
    case PickleKind::kBytes:
      return "bytes";
    case PickleKind::kTuple:
      return "tuple";
    case PickleKind::kList:
      return "list";
    case PickleKind::kDict:
      return "dict";
    case PickleKind::kHostObject:
      return "object";
  }
  return "value";
}

PickleValue* PickleArena::make(PickleKind kind) {
  if (values_.size() >= max_values_) {
    throw Error(source_name_ + ": pickle holds more than " + std::to_string(max_values_) + " values");
  }
  PickleValue& value = values_.emplace_back();
  value.kind = kind;
  return &value;
}

PickleValue* read_pickle(std::span<const std::byte> bytes, PickleHost& host, PickleArena& arena,
                         const std::string& source_name) {
  PickleMachine machine(bytes, host, arena, source_name);
  return machine.run();
}

}  // namespace minigen
