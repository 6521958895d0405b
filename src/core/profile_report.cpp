#include "core/profile_report.h"

#include <cstdio>

#include "core/format.h"

namespace minigen {
namespace {

double milliseconds(int64_t nanoseconds) { return static_cast<double>(nanoseconds) / 1e6; }

double share_of_wall(const ZoneTotals& zone, const ProfileSnapshot& profile) {
  return profile.wall_nanoseconds > 0 ? static_cast<double>(zone.nanoseconds) / profile.wall_nanoseconds : 0.0;
}

double milliseconds_per_call(const ZoneTotals& zone) {
  return zone.calls > 0 ? milliseconds(zone.nanoseconds) / static_cast<double>(zone.calls) : 0.0;
}

}  // namespace

std::string profile_table(const ProfileSnapshot& profile) {
  std::string table = "[profile] inclusive time per zone (a zone inside another counts in both)\n";
  char line[160];
  std::snprintf(line, sizeof line, "%-14s %12s %12s %12s %8s\n", "zone", "calls", "total ms", "ms/call", "wall %");
  table += line;
  for (int z = 0; z < kZoneCount; ++z) {
    const Zone zone = static_cast<Zone>(z);
    const ZoneTotals& totals = profile[zone];
    if (totals.calls == 0) continue;
    std::snprintf(line, sizeof line, "%-14s %12s %12s %12s %8s\n", std::string(zone_name(zone)).c_str(),
                  with_thousands(totals.calls).c_str(), grouped(milliseconds(totals.nanoseconds), 2).c_str(),
                  fixed(milliseconds_per_call(totals), 4).c_str(),
                  fixed(100.0 * share_of_wall(totals, profile), 1).c_str());
    table += line;
  }
  table += "wall: " + grouped(milliseconds(profile.wall_nanoseconds), 2) + " ms\n";
  return table;
}

nlohmann::json profile_json(const ProfileSnapshot& profile) {
  nlohmann::json zones = nlohmann::json::object();
  for (int z = 0; z < kZoneCount; ++z) {
    const Zone zone = static_cast<Zone>(z);
    const ZoneTotals& totals = profile[zone];
    zones[std::string(zone_name(zone))] = {{"calls", totals.calls},
                                           {"total_ms", milliseconds(totals.nanoseconds)},
                                           {"ms_per_call", milliseconds_per_call(totals)},
                                           {"share_of_wall", share_of_wall(totals, profile)}};
  }
  return {{"wall_ms", milliseconds(profile.wall_nanoseconds)}, {"inclusive", true}, {"zones", zones}};
}

}  // namespace minigen
