#pragma once
// Running the built minigen binary from a test: its exit code and what it printed on stdout and stderr.
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

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

// Runs `minigen ARGUMENTS` (shell syntax) with stdin closed; its output goes through files in `scratch_dir`.
inline RunResult run_minigen(const std::string& arguments, const std::filesystem::path& scratch_dir) {
  std::filesystem::create_directories(scratch_dir);
  const std::filesystem::path out = scratch_dir / "stdout.txt";
  const std::filesystem::path err = scratch_dir / "stderr.txt";
  const std::string command =
      std::string(MINIGEN_BINARY) + " " + arguments + " >" + out.string() + " 2>" + err.string() + " </dev/null";
  const int status = std::system(command.c_str());
  return RunResult{WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), read_text_file(out),
                   read_text_file(err)};
}

}  // namespace minigen::testing
