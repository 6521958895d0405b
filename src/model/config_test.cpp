#include "model/config.h"

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "core/error.h"

namespace minigen {
namespace {

using nlohmann::json;

TEST(ConfigTest, FamilyTableMatchesTheSpec) {
  EXPECT_EQ(family_names(), (std::vector<std::string>{"minimind3", "minimind3-moe", "minimind2", "minimind2-small",
                                                      "minimind2-moe", "tiny"}));
  const ModelConfig tiny = config_for_family("tiny");
  EXPECT_EQ(tiny.hidden_size, 256);
  EXPECT_EQ(tiny.num_layers, 4);
  EXPECT_EQ(tiny.num_kv_heads, 2);
  EXPECT_EQ(tiny.head_dim, 32);
  EXPECT_EQ(tiny.intermediate_size, 832);
  EXPECT_TRUE(tiny.qk_norm);
  const ModelConfig moe2 = config_for_family("minimind2-moe");
  EXPECT_EQ(moe2.hidden_size, 640);
  EXPECT_EQ(moe2.head_dim, 80);
  EXPECT_TRUE(moe2.use_moe);
  EXPECT_EQ(moe2.num_experts, 4);
  EXPECT_EQ(moe2.num_experts_per_token, 2);
  EXPECT_EQ(moe2.num_shared_experts, 1);
  EXPECT_EQ(moe2.moe_intermediate_size, 1728);
  EXPECT_EQ(moe2.rms_norm_eps, 1e-5f);
  const ModelConfig moe3 = config_for_family("minimind3-moe");
  EXPECT_EQ(moe3.num_experts_per_token, 1);
  EXPECT_EQ(moe3.num_shared_experts, 0);
  for (const std::string& name : family_names()) {
    const ModelConfig config = config_for_family(name);
    EXPECT_EQ(config.vocab_size, 6400) << name;
    EXPECT_EQ(config.rope_theta, 1e6) << name;
    EXPECT_EQ(config.max_position_embeddings, 32768) << name;
    EXPECT_TRUE(config.tie_word_embeddings) << name;
    EXPECT_EQ(config.hidden_size, config.num_q_heads * config.head_dim) << name;
    EXPECT_EQ(identify_family(config), name);
    EXPECT_NO_THROW(config.validate()) << name;
  }
  try {
    config_for_family("gpt2");
    FAIL() << "no error for an unknown family";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("gpt2"), std::string::npos);
    EXPECT_NE(std::string(error.what()).find("minimind2-small"), std::string::npos);
  }
}

TEST(ConfigTest, EveryFamilyRoundTripsThroughConfigJson) {
  for (const std::string& name : family_names()) {
    SCOPED_TRACE(name);
    const ModelConfig config = config_for_family(name);
    const json written = config_to_json(config);
    EXPECT_EQ(written["hidden_act"], "silu");
    EXPECT_EQ(written["torch_dtype"], "float32");
    EXPECT_EQ(written["attention_bias"], false);
    if (config.qk_norm) {
      EXPECT_EQ(written["model_type"], config.use_moe ? "qwen3_moe" : "qwen3");
    } else {
      EXPECT_EQ(written["architectures"][0], "LlamaForCausalLM");
      EXPECT_EQ(written["model_type"], "llama");
    }
    // Through text, as a file would hold it.
    const json reread = json::parse(written.dump(2));
    EXPECT_EQ(config_from_json(reread, config.qk_norm), config);
  }
  const json tiny = config_to_json(config_for_family("tiny"));
  EXPECT_EQ(tiny["architectures"][0], "Qwen3ForCausalLM");
  EXPECT_EQ(tiny.dump().find("9.99"), std::string::npos) << "eps written as a widened float: " << tiny.dump();
}

TEST(ConfigTest, RoundTripKeepsRopeScalingAndUntiedEmbeddings) {
  ModelConfig config = config_for_family("minimind3");
  config.rope_scaling = RopeScaling{};
  config.rope_scaling->factor = 4.0;
  config.tie_word_embeddings = false;
  config.max_position_embeddings = 8192;
  config.family = "minimind3";  // max_position does not change the family
  const ModelConfig reread = config_from_json(config_to_json(config), true);
  EXPECT_EQ(reread, config);
  ASSERT_TRUE(reread.rope_scaling.has_value());
  EXPECT_EQ(reread.rope_scaling->factor, 4.0);
}

TEST(ConfigTest, ParsesAMiniMind3ConfigJson) {
  // As MiniMindConfig.save_pretrained writes it.
  const json config_json = json::parse(R"({
    "architectures": ["MiniMindForCausalLM"], "model_type": "minimind", "bos_token_id": 1, "eos_token_id": 2,
    "dropout": 0.0, "flash_attn": true, "head_dim": 96, "hidden_act": "silu", "hidden_size": 768,
    "inference_rope_scaling": false, "intermediate_size": 2432, "max_position_embeddings": 32768,
    "moe_intermediate_size": 2432, "norm_topk_prob": true, "num_attention_heads": 8, "num_experts": 4,
    "num_experts_per_tok": 1, "num_hidden_layers": 8, "num_key_value_heads": 4, "rms_norm_eps": 1e-06,
    "rope_scaling": null, "rope_theta": 1000000.0, "router_aux_loss_coef": 0.0005, "tie_word_embeddings": true,
    "torch_dtype": "bfloat16", "transformers_version": "4.57.1", "use_moe": false, "vocab_size": 6400})");
  const ModelConfig config = config_from_json(config_json, /*has_qk_norm_tensors=*/true);
  EXPECT_EQ(config, config_for_family("minimind3"));

  // MiniMind computes what the file leaves out; inference_rope_scaling switches on its YaRN defaults.
  json sparse = {{"model_type", "minimind"}, {"hidden_size", 768}, {"num_hidden_layers", 8},
                 {"num_attention_heads", 8}, {"use_moe", true},    {"inference_rope_scaling", true}};
  const ModelConfig moe = config_from_json(sparse, true);
  EXPECT_EQ(moe.intermediate_size, 2432);  // ceil(768·π/64)·64
  EXPECT_EQ(moe.num_kv_heads, 4);
  EXPECT_EQ(moe.head_dim, 96);
  EXPECT_EQ(moe.family, "minimind3-moe");
  ASSERT_TRUE(moe.rope_scaling.has_value());
  EXPECT_EQ(*moe.rope_scaling, RopeScaling{});
  EXPECT_EQ(moe.rope_scaling->factor, 16.0);
}

TEST(ConfigTest, ParsesMiniMind2ConfigsInBothFieldSpellings) {
  // The oldest LMConfig spelling.
  const json lm_config = json::parse(R"({
    "model_type": "minimind", "dim": 512, "n_layers": 8, "n_heads": 8, "n_kv_heads": 2, "vocab_size": 6400,
    "hidden_dim": null, "multiple_of": 64, "norm_eps": 1e-05, "max_seq_len": 8192, "rope_theta": 1000000.0,
    "dropout": 0.0, "flash_attn": true, "use_moe": false, "num_experts_per_tok": 2, "n_routed_experts": 4,
    "n_shared_experts": true, "scoring_func": "softmax", "aux_loss_alpha": 0.1, "seq_aux": true,
    "norm_topk_prob": true})");
  const ModelConfig small = config_from_json(lm_config, /*has_qk_norm_tensors=*/false);
  EXPECT_EQ(small.intermediate_size, 1408);  // 64·ceil(int(512·8/3)/64)
  EXPECT_EQ(small.rms_norm_eps, 1e-5f);
  EXPECT_EQ(small, config_for_family("minimind2-small"));

  // MiniMind2's MiniMindConfig, MoE variant.
  const json moe_config = json::parse(R"({
    "model_type": "minimind", "hidden_size": 640, "num_hidden_layers": 8, "num_attention_heads": 8,
    "num_key_value_heads": 2, "intermediate_size": null, "rms_norm_eps": 1e-05, "rope_theta": 1000000.0,
    "max_position_embeddings": 32768, "vocab_size": 6400, "hidden_act": "silu", "use_moe": true,
    "num_experts_per_tok": 2, "n_routed_experts": 4, "n_shared_experts": 1, "scoring_func": "softmax",
    "norm_topk_prob": true, "bos_token_id": 1, "eos_token_id": 2})");
  const ModelConfig moe = config_from_json(moe_config, false);
  EXPECT_EQ(moe.intermediate_size, 1728);
  EXPECT_EQ(moe, config_for_family("minimind2-moe"));

  // The bool spelling of n_shared_experts means one shared expert.
  json with_bool = moe_config;
  with_bool["n_shared_experts"] = true;
  EXPECT_EQ(config_from_json(with_bool, false).num_shared_experts, 1);
}

TEST(ConfigTest, ParsesQwen3AndLlamaConfigs) {
  const json qwen3 = json::parse(R"({
    "architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "attention_bias": false, "head_dim": 32,
    "hidden_act": "silu", "hidden_size": 256, "intermediate_size": 832, "max_position_embeddings": 32768,
    "num_attention_heads": 8, "num_hidden_layers": 4, "num_key_value_heads": 2, "rms_norm_eps": 1e-06,
    "rope_theta": 1000000.0, "tie_word_embeddings": true, "vocab_size": 6400, "bos_token_id": 1,
    "eos_token_id": [2, 0], "use_cache": true, "sliding_window": null})");
  // Qwen3 always has qk-norm, whatever the caller saw.
  const ModelConfig tiny = config_from_json(qwen3, /*has_qk_norm_tensors=*/false);
  EXPECT_EQ(tiny, config_for_family("tiny"));

  // transformers leaves out tie_word_embeddings when false; newer versions move rope_theta into rope_parameters;
  // a YaRN block without attention_factor gets transformers' 0.1·ln(factor) + 1.
  json untied = qwen3;
  untied.erase("tie_word_embeddings");
  untied.erase("rope_theta");
  untied["rope_parameters"] = {
      {"rope_type", "yarn"}, {"rope_theta", 5e5}, {"factor", 4.0}, {"original_max_position_embeddings", 4096}};
  const ModelConfig parsed = config_from_json(untied, true);
  EXPECT_FALSE(parsed.tie_word_embeddings);
  EXPECT_EQ(parsed.rope_theta, 5e5);
  ASSERT_TRUE(parsed.rope_scaling.has_value());
  EXPECT_EQ(parsed.rope_scaling->original_max_position_embeddings, 4096);
  EXPECT_DOUBLE_EQ(parsed.rope_scaling->attention_factor, 0.1 * std::log(4.0) + 1.0);

  const json llama = json::parse(R"({
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 768, "num_hidden_layers": 16,
    "num_attention_heads": 8, "num_key_value_heads": 2, "intermediate_size": 2048, "rms_norm_eps": 1e-05,
    "rope_theta": 1000000.0, "max_position_embeddings": 32768, "vocab_size": 6400, "tie_word_embeddings": true,
    "hidden_act": "silu", "rope_scaling": null, "bos_token_id": 1, "eos_token_id": 2})");
  const ModelConfig minimind2 = config_from_json(llama, /*has_qk_norm_tensors=*/true);
  EXPECT_FALSE(minimind2.qk_norm);
  EXPECT_EQ(minimind2, config_for_family("minimind2"));
}

// The message config_from_json throws for a config, or "" if it is accepted.
std::string parse_error(const json& config_json, bool has_qk_norm_tensors = true) {
  try {
    config_from_json(config_json, has_qk_norm_tensors);
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

TEST(ConfigTest, RejectsBadFields) {
  const json good = config_to_json(config_for_family("tiny"));
  ASSERT_EQ(parse_error(good), "");
  struct Case {
    const char* field;
    json value;  // null removes the field
    const char* expected_message;
  };
  const std::vector<Case> cases = {
      {"model_type", "gpt2", "field 'model_type' is 'gpt2'"},
      {"model_type", nullptr, "missing required field 'model_type'"},
      {"model_type", 3, "field 'model_type' must be a string"},
      {"hidden_size", nullptr, "missing required field 'hidden_size' or 'dim'"},
      {"hidden_size", "256", "field 'hidden_size' must be a positive integer"},
      {"hidden_size", -256, "field 'hidden_size' must be a positive integer"},
      {"hidden_size", 256.5, "field 'hidden_size' must be a positive integer"},
      {"num_hidden_layers", 0, "field 'num_hidden_layers' must be a positive integer"},
      {"num_attention_heads", true, "field 'num_attention_heads' must be a positive integer"},
      {"num_key_value_heads", 3, "num_q_heads 8 is not a multiple of num_kv_heads 3"},
      {"head_dim", 33, "head_dim 33 is odd"},
      {"intermediate_size", 1e12, "field 'intermediate_size' must be a positive integer"},
      {"vocab_size", 0, "field 'vocab_size'"},
      {"rms_norm_eps", -1e-6, "field 'rms_norm_eps' must be a positive number"},
      {"rope_theta", "big", "field 'rope_theta' must be a positive number"},
      {"tie_word_embeddings", "yes", "field 'tie_word_embeddings' must be true or false"},
      {"use_moe", 1, "field 'use_moe' must be true or false"},
      {"hidden_act", "gelu", "field 'hidden_act'"},
      {"rope_scaling", {{"type", "linear"}, {"factor", 2.0}}, "only yarn is supported"},
      {"rope_scaling", {{"type", "yarn"}, {"factor", -2.0}}, "field 'factor' must be a positive number"},
      // Positive and finite, but each would make the first forward pass NaN: refused at load, named.
      {"rms_norm_eps", 2.0, "model config: rms_norm_eps = 2 is outside (0, 1]"},
      {"rope_theta", 1.0, "model config: rope_theta = 1 is outside (1, 3.40282e+38]"},
      {"rope_theta", 1e39, "model config: rope_theta = 1e+39 is outside (1, 3.40282e+38]"},
      {"rope_scaling",
       {{"type", "yarn"}, {"factor", 4.0}, {"attention_factor", 1e6}},
       "model config: rope_scaling attention_factor = 1e+06 is outside (0, 10]"},
      {"rope_scaling",
       {{"type", "yarn"}, {"factor", 4.0}, {"beta_fast", 1e300}},
       "model config: rope_scaling beta_fast = 1e+300 is outside (0, 3.40282e+38]"},
      {"eos_token_id", 7000, "eos_token_id = 7000 is outside [0, 6399]"},
      {"max_position_embeddings", -1, "field 'max_position_embeddings'"},
  };
  for (const Case& test_case : cases) {
    json config_json = good;
    if (test_case.value.is_null()) {
      config_json.erase(test_case.field);
    } else {
      config_json[test_case.field] = test_case.value;
    }
    const std::string message = parse_error(config_json);
    EXPECT_NE(message.find(test_case.expected_message), std::string::npos)
        << test_case.field << " = " << test_case.value.dump() << ": got '" << message << "'";
  }
  EXPECT_NE(parse_error(json::array()).find("not a JSON object"), std::string::npos);

  json moe = config_to_json(config_for_family("minimind3-moe"));
  moe["num_experts_per_tok"] = 5;
  EXPECT_NE(parse_error(moe).find("num_experts_per_token = 5 is outside [1, 4]"), std::string::npos)
      << parse_error(moe);
  json no_head_dim = good;
  no_head_dim.erase("head_dim");
  no_head_dim["num_attention_heads"] = 6;
  no_head_dim["num_key_value_heads"] = 2;
  EXPECT_NE(parse_error(no_head_dim).find("not divisible"), std::string::npos);
}

TEST(ConfigTest, ValidateRejectsInconsistentConfigs) {
  ModelConfig config = config_for_family("tiny");
  config.num_experts = 2;  // without use_moe
  EXPECT_THROW(config.validate(), Error);
  config = config_for_family("minimind2-moe");
  config.num_experts_per_token = 0;
  EXPECT_THROW(config.validate(), Error);
  config = config_for_family("tiny");
  config.hidden_size = 0;
  EXPECT_THROW(config.validate(), Error);
  config = config_for_family("tiny");
  config.rms_norm_eps = 0.0f;
  EXPECT_THROW(config.validate(), Error);
  config = config_for_family("tiny");
  config.num_layers = 1 << 20;  // beyond the cap that keeps size arithmetic from overflowing
  EXPECT_THROW(config.validate(), Error);
}

// Each field that sizes an allocation has a cap, named as config.json spells it; the context has none (nothing is
// sized by it).
TEST(ConfigTest, FieldsThatSizeAllocationsAreCapped) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"vocab_size", "vocab_size = 1048577 is outside [1, 1048576]"},
      {"hidden_size", "hidden_size = 32800 is outside [1, 32768]"},
      {"num_hidden_layers", "num_hidden_layers = 513 is outside [1, 512]"},
      {"intermediate_size", "intermediate_size = 131073 is outside [1, 131072]"},
      {"head_dim", "head_dim = 1026 is outside [2, 1024]"},
      {"num_attention_heads", "num_attention_heads × head_dim = 131072 is outside [2, 65536]"},
  };
  for (const auto& [field, expected] : cases) {
    ModelConfig config = config_for_family("tiny");
    if (field == "vocab_size") config.vocab_size = (1 << 20) + 1;
    if (field == "hidden_size") config.hidden_size = 32800;
    if (field == "num_hidden_layers") config.num_layers = 513;
    if (field == "intermediate_size") config.intermediate_size = (1 << 17) + 1;
    if (field == "head_dim") config.head_dim = 1026;
    if (field == "num_attention_heads") {
      config.num_q_heads = 128;
      config.num_kv_heads = 2;
      config.head_dim = 1024;
    }
    try {
      config.validate();
      ADD_FAILURE() << field << " was accepted";
    } catch (const Error& error) {
      EXPECT_EQ(std::string(error.what()), "model config: " + expected);
    }
  }
  // The fuzzer's find: a huge dim (or multiple_of) once overflowed the default-width arithmetic before any check.
  for (const bool qk_norm : {false, true}) {
    const json huge_dim = json::parse(R"({"model_type": "minimind", "dim": 777777512, "n_layers": 8, "n_heads": 8,
                                          "vocab_size": 6401, "multiple_of": 64})");
    EXPECT_EQ(parse_error(huge_dim, qk_norm), "model config: hidden_size = 777777512 is outside [1, 32768]");
  }
  const json huge_multiple = json::parse(R"({"model_type": "minimind", "dim": 512, "n_layers": 8, "n_heads": 8,
                                             "vocab_size": 6401, "multiple_of": 641000000})");
  EXPECT_EQ(parse_error(huge_multiple, false), "model config: multiple_of = 641000000 is outside [1, 131072]");
  ModelConfig huge_context = config_for_family("tiny");
  huge_context.max_position_embeddings = 2147483647;
  EXPECT_NO_THROW(huge_context.validate());
}

TEST(ConfigTest, KvBytesPerToken) {
  const ModelConfig tiny = config_for_family("tiny");
  // 2 · 4 layers · 2 kv heads · 32 · 4 bytes = 2048; 100 cached tokens = 204,800 bytes.
  EXPECT_EQ(tiny.kv_bytes_per_token(), 2048u);
  EXPECT_EQ(100 * tiny.kv_bytes_per_token(KvDType::kF32), 204800u);
  EXPECT_EQ(tiny.kv_bytes_per_token(KvDType::kBF16), 1024u);
  EXPECT_EQ(tiny.kv_bytes_per_token(KvDType::kF16), 1024u);
  // int8: 2 · 4 · 2 · 32 · 1 = 512, plus one fp32 scale per layer, kv head and K or V: 2 · 4 · 2 · 4 = 64.
  EXPECT_EQ(tiny.kv_bytes_per_token(KvDType::kInt8), 576u);
  // minimind3: 2 · 8 · 4 · 96 · 2 bytes (f16) = 12,288; int8 6,144 + 2 · 8 · 4 · 4 = 6,400.
  EXPECT_EQ(config_for_family("minimind3").kv_bytes_per_token(KvDType::kF16), 12288u);
  EXPECT_EQ(config_for_family("minimind3").kv_bytes_per_token(KvDType::kInt8), 6400u);
}

TEST(ConfigTest, ParameterCountOfEveryFamily) {
  // Per layer: 2·hidden (norms) + 2·hidden·q_width (Wq, Wo) + 2·hidden·kv_width (Wk, Wv) [+ 2·head_dim qk-norm]
  // + feed-forward; plus vocab·hidden (tied embedding) and hidden (final norm).
  // tiny: 512 + 131,072 + 32,768 + 64 + 3·256·832 (638,976) = 803,392 per layer; ·4 = 3,213,568;
  //   + 1,638,400 + 256 = 4,852,224 (≈ 4.85 M).
  EXPECT_EQ(config_for_family("tiny").parameter_count(), 4852224u);
  // minimind3: 1,536 + 1,179,648 + 589,824 + 192 + 3·768·2432 (5,603,328) = 7,374,528; ·8 = 58,996,224;
  //   + 4,915,200 + 768 = 63,912,192 (≈ 64 M).
  EXPECT_EQ(config_for_family("minimind3").parameter_count(), 63912192u);
  // minimind3-moe: attention 1,771,200 + router 4·768 (3,072) + 4 experts · 5,603,328 (22,413,312)
  //   = 24,187,584; ·8 = 193,500,672; + 4,915,968 = 198,416,640 (≈ 198 M).
  EXPECT_EQ(config_for_family("minimind3-moe").parameter_count(), 198416640u);
  // minimind2-small: 1,024 + 524,288 + 131,072 + 3·512·1408 (2,162,688) = 2,819,072; ·8 = 22,552,576;
  //   + 3,276,800 + 512 = 25,829,888 (≈ 26 M).
  EXPECT_EQ(config_for_family("minimind2-small").parameter_count(), 25829888u);
  // minimind2: 1,536 + 1,179,648 + 294,912 + 3·768·2048 (4,718,592) = 6,194,688; ·16 = 99,115,008;
  //   + 4,915,200 + 768 = 104,030,976 (≈ 104 M).
  EXPECT_EQ(config_for_family("minimind2").parameter_count(), 104030976u);
  // minimind2-moe: 1,280 + 819,200 + 204,800 + router 2,560 + (4 + 1 shared) · 3·640·1728 (16,588,800)
  //   = 17,616,640; ·8 = 140,933,120; + 4,096,000 + 640 = 145,029,760 (≈ 145 M).
  EXPECT_EQ(config_for_family("minimind2-moe").parameter_count(), 145029760u);
  // An untied lm_head adds another vocab·hidden.
  ModelConfig untied = config_for_family("tiny");
  untied.tie_word_embeddings = false;
  EXPECT_EQ(untied.parameter_count(), 4852224u + 1638400u);
}

// A state dict with the shapes (not the values: they stay empty) of a config, as MiniMind names its tensors.
TensorMap shapes_of(const ModelConfig& config) {
  TensorMap tensors;
  auto add = [&](const std::string& name, std::vector<int64_t> shape) { tensors[name].shape = std::move(shape); };
  const int64_t hidden = config.hidden_size;
  add("model.embed_tokens.weight", {config.vocab_size, hidden});
  add("lm_head.weight", {config.vocab_size, hidden});
  add("model.norm.weight", {hidden});
  auto add_feed_forward = [&](const std::string& prefix, int64_t width) {
    add(prefix + "gate_proj.weight", {width, hidden});
    add(prefix + "up_proj.weight", {width, hidden});
    add(prefix + "down_proj.weight", {hidden, width});
  };
  for (int layer = 0; layer < config.num_layers; ++layer) {
    const std::string prefix = "model.layers." + std::to_string(layer) + ".";
    add(prefix + "input_layernorm.weight", {hidden});
    add(prefix + "post_attention_layernorm.weight", {hidden});
    add(prefix + "self_attn.q_proj.weight", {config.q_width(), hidden});
    add(prefix + "self_attn.k_proj.weight", {config.kv_width(), hidden});
    add(prefix + "self_attn.v_proj.weight", {config.kv_width(), hidden});
    add(prefix + "self_attn.o_proj.weight", {hidden, config.q_width()});
    if (config.qk_norm) {
      add(prefix + "self_attn.q_norm.weight", {config.head_dim});
      add(prefix + "self_attn.k_norm.weight", {config.head_dim});
    }
    if (!config.use_moe) {
      add_feed_forward(prefix + "mlp.", config.intermediate_size);
      continue;
    }
    add(prefix + "mlp.gate.weight", {config.num_experts, hidden});
    for (int e = 0; e < config.num_experts; ++e) {
      add_feed_forward(prefix + "mlp.experts." + std::to_string(e) + ".", config.moe_intermediate_size);
    }
    for (int s = 0; s < config.num_shared_experts; ++s) {
      add_feed_forward(prefix + "mlp.shared_experts." + std::to_string(s) + ".", config.moe_intermediate_size);
    }
  }
  return tensors;
}

TEST(ConfigTest, InfersEveryFamilyFromTensorShapes) {
  // Dense (tiny, minimind3, the MiniMind2 sizes), minimind-3 MoE (top-1) and MiniMind2-MoE (top-2 + shared).
  for (const std::string& name : family_names()) {
    SCOPED_TRACE(name);
    const ModelConfig expected = config_for_family(name);
    const ModelConfig inferred = infer_config_from_tensors(shapes_of(expected), 8);
    EXPECT_EQ(inferred, expected);
  }
}

TEST(ConfigTest, InferenceDetectsUntiedEmbeddingsAndOtherHeadCounts) {
  TensorMap tensors = shapes_of(config_for_family("minimind2-small"));
  tensors["lm_head.weight"].values = {1.0f};  // differs from the (empty) embedding values
  ModelConfig inferred = infer_config_from_tensors(tensors, 8);
  EXPECT_FALSE(inferred.tie_word_embeddings);
  EXPECT_EQ(inferred.family, "minimind2-small");  // tying does not change the family

  tensors.erase("lm_head.weight");
  inferred = infer_config_from_tensors(tensors, 4);  // a flag said 4 heads: head_dim 128, one kv head
  EXPECT_TRUE(inferred.tie_word_embeddings);
  EXPECT_EQ(inferred.head_dim, 128);
  EXPECT_EQ(inferred.num_kv_heads, 1);
  EXPECT_EQ(inferred.family, "custom");
}

std::string inference_error(const TensorMap& tensors, int heads = 8) {
  try {
    infer_config_from_tensors(tensors, heads);
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

TEST(ConfigTest, InferenceNamesTheTensorThatIsWrong) {
  const TensorMap good = shapes_of(config_for_family("tiny"));
  TensorMap tensors = good;
  tensors.erase("model.layers.2.self_attn.k_proj.weight");
  EXPECT_NE(inference_error(tensors).find("'model.layers.2.self_attn.k_proj.weight' is missing"), std::string::npos);

  tensors = good;
  tensors["model.layers.1.self_attn.v_proj.weight"].shape = {32, 256};
  EXPECT_NE(inference_error(tensors).find("'model.layers.1.self_attn.v_proj.weight' has shape [32, 256], expected "
                                          "[64, 256]"),
            std::string::npos)
      << inference_error(tensors);

  EXPECT_NE(inference_error(good, 7).find("not divisible by 7 query heads"), std::string::npos);
  EXPECT_NE(inference_error(good, 0).find("must be positive"), std::string::npos);
  // 512 heads over minimind2-small's 512 q_proj rows: head_dim 1, which RoPE cannot rotate.
  EXPECT_NE(inference_error(shapes_of(config_for_family("minimind2-small")), 512).find("head_dim = 1 is outside"),
            std::string::npos);

  tensors = good;
  tensors.erase("model.embed_tokens.weight");
  EXPECT_NE(inference_error(tensors).find("'model.embed_tokens.weight' is missing"), std::string::npos);

  tensors = good;
  tensors.erase("model.layers.3.mlp.down_proj.weight");
  EXPECT_NE(inference_error(tensors).find("model.layers.3.mlp.down_proj.weight"), std::string::npos);

  tensors = good;
  tensors["model.layers.7.input_layernorm.weight"].shape = {256};  // a stray layer beyond the real ones
  EXPECT_NE(inference_error(tensors).find("model.layers.4."), std::string::npos) << inference_error(tensors);

  TensorMap moe = shapes_of(config_for_family("minimind2-moe"));
  moe.erase("model.layers.5.mlp.shared_experts.0.up_proj.weight");
  EXPECT_NE(inference_error(moe).find("model.layers.5.mlp.shared_experts.0.up_proj.weight"), std::string::npos);
  moe = shapes_of(config_for_family("minimind2-moe"));
  moe["model.layers.0.mlp.gate.weight"].shape = {3, 640};  // router says 3 experts, 4 are present
  EXPECT_NE(inference_error(moe).find("has 4 experts"), std::string::npos) << inference_error(moe);
}

}  // namespace
}  // namespace minigen
