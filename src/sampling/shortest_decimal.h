#pragma once
// The shortest decimal text that reads back as the same float ("0.85", not "0.850000024").
//
// Two uses: error messages and stage names show the number the user typed, and the Hugging Face top-p rule needs
// the value the user typed as a double, because Python computes 1 − top_p in double before torch rounds it to float.
#include <string>

namespace minigen {

// Shortest round-trip text of `value`: "0.8", "1.5", "-inf", "nan".
std::string shortest_decimal(float value);

// The double nearest to the shortest decimal of `value`: 0.8f → 0.8 (not 0.800000011920929). This is the number a
// Python caller would have held when it typed the decimal that parses to `value`.
double as_typed_decimal(float value);

}  // namespace minigen
