#pragma once
// Programs started by tests as separate processes (`minigen serve`, nginx), for what only a process can show:
// signals, exit codes, drain timings, a crash.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/sanitizer_report_test_util.h"

extern char** environ;

namespace minigen::testing {

// A child process with stdin and stdout on /dev/null and stderr collected; killed (SIGKILL) if still running when
// destroyed.
class ChildProcess {
 public:
  explicit ChildProcess(std::vector<std::string> argv_strings) : name_(argv_strings.at(0)) {
    std::vector<char*> argv;
    for (std::string& argument : argv_strings) argv.push_back(argument.data());
    argv.push_back(nullptr);
    int pipe_fds[2];
    if (::pipe2(pipe_fds, O_CLOEXEC) != 0) return;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDERR_FILENO);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    // Its own process group, so that whatever it starts (nginx's workers) is killed with it.
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attributes, 0);
    if (posix_spawn(&pid_, argv[0], &actions, &attributes, argv.data(), environ) != 0) pid_ = -1;
    posix_spawnattr_destroy(&attributes);
    posix_spawn_file_actions_destroy(&actions);
    ::close(pipe_fds[1]);
    reader_ = std::thread([this, fd = pipe_fds[0]] {
      char buffer[4096];
      ssize_t got;
      while ((got = ::read(fd, buffer, sizeof buffer)) > 0) {
        std::lock_guard lock(mutex_);
        log_.append(buffer, static_cast<std::size_t>(got));
      }
      ::close(fd);
    });
  }
  ~ChildProcess() {
    if (pid_ > 0) ::kill(-pid_, SIGKILL);  // the group: the process and anything it started
    if (pid_ > 0 && exit_code_ < 0) wait_for_exit(std::chrono::seconds(10));
    if (reader_.joinable()) reader_.join();
    expect_no_sanitizer_report(name_, exit_code_, log_);
  }
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  bool started() const { return pid_ > 0; }
  void signal(int number) const { ::kill(pid_, number); }
  // The exit code (128 + signal when killed), or −1 if it is still running after `timeout`.
  int wait_for_exit(std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (exit_code_ < 0) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      } else if (std::chrono::steady_clock::now() >= deadline) {
        break;
      } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
    }
    return exit_code_;
  }
  std::string log() {
    std::lock_guard lock(mutex_);
    return log_;
  }

 private:
  std::string name_;
  pid_t pid_ = -1;
  int exit_code_ = -1;
  std::thread reader_;
  std::mutex mutex_;
  std::string log_;
};

// `minigen serve --port 0 ARGUMENTS...` (with --threads 2 unless given), once it has printed the port it listens on (0
// if it did not within 30 s; the log says why).
class ServeProcess : public ChildProcess {
 public:
  explicit ServeProcess(const std::vector<std::string>& arguments) : ChildProcess(command(arguments)) {
    const std::string marker = "listening on http://";
    for (int i = 0; i < 3000 && port_ == 0 && started() && wait_for_exit(std::chrono::milliseconds(0)) < 0; ++i) {
      const std::string text = log();
      const std::size_t at = text.find(marker);
      const std::size_t colon = at == std::string::npos ? at : text.find(':', at + marker.size());
      if (colon != std::string::npos && text.find('\n', colon) != std::string::npos) {
        port_ = std::stoi(text.substr(colon + 1));
      } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
    }
  }
  int port() const { return port_; }

 private:
  static std::vector<std::string> command(const std::vector<std::string>& arguments) {
    std::vector<std::string> argv = {MINIGEN_BINARY, "serve", "--port", "0"};
    argv.insert(argv.end(), arguments.begin(), arguments.end());
    if (std::find(arguments.begin(), arguments.end(), "--threads") == arguments.end()) {
      argv.insert(argv.end(), {"--threads", "2"});
    }
    return argv;
  }
  int port_ = 0;
};

}  // namespace minigen::testing
