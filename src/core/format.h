#pragma once
// Numbers as the reports print them (lab, bench): grouped thousands, fixed decimals, and differences that must stay
// visible when they are not exactly zero.
#include <string>

namespace minigen {

// 13728 → "13,728"; −1234 → "-1,234".
std::string with_thousands(long long value);
// 1.23456 with 2 decimals → "1.23".
std::string fixed(double value, int decimals);
// 12345.678 with 2 decimals → "12,345.68": fixed() with its whole part grouped.
std::string grouped(double value, int decimals);
// 0 → "0", anything else in scientific notation (2.50e-05): a difference that should be zero stays visible.
std::string exact_or_scientific(double value);

}  // namespace minigen
