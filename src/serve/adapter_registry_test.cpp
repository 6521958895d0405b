#include "serve/adapter_registry.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>

#include "core/error.h"
#include "model/lora_test_adapters.h"
#include "model/test_models.h"

namespace minigen {
namespace {

std::shared_ptr<const LoraAdapter> some_adapter(const ModelConfig& config, uint64_t seed) {
  return std::make_shared<const LoraAdapter>(
      testing::random_lora(config, testing::adaptable_modules(config, /*attention_only=*/true), 4, seed));
}

TEST(AdapterRegistry, NamesPickTheBaseOrAnAdapterAndUnknownNamesAreRefusedOnceAdaptersExist) {
  const ModelConfig config = testing::test_config("tiny");
  AdapterRegistry registry("base", config);
  // No adapter yet: every name is the base model (clients send whatever name they were written for).
  ASSERT_TRUE(registry.resolve("gpt-4o").has_value());
  EXPECT_EQ(registry.resolve("gpt-4o")->weights, nullptr);
  EXPECT_EQ(registry.resolve("")->name, "base");

  const auto a = some_adapter(config, 1);
  const ServedAdapter added = registry.add("a", a);
  EXPECT_LT(added.prefix_root, 0);
  EXPECT_EQ(registry.resolve("a")->weights, a);
  EXPECT_EQ(registry.resolve("a")->prefix_root, added.prefix_root);
  EXPECT_EQ(registry.resolve("base")->weights, nullptr);
  EXPECT_EQ(registry.resolve("base")->prefix_root, 0);
  EXPECT_EQ(registry.resolve("")->weights, nullptr);
  EXPECT_FALSE(registry.resolve("gpt-4o").has_value());
  EXPECT_FALSE(registry.resolve("A").has_value());  // names are case-sensitive, as vLLM's
  ASSERT_EQ(registry.list().size(), 1u);
  EXPECT_EQ(registry.list()[0].requests, 2);
}

TEST(AdapterRegistry, EveryRegistrationGetsItsOwnPrefixRootAndUnloadingKeepsRunningRequestsWhole) {
  const ModelConfig config = testing::test_config("tiny");
  AdapterRegistry registry("base", config);
  const ServedAdapter first = registry.add("a", some_adapter(config, 1));
  const ServedAdapter second = registry.add("b", some_adapter(config, 2));
  EXPECT_NE(first.prefix_root, second.prefix_root);
  const std::shared_ptr<const LoraAdapter> held = registry.resolve("a")->weights;  // a request in flight
  EXPECT_TRUE(registry.remove("a"));
  EXPECT_FALSE(registry.remove("a"));
  ASSERT_NE(held, nullptr);
  EXPECT_GT(held->parameter_count(), 0);  // still whole: the request owns a reference
  // A new adapter under the old name never meets the old one's cached blocks.
  const ServedAdapter reloaded = registry.add("a", some_adapter(config, 3));
  EXPECT_NE(reloaded.prefix_root, first.prefix_root);
  EXPECT_NE(reloaded.prefix_root, second.prefix_root);
}

TEST(AdapterRegistry, BadNamesAndFilesAreOneClearError) {
  const ModelConfig config = testing::test_config("tiny");
  AdapterRegistry registry("base", config);
  const auto adapter = some_adapter(config, 1);
  for (const std::string& name :
       std::vector<std::string>{"", "has space", "quote\"", "a{b}", "new\nline", std::string(65, 'x')}) {
    EXPECT_THROW(registry.add(name, adapter), Error) << name;
  }
  EXPECT_NO_THROW(registry.add(std::string(64, 'x'), adapter));
  EXPECT_NO_THROW(registry.add("Identity_v2.1-rank16", adapter));
  try {
    registry.add("base", adapter);
    FAIL() << "the base model's name was taken";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("base model's name"), std::string::npos) << error.what();
  }
  registry.add("a", adapter);
  EXPECT_THROW(registry.add("a", adapter), Error);
  try {
    registry.load("b", "/nonexistent/lora.pth");
    FAIL() << "a missing file loaded";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("/nonexistent/lora.pth"), std::string::npos) << error.what();
  }
  // A taken name is refused before the file is read (here it does not even exist).
  try {
    registry.load("a", "/nonexistent/lora.pth");
    FAIL();
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("already loaded"), std::string::npos) << error.what();
  }
  EXPECT_FALSE(registry.resolve("b").has_value());
}

}  // namespace
}  // namespace minigen
