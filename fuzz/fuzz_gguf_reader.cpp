// GGUF header reader (src/model/io/gguf_reader.*) and the GGUF → minigen model mapping (src/checkpoint/gguf_model.*,
// gguf_tokenizer.*). Beyond "no crash" and "only minigen::Error": an accepted file's tensors lie inside the input
// and hold exactly their type's bytes for their dims; writing the header and tensors back (gguf_writer) and reading
// that gives the same keys, values, names, dims, types and bytes; a file the mapping accepts gives a valid config
// whose tensors the weight loader either takes or refuses with an Error.
#include <cstring>

#include "checkpoint/gguf_model.h"
#include "checkpoint/gguf_tokenizer.h"
#include "core/error.h"
#include "fuzz_check.h"
#include "model/io/gguf_reader.h"
#include "model/io/gguf_writer.h"
#include "model/weights.h"
#include "tokenizer/bpe_tokenizer.h"

using namespace minigen;

namespace {

// Numbers are held as the file's bytes, so a round trip keeps every bit (NaN payloads included).
bool same_value(const GgufValue& a, const GgufValue& b) {
  return a.type == b.type && (!a.is_array() || a.element_type == b.element_type) && a.numbers == b.numbers &&
         a.strings == b.strings;
}

void check_round_trip(const GgufFile& file) {
  std::vector<GgufTensorToWrite> tensors;
  for (const GgufTensorInfo& info : file.tensors) {
    tensors.push_back({info.name, info.dims, info.type,
                       std::string(reinterpret_cast<const char*>(info.bytes.data()), info.bytes.size())});
  }
  const std::string written = gguf_bytes(file.metadata, tensors);
  const GgufFile again = read_gguf(std::as_bytes(std::span(written.data(), written.size())), "round-trip.gguf");
  fuzz::check(again.metadata.size() == file.metadata.size(), "metadata count round trip");
  for (std::size_t i = 0; i < file.metadata.size(); ++i) {
    fuzz::check(again.metadata[i].first == file.metadata[i].first, "keys round trip in order");
    fuzz::check(same_value(again.metadata[i].second, file.metadata[i].second), "values round trip");
  }
  fuzz::check(again.tensors.size() == file.tensors.size(), "tensor count round trip");
  for (std::size_t i = 0; i < file.tensors.size(); ++i) {
    const GgufTensorInfo& a = file.tensors[i];
    const GgufTensorInfo& b = again.tensors[i];
    fuzz::check(a.name == b.name && a.dims == b.dims && a.type == b.type, "tensor infos round trip");
    fuzz::check(a.bytes.size() == b.bytes.size() &&
                    (a.bytes.empty() || std::memcmp(a.bytes.data(), b.bytes.data(), a.bytes.size()) == 0),
                "tensor bytes round trip");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto bytes = fuzz::as_bytes(data, size);
  GgufFile file;
  try {
    file = read_gguf(bytes, "fuzz.gguf");
  } catch (const Error&) {
    return 0;
  }
  for (const GgufTensorInfo& info : file.tensors) {
    fuzz::check(info.bytes.data() >= bytes.data() && info.bytes.data() + info.bytes.size() <= bytes.data() + size,
                "tensor data inside the file");
    fuzz::check(info.bytes.size() == gguf_type_bytes(info.type, info.element_count()), "tensor bytes match dims");
  }
  check_round_trip(file);

  try {
    GgufModel model = gguf_model(file, "fuzz.gguf");
    model.config.validate();
    const GgufTokenizerFiles files = gguf_tokenizer_files(file, "fuzz.gguf");
    const Tokenizer tokenizer = Tokenizer::from_json_text(files.tokenizer_json, files.tokenizer_config_json);
    fuzz::check(tokenizer.vocab_size() > 0, "a tokenizer has tokens");
    weights_from_tensors(model.config, std::move(model.tensors));
  } catch (const Error&) {
  }
  return 0;
}
