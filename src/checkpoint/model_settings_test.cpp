#include "checkpoint/model_settings.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "ops/thread_pool.h"

namespace minigen {
namespace {

TEST(ModelSettings, TheDefaultModelIsTheShippedChatModel) {
  EXPECT_EQ(default_model_path(), minigen_home() / "models" / "minigen-tiny-sft");
  const LoadedModel loaded = ModelSettings{}.load();
  EXPECT_EQ(loaded.path, default_model_path());
  EXPECT_EQ(loaded.model->config.vocab_size, 6400);  // MiniMind's vocabulary
}

TEST(ModelSettings, EmptyValuesMeanTheDefaults) {
  ModelSettings settings;
  EXPECT_EQ(settings.tokenizer_option(), std::nullopt);
  EXPECT_EQ(settings.thread_count(), ThreadPool::default_thread_count());
  EXPECT_EQ(settings.kv_dtype_value(), KvDType::kF32);
  settings.tokenizer_path = "/tmp/tokenizer.json";
  settings.threads = 3;
  settings.kv_dtype = "int8";
  EXPECT_EQ(settings.tokenizer_option(), std::filesystem::path("/tmp/tokenizer.json"));
  EXPECT_EQ(settings.thread_count(), 3);
  EXPECT_EQ(settings.kv_dtype_value(), KvDType::kInt8);
}

TEST(ModelSettings, WeightsDefaultToTheStoredTypeAndMayBeChosenForAnF32Model) {
  ModelSettings settings;
  const LoadedModel loaded = settings.load();
  EXPECT_EQ(settings.weight_type(*loaded.model), WeightType::kF32);
  settings.weights = "bf16";
  EXPECT_EQ(settings.weight_type(*loaded.model), WeightType::kBF16);
}

TEST(ModelSettings, ShippedModelsLoadByNameFromAnyFolder) {
  EXPECT_EQ(shipped_model_names(), (std::vector<std::string>{"minigen-tiny-base", "minigen-tiny-sft"}));
  const std::filesystem::path before = std::filesystem::current_path();
  std::filesystem::current_path("/");
  EXPECT_EQ(resolve_model_path("minigen-tiny-base"), minigen_home() / "models" / "minigen-tiny-base");
  ModelSettings settings;
  settings.model_path = "minigen-tiny-sft";
  const LoadedModel loaded = settings.load();
  std::filesystem::current_path(before);
  EXPECT_EQ(loaded.path, minigen_home() / "models" / "minigen-tiny-sft");
  EXPECT_EQ(loaded.model->config.vocab_size, 6400);
  // A path that exists is taken as it is, before any name.
  EXPECT_EQ(resolve_model_path(default_model_path().string()), default_model_path());
  EXPECT_EQ(resolve_model_path(""), default_model_path());
}

// The message for `what` as resolve_model_path gives it.
std::string resolve_error(const std::string& what) {
  try {
    resolve_model_path(what);
  } catch (const Error& error) {
    return error.what();
  }
  return "resolved";
}

TEST(ModelSettings, AnUnknownNameNamesTheShippedModelsOrTheNearestOne) {
  EXPECT_EQ(resolve_error("minigen-tiny-sfft"),
            "model not found: minigen-tiny-sfft (did you mean the shipped model 'minigen-tiny-sft'?)");
  EXPECT_EQ(resolve_error("qwen"),
            "model not found: qwen (not a file or folder here, nor a shipped model: "
            "minigen-tiny-base, minigen-tiny-sft)");
  EXPECT_EQ(resolve_error("/nonexistent/minigen-tiny-sft"), "model not found: /nonexistent/minigen-tiny-sft");
}

TEST(ModelSettings, AMissingModelIsOneError) {
  ModelSettings settings;
  settings.model_path = "/nonexistent/minigen-model";
  EXPECT_THROW(settings.load(), Error);
}

}  // namespace
}  // namespace minigen
