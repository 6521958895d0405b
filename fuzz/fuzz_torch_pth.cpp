// The .pth loader (src/model/torch_pth.*: zip archive + pickle + storages). Beyond "no crash" and "only
// minigen::Error": an accepted archive gives tensors whose values match their shapes, no more values in all than
// the loader's bound of 8 per archive byte (+ 1024), and only the dtypes it converts.
#include "core/error.h"
#include "fuzz_check.h"
#include "model/io/torch_pth.h"

using namespace minigen;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  TensorMap tensors;
  try {
    tensors = read_torch_pth(fuzz::as_bytes(data, size), "fuzz.pth");
  } catch (const Error&) {
    return 0;
  }
  uint64_t values = 0;
  for (const auto& [name, tensor] : tensors) {
    fuzz::check(static_cast<uint64_t>(tensor.element_count()) == tensor.values.size(), "values match the shape");
    values += tensor.values.size();
  }
  fuzz::check(values <= 8 * static_cast<uint64_t>(size) + 1024, "at most 8 values per archive byte");
  return 0;
}
