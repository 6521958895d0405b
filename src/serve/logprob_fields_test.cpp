// Over real HTTP, the two probabilities every OpenAI logprobs entry carries: "logprob" / "raw_probability" — the
// model's own (log_softmax of the raw logits, temperature 1, before any filter: the number SGLang's /generate
// returns) — and "kept_probability", the one the draw used after top-k / top-p renormalised the kept set.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "checkpoint/prompt_logits_test_util.h"
#include "serve/live_server_test_util.h"
#include "tokenizer/chat_template.h"

namespace minigen {
namespace {

using nlohmann::json;
using testing::LiveServer;
using testing::post;

constexpr int kLogprobTokens = 8;

std::vector<int> logprob_prompt_ids(LiveServer& server) {
  return encode_base_prompt(*server.loaded.tokenizer, "In the beginning");
}

// /v1/completions over the prompt's ids, eos ignored, with `settings` and logprobs; the choice's entries.
json logprob_entries(LiveServer& server, json settings, int top_logprobs) {
  settings["prompt"] = logprob_prompt_ids(server);
  settings["max_tokens"] = kLogprobTokens;
  settings["ignore_eos"] = true;
  settings["logprobs"] = top_logprobs;
  const json answer = post(server, "/v1/completions", settings, 200);
  const json& content = answer["choices"][0]["logprobs"]["content"];
  EXPECT_EQ(content.size(), static_cast<std::size_t>(kLogprobTokens));
  return content;
}

std::vector<int> entry_token_ids(const json& entries) {
  std::vector<int> ids;
  for (const json& entry : entries) ids.push_back(entry["token_id"]);
  return ids;
}

// Every entry and listed candidate has both probabilities, and raw_probability is exp(logprob).
void expect_raw_and_kept(const json& entries) {
  for (const json& entry : entries) {
    ASSERT_TRUE(entry.contains("raw_probability") && entry.contains("kept_probability")) << entry.dump();
    EXPECT_FALSE(entry.contains("probability")) << "the ambiguous field is gone: " << entry.dump();
    for (const json& listed : entry["top_logprobs"]) {
      ASSERT_TRUE(listed.contains("raw_probability") && listed.contains("kept_probability")) << listed.dump();
      EXPECT_NEAR(listed["raw_probability"].get<double>(), std::exp(listed["logprob"].get<double>()), 1e-12);
    }
    EXPECT_NEAR(entry["raw_probability"].get<double>(), std::exp(entry["logprob"].get<double>()), 1e-12);
    EXPECT_GT(entry["raw_probability"].get<double>(), 0.0);
    EXPECT_LE(entry["kept_probability"].get<double>(), 1.0);
  }
}

// top-k 5 cuts the set: the kept probability of the chosen token is its raw one over the five kept tokens' raw sum
// (greedy: no temperature is applied), the candidates past the fifth have kept probability 0, and logprob is the
// same number the SGLang route and an independent log_softmax of the model's logits give.
TEST(LogprobFields, TopKCutsTheKeptSetAndTheRawProbabilityIsTheModelsOwn) {
  LiveServer server;
  const json entries = logprob_entries(server, {{"temperature", 0}, {"top_k", 5}, {"top_p", 1.0}}, 8);
  expect_raw_and_kept(entries);
  const std::vector<int> ids = entry_token_ids(entries);

  const json rollout =
      post(server, "/generate",
           {{"input_ids", logprob_prompt_ids(server)},
            {"sampling_params", {{"temperature", 0}, {"max_new_tokens", kLogprobTokens}, {"ignore_eos", true}}},
            {"return_logprob", true}},
           200);
  const json& sglang = rollout["meta_info"]["output_token_logprobs"];
  ASSERT_EQ(sglang.size(), ids.size());
  const std::vector<double> reference =
      testing::completion_logprobs(*server.loaded.model, logprob_prompt_ids(server), ids);

  for (std::size_t t = 0; t < ids.size(); ++t) {
    const json& entry = entries[t];
    EXPECT_EQ(sglang[t][1], ids[t]) << "greedy: the same tokens on both routes";
    EXPECT_EQ(entry["logprob"].get<double>(), sglang[t][0].get<double>()) << "step " << t;
    EXPECT_NEAR(entry["logprob"].get<double>(), reference[t], 1e-4) << "step " << t;
    EXPECT_EQ(entry["kept_candidates"], 5);
    const json& listed = entry["top_logprobs"];
    ASSERT_EQ(listed.size(), 8u);
    EXPECT_EQ(listed[0]["token_id"], ids[t]) << "greedy takes the model's most likely token";
    double kept_raw_sum = 0, kept_sum = 0;
    for (std::size_t i = 0; i < listed.size(); ++i) {
      if (i > 0) {
        EXPECT_LE(listed[i]["logprob"].get<double>(), listed[i - 1]["logprob"].get<double>());
      }
      if (i < 5) {
        kept_raw_sum += listed[i]["raw_probability"].get<double>();
        kept_sum += listed[i]["kept_probability"].get<double>();
      } else {
        EXPECT_EQ(listed[i]["kept_probability"].get<double>(), 0.0) << "top-k removed candidate " << i;
      }
    }
    EXPECT_NEAR(kept_sum, 1.0, 1e-5) << "the five kept tokens hold all of the kept set";
    const double raw = entry["raw_probability"];
    const double kept = entry["kept_probability"];
    EXPECT_NEAR(kept, raw / kept_raw_sum, 1e-5) << "step " << t;
    EXPECT_GT(kept, raw + 1e-3) << "the cut set's mass went to the kept tokens, step " << t;
  }
  std::printf("first token %s: raw %.4f, kept (top-k 5) %.4f\n", entries[0]["token"].get<std::string>().c_str(),
              entries[0]["raw_probability"].get<double>(), entries[0]["kept_probability"].get<double>());
}

// top-p 0.5 (MiniMind's rule, greedy) keeps the first kept_candidates tokens: the same renormalisation over them.
TEST(LogprobFields, TopPRenormalisesOverTheTokensItKept) {
  LiveServer server;
  const json entries = logprob_entries(server, {{"temperature", 0}, {"top_k", 0}, {"top_p", 0.5}}, 20);
  expect_raw_and_kept(entries);
  int checked = 0;
  for (const json& entry : entries) {
    const int kept_count = entry["kept_candidates"];
    const json& listed = entry["top_logprobs"];
    if (kept_count > static_cast<int>(listed.size())) continue;  // the kept set is longer than the list shows
    double raw_sum = 0;
    for (int i = 0; i < kept_count; ++i) raw_sum += listed[i]["raw_probability"].get<double>();
    EXPECT_GE(raw_sum, 0.5) << "top-p keeps at least p of the mass";
    EXPECT_NEAR(entry["kept_probability"].get<double>(), entry["raw_probability"].get<double>() / raw_sum, 1e-5);
    for (std::size_t i = kept_count; i < listed.size(); ++i) EXPECT_EQ(listed[i]["kept_probability"], 0.0);
    ++checked;
  }
  EXPECT_GT(checked, 0) << "no step kept 20 or fewer tokens";
}

// With nothing to cut (temperature 1, top-k and top-p off) the kept set is the whole vocabulary: both probabilities
// agree, for the chosen token and for every listed one.
TEST(LogprobFields, WithoutAFilterTheKeptProbabilityIsTheRawOne) {
  LiveServer server;
  const json entries = logprob_entries(server, {{"temperature", 1.0}, {"top_k", 0}, {"top_p", 1.0}, {"seed", 7}}, 5);
  expect_raw_and_kept(entries);
  for (const json& entry : entries) {
    EXPECT_EQ(entry["kept_candidates"], server.loaded.tokenizer->vocab_size());
    EXPECT_NEAR(entry["kept_probability"].get<double>(), entry["raw_probability"].get<double>(), 1e-5);
    for (const json& listed : entry["top_logprobs"]) {
      EXPECT_NEAR(listed["kept_probability"].get<double>(), listed["raw_probability"].get<double>(), 1e-5);
    }
  }
}

// The page's request: a streamed chat with MiniMind's defaults (T 0.85, top-p 0.85, top-k 50) — each chunk's entry
// carries both, and they differ because temperature and the filters reshaped the distribution.
TEST(LogprobFields, StreamedChatChunksCarryBothProbabilities) {
  LiveServer server;
  const std::vector<json> chunks =
      testing::stream_chunks(server, "/v1/chat/completions",
                             {{"messages", {{{"role", "user"}, {"content", "What does 'river' mean?"}}}},
                              {"stream", true},
                              {"seed", 3},
                              {"max_tokens", 6},
                              {"ignore_eos", true},
                              {"logprobs", true},
                              {"top_logprobs", 10}});
  int entries = 0, differing = 0;
  for (const json& chunk : chunks) {
    const json& logprobs = chunk["choices"][0]["logprobs"];
    if (logprobs.is_null()) continue;
    const json& entry = logprobs["content"][0];
    expect_raw_and_kept(json::array({entry}));
    ASSERT_EQ(entry["top_logprobs"].size(), 10u);
    if (std::abs(entry["kept_probability"].get<double>() - entry["raw_probability"].get<double>()) > 0.01) ++differing;
    ++entries;
  }
  EXPECT_EQ(entries, 6);
  EXPECT_GT(differing, 0) << "temperature 0.85 and the filters changed no token's probability by 1 %";
}

}  // namespace
}  // namespace minigen
