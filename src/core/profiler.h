#pragma once
// A small built-in profiler: a fixed set of named zones, timed when profiling is on, free when it is off.
//
//   ProfileZone zone(Zone::kMatmul);   // at the top of the code to time, until the end of the scope
//
// Off (the default), a zone costs one load of a global flag and a branch that always goes the same way. On
// (set_profiling(true), `--profile`), a zone reads the steady clock when it opens and when it closes and adds the
// time and one call to its thread's totals; profile_snapshot() sums every thread's.
//
// What the numbers include:
// - inclusive time: a zone opened inside another counts in both (matmul runs inside forward, so forward's time
//   holds matmul's);
// - the time on the thread that opened the zone. The kernels' zones open on the thread that calls them and wait
//   for the pool's workers, so matmul and attention are wall time with every worker's share inside it; a zone
//   opened on several threads at once (the server samples its rows on the pool) adds each thread's time, and can
//   pass the wall time.
#include <array>
#include <atomic>
#include <cstdint>
#include <string_view>

namespace minigen {

enum class Zone {
  kForward,      // Transformer::forward: one call per forward pass, whatever the batch
  kAttention,    // the attention of one layer over every fed token (after the qkv product, before o_proj)
  kMatmul,       // one matrix product y = x · Wᵀ (ops/matmul.h)
  kMoeRouting,   // the router of one MoE layer: its product, softmax and top-k
  kSampling,     // one row's sampler chain: filters, then argmax or the draw
  kGrammarMask,  // the allowed-token mask of a row's grammar state (computed, or found in the grammar's cache)
  kDetokenise,   // one token's bytes turned into the text that is complete so far
  kHttpWrite,    // bytes of a response written to the client, until they are out
};
inline constexpr int kZoneCount = static_cast<int>(Zone::kHttpWrite) + 1;

// The zone's name as tables and metrics print it: "forward", "attention", "matmul", "moe_routing", …
std::string_view zone_name(Zone zone);

namespace detail {
extern std::atomic<bool> profiling_on;
extern thread_local int zones_suspended;  // > 0 while a ProfileSuspension is alive on this thread
int64_t profile_clock_ns();
void record_zone(Zone zone, int64_t elapsed_ns);
}  // namespace detail

inline bool profiling_enabled() { return detail::profiling_on.load(std::memory_order_relaxed); }
// Turning profiling on starts a new profile: every total is cleared and the wall clock starts again.
void set_profiling(bool on);

struct ZoneTotals {
  int64_t calls = 0;
  int64_t nanoseconds = 0;
};

struct ProfileSnapshot {
  int64_t wall_nanoseconds = 0;  // since profiling was turned on
  std::array<ZoneTotals, kZoneCount> zones{};

  const ZoneTotals& operator[](Zone zone) const { return zones[static_cast<int>(zone)]; }
};

// The totals of every thread so far, the ones of threads that have ended included.
ProfileSnapshot profile_snapshot();

class ProfileZone {
 public:
  explicit ProfileZone(Zone zone) : zone_(zone) {
    if (profiling_enabled()) [[unlikely]] {
      if (detail::zones_suspended == 0) start_ns_ = detail::profile_clock_ns();
    }
  }
  ~ProfileZone() {
    // A zone opened while profiling was off records nothing, even if profiling is turned on before it closes.
    if (start_ns_ >= 0) [[unlikely]] {
      detail::record_zone(zone_, detail::profile_clock_ns() - start_ns_);
    }
  }
  ProfileZone(const ProfileZone&) = delete;
  ProfileZone& operator=(const ProfileZone&) = delete;

 private:
  Zone zone_;
  int64_t start_ns_ = -1;
};

// Zones opened on this thread while one is alive record nothing: work that belongs to loading, not to the run the
// profile describes (Transformer::warm_up's forward pass).
class ProfileSuspension {
 public:
  ProfileSuspension() { ++detail::zones_suspended; }
  ~ProfileSuspension() { --detail::zones_suspended; }
  ProfileSuspension(const ProfileSuspension&) = delete;
  ProfileSuspension& operator=(const ProfileSuspension&) = delete;
};

}  // namespace minigen
