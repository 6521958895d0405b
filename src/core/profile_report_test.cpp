#include "core/profile_report.h"

#include <gtest/gtest.h>

namespace minigen {
namespace {

ProfileSnapshot two_zones() {
  ProfileSnapshot profile;
  profile.wall_nanoseconds = 200'000'000;                                                       // 200 ms
  profile.zones[static_cast<int>(Zone::kForward)] = {.calls = 40, .nanoseconds = 150'000'000};  // 150 ms
  profile.zones[static_cast<int>(Zone::kMatmul)] = {.calls = 1'000, .nanoseconds = 100'000'000};
  return profile;
}

TEST(ProfileReport, TablePrintsCallsTotalPerCallAndShareForZonesThatRan) {
  const std::string table = profile_table(two_zones());
  EXPECT_NE(table.find("forward                  40       150.00       3.7500     75.0\n"), std::string::npos) << table;
  EXPECT_NE(table.find("matmul                1,000       100.00       0.1000     50.0\n"), std::string::npos) << table;
  EXPECT_EQ(table.find("attention"), std::string::npos) << "a zone that never ran is left out";
  EXPECT_NE(table.find("wall: 200.00 ms"), std::string::npos);
  EXPECT_NE(table.find("inclusive"), std::string::npos);
}

TEST(ProfileReport, JsonHasEveryZone) {
  const nlohmann::json json = profile_json(two_zones());
  EXPECT_DOUBLE_EQ(json["wall_ms"].get<double>(), 200.0);
  EXPECT_TRUE(json["inclusive"].get<bool>());
  EXPECT_EQ(json["zones"].size(), static_cast<std::size_t>(kZoneCount));
  EXPECT_EQ(json["zones"]["forward"]["calls"].get<int64_t>(), 40);
  EXPECT_DOUBLE_EQ(json["zones"]["forward"]["total_ms"].get<double>(), 150.0);
  EXPECT_DOUBLE_EQ(json["zones"]["forward"]["ms_per_call"].get<double>(), 3.75);
  EXPECT_DOUBLE_EQ(json["zones"]["matmul"]["share_of_wall"].get<double>(), 0.5);
  EXPECT_EQ(json["zones"]["sampling"]["calls"].get<int64_t>(), 0);
  EXPECT_DOUBLE_EQ(json["zones"]["sampling"]["ms_per_call"].get<double>(), 0.0);
}

}  // namespace
}  // namespace minigen
