#pragma once
// Random-weight models of every family for tests. Families other than tiny keep their real widths, head layout
// and experts but only two layers, and every test model has a 512-token context, so the suite stays fast.
#include <memory>
#include <string>

#include "model/config.h"
#include "model/model.h"
#include "model/weights.h"

namespace minigen::testing {

inline ModelConfig test_config(const std::string& family) {
  ModelConfig config = config_for_family(family);
  if (family != "tiny") config.num_layers = 2;
  config.max_position_embeddings = 512;
  return config;
}

inline std::unique_ptr<Model> random_test_model(const std::string& family, uint64_t seed = 1) {
  const ModelConfig config = test_config(family);
  return std::make_unique<Model>(config, random_weights(config, seed));
}

}  // namespace minigen::testing
