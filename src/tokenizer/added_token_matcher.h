#pragma once
// Finds added tokens (<|im_start|>, <think>, ...) in raw text. They are cut out whole before pre-tokenization, so
// that "<|im_end|>" in a prompt becomes id 2 rather than the BPE pieces of "<", "|", "im", ...
#include <array>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace minigen {

struct AddedTokenMatch {
  int id;
  std::size_t length;  // bytes of text covered
};

class AddedTokenMatcher {
 public:
  // `content` must not be empty.
  void add(std::string content, int id);

  // The longest added token that starts exactly at text[offset], if any.
  std::optional<AddedTokenMatch> match_at(std::string_view text, std::size_t offset) const;

  // Walks `text` once: on_text for every stretch of ordinary text (possibly empty) and on_added for every added
  // token found whole, in order. Encoding and corpus counting both split text this way before BPE.
  void split(std::string_view text, const std::function<void(std::string_view)>& on_text,
             const std::function<void(int id)>& on_added) const;

 private:
  struct Candidate {
    std::string content;
    int id;
  };
  // Candidates grouped by first byte, longest first, so the first hit at an offset is the longest match there.
  std::array<std::vector<Candidate>, 256> candidates_by_first_byte_;
};

}  // namespace minigen
