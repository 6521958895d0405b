// Under AddressSanitizer and UndefinedBehaviorSanitizer (the MINIGEN_SANITIZE build that CI tests), a report must
// never pass for one of minigen's clean errors, which exit with code 1 — and both sanitizers exit with 1 by default.
// The sanitizer runtimes call these hooks at start-up: reports exit with codes of their own (86, 87), UBSan stops at
// the first finding and prints its stack. ASAN_OPTIONS / UBSAN_OPTIONS still override them. In a build without
// sanitizers nothing calls them.
extern "C" {
__attribute__((visibility("default"), used)) const char* __asan_default_options();
__attribute__((visibility("default"), used)) const char* __ubsan_default_options();

const char* __asan_default_options() { return "exitcode=86"; }
const char* __ubsan_default_options() { return "halt_on_error=1:print_stacktrace=1:exitcode=87"; }
}
