#include "tokenizer/added_token_matcher.h"

#include <algorithm>
#include <cstdint>
#include <utility>

#include "core/error.h"

namespace minigen {

void AddedTokenMatcher::add(std::string content, int id) {
  if (content.empty()) throw Error("an added token cannot be empty (id " + std::to_string(id) + ")");
  auto& candidates = candidates_by_first_byte_[static_cast<std::uint8_t>(content.front())];
  candidates.push_back({std::move(content), id});
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const Candidate& a, const Candidate& b) { return a.content.size() > b.content.size(); });
}

std::optional<AddedTokenMatch> AddedTokenMatcher::match_at(std::string_view text, std::size_t offset) const {
  const auto& candidates = candidates_by_first_byte_[static_cast<std::uint8_t>(text[offset])];
  const std::string_view rest = text.substr(offset);
  for (const Candidate& candidate : candidates) {
    if (rest.starts_with(candidate.content)) return AddedTokenMatch{candidate.id, candidate.content.size()};
  }
  return std::nullopt;
}

void AddedTokenMatcher::split(std::string_view text, const std::function<void(std::string_view)>& on_text,
                              const std::function<void(int id)>& on_added) const {
  std::size_t ordinary_start = 0;
  for (std::size_t offset = 0; offset < text.size();) {
    const std::optional<AddedTokenMatch> match = match_at(text, offset);
    if (!match) {
      ++offset;
      continue;
    }
    on_text(text.substr(ordinary_start, offset - ordinary_start));
    on_added(match->id);
    offset += match->length;
    ordinary_start = offset;
  }
  on_text(text.substr(ordinary_start));
}

}  // namespace minigen
