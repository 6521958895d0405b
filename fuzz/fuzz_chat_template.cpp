// ChatML rendering (src/tokenizer/chat_template.*) of fuzzed messages, encoded with the shipped tokenizer. The
// input's first byte holds the flags (bit 0: add_generation_prompt, bit 1: thinking); the rest is messages separated
// by NUL bytes, each a role byte (0 system, 1 user, 2 assistant, other: an unknown role) and the content. Beyond
// "no crash": render_chatml matches the format written out independently below, byte for byte, and throws
// minigen::Error exactly when a role is unknown; encode_chatml decodes back to the rendered text and holds exactly
// one <|im_start|> per turn and one <|im_end|> per message whatever the content spells (content cannot forge a
// turn); with no '<' in any content it equals encode(render_chatml(...)).
#include <algorithm>
#include <string>
#include <vector>

#include "core/error.h"
#include "fuzz_check.h"
#include "tokenizer/bpe_tokenizer.h"
#include "tokenizer/chat_template.h"

using namespace minigen;

namespace {

const Tokenizer& shipped_tokenizer() {
  static const Tokenizer tokenizer =
      Tokenizer::from_files(MINIGEN_SOURCE_DIR "/tokenizers/minigen-6400/tokenizer.json",
                            std::filesystem::path(MINIGEN_SOURCE_DIR "/tokenizers/minigen-6400/tokenizer_config.json"));
  return tokenizer;
}

// The format of chat_template.h's comment, written out again.
std::string expected_text(const std::vector<ChatMessage>& messages, bool generation_prompt, bool thinking) {
  std::string text;
  for (const ChatMessage& message : messages) {
    text += "<|im_start|>" + message.role + "\n";
    if (message.role == "assistant") text += "<think>\n\n</think>\n\n";
    text += message.content + "<|im_end|>\n";
  }
  if (generation_prompt) {
    text += thinking ? "<|im_start|>assistant\n<think>\n" : "<|im_start|>assistant\n<think>\n\n</think>\n\n";
  }
  return text;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const bool generation_prompt = data[0] & 1;
  const bool thinking = data[0] & 2;
  const std::string_view rest = fuzz::as_text(data + 1, size - 1);
  std::vector<ChatMessage> messages;
  bool known_roles = true;
  bool markup_free = true;
  for (std::size_t start = 0; start < rest.size();) {
    const std::size_t end = std::min(rest.find('\0', start), rest.size());
    const std::string_view record = rest.substr(start, end - start);
    start = end + 1;
    if (record.empty()) continue;
    static const char* const kRoles[] = {"system", "user", "assistant", "tool"};
    const std::string role = kRoles[std::min<unsigned>(static_cast<unsigned char>(record[0]), 3)];
    known_roles &= role != "tool";
    messages.push_back({role, std::string(record.substr(1))});
    markup_free &= messages.back().content.find('<') == std::string::npos;
  }

  std::string text;
  try {
    text = render_chatml(messages, generation_prompt, thinking);
  } catch (const Error&) {
    fuzz::check(!known_roles, "only an unknown role is refused");
    return 0;
  }
  fuzz::check(known_roles, "an unknown role is refused");
  fuzz::check(text == expected_text(messages, generation_prompt, thinking), "the ChatML format");

  const Tokenizer& tokenizer = shipped_tokenizer();
  const std::vector<int> ids = encode_chatml(tokenizer, messages, generation_prompt, thinking);
  fuzz::check(tokenizer.decode(ids, /*skip_special_tokens=*/false) == text, "encode_chatml decodes to the text");
  const int im_start = *tokenizer.find_token("<|im_start|>");
  const int im_end = *tokenizer.find_token("<|im_end|>");
  const auto turns = static_cast<std::ptrdiff_t>(messages.size() + (generation_prompt ? 1 : 0));
  fuzz::check(std::count(ids.begin(), ids.end(), im_start) == turns, "one <|im_start|> per turn");
  fuzz::check(std::count(ids.begin(), ids.end(), im_end) == static_cast<std::ptrdiff_t>(messages.size()),
              "one <|im_end|> per message");
  if (markup_free) fuzz::check(ids == tokenizer.encode(text), "without markup in content, encode_chatml == encode");
  return 0;
}
