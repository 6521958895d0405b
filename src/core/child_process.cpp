#include "core/child_process.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <functional>

#include "core/error.h"

extern char** environ;

namespace minigen {

namespace {

// Starts `program` with stdin from /dev/null, stdout from `stdout_action` and stderr written to `stderr_path`.
pid_t spawn_child(const std::filesystem::path& program, const std::vector<std::string>& arguments,
                  const std::function<void(posix_spawn_file_actions_t&)>& stdout_action,
                  const std::filesystem::path& stderr_path) {
  const std::string err = stderr_path.empty() ? "/dev/null" : stderr_path.string();
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  stdout_action(actions);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW,
                                   0644);
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
  return child;
}

int wait_for(pid_t child, const std::filesystem::path& program) {
  int status = 0;
  while (waitpid(child, &status, 0) < 0) {
    if (errno != EINTR) throw Error("lost the child process " + program.string());
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

int run_child(const std::filesystem::path& program, const std::vector<std::string>& arguments,
              const std::filesystem::path& stdout_path, const std::filesystem::path& stderr_path) {
  const std::string out = stdout_path.empty() ? "/dev/null" : stdout_path.string();
  const pid_t child = spawn_child(
      program, arguments,
      [&](posix_spawn_file_actions_t& actions) {
        posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out.c_str(),
                                         O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0644);
      },
      stderr_path);
  return wait_for(child, program);
}

CapturedChild run_child_capturing_stdout(const std::filesystem::path& program,
                                         const std::vector<std::string>& arguments,
                                         const std::filesystem::path& stderr_path, std::size_t max_stdout_bytes) {
  int ends[2] = {-1, -1};
  if (::pipe2(ends, O_CLOEXEC) != 0) throw Error(std::string("cannot make a pipe: ") + std::strerror(errno));
  pid_t child = 0;
  try {
    // dup2 onto stdout clears O_CLOEXEC there; both original ends close at exec.
    child = spawn_child(
        program, arguments,
        [&](posix_spawn_file_actions_t& actions) {
          posix_spawn_file_actions_adddup2(&actions, ends[1], STDOUT_FILENO);
        },
        stderr_path);
  } catch (...) {
    ::close(ends[0]);
    ::close(ends[1]);
    throw;
  }
  ::close(ends[1]);
  CapturedChild result;
  bool too_long = false;
  int read_errno = 0;
  char chunk[1 << 16];
  while (true) {
    const ssize_t got = ::read(ends[0], chunk, sizeof chunk);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) read_errno = errno;
    if (got <= 0) break;
    // Past the limit the rest is read and dropped, so that the child is not left blocked on a full pipe.
    if (result.stdout_text.size() + static_cast<std::size_t>(got) > max_stdout_bytes) too_long = true;
    if (!too_long) result.stdout_text.append(chunk, static_cast<std::size_t>(got));
  }
  ::close(ends[0]);
  result.status = wait_for(child, program);
  if (read_errno != 0) throw Error("cannot read the output of " + program.string() + ": " + std::strerror(read_errno));
  if (too_long) {
    throw Error(program.string() + " printed more than " + std::to_string(max_stdout_bytes) + " bytes; refused");
  }
  return result;
}

std::filesystem::path this_executable() { return std::filesystem::read_symlink("/proc/self/exe"); }

}  // namespace minigen
