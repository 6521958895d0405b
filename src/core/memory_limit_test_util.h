#pragma once
// Runs test code in a child process whose address space may grow only by a given amount, so that a test can show
// that hostile input is refused before memory is allocated for it (not merely that an error comes eventually).
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <functional>
#include <new>
#include <string>

#include "core/error.h"

namespace minigen::testing {

// AddressSanitizer reserves terabytes of shadow address space, so an address-space limit cannot be used with it.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kAddressSpaceLimitWorks = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kAddressSpaceLimitWorks = false;
#else
inline constexpr bool kAddressSpaceLimitWorks = true;
#endif
#else
inline constexpr bool kAddressSpaceLimitWorks = true;
#endif

struct LimitedRun {
  enum class Outcome { kError, kFinished, kOutOfMemory, kOtherException, kCrashed };
  Outcome outcome = Outcome::kCrashed;
  std::string message;  // the minigen::Error's text for kError
};

// Runs `action` in a forked child whose address space may exceed its current size by at most `extra_bytes`.
inline LimitedRun run_with_memory_limit(uint64_t extra_bytes, const std::function<void()>& action) {
  int pipe_ends[2];
  if (::pipe(pipe_ends) != 0) return {};
  const pid_t child = ::fork();
  if (child == 0) {
    ::close(pipe_ends[0]);
    uint64_t pages = 0;
    std::ifstream("/proc/self/statm") >> pages;
    const rlim_t limit = static_cast<rlim_t>(pages * static_cast<uint64_t>(::sysconf(_SC_PAGESIZE)) + extra_bytes);
    const rlimit address_space{limit, limit};
    ::setrlimit(RLIMIT_AS, &address_space);
    int code = 0;
    std::string message;
    try {
      action();
      code = 1;
    } catch (const Error& error) {
      message = error.what();
    } catch (const std::bad_alloc&) {
      code = 2;
    } catch (...) {
      code = 3;
    }
    if (!message.empty() && ::write(pipe_ends[1], message.data(), message.size()) < 0) code = 3;
    ::_exit(code);
  }
  ::close(pipe_ends[1]);
  LimitedRun run;
  char buffer[4096];
  ssize_t got = 0;
  while ((got = ::read(pipe_ends[0], buffer, sizeof(buffer))) > 0) run.message.append(buffer, static_cast<size_t>(got));
  ::close(pipe_ends[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  if (!WIFEXITED(status)) return run;
  constexpr LimitedRun::Outcome kByCode[] = {LimitedRun::Outcome::kError, LimitedRun::Outcome::kFinished,
                                             LimitedRun::Outcome::kOutOfMemory, LimitedRun::Outcome::kOtherException};
  const int code = WEXITSTATUS(status);
  run.outcome = code >= 0 && code < 4 ? kByCode[code] : LimitedRun::Outcome::kCrashed;
  return run;
}

}  // namespace minigen::testing
