#include "core/child_process.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/error.h"

extern char** environ;

namespace minigen {

int run_child(const std::filesystem::path& program, const std::vector<std::string>& arguments,
              const std::filesystem::path& stdout_path, const std::filesystem::path& stderr_path) {
  const std::string out = stdout_path.empty() ? "/dev/null" : stdout_path.string();
  const std::string err = stderr_path.empty() ? "/dev/null" : stderr_path.string();
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::string name = program.string();
  std::vector<std::string> words = arguments;
  std::vector<char*> argv;
  argv.push_back(name.data());
  for (std::string& word : words) argv.push_back(word.data());
  argv.push_back(nullptr);
  pid_t child = 0;
  const int spawned = posix_spawn(&child, name.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) throw Error("cannot start " + name + ": " + std::strerror(spawned));
  int status = 0;
  while (waitpid(child, &status, 0) < 0) {
    if (errno != EINTR) throw Error("lost the child process " + name);
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::filesystem::path this_executable() { return std::filesystem::read_symlink("/proc/self/exe"); }

}  // namespace minigen
