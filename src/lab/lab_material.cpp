#include "lab/lab_material.h"

#include <algorithm>
#include <cctype>

#include "checkpoint/model_loader.h"
#include "core/error.h"
#include "core/file_io.h"
#include "core/format.h"
#include "core/jsonl_texts.h"
#include "core/translated_error.h"
#include "tokenizer/utf8.h"

namespace minigen::lab {
namespace {

namespace fs = std::filesystem;

// A learner's files are small (a text, a dozen questions, a few hundred documents); the caps only refuse a wrong
// file (a checkpoint given by mistake) before it is read into memory.
constexpr uint64_t kMaxMaterialFileBytes = uint64_t{64} << 20;

// Section 10's question for the English set: a definition fits the JSON Schema's {word, meaning}.
constexpr const char* kEnglishConstrainingQuestion = "What does 'river' mean? Answer as JSON.";

// The file's text, checked to be UTF-8 (a leading byte-order mark dropped); `flag` opens every error.
std::string read_utf8_file(const fs::path& path, const std::string& flag) {
  if (!fs::exists(path)) {
    throw TranslatedError(flag + ": " + path.string() + " does not exist", flag + "：" + path.string() + " 不存在");
  }
  if (!fs::is_regular_file(path)) {
    throw TranslatedError(flag + ": " + path.string() + " is not a file", flag + "：" + path.string() + " 不是文件");
  }
  std::string text;
  try {
    text = read_whole_file(path, kMaxMaterialFileBytes, flag.substr(2) + " file");
  } catch (const Error& error) {
    throw Error(flag + ": " + error.what());
  }
  if (text.starts_with("\xEF\xBB\xBF")) text.erase(0, 3);
  int line = 1;
  for (std::size_t offset = 0; offset < text.size();) {
    const Utf8Step step = decode_utf8_step(text, offset);
    if (step.kind != Utf8StepKind::kValid) {
      throw Error(flag + ": " + path.string() + " is not UTF-8 text (line " + std::to_string(line) + ", byte " +
                  with_thousands(static_cast<long long>(offset)) + "); save it as UTF-8");
    }
    if (text[offset] == '\n') ++line;
    offset += step.length;
  }
  return text;
}

bool blank(std::string_view text) {
  return std::all_of(text.begin(), text.end(), [](char c) { return std::isspace(static_cast<unsigned char>(c)); });
}

std::string trimmed(std::string_view text) {
  const auto is_space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  return std::string(text);
}

// The shipped files live under `minigen_home`; the report names them relative to it.
fs::path shipped(const fs::path& minigen_home, const std::string& relative) {
  const fs::path path = minigen_home / relative;
  if (!fs::exists(path)) throw Error("the lab's shipped material " + path.string() + " is missing");
  return path;
}

}  // namespace

PromptText read_prompt_text(const fs::path& path) {
  PromptText prompt_text;
  prompt_text.source = path.string();
  prompt_text.text = read_utf8_file(path, "--prompt-text");
  if (blank(prompt_text.text)) {
    throw TranslatedError("--prompt-text: " + path.string() + " holds no text",
                          "--prompt-text：" + path.string() + " 里没有文本");
  }
  return prompt_text;
}

ChatPrompts read_chat_prompts(const fs::path& path) {
  ChatPrompts prompts;
  prompts.source = path.string();
  const std::string text = read_utf8_file(path, "--chat-prompts");
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    std::string question = trimmed(std::string_view(text).substr(start, end - start));  // "\r\n" lines too
    if (!question.empty()) prompts.questions.push_back(std::move(question));
    start = end + 1;
  }
  if (prompts.questions.empty()) {
    throw TranslatedError("--chat-prompts: " + path.string() + " holds no questions (one question per line)",
                          "--chat-prompts：" + path.string() + " 里没有问题（每行一个问题）");
  }
  prompts.constraining_question = prompts.questions.front();
  return prompts;
}

EvalText read_eval_text(const fs::path& path) {
  EvalText eval;
  eval.source = path.string();
  std::string text = read_utf8_file(path, "--eval");
  std::string extension = path.extension().string();
  std::transform(extension.begin(), extension.end(), extension.begin(),
                 [](char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); });
  eval.documents = extension == ".jsonl";
  if (eval.documents) {
    try {
      for_each_jsonl_text(path.string(), [&](const std::string& document) { eval.texts.push_back(document); });
    } catch (const Error& error) {
      throw Error(std::string("--eval: ") + error.what() + " (a .jsonl file holds one {\"text\": \"…\"} per line)");
    }
    if (eval.texts.empty())
      throw Error("--eval: " + path.string() + " holds no documents (one {\"text\": \"…\"} per line)");
  } else {
    if (blank(text)) throw Error("--eval: " + path.string() + " holds no text");
    eval.texts.push_back(std::move(text));
  }
  return eval;
}

bool is_minimind_tokenizer(const Tokenizer& tokenizer, const fs::path& minigen_home) {
  const char* const specials[] = {"<|endoftext|>", "<|im_start|>", "<|im_end|>"};
  for (int id = 0; id < 3; ++id) {
    if (!tokenizer.has_token(id) || tokenizer.token_bytes(id) != specials[id]) return false;
  }
  // minigen-6400 has MiniMind's layout too; only its vocabulary tells it apart.
  const fs::path own = minigen_home / "tokenizers" / "minigen-6400";
  if (!fs::exists(own)) return true;
  const std::unique_ptr<const Tokenizer> minigen = load_tokenizer(own);
  if (minigen->vocab_size() != tokenizer.vocab_size()) return true;
  for (int id = 0; id < tokenizer.vocab_size(); ++id) {
    if (tokenizer.has_token(id) != minigen->has_token(id)) return true;
    if (tokenizer.has_token(id) && tokenizer.token_bytes(id) != minigen->token_bytes(id)) return true;
  }
  return false;
}

LabMaterial choose_lab_material(const LabMaterialFiles& files, const Tokenizer& base_tokenizer,
                                const fs::path& minigen_home) {
  LabMaterial material;
  const bool missing = !files.prompt_text || !files.chat_prompts || !files.eval;
  const bool minimind_tokenizer = missing && is_minimind_tokenizer(base_tokenizer, minigen_home);
  const bool chinese = missing && (files.chinese_report || minimind_tokenizer);
  if (chinese) {
    material.chinese_set_for_report = !minimind_tokenizer;
    material.chinese_set_reason =
        std::string(minimind_tokenizer ? "the base model's tokenizer is MiniMind's (not minigen-6400)"
                                       : "the report is in Chinese (--lang zh)") +
        ", so the shipped Chinese material (examples/zh: Tang and Song poems, twelve questions) stands in for what "
        "was not given";
  }
  if (files.prompt_text) {
    material.prompt_text = read_prompt_text(*files.prompt_text);
  } else {
    const std::string relative = chinese ? "examples/zh/poems.txt" : "examples/genesis-183.txt";
    material.prompt_text.source = relative;
    material.prompt_text.text =
        read_whole_file(shipped(minigen_home, relative), kMaxPromptFileBytes, "lab prompt text");
    material.prompt_text.may_repeat = true;
    if (!chinese)
      material.prompt_text.short_prompts = {"In the beginning", "And it came to pass, when the",
                                            "A fool and his money"};
  }
  if (files.chat_prompts) {
    material.chat_prompts = read_chat_prompts(*files.chat_prompts);
  } else {
    // examples/questions.txt: the kinds of question the shipped SFT model was trained on (a definition, a verse, a
    // joke, a poem's author).
    const std::string relative = chinese ? "examples/zh/questions.txt" : "examples/questions.txt";
    material.chat_prompts = read_chat_prompts(shipped(minigen_home, relative));
    material.chat_prompts.source = relative;
    if (!chinese) material.chat_prompts.constraining_question = kEnglishConstrainingQuestion;
  }
  if (files.eval) {
    material.eval = read_eval_text(*files.eval);
  } else {
    const std::string relative = chinese ? "examples/zh/heldout.jsonl" : "examples/heldout.jsonl";
    material.eval = read_eval_text(shipped(minigen_home, relative));
    material.eval.source = relative;
  }
  return material;
}

}  // namespace minigen::lab
