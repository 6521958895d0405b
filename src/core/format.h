#pragma once
// Numbers as the reports print them (lab, bench): grouped thousands, fixed decimals, and differences that must stay
// visible when they are not exactly zero; and floats as the user typed them.
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

// The shortest decimal text that reads back as the same float ("0.85", not "0.850000024"): "0.8", "1.5", "-inf",
// "nan". Error messages and stage names show the number the user typed.
std::string shortest_decimal(float value);

// The double nearest to the shortest decimal of `value`: 0.8f → 0.8 (not 0.800000011920929). This is the number a
// Python caller would have held when it typed the decimal that parses to `value`: the Hugging Face top-p rule needs it
// (Python computes 1 − top_p in double before torch rounds it to float), and config.json is written with it, so that
// 1e-6f appears as 1e-06 rather than as 9.99999997e-07.
double as_typed_decimal(float value);

}  // namespace minigen
