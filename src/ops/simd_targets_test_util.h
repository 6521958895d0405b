#pragma once
// Runs a SIMD test once for every Highway target that this build compiled and this CPU can run (AVX-512, AVX2 and
// the portable fallback, src/CMakeLists.txt), not only for the best one the dispatcher would pick: every kernel
// variant that can execute here is held to its scalar reference. Each instance forces the dispatch to its target
// and restores the CPU's own choice afterwards.
#include <gtest/gtest.h>
#include <hwy/highway.h>
#include <hwy/targets.h>

#include <cstdint>
#include <string>

namespace minigen::testing {

class EverySimdTarget : public ::testing::TestWithParam<int64_t> {
 protected:
  void SetUp() override { hwy::SetSupportedTargetsForTest(GetParam()); }
  void TearDown() override { hwy::SetSupportedTargetsForTest(0); }
};

inline std::string simd_target_test_name(const ::testing::TestParamInfo<int64_t>& info) {
  return hwy::TargetName(info.param);
}

}  // namespace minigen::testing

// Instantiates the TEST_Ps of `suite` (a class derived from EverySimdTarget) once per runnable target.
#define MINIGEN_FOR_EVERY_SIMD_TARGET(suite)                                                         \
  INSTANTIATE_TEST_SUITE_P(Targets, suite, ::testing::ValuesIn(hwy::SupportedAndGeneratedTargets()), \
                           ::minigen::testing::simd_target_test_name)
