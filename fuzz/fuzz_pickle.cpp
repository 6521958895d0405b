// The pickle VM (src/model/pickle_reader.*) with a host that accepts every global, call, persistent id and BUILD,
// so that all opcodes are reachable, not only what a state dict uses. Beyond "no crash" and "only minigen::Error"
// (no recursion, bounded stack, memo and values): a pickle that runs to STOP yields a value, and the same bytes run
// again yield a value of the same kind (the VM has no hidden state).
#include <algorithm>

#include "core/error.h"
#include "fuzz_check.h"
#include "model/io/pickle_reader.h"

using namespace minigen;

namespace {

class AcceptingHost : public PickleHost {
 public:
  PickleValue* global(PickleArena& arena, const std::string& module, const std::string& name) override {
    PickleValue* value = arena.make(PickleKind::kHostObject);
    value->text = module + "." + name;
    return value;
  }
  PickleValue* call(PickleArena& arena, const PickleValue&, const PickleValue& arguments) override {
    PickleValue* value = arena.make(PickleKind::kList);
    value->items = arguments.items;
    return value;
  }
  PickleValue* persistent_load(PickleArena& arena, const PickleValue&) override {
    return arena.make(PickleKind::kHostObject);
  }
  void build(PickleValue&, const PickleValue&) override {}
};

PickleKind run(const uint8_t* data, size_t size, bool& accepted) {
  AcceptingHost host;
  // The same bound torch_pth.cpp gives a pickle of this size.
  PickleArena arena(std::min<std::size_t>(size * 2 + 1024, std::size_t{1} << 22), "fuzz.pkl");
  try {
    const PickleValue* root = read_pickle(fuzz::as_bytes(data, size), host, arena, "fuzz.pkl");
    fuzz::check(root != nullptr, "a finished pickle yields a value");
    accepted = true;
    return root->kind;
  } catch (const Error&) {
    accepted = false;
    return PickleKind::kNone;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  bool first_accepted = false;
  bool second_accepted = false;
  const PickleKind first = run(data, size, first_accepted);
  const PickleKind second = run(data, size, second_accepted);
  fuzz::check(first_accepted == second_accepted && first == second, "deterministic");
  return 0;
}
