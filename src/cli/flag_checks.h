#pragma once
// Checks for command-line values, and the one-line form of every argument-parser error. Numbers are checked as
// text, before CLI11 converts them, so that a value that would overflow the flag's type ("2147483648" for an int,
// "-1" or "1e23" for a seed) gets the same message as one outside the flag's range:
//   minigen: error: --max-new-tokens: 2147483648 is not an integer in [1, 2147483647]
#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

namespace minigen::cli {

// A whole decimal number in [minimum, maximum] (an optional '-' for negative minimums; no '+', spaces, exponent or
// fraction).
CLI::Validator integer_in(int64_t minimum, int64_t maximum);
// Seeds: any integer in [0, 2^64 − 1].
CLI::Validator seed_value();
// Sampling seeds: the same, or −1 for a random seed (sampling_params.h's kRandomSeed).
CLI::Validator sampling_seed_value();
// A finite decimal number (the flag's own check, e.g. SamplingParams::validate, decides its range).
CLI::Validator finite_number();
// A finite decimal number in [minimum, maximum].
CLI::Validator number_in(double minimum, double maximum);

// The message of a CLI11 parse error as one line without CLI11's "Run with --help" trailer, naming the flag and
// the value where CLI11's text does not: unknown arguments, missing values, values of the wrong type or range.
// It ends with a pointer to the --help of the command that was being parsed.
std::string parse_error_line(const CLI::ParseError& error, const CLI::App& app);

}  // namespace minigen::cli
