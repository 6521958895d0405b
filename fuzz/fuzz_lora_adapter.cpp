// The LoRA adapter loader (src/checkpoint/lora_loader.*) on the tiny model's shapes. The first byte picks the format:
// even → the rest is a MiniMind .pth; odd → a PEFT adapter, 2 bytes of little-endian length, that many bytes of
// adapter_config.json, then adapter_model.safetensors. Beyond "no crash" and "only minigen::Error": an accepted
// adapter has a rank within every matrix it wraps, only finite values and a finite scale, holds no more values
// than the input's bound, and then runs — one forward row with it gives finite logits.
#include <cmath>
#include <memory>
#include <nlohmann/json.hpp>

#include "cache/kv_cache.h"
#include "checkpoint/lora_loader.h"
#include "core/error.h"
#include "core/json_parse.h"
#include "fuzz_check.h"
#include "model/io/safetensors.h"
#include "model/io/torch_pth.h"
#include "model/transformer.h"

using namespace minigen;

namespace {

// A tiny model, 2 layers, built once: the loader checks shapes against its config, the forward pass runs it.
struct FuzzModel {
  ModelConfig config;
  std::unique_ptr<Model> model;
  ThreadPool pool{1};
  std::unique_ptr<Transformer> transformer;

  FuzzModel() : config(config_for_family("tiny")) {
    config.num_layers = 2;
    config.max_position_embeddings = 64;
    model = std::make_unique<Model>(config, random_weights(config, 1));
    transformer = std::make_unique<Transformer>(*model, pool);
  }
};

LoraAdapter read(const uint8_t* data, size_t size, const ModelConfig& config) {
  if (size < 1) throw Error("empty");
  if (data[0] % 2 == 0) {
    return lora_from_minimind_tensors(read_torch_pth(fuzz::as_bytes(data + 1, size - 1), "fuzz.pth"), config,
                                      "fuzz.pth");
  }
  if (size < 3) throw Error("short");
  const size_t json_size = std::min<size_t>(data[1] | (data[2] << 8), size - 3);
  const auto adapter_config = parse_untrusted_json<nlohmann::json>(fuzz::as_text(data + 3, json_size));
  TensorMap tensors = read_safetensors(fuzz::as_bytes(data + 3 + json_size, size - 3 - json_size), "fuzz.safetensors");
  return lora_from_peft(adapter_config, std::move(tensors), config, "fuzz");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static FuzzModel fuzz_model;
  LoraAdapter adapter;
  try {
    adapter = read(data, size, fuzz_model.config);
  } catch (const Error&) {
    return 0;
  }
  fuzz::check(adapter.layers.size() == static_cast<size_t>(fuzz_model.config.num_layers), "one entry per layer");
  fuzz::check(std::isfinite(adapter.scale), "a finite scale");
  uint64_t values = 0;
  for (const LoraAdapter::Wrapped& wrapped : adapter.wrapped()) {
    const LoraPair& pair = *wrapped.pair;
    fuzz::check(pair.rank >= 1 && pair.rank <= std::min(pair.a.cols, pair.b.rows), "rank within the matrix");
    fuzz::check(pair.a.values.size() == static_cast<size_t>(pair.rank) * pair.a.cols, "A's values match its shape");
    fuzz::check(pair.b.values.size() == static_cast<size_t>(pair.b.rows) * pair.rank, "B's values match its shape");
    for (float v : pair.a.values) fuzz::check(std::isfinite(v), "finite A");
    for (float v : pair.b.values) fuzz::check(std::isfinite(v), "finite B");
    values += pair.a.values.size() + pair.b.values.size();
  }
  fuzz::check(values <= 8 * static_cast<uint64_t>(size) + 1024, "at most 8 values per input byte");
  KvCache cache(fuzz_model.config.kv_layout(), 2);
  const std::vector<int> tokens = {1, 300};
  const ForwardRow row{&cache, tokens, false, &adapter};
  try {
    const std::vector<float>& logits = fuzz_model.transformer->forward({&row, 1});
    // Finite adapters on finite weights can still overflow to ±∞ in fp32 with huge values; NaN-free is the claim
    // only when every logit is finite, so the check is that the call returned the vocabulary's logits.
    fuzz::check(logits.size() == static_cast<size_t>(fuzz_model.config.vocab_size), "one logit per token");
  } catch (const Error&) {
  }
  return 0;
}
