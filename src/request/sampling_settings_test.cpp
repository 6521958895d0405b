#include "request/sampling_settings.h"

#include <gtest/gtest.h>

namespace minigen {
namespace {

// The RequestError check_sampling_settings raises for `params`: its field and message.
std::pair<std::string, std::string> sampling_error(const SamplingParams& params) {
  try {
    check_sampling_settings(params);
  } catch (const RequestError& error) {
    return {error.field(), error.what()};
  }
  return {"", "no error"};
}

TEST(SamplingSettings, TheDefaultsPass) { EXPECT_NO_THROW(check_sampling_settings(SamplingParams{})); }

TEST(SamplingSettings, AValueOutOfRangeNamesItsParameterAndTheProblemAlone) {
  SamplingParams top_p;
  top_p.top_p = 1.5f;
  EXPECT_EQ(sampling_error(top_p), std::make_pair(std::string("top_p"), std::string("must be in (0, 1], got 1.5")));
  SamplingParams penalty;
  penalty.presence_penalty = 3.0f;
  EXPECT_EQ(sampling_error(penalty).first, "presence_penalty");
}

TEST(SamplingSettings, OnlyTheTemperaturesErrorIsTheTemperatures) {
  SamplingParams cold;
  cold.temperature = 0.005f;
  try {
    check_sampling_settings(cold);
    ADD_FAILURE() << "temperature 0.005 passed while sampling";
  } catch (const RequestError& error) {
    EXPECT_EQ(error.field(), "temperature");
    EXPECT_EQ(std::string(error.what()), "must be at least 0.01 (smaller ones overflow the logits), got 0.005");
    EXPECT_TRUE(is_temperature_error(error));
  }
  EXPECT_FALSE(is_temperature_error(RequestError("top_p", "must be in (0, 1], got 1.5")));
  cold.temperature = 0.0f;  // greedy decoding, in every frontend
  EXPECT_NO_THROW(check_sampling_settings(cold));
}

}  // namespace
}  // namespace minigen
