#pragma once
// Random-weight models of every family for tests. Families other than tiny keep their real widths, head layout
// and experts but only two layers, and every test model has a 512-token context unless a test asks for more, so
// the suite stays fast.
#include <memory>
#include <string>
#include <vector>

#include "model/config.h"
#include "model/model.h"
#include "model/weights.h"

namespace minigen::testing {

inline ModelConfig test_config(const std::string& family, int context = 512) {
  ModelConfig config = config_for_family(family);
  if (family != "tiny") config.num_layers = 2;
  config.max_position_embeddings = context;
  return config;
}

// Deterministic prompt ids spread over the vocabulary; `salt` makes different prompts.
inline std::vector<int> test_prompt(int length, int salt) {
  std::vector<int> ids(length);
  for (int i = 0; i < length; ++i) ids[i] = (i * 37 + salt * 101 + 5) % 6400;
  return ids;
}

// gtest parameter names cannot hold '-': "minimind3-moe" → "minimind3_moe".
struct FamilyTestName {
  template <class ParamInfo>
  std::string operator()(const ParamInfo& info) const {
    std::string name = info.param;
    for (char& c : name) c = (c == '-') ? '_' : c;
    return name;
  }
};

inline std::unique_ptr<Model> random_test_model(const std::string& family, uint64_t seed = 1, int context = 512) {
  const ModelConfig config = test_config(family, context);
  return std::make_unique<Model>(config, random_weights(config, seed));
}

}  // namespace minigen::testing
