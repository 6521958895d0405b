// safetensors header + tensor reader (src/model/safetensors.*). Beyond "no crash" and "only minigen::Error": an
// accepted file holds exactly product(shape) values per tensor, read_safetensors_metadata agrees with it, and writing
// the tensors back (F32) and reading that gives the same names, shapes, metadata and bit patterns.
#include <cstring>

#include "core/error.h"
#include "fuzz_check.h"
#include "model/io/safetensors.h"

using namespace minigen;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto bytes = fuzz::as_bytes(data, size);
  TensorMap tensors;
  try {
    tensors = read_safetensors(bytes, "fuzz.safetensors");
  } catch (const Error&) {
    return 0;
  }
  const auto metadata = read_safetensors_metadata(bytes, "fuzz.safetensors");
  for (const auto& [name, tensor] : tensors) {
    fuzz::check(static_cast<uint64_t>(tensor.element_count()) == tensor.values.size(), "values match the shape");
  }

  const std::string written = safetensors_bytes(tensors, DType::kF32, metadata);
  const auto written_bytes = std::as_bytes(std::span(written.data(), written.size()));
  const TensorMap again = read_safetensors(written_bytes, "round-trip.safetensors");
  fuzz::check(read_safetensors_metadata(written_bytes, "round-trip.safetensors") == metadata, "metadata round trip");
  fuzz::check(again.size() == tensors.size(), "tensor count round trip");
  for (const auto& [name, tensor] : tensors) {
    const auto found = again.find(name);
    fuzz::check(found != again.end(), "tensor names round trip");
    fuzz::check(found->second.shape == tensor.shape, "shapes round trip");
    const std::vector<float>& values = found->second.values;
    fuzz::check(values.size() == tensor.values.size() &&
                    (values.empty() || std::memcmp(values.data(), tensor.values.data(), 4 * values.size()) == 0),
                "values round trip bit for bit");
  }
  return 0;
}
