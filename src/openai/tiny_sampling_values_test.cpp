// Issue 46 item 5: "temperature": 1e-320 (or the subnormal 4.9e-324) answered 200 as greedy decoding, because the
// number became 0 as a float after its range was checked. Every float field of both HTTP APIs is now judged as
// written (sampling_float): a non-zero value below the smallest normal float is a 400 naming the field and its range.
#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "checkpoint/model_loader.h"
#include "openai/api_error.h"
#include "openai/openai_api.h"
#include "openai/sglang_generate.h"

namespace minigen {
namespace {

using nlohmann::json;
using FieldError = std::pair<std::string, std::string>;  // the error's param and message; ("", "") when accepted

const Tokenizer& shipped_tokenizer() {
  static const std::unique_ptr<const Tokenizer> tokenizer =
      load_tokenizer(minigen_home() / "tokenizers" / "minigen-6400");
  return *tokenizer;
}

// The ApiError a /v1/completions body gets.
FieldError completions_error(const json& body) {
  try {
    parse_api_request(Endpoint::kCompletions, body.dump(), shipped_tokenizer(), nullptr);
  } catch (const ApiError& error) {
    EXPECT_EQ(error.status, 400);
    return {error.param, error.what()};
  }
  return {};
}

FieldError generate_error(const json& sampling_params) {
  try {
    parse_generate_request(json{{"text", "x"}, {"sampling_params", sampling_params}}.dump(), shipped_tokenizer(),
                           nullptr);
  } catch (const ApiError& error) {
    EXPECT_EQ(error.status, 400);
    return {error.param, error.what()};
  }
  return {};
}

const std::string kNotRounded =
    " must be 0 or at least 1.1754944e-38 in magnitude (the smallest normal float; smaller ones are not rounded to "
    "0), got ";

TEST(TinySamplingValues, OpenAiFieldsRefuseValuesBelowTheSmallestNormalFloat) {
  for (const double tiny : {1e-320, 4.9e-324}) {
    const std::string got = tiny == 1e-320 ? "1e-320" : "5e-324";  // the shortest decimal of the same double
    EXPECT_EQ(completions_error({{"prompt", "x"}, {"temperature", tiny}}),
              FieldError("temperature", "'temperature' must be at least 0.01 (smaller ones overflow the logits), got " +
                                            got + " (0 means greedy)"));
    EXPECT_EQ(
        completions_error({{"prompt", "x"}, {"top_p", tiny}}),
        FieldError("top_p",
                   "'top_p' must be in (0, 1] and at least 1.1754944e-38 (the smallest normal float), got " + got));
    for (const char* field : {"min_p", "frequency_penalty", "presence_penalty"}) {
      EXPECT_EQ(completions_error({{"prompt", "x"}, {field, tiny}}),
                FieldError(field, "'" + std::string(field) + "'" + kNotRounded + got));
    }
    // repetition_penalty's own range, [0.01, 10], refuses it first, as any value below 0.01.
    EXPECT_EQ(completions_error({{"prompt", "x"}, {"repetition_penalty", tiny}}).first, "repetition_penalty");
    EXPECT_EQ(completions_error({{"prompt", "x"}, {"logit_bias", {{"5", tiny}}}}),
              FieldError("logit_bias", "'logit_bias' of token 5" + kNotRounded + got));
    // Negative penalties too.
    EXPECT_EQ(completions_error({{"prompt", "x"}, {"frequency_penalty", -tiny}}).first, "frequency_penalty");
  }
  // 0 stays 0 (greedy, off), and the smallest normal float is a number like any other.
  EXPECT_EQ(completions_error({{"prompt", "x"}, {"temperature", 0}, {"min_p", 0}, {"presence_penalty", 0}}).first, "");
  EXPECT_EQ(completions_error({{"prompt", "x"}, {"min_p", 1.1754944e-38}, {"top_p", 1.2e-38}}).first, "");
}

TEST(TinySamplingValues, SglangSamplingParamsRefuseValuesBelowTheSmallestNormalFloat) {
  for (const double tiny : {1e-320, 4.9e-324}) {
    const std::string got = tiny == 1e-320 ? "1e-320" : "5e-324";
    EXPECT_EQ(generate_error({{"temperature", tiny}}),
              FieldError("temperature",
                         "'temperature' must be at least 0.01 (smaller ones overflow the logits), got " + got));
    for (const char* field : {"min_p", "frequency_penalty", "presence_penalty"}) {
      EXPECT_EQ(generate_error({{field, tiny}}), FieldError(field, "'" + std::string(field) + "'" + kNotRounded + got));
    }
    EXPECT_EQ(generate_error({{"top_p", tiny}}).first, "top_p");
    EXPECT_EQ(generate_error({{"repetition_penalty", tiny}}).first, "repetition_penalty");
  }
  EXPECT_EQ(generate_error({{"temperature", 0}}).first, "");
}

}  // namespace
}  // namespace minigen
