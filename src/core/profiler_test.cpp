#include "core/profiler.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace minigen {
namespace {

// Profiling is process-wide; each test starts its own profile and leaves profiling off.
class Profiler : public ::testing::Test {
 protected:
  void TearDown() override { set_profiling(false); }
};

void busy_for(std::chrono::microseconds duration) {
  const auto end = std::chrono::steady_clock::now() + duration;
  while (std::chrono::steady_clock::now() < end) {
  }
}

TEST_F(Profiler, OffRecordsNothing) {
  set_profiling(true);
  set_profiling(false);
  for (int i = 0; i < 5; ++i) ProfileZone zone(Zone::kMatmul);
  const ProfileSnapshot profile = profile_snapshot();
  for (const ZoneTotals& zone : profile.zones) {
    EXPECT_EQ(zone.calls, 0);
    EXPECT_EQ(zone.nanoseconds, 0);
  }
}

TEST_F(Profiler, CountsEveryCallOfItsZoneOnly) {
  set_profiling(true);
  for (int i = 0; i < 7; ++i) ProfileZone zone(Zone::kSampling);
  for (int i = 0; i < 3; ++i) ProfileZone zone(Zone::kDetokenise);
  const ProfileSnapshot profile = profile_snapshot();
  EXPECT_EQ(profile[Zone::kSampling].calls, 7);
  EXPECT_EQ(profile[Zone::kDetokenise].calls, 3);
  EXPECT_EQ(profile[Zone::kForward].calls, 0);
  EXPECT_EQ(profile[Zone::kHttpWrite].calls, 0);
}

TEST_F(Profiler, TurningItOnAgainStartsANewProfile) {
  set_profiling(true);
  for (int i = 0; i < 4; ++i) ProfileZone zone(Zone::kAttention);
  set_profiling(true);
  { ProfileZone zone(Zone::kAttention); }
  EXPECT_EQ(profile_snapshot()[Zone::kAttention].calls, 1);
}

TEST_F(Profiler, AZoneOpenedWhileOffStaysUncountedWhenProfilingStartsInside) {
  {
    ProfileZone zone(Zone::kForward);
    set_profiling(true);
  }
  EXPECT_EQ(profile_snapshot()[Zone::kForward].calls, 0);
}

// Transformer::warm_up: zones opened under a suspension (on its thread only) are loading, not the profiled run.
TEST_F(Profiler, ZonesUnderASuspensionOnThisThreadRecordNothing) {
  set_profiling(true);
  {
    const ProfileSuspension suspended;
    for (int i = 0; i < 3; ++i) ProfileZone zone(Zone::kForward);
    std::thread([] { ProfileZone zone(Zone::kForward); }).join();  // another thread still counts
  }
  { ProfileZone zone(Zone::kForward); }
  EXPECT_EQ(profile_snapshot()[Zone::kForward].calls, 2);
}

TEST_F(Profiler, NestedTimesAreInclusiveAndFitInTheWallTime) {
  set_profiling(true);
  {
    ProfileZone forward(Zone::kForward);
    for (int i = 0; i < 3; ++i) {
      ProfileZone matmul(Zone::kMatmul);
      busy_for(std::chrono::microseconds(300));
    }
    busy_for(std::chrono::microseconds(300));
  }
  const ProfileSnapshot profile = profile_snapshot();
  const ZoneTotals& forward = profile[Zone::kForward];
  const ZoneTotals& matmul = profile[Zone::kMatmul];
  EXPECT_EQ(forward.calls, 1);
  EXPECT_EQ(matmul.calls, 3);
  EXPECT_GE(matmul.nanoseconds, 3 * 300'000);  // each matmul zone spun for 300 µs at least
  EXPECT_LE(matmul.nanoseconds, forward.nanoseconds);
  EXPECT_GE(forward.nanoseconds - matmul.nanoseconds, 300'000);  // the parent's own work, outside the children
  EXPECT_LE(forward.nanoseconds, profile.wall_nanoseconds);
}

TEST_F(Profiler, KeepsTheTotalsOfThreadsThatHaveEnded) {
  set_profiling(true);
  std::thread worker([] {
    for (int i = 0; i < 6; ++i) ProfileZone zone(Zone::kHttpWrite);
  });
  worker.join();
  { ProfileZone zone(Zone::kHttpWrite); }
  EXPECT_EQ(profile_snapshot()[Zone::kHttpWrite].calls, 7);
}

TEST_F(Profiler, ZoneNamesAreTheMetricLabels) {
  EXPECT_EQ(zone_name(Zone::kForward), "forward");
  EXPECT_EQ(zone_name(Zone::kMoeRouting), "moe_routing");
  EXPECT_EQ(zone_name(Zone::kGrammarMask), "grammar_mask");
  EXPECT_EQ(zone_name(Zone::kHttpWrite), "http_write");
}

}  // namespace
}  // namespace minigen
