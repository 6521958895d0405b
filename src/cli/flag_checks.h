#pragma once
// Checks for command-line values, and the one-line form of every argument-parser error. Numbers are checked as
// text, before CLI11 converts them, so that a value that would overflow the flag's type ("2147483648" for an int,
// "-1" or "1e23" for a seed) gets the same message as one outside the flag's range:
//   minigen: error: --max-new-tokens: 2147483648 is not an integer in [1, 2147483647]
#include <CLI/CLI.hpp>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

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

// The rule of every command that writes into an output path (issue 46 item 4): what is already there is never replaced
// silently. Throws minigen::Error "DIR already holds a model (config.json, model.safetensors); choose an empty or new
// directory, or add --force to replace it" when any of `names` is a regular file in `directory` and `force` is off.
// `what` names what those files are ("a model", "a tokenizer", "a lab report"). Anything else at those names (a
// directory, a link) is left to check_output_file, which refuses it even with --force.
void check_nothing_replaced(const std::filesystem::path& directory, const std::vector<std::string>& names,
                            const std::string& what, bool force);
// The same for one file: "OUT.gguf already exists; choose another path, or add --force to replace it".
void check_file_not_replaced(const std::filesystem::path& path, bool force);
// --force as every writing command spells it.
void add_force_flag(CLI::App& command, bool& force);

// The message of a CLI11 parse error as one line without CLI11's "Run with --help" trailer, naming the flag and
// the value where CLI11's text does not: unknown arguments, missing values, values of the wrong type or range.
// It ends with a pointer to the --help of the command that was being parsed.
std::string parse_error_line(const CLI::ParseError& error, const CLI::App& app);

}  // namespace minigen::cli
