#pragma once
// The text the lab measures with: a long text cut into base-model prompts (sections 1–4 and 9's greedy runs), the
// questions the SFT model is asked (sections 5–8, 9 and 10) and the evaluation text section 9 scores. A learner brings
// their own (`--prompt-text`, `--chat-prompts`, `--eval`); otherwise the shipped English set, or the shipped Chinese
// set (examples/zh) when the model's tokenizer is MiniMind's rather than minigen's own. Every file is user input and
// is checked here, once, before anything is measured.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "tokenizer/bpe_tokenizer.h"

namespace minigen::lab {

// The files a learner gave; each one absent is taken from the shipped set.
struct LabMaterialFiles {
  std::optional<std::filesystem::path> prompt_text;   // --prompt-text: a long plain text
  std::optional<std::filesystem::path> chat_prompts;  // --chat-prompts: one question per line
  std::optional<std::filesystem::path> eval;          // --eval: .jsonl of {"text": …} documents, or a plain text
  // The report is written in Chinese (--lang zh): the shipped Chinese set stands in for what was not given, whatever
  // the tokenizer (the shipped models read and answer Chinese too).
  bool chinese_report = false;
};

// The long text every base-model prompt is cut from.
struct PromptText {
  std::string source;  // what the report calls it: "examples/genesis-183.txt" or the learner's path
  std::string text;
  // The shipped English text (183 tokens with minigen-6400) is repeated to make the longer grid prompts; a learner's
  // text must hold the longest prompt itself, so every prompt is a piece of their text.
  bool may_repeat = false;
  // Section 1's short prompts, beside the long one: the shipped English set names three sentences; otherwise they
  // are the first kShortPromptTokens of the text.
  std::vector<std::string> short_prompts;
};

// Token counts (with bos) of section 1's short prompts cut from a text that names none.
inline const std::vector<int> kShortPromptTokens = {8, 24, 64};

struct ChatPrompts {
  std::string source;                  // "examples/questions.txt", "examples/zh/questions.txt" or the learner's path
  std::vector<std::string> questions;  // at least one; sections use them in file order
  std::string constraining_question;   // section 10's: the English set's JSON question, else the first question
};

struct EvalText {
  std::string source;
  bool documents = true;           // .jsonl: each text is a document (bos + text + eos); else one plain text
  std::vector<std::string> texts;  // the documents, or the one plain text
};

struct LabMaterial {
  PromptText prompt_text;
  ChatPrompts chat_prompts;
  EvalText eval;
  // Why the shipped Chinese set was chosen, for the report; empty when it was not.
  std::string chinese_set_reason;
  bool chinese_set_for_report = false;  // chosen because the report is in Chinese (else: MiniMind's tokenizer)
};

// Each throws minigen::Error naming the flag and the file: a missing or unreadable file, one that is not UTF-8, one
// with no text, a .jsonl line that is not a {"text": "…"} object.
PromptText read_prompt_text(const std::filesystem::path& path);
ChatPrompts read_chat_prompts(const std::filesystem::path& path);
EvalText read_eval_text(const std::filesystem::path& path);

// MiniMind's tokenizer, as opposed to minigen's own minigen-6400: MiniMind's special tokens (<|endoftext|>,
// <|im_start|>, <|im_end|> at ids 0, 1, 2) and a vocabulary that is not minigen-6400's (tokenizers/minigen-6400
// under `minigen_home`, compared token by token).
bool is_minimind_tokenizer(const Tokenizer& tokenizer, const std::filesystem::path& minigen_home);

// The learner's files, and the shipped set for the rest: examples/zh when the report is in Chinese or
// `base_tokenizer` is MiniMind's, else the English examples.
LabMaterial choose_lab_material(const LabMaterialFiles& files, const Tokenizer& base_tokenizer,
                                const std::filesystem::path& minigen_home);

}  // namespace minigen::lab
