#pragma once
// Running another program and waiting for it: gnuplot for the lab's plots, and minigen itself for the bench's
// one-shot runs (a fresh process is the only honest way to time a first call).
#include <filesystem>
#include <string>
#include <vector>

namespace minigen {

// Runs `program` with `arguments` (argv[1] on), stdin from /dev/null, stdout and stderr written to the given files
// (an empty path: discarded), and waits for it. Returns its exit status, or 128 + the signal that ended it.
// Throws minigen::Error when it cannot be started.
int run_child(const std::filesystem::path& program, const std::vector<std::string>& arguments,
              const std::filesystem::path& stdout_path, const std::filesystem::path& stderr_path);

// The running program's own executable (/proc/self/exe resolved).
std::filesystem::path this_executable();

}  // namespace minigen
