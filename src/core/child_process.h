#pragma once
// Running another program and waiting for it: gnuplot for the lab's plots, and minigen itself for the bench's
// one-shot runs (a fresh process is the only honest way to time a first call).
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

namespace minigen {

// Runs `program` with `arguments` (argv[1] on), stdin from /dev/null, stdout and stderr written to the given files
// (an empty path: discarded), and waits for it. Returns its exit status, or 128 + the signal that ended it.
// Throws minigen::Error when it cannot be started.
int run_child(const std::filesystem::path& program, const std::vector<std::string>& arguments,
              const std::filesystem::path& stdout_path, const std::filesystem::path& stderr_path);

// The same with stdout read through a pipe into memory (at most `max_stdout_bytes`; more is an error) rather than
// written to a file: a program that prints its result (gnuplot's SVG) then needs no file that another process could
// plant a link at, and the caller writes the result itself, with the real reason when that fails (a full disk).
struct CapturedChild {
  int status = 0;  // as run_child returns it
  std::string stdout_text;
};
CapturedChild run_child_capturing_stdout(const std::filesystem::path& program,
                                         const std::vector<std::string>& arguments,
                                         const std::filesystem::path& stderr_path, std::size_t max_stdout_bytes);

// The running program's own executable (/proc/self/exe resolved).
std::filesystem::path this_executable();

}  // namespace minigen
