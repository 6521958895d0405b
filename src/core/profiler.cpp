#include "core/profiler.h"

#include <algorithm>
#include <chrono>
#include <mutex>
#include <vector>

namespace minigen {

std::atomic<bool> detail::profiling_on{false};
thread_local int detail::zones_suspended = 0;

namespace {

constexpr std::array<std::string_view, kZoneCount> kZoneNames = {
    "forward", "attention", "matmul", "moe_routing", "sampling", "grammar_mask", "detokenise", "http_write",
};

// One thread's totals. Only that thread adds to them; atomics let a snapshot read them from another thread.
struct ThreadTotals {
  std::array<std::atomic<int64_t>, kZoneCount> calls{};
  std::array<std::atomic<int64_t>, kZoneCount> nanoseconds{};

  void clear() {
    for (int z = 0; z < kZoneCount; ++z) {
      calls[z].store(0, std::memory_order_relaxed);
      nanoseconds[z].store(0, std::memory_order_relaxed);
    }
  }
};

// Every live thread's totals, and the sums of the threads that have ended (a pool or a connection's worker may
// end before the profile is read).
struct Registry {
  std::mutex mutex;
  std::vector<ThreadTotals*> live;
  std::array<ZoneTotals, kZoneCount> ended{};
  int64_t start_ns = 0;
  int64_t stop_ns = 0;
};

// Never destroyed: threads that end during static destruction still fold their totals into it.
Registry& registry() {
  static Registry* const instance = new Registry;
  return *instance;
}

struct ThreadSlot {
  ThreadTotals totals;

  ThreadSlot() {
    Registry& shared = registry();
    const std::lock_guard lock(shared.mutex);
    shared.live.push_back(&totals);
  }
  ~ThreadSlot() {
    Registry& shared = registry();
    const std::lock_guard lock(shared.mutex);
    for (int z = 0; z < kZoneCount; ++z) {
      shared.ended[z].calls += totals.calls[z].load(std::memory_order_relaxed);
      shared.ended[z].nanoseconds += totals.nanoseconds[z].load(std::memory_order_relaxed);
    }
    shared.live.erase(std::find(shared.live.begin(), shared.live.end(), &totals));
  }
};

}  // namespace

std::string_view zone_name(Zone zone) { return kZoneNames[static_cast<int>(zone)]; }

int64_t detail::profile_clock_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void detail::record_zone(Zone zone, int64_t elapsed_ns) {
  thread_local ThreadSlot slot;
  slot.totals.calls[static_cast<int>(zone)].fetch_add(1, std::memory_order_relaxed);
  slot.totals.nanoseconds[static_cast<int>(zone)].fetch_add(elapsed_ns, std::memory_order_relaxed);
}

void set_profiling(bool on) {
  Registry& shared = registry();
  const std::lock_guard lock(shared.mutex);
  if (on) {
    for (ThreadTotals* totals : shared.live) totals->clear();
    shared.ended = {};
    shared.start_ns = detail::profile_clock_ns();
  } else if (profiling_enabled()) {
    shared.stop_ns = detail::profile_clock_ns();
  }
  detail::profiling_on.store(on, std::memory_order_relaxed);
}

ProfileSnapshot profile_snapshot() {
  Registry& shared = registry();
  const std::lock_guard lock(shared.mutex);
  ProfileSnapshot snapshot;
  snapshot.zones = shared.ended;
  for (const ThreadTotals* totals : shared.live) {
    for (int z = 0; z < kZoneCount; ++z) {
      snapshot.zones[z].calls += totals->calls[z].load(std::memory_order_relaxed);
      snapshot.zones[z].nanoseconds += totals->nanoseconds[z].load(std::memory_order_relaxed);
    }
  }
  const int64_t end_ns = profiling_enabled() ? detail::profile_clock_ns() : shared.stop_ns;
  snapshot.wall_nanoseconds = std::max<int64_t>(0, end_ns - shared.start_ns);
  return snapshot;
}

}  // namespace minigen
