#include "core/message_language.h"

#include <atomic>
#include <cstdlib>
#include <string_view>

namespace minigen {
namespace {

// -1: not decided yet (MINIGEN_LANG is read on first use); 0 English; 1 Chinese.
std::atomic<int> g_chinese{-1};

bool environment_asks_for_chinese() {
  const char* value = std::getenv("MINIGEN_LANG");
  return value != nullptr && std::string_view(value).starts_with("zh");
}

}  // namespace

bool chinese_messages() {
  int state = g_chinese.load(std::memory_order_relaxed);
  if (state < 0) {
    state = environment_asks_for_chinese() ? 1 : 0;
    g_chinese.store(state, std::memory_order_relaxed);
  }
  return state == 1;
}

void set_chinese_messages(bool chinese) { g_chinese.store(chinese ? 1 : 0, std::memory_order_relaxed); }

}  // namespace minigen
