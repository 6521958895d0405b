#pragma once
// `minigen serve` as a separate process, for what only a process can show: signals, exit codes, drain timings.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace minigen::testing {

class ServeProcess {
 public:
  // Starts `minigen serve --port 0 ARGUMENTS...` and waits until it prints the port it listens on.
  explicit ServeProcess(const std::vector<std::string>& arguments) {
    std::vector<std::string> argv_strings = {MINIGEN_BINARY, "serve", "--port", "0", "--threads", "2"};
    argv_strings.insert(argv_strings.end(), arguments.begin(), arguments.end());
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
    if (posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ) != 0) pid_ = -1;
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
    const std::string marker = "listening on http://";
    for (int i = 0; i < 3000 && port_ == 0 && pid_ > 0; ++i) {
      {
        std::lock_guard lock(mutex_);
        const std::size_t at = log_.find(marker);
        const std::size_t colon = at == std::string::npos ? at : log_.find(':', at + marker.size());
        if (colon != std::string::npos && log_.find('\n', colon) != std::string::npos) {
          port_ = std::stoi(log_.substr(colon + 1));
        }
      }
      if (port_ == 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  ~ServeProcess() {
    if (pid_ > 0 && exit_code_ < 0) {
      ::kill(pid_, SIGKILL);
      wait_for_exit(std::chrono::seconds(10));
    }
    if (reader_.joinable()) reader_.join();
  }

  int port() const { return port_; }
  void signal(int number) const { ::kill(pid_, number); }
  // The exit code (128 + signal when killed), or −1 if it is still running after `timeout`.
  int wait_for_exit(std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (exit_code_ < 0 && std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
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
  pid_t pid_ = -1;
  int port_ = 0;
  int exit_code_ = -1;
  std::thread reader_;
  std::mutex mutex_;
  std::string log_;
};

}  // namespace minigen::testing
