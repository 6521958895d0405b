#pragma once
// A profile (core/profiler.h) as people and scripts read it: a table for stderr, a JSON object for --json output.
#include <nlohmann/json.hpp>
#include <string>

#include "core/profiler.h"

namespace minigen {

// One line per zone that ran: zone, calls, total ms, ms per call, share of the wall time, then the wall time.
// Times are inclusive (a zone inside another counts in both), so the shares do not add up to 100 %.
std::string profile_table(const ProfileSnapshot& profile);

// {"wall_ms": …, "inclusive": true, "zones": {"forward": {"calls": …, "total_ms": …, "ms_per_call": …,
// "share_of_wall": …}, …}} — every zone, those that never ran with zero calls.
nlohmann::json profile_json(const ProfileSnapshot& profile);

}  // namespace minigen
