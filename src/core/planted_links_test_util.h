#pragma once
// Hostile conditions for the code that writes files. Links planted where a writer might put its temporary files: each
// points at a victim file outside the output folder, which a write that followed the link (or truncated the file it
// names) would overwrite. A test plants them at the predictable names minigen once used and at guesses of the random
// ones, runs the write, and checks that the victims are byte-identical and every planted name is still the link it was.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace minigen::testing {

class PlantedLinks {
 public:
  static constexpr const char* kVictimText = "the victim's own bytes, outside the output folder\n";

  // The victims live in `victim_directory` (made here), which must be on the output's filesystem for hard links.
  explicit PlantedLinks(std::filesystem::path victim_directory) : victims_(std::move(victim_directory)) {
    std::filesystem::create_directories(victims_);
    std::ofstream(symbolic_victim(), std::ios::binary) << kVictimText;
    std::ofstream(hard_victim(), std::ios::binary) << kVictimText;
  }

  // A symbolic link at `at` to one victim, and a hard link at `at` + ".hard" to the other; both plants at every name.
  void plant(const std::filesystem::path& at) {
    plant_symbolic(at);
    std::filesystem::path hard = at;
    hard += ".hard";
    plant_hard(hard);
  }
  void plant_symbolic(const std::filesystem::path& at) {
    std::filesystem::create_symlink(symbolic_victim(), at);
    symbolic_.push_back(at);
  }
  void plant_hard(const std::filesystem::path& at) {
    std::filesystem::create_hard_link(hard_victim(), at);
    hard_.push_back(at);
  }

  // Each victim holds its bytes, each symbolic link still points at its victim, each hard link is still the victim.
  void expect_untouched() const {
    EXPECT_EQ(contents(symbolic_victim()), kVictimText);
    EXPECT_EQ(contents(hard_victim()), kVictimText);
    for (const std::filesystem::path& link : symbolic_) {
      EXPECT_TRUE(std::filesystem::is_symlink(link)) << link;
      EXPECT_EQ(std::filesystem::read_symlink(link), symbolic_victim()) << link;
    }
    for (const std::filesystem::path& link : hard_) {
      EXPECT_TRUE(std::filesystem::equivalent(link, hard_victim())) << link;
    }
    EXPECT_EQ(std::filesystem::hard_link_count(hard_victim()), 1 + hard_.size());
  }

  std::filesystem::path symbolic_victim() const { return victims_ / "symbolic_victim.txt"; }
  std::filesystem::path hard_victim() const { return victims_ / "hard_victim.txt"; }

  static std::string contents(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
  }

 private:
  std::filesystem::path victims_;
  std::vector<std::filesystem::path> symbolic_;
  std::vector<std::filesystem::path> hard_;
};

// While it lives, no file of this process (or of a child it starts) may grow past `bytes`: a write beyond fails with
// EFBIG ("File too large") instead of raising SIGXFSZ, standing in for a full disk (ENOSPC), which a test cannot make
// without mounting a file system.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    previous_handler_ = std::signal(SIGXFSZ, SIG_IGN);
    ::getrlimit(RLIMIT_FSIZE, &previous_);
    rlimit limited = previous_;
    limited.rlim_cur = bytes;
    EXPECT_EQ(::setrlimit(RLIMIT_FSIZE, &limited), 0);
  }
  ~FileSizeLimit() {
    ::setrlimit(RLIMIT_FSIZE, &previous_);
    std::signal(SIGXFSZ, previous_handler_);
  }
  FileSizeLimit(const FileSizeLimit&) = delete;
  FileSizeLimit& operator=(const FileSizeLimit&) = delete;

 private:
  rlimit previous_{};
  void (*previous_handler_)(int) = nullptr;
};

// The old predictable temporary names beside `path` (PATH.tmp.<pid>, PATH.partial.<pid>, PATH.partial.<pid>.tmp.<pid>,
// the safetensors writer's PATH.tmp.<pid>.<n>) and guesses at the random ones (PATH.tmp-XXXXXXXXXXXX).
inline std::vector<std::filesystem::path> temporary_names_beside(const std::filesystem::path& path) {
  const std::string pid = std::to_string(::getpid());
  std::vector<std::filesystem::path> names;
  for (const std::string& suffix :
       {".tmp." + pid, ".partial." + pid, ".partial." + pid + ".tmp." + pid, ".tmp." + pid + ".0", ".tmp." + pid + ".1",
        ".tmp." + pid + ".2", std::string(".tmp-000000000000"), std::string(".tmp-aaaaaaaaaaaa")}) {
    std::filesystem::path name = path;
    name += suffix;
    names.push_back(name);
  }
  return names;
}

}  // namespace minigen::testing
