#include "sampling/counter_rng.h"

namespace minigen {
namespace {

// SplitMix64's output function (Steele, Lea and Flood; constants from Vigna): every input bit affects every output
// bit, and it is a bijection on 64-bit integers.
uint64_t mix64(uint64_t value) {
  value = (value ^ (value >> 30)) * 0xbf58476d1ce4e5b9ULL;
  value = (value ^ (value >> 27)) * 0x94d049bb133111ebULL;
  return value ^ (value >> 31);
}

// Odd multipliers spread consecutive rows and steps far apart before mixing; the golden-ratio one is SplitMix64's
// own increment, the other two are arbitrary odd constants chosen to differ from it.
constexpr uint64_t kSeedSpread = 0x9e3779b97f4a7c15ULL;
constexpr uint64_t kRowSpread = 0xd1b54a32d192ed03ULL;
constexpr uint64_t kStepSpread = 0x8cb92ba72f3d8dd7ULL;

}  // namespace

double uniform_for(uint64_t seed, uint64_t row, uint64_t step) {
  uint64_t state = mix64((seed + 1) * kSeedSpread);
  state = mix64(state ^ ((row + 1) * kRowSpread));
  state = mix64(state ^ ((step + 1) * kStepSpread));
  // 53 bits fill a double's mantissa exactly: values k / 2^53 for k in [0, 2^53), so the result is < 1.
  return static_cast<double>(state >> 11) * 0x1.0p-53;
}

}  // namespace minigen
