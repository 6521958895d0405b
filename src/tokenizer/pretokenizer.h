#pragma once
// The GPT-2 pre-tokenizer: cuts text into the pieces that BPE then encodes one by one, so that no merge ever crosses
// a word, number or punctuation boundary. It reproduces, piece for piece, what the pattern
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// finds (HF `tokenizers` ByteLevel with use_regex true and add_prefix_space false), written out by hand rather than
// run through a regex engine: std::regex knows neither \p{L} nor lookahead on Unicode text, and is slow.
#include <string_view>
#include <vector>

namespace minigen {

// The pieces of `text`, in order, as views into it. They never overlap and together they are exactly `text`.
// Bytes that are not valid UTF-8 count as punctuation-like characters (neither letter, number nor space), so any
// byte string splits and round-trips.
std::vector<std::string_view> pretokenize(std::string_view text);

}  // namespace minigen
