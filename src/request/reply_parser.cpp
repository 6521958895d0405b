#include "request/reply_parser.h"

#include <algorithm>
#include <array>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <utility>

#include "core/json_parse.h"
#include "core/python_json.h"

namespace minigen {
namespace {

constexpr std::string_view kThinkOpen = "<think>";
constexpr std::string_view kThinkClose = "</think>";
constexpr std::string_view kCallOpen = "<tool_call>";
constexpr std::string_view kCallClose = "</tool_call>";
// Python's str.strip() also trims Unicode spaces; a model's reply ends in ASCII ones.
constexpr std::string_view kWhitespace = " \t\n\r\f\v";

struct TagMatch {
  std::size_t position = std::string_view::npos;
  std::string_view tag;
};

TagMatch first_tag(std::string_view text, std::span<const std::string_view> tags) {
  TagMatch first;
  for (const std::string_view tag : tags) {
    const std::size_t position = text.find(tag);
    if (position < first.position) first = {position, tag};
  }
  return first;
}

// The length of the longest ending of `text` that is the start of a tag: text that may still become a tag.
std::size_t partial_tag_length(std::string_view text, std::span<const std::string_view> tags) {
  for (std::size_t length = std::min<std::size_t>(text.size(), kCallClose.size() - 1); length > 0; --length) {
    const std::string_view ending = text.substr(text.size() - length);
    for (const std::string_view tag : tags) {
      if (tag.starts_with(ending)) return length;
    }
  }
  return 0;
}

// `end` moved back to the start of a multi-byte character that the text cuts off (the next piece completes it).
std::size_t utf8_boundary(std::string_view text, std::size_t end) {
  for (std::size_t back = 1; back <= 3 && back <= end; ++back) {
    const auto byte = static_cast<unsigned char>(text[end - back]);
    if ((byte & 0xC0) == 0x80) continue;  // a continuation byte: the lead byte is further back
    const std::size_t length = byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : byte >= 0xC0 ? 2 : 1;
    return length > back ? end - back : end;
  }
  return end;
}

std::optional<ParsedToolCall> parse_tool_call(std::string_view text) {
  nlohmann::ordered_json call;
  try {
    call = parse_untrusted_json<nlohmann::ordered_json>(text);  // a model can nest brackets as deep as it likes
  } catch (const Error&) {
    return std::nullopt;
  }
  if (!call.is_object()) return std::nullopt;
  const auto name = call.find("name");
  if (name == call.end() || !name->is_string()) return std::nullopt;
  const auto arguments = call.find("arguments");
  ParsedToolCall parsed{0, "", name->get<std::string>(), "{}"};
  if (arguments != call.end()) {
    parsed.arguments = arguments->is_string() ? arguments->get<std::string>() : python_json_dumps(*arguments);
  }
  return parsed;
}

}  // namespace

std::string ReplyStreamParser::TrimmedSection::take(std::string_view text) {
  // Text that starts with whitespace keeps the texts apart by itself: the separator is not needed.
  if (separator && !text.empty() && kWhitespace.find(text.front()) != std::string_view::npos)
    pending_whitespace.clear();
  separator = false;
  if (!started) {
    const std::size_t first = text.find_first_not_of(kWhitespace);
    if (first == std::string_view::npos) return {};
    text.remove_prefix(first);
    started = true;
  }
  const std::size_t last = text.find_last_not_of(kWhitespace);
  if (last == std::string_view::npos) {
    pending_whitespace += text;
    return {};
  }
  std::string out = std::exchange(pending_whitespace, std::string(text.substr(last + 1)));
  out += text.substr(0, last + 1);
  return out;
}

void ReplyStreamParser::TrimmedSection::separate() {
  if (started && pending_whitespace.empty()) {
    pending_whitespace = " ";
    separator = true;
  }
}

ReplyStreamParser::ReplyStreamParser(ReplyParserOptions options)
    : options_(std::move(options)), mode_(options_.prompt_opened_think ? Mode::kReasoning : Mode::kContent) {}

std::vector<ReplyDelta> ReplyStreamParser::feed(std::string_view text) {
  buffer_ += text;
  process(/*final=*/false);
  return std::exchange(out_, {});
}

std::vector<ReplyDelta> ReplyStreamParser::finish() {
  process(/*final=*/true);
  if (mode_ == Mode::kToolCall) {  // never closed: what the model wrote is content
    emit_text(ReplyDelta::Kind::kContent, std::string(kCallOpen) + call_text_);
    call_text_.clear();
    mode_ = Mode::kContent;
  }
  return std::exchange(out_, {});
}

void ReplyStreamParser::process(bool final) {
  static constexpr std::array<std::string_view, 2> kReasoningTags = {kThinkClose, kThinkOpen};
  static constexpr std::array<std::string_view, 3> kContentTags = {kThinkOpen, kThinkClose, kCallOpen};
  static constexpr std::array<std::string_view, 2> kContentTagsWithoutCalls = {kThinkOpen, kThinkClose};
  static constexpr std::array<std::string_view, 1> kCallTags = {kCallClose};
  while (true) {
    using Tags = std::span<const std::string_view>;
    const Tags tags = mode_ == Mode::kReasoning ? Tags(kReasoningTags)
                      : mode_ == Mode::kContent
                          ? (options_.tool_calls ? Tags(kContentTags) : Tags(kContentTagsWithoutCalls))
                          : Tags(kCallTags);
    const ReplyDelta::Kind kind = mode_ == Mode::kReasoning ? ReplyDelta::Kind::kReasoning : ReplyDelta::Kind::kContent;
    const TagMatch match = first_tag(buffer_, tags);
    if (match.position == std::string_view::npos) {
      std::size_t ready = buffer_.size() - (final ? 0 : partial_tag_length(buffer_, tags));
      if (mode_ == Mode::kToolCall) {
        call_text_.append(buffer_, 0, ready);
      } else {
        if (!final) ready = utf8_boundary(buffer_, ready);
        emit_text(kind, std::string_view(buffer_).substr(0, ready));
      }
      buffer_.erase(0, ready);
      return;
    }
    const std::string_view before = std::string_view(buffer_).substr(0, match.position);
    if (mode_ == Mode::kToolCall) {
      call_text_ += before;
    } else {
      emit_text(kind, before);
    }
    buffer_.erase(0, match.position + match.tag.size());
    if (match.tag == kCallClose) {
      close_tool_call();
    } else if (match.tag == kCallOpen) {
      mode_ = Mode::kToolCall;
    } else if (match.tag == kThinkClose) {
      // Leaving the think block (or, in content already, a stray close tag, dropped). Reasoning that resumes in a
      // later block starts apart from this one's, so "<thi" + "nk>" cannot join into a tag.
      if (mode_ == Mode::kReasoning) reasoning_.separate();
      mode_ = Mode::kContent;
    } else {
      // In reasoning already: a repeated open tag, dropped — with a space in its place, so that the text around it
      // ("</" + "think>") cannot join into a tag either.
      if (mode_ == Mode::kReasoning) reasoning_.separate();
      mode_ = Mode::kReasoning;
    }
  }
}

void ReplyStreamParser::emit_text(ReplyDelta::Kind kind, std::string_view text) {
  if (text.empty()) return;
  const std::string trimmed = (kind == ReplyDelta::Kind::kReasoning ? reasoning_ : content_).take(text);
  if (trimmed.empty()) return;
  if (!out_.empty() && out_.back().kind == kind) {
    out_.back().text += trimmed;
  } else {
    out_.push_back({kind, trimmed, {}});
  }
}

void ReplyStreamParser::close_tool_call() {
  mode_ = Mode::kContent;
  std::optional<ParsedToolCall> call = parse_tool_call(call_text_);
  if (call) {
    call->index = tool_calls_++;
    call->id = options_.tool_call_id_prefix + std::to_string(call->index);
    out_.push_back({ReplyDelta::Kind::kToolCall, {}, std::move(*call)});
  } else {
    emit_text(ReplyDelta::Kind::kContent, std::string(kCallOpen) + call_text_ + std::string(kCallClose));
  }
  call_text_.clear();
}

ParsedReply parse_reply(std::string_view text, const ReplyParserOptions& options) {
  ReplyStreamParser parser(options);
  std::vector<ReplyDelta> deltas = parser.feed(text);
  for (ReplyDelta& delta : parser.finish()) deltas.push_back(std::move(delta));
  ParsedReply reply;
  for (ReplyDelta& delta : deltas) {
    switch (delta.kind) {
      case ReplyDelta::Kind::kReasoning:
        reply.reasoning_content += delta.text;
        break;
      case ReplyDelta::Kind::kContent:
        reply.content += delta.text;
        break;
      case ReplyDelta::Kind::kToolCall:
        reply.tool_calls.push_back(std::move(delta.tool_call));
        break;
    }
  }
  return reply;
}

}  // namespace minigen
