#pragma once
// Calling a kernel specialised for a small count (rows of a register tile, heads sharing a K row, value chains) when
// the count is known only at run time. The kernels keep one set of accumulator registers per counted thing, so the
// count has to be a template parameter; this is the one place that turns the runtime number into it.
#include <algorithm>
#include <type_traits>
#include <utility>

namespace minigen {

// Calls kernel(std::integral_constant<int, c>{}) with c = n clamped to [1, kMax]: exactly one specialisation
// per call, and kMax of them compiled.
template <int kMax, class Kernel>
void dispatch_count(int n, Kernel&& kernel) {
  static_assert(kMax >= 1);
  const int count = std::clamp(n, 1, kMax);
  [&]<int... kIndex>(std::integer_sequence<int, kIndex...>) {
    static_cast<void>(
        ((count == kIndex + 1 ? (kernel(std::integral_constant<int, kIndex + 1>{}), true) : false) || ...));
  }
  (std::make_integer_sequence<int, kMax>{});
}

}  // namespace minigen
