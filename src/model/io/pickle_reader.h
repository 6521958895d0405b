#pragma once
// A restricted reader for the Python pickles torch.save writes (protocols 2 to 5). It builds plain values itself
// (None, bools, ints, floats, strings, bytes, tuples, lists, dicts) and hands everything that would need Python —
// globals, calls (REDUCE, NEWOBJ), BUILD and persistent ids — to a PickleHost, which decides what it accepts.
// Nothing is ever executed, and no opcode recurses: the reader is a loop over a bounded value stack.
#include <cstddef>
#include <cstdint>
#include <deque>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace minigen {

enum class PickleKind { kNone, kBool, kInt, kFloat, kString, kBytes, kTuple, kList, kDict, kHostObject };

struct PickleValue {
  PickleKind kind = PickleKind::kNone;
  bool bool_value = false;
  int64_t int_value = 0;  // kInt; for kHostObject an index the host chose
  double float_value = 0.0;
  std::string text;                 // kString and kBytes; for kHostObject a type tag the host chose
  std::vector<PickleValue*> items;  // kTuple, kList
  std::vector<std::pair<PickleValue*, PickleValue*>> entries;  // kDict, in insertion order

  bool is_string() const { return kind == PickleKind::kString; }
  bool is_host_object(std::string_view tag) const { return kind == PickleKind::kHostObject && text == tag; }
  // The value stored under a string key (the last one, as Python keeps when a key repeats); nullptr if absent.
  const PickleValue* find(std::string_view key) const;
};

const char* pickle_kind_name(PickleKind kind);

// Owns every value of one pickle. Values point at each other with plain pointers, so shared and even cyclic
// references (which a hostile pickle can build with the memo) are freed together, without recursion.
class PickleArena {
 public:
  // `source_name` names the pickle in the error thrown once more than `max_values` values were made.
  PickleArena(std::size_t max_values, std::string source_name)
      : max_values_(max_values), source_name_(std::move(source_name)) {}
  PickleValue* make(PickleKind kind);

 private:
  std::deque<PickleValue> values_;  // a deque never moves its elements, so the pointers stay valid
  std::size_t max_values_;
  std::string source_name_;
};

class PickleHost {
 public:
  virtual ~PickleHost() = default;
  // GLOBAL / STACK_GLOBAL; throw minigen::Error for a name the host does not accept.
  virtual PickleValue* global(PickleArena& arena, const std::string& module, const std::string& name) = 0;
  // REDUCE and NEWOBJ: `callable(*arguments)`; `arguments` is a tuple.
  virtual PickleValue* call(PickleArena& arena, const PickleValue& callable, const PickleValue& arguments) = 0;
  // BINPERSID: the object the pickler replaced by `persistent_id`.
  virtual PickleValue* persistent_load(PickleArena& arena, const PickleValue& persistent_id) = 0;
  // BUILD: `object.__setstate__(state)`.
  virtual void build(PickleValue& object, const PickleValue& state) = 0;
};

// Runs the pickle in `bytes` up to STOP and returns the value it produced. `source_name` starts every error
// message (e.g. "model.pth: archive/data.pkl"). Throws minigen::Error for a truncated or malformed pickle, an
// opcode this reader does not implement, or limits exceeded (stack depth, memo size, number of values).
PickleValue* read_pickle(std::span<const std::byte> bytes, PickleHost& host, PickleArena& arena,
                         const std::string& source_name);

}  // namespace minigen
