#pragma once
// Running the built minigen binary from a test: its exit code and what it printed on stdout and stderr.
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "core/sanitizer_report_test_util.h"

namespace minigen::testing {

struct RunResult {
  int exit_code;  // 128 + signal number when the process was killed by a signal
  std::string out;
  std::string err;
};

inline std::string read_text_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

struct RunOptions {
  std::string stdin_path = "/dev/null";
  // When set, the process may map at most this many KiB (ulimit -v): shows that hostile input is refused before it
  // is allocated for. Not usable under AddressSanitizer, which maps terabytes of shadow memory.
  long address_space_kib = 0;
  int timeout_seconds = 0;        // when set, a run that takes longer is killed (exit code 124): a hang fails the test
  std::string environment;        // "NAME=value …" set for this run only
  std::string working_directory;  // when set, the run starts there (a folder outside the checkout, say)
};

// Runs `minigen ARGUMENTS` (shell syntax); its output goes through files in `scratch_dir`.
inline RunResult run_minigen(const std::string& arguments, const std::filesystem::path& scratch_dir,
                             const RunOptions& options = {}) {
  std::filesystem::create_directories(scratch_dir);
  const std::filesystem::path out = scratch_dir / "stdout.txt";
  const std::filesystem::path err = scratch_dir / "stderr.txt";
  std::string command;
  if (!options.working_directory.empty()) command += "cd '" + options.working_directory + "' && ";
  if (options.address_space_kib > 0) command += "ulimit -v " + std::to_string(options.address_space_kib) + " && ";
  if (options.timeout_seconds > 0) command += "timeout " + std::to_string(options.timeout_seconds) + " ";
  if (!options.environment.empty()) command += "env " + options.environment + " ";
  command += std::string(MINIGEN_BINARY) + " " + arguments + " >" + out.string() + " 2>" + err.string() + " <" +
             options.stdin_path;
  const int status = std::system(command.c_str());
  RunResult result{WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), read_text_file(out),
                   read_text_file(err)};
  expect_no_sanitizer_report("minigen " + arguments, result.exit_code, result.err);
  return result;
}

}  // namespace minigen::testing
