// `minigen tokenize` and `minigen detokenize`: text ↔ token ids with the model's tokenizer.
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "checkpoint/model_loader.h"
#include "checkpoint/model_settings.h"
#include "cli/command_context.h"
#include "cli/commands.h"
#include "cli/json_output.h"
#include "core/error.h"
#include "core/file_io.h"
#include "core/jsonl_texts.h"

namespace minigen::cli {
namespace {

struct TokenizerFlags {
  std::string model_path;
  std::string tokenizer_path;

  void add_to(CLI::App& command) {
    command.add_option("-m,--model", model_path, "use this model's tokenizer [default: the shipped model]");
    command.add_option("--tokenizer", tokenizer_path, "tokenizer.json or its directory");
  }

  std::unique_ptr<const Tokenizer> load() const {
    if (!tokenizer_path.empty()) return load_tokenizer(resolve_user_file(tokenizer_path));
    return load_model_tokenizer(resolve_model_path(model_path));
  }
};

struct TokenizeFlags {
  TokenizerFlags tokenizer;
  std::string text;
  std::string jsonl;  // batch mode: one {"text": ...} object per line in, one JSON array of ids per line out
  bool bos = false;
  bool json = false;
};

int run_tokenize_jsonl(const Tokenizer& tokenizer, const TokenizeFlags& flags) {
  for_each_jsonl_text(resolve_user_file(flags.jsonl), [&](const std::string& text) {
    std::vector<int> ids = tokenizer.encode(text);
    if (flags.bos) ids.insert(ids.begin(), tokenizer.bos_id());
    std::cout << nlohmann::json(ids).dump() << "\n";
  });
  return 0;
}

int run_tokenize(const TokenizeFlags& flags) {
  const auto tokenizer = flags.tokenizer.load();
  if (!flags.jsonl.empty()) return run_tokenize_jsonl(*tokenizer, flags);
  if (flags.text.empty()) throw Error("give a text to tokenize, or --jsonl FILE");
  std::vector<int> ids = tokenizer->encode(flags.text);
  if (flags.bos) ids.insert(ids.begin(), tokenizer->bos_id());
  if (flags.json) {
    nlohmann::json pieces = nlohmann::json::array();
    for (int id : ids) {
      const std::vector<int> one = {id};
      pieces.push_back(tokenizer->decode(one, false));
    }
    std::cout << to_json_text(nlohmann::json{{"count", ids.size()}, {"ids", ids}, {"pieces", pieces}}, -1) << "\n";
    return 0;
  }
  for (std::size_t i = 0; i < ids.size(); ++i) std::cout << (i ? " " : "") << ids[i];
  std::cout << "\n";
  std::cerr << ids.size() << " tokens\n";
  return 0;
}

struct DetokenizeFlags {
  TokenizerFlags tokenizer;
  std::vector<std::string> ids;
  bool skip_special = false;
};

int run_detokenize(const DetokenizeFlags& flags) {
  const auto tokenizer = flags.tokenizer.load();
  std::vector<int> ids;
  for (const std::string& group : flags.ids) {
    std::istringstream words(group);  // accepts "1 2 3" as one argument or as three
    std::string word;
    while (words >> word) {
      try {
        std::size_t used = 0;
        const int id = std::stoi(word, &used);
        if (used != word.size()) throw std::invalid_argument(word);
        ids.push_back(id);
      } catch (const std::exception&) {
        throw Error("'" + word + "' is not a token id");
      }
    }
  }
  std::cout << tokenizer->decode(ids, flags.skip_special) << "\n";
  return 0;
}

}  // namespace

CommandAction add_tokenize_command(CLI::App& app) {
  auto flags = std::make_shared<TokenizeFlags>();
  CLI::App* command = app.add_subcommand("tokenize", "print the token ids of a text");
  flags->tokenizer.add_to(*command);
  command->add_option("text", flags->text, "text to encode");
  command->add_option("--jsonl", flags->jsonl,
                      "encode every {\"text\": ...} line of a JSONL file, one id array per line");
  command->add_flag("--bos", flags->bos, "put the bos token first, as a base-model prompt does");
  command->add_flag("--json", flags->json, "print ids and each token's text as JSON");
  return [flags] { return run_tokenize(*flags); };
}

CommandAction add_detokenize_command(CLI::App& app) {
  auto flags = std::make_shared<DetokenizeFlags>();
  CLI::App* command = app.add_subcommand("detokenize", "print the text of token ids");
  flags->tokenizer.add_to(*command);
  command->add_option("ids", flags->ids, "token ids")->required();
  command->add_flag("--skip-special", flags->skip_special, "leave out special tokens such as <|im_end|>");
  return [flags] { return run_detokenize(*flags); };
}

}  // namespace minigen::cli
