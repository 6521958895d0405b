// `minigen perplexity`: the model's loss on a text, as llama-perplexity reports it — perplexity, bits per byte, and
// with --kl-base the KL divergence and top-1 agreement against the same model in fp32 weights and an fp32 KV cache.
#include <chrono>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "checkpoint/model_settings.h"
#include "cli/command_context.h"
#include "cli/commands.h"
#include "cli/flag_checks.h"
#include "cli/json_output.h"
#include "core/error.h"
#include "core/file_io.h"
#include "core/format.h"
#include "core/jsonl_texts.h"
#include "eval/perplexity.h"
#include "ops/thread_pool.h"

namespace minigen::cli {
namespace {

// A text file for perplexity may be a whole book: larger than a prompt, still bounded.
constexpr uint64_t kMaxTextFileBytes = uint64_t{256} << 20;

struct PerplexityFlags {
  ModelFlags model;
  std::string text_file;
  std::string jsonl_file;
  int context = 256;
  std::string kl_base;
  bool json = false;
};

// What is scored: the text's tokens (-f) or the documents (--jsonl), cut into sequences as they are scored.
struct ScoredInput {
  std::vector<int> text_tokens;
  std::vector<std::vector<int>> documents;
  int context = 0;
  uint64_t text_bytes = 0;  // the bytes the targets spell, for bits per byte

  PerplexitySequences sequences(int bos_id) const {
    return documents.empty() ? PerplexitySequences::text_windows(text_tokens, bos_id, context)
                             : PerplexitySequences::document_pieces(documents, context);
  }
};

ScoredInput read_input(const PerplexityFlags& flags, const Tokenizer& tokenizer) {
  ScoredInput input;
  input.context = flags.context;
  if (!flags.jsonl_file.empty()) {
    // MiniMind's pretraining documents: bos + text + eos, every token after bos a target (the eos counted as one
    // byte, as minigen's trainer counts it).
    for_each_jsonl_text(resolve_user_file(flags.jsonl_file), [&](const std::string& text) {
      std::vector<int> document{tokenizer.bos_id()};
      const std::vector<int> ids = tokenizer.encode(text);
      document.insert(document.end(), ids.begin(), ids.end());
      document.push_back(tokenizer.eos_id());
      input.documents.push_back(std::move(document));
      input.text_bytes += text.size() + 1;
    });
  } else {
    const std::string text = read_whole_file(resolve_user_file(flags.text_file), kMaxTextFileBytes, "text file");
    input.text_tokens = tokenizer.encode(text);
    input.text_bytes = text.size();
  }
  if (input.sequences(tokenizer.bos_id()).size() == 0) throw Error("perplexity: the input has no text to score");
  return input;
}

int run_perplexity(const PerplexityFlags& flags) {
  if (flags.text_file.empty() == flags.jsonl_file.empty()) throw Error("give one of -f FILE and --jsonl FILE");
  LoadedModel loaded = flags.model.load();
  if (const std::string note = adapter_note(*loaded.model); !note.empty()) std::cerr << note << "\n";
  const int model_context = loaded.model->config.max_position_embeddings;
  if (flags.context + 1 > model_context) {
    throw Error("--ctx " + std::to_string(flags.context) + " needs " + std::to_string(flags.context + 1) +
                " positions (with bos); the model's context is " + std::to_string(model_context));
  }
  const ScoredInput input = read_input(flags, *loaded.tokenizer);
  const PerplexitySequences sequences = input.sequences(loaded.tokenizer->bos_id());
  ThreadPool pool(flags.model.thread_count());
  Transformer transformer(*loaded.model, pool, flags.model.weight_type(*loaded.model));
  std::unique_ptr<Transformer> reference;
  if (!flags.kl_base.empty()) reference = std::make_unique<Transformer>(*loaded.model, pool, WeightType::kF32);
  loaded.model->release_matrices();  // the packed copies are the ones that run

  const auto start = std::chrono::steady_clock::now();
  // A progress line on stderr, redrawn when the percentage changes (at most 101 times, so a log stays short).
  int64_t shown_percent = -1;
  const PerplexityResult result = score_perplexity(
      transformer, reference.get(), sequences,
      [&](int64_t done, int64_t total) {
        const int64_t percent = 100 * done / total;
        if (percent == shown_percent) return;
        shown_percent = percent;
        std::fprintf(stderr, "\r[perplexity] %3lld %% of %lld sequences", static_cast<long long>(percent),
                     static_cast<long long>(total));
        if (done == total) std::fprintf(stderr, "\n");
      },
      flags.model.kv_dtype_value());
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double bits_per_byte = result.loss_sum / std::log(2.0) / static_cast<double>(input.text_bytes);
  const std::string weights(weight_type_name(transformer.weight_type()));

  if (flags.json) {
    nlohmann::json out = {{"model", loaded.path.string()},
                          {"input", flags.jsonl_file.empty() ? flags.text_file : flags.jsonl_file},
                          {"documents", input.documents.empty() ? 1 : static_cast<int64_t>(input.documents.size())},
                          {"sequences", result.sequences},
                          {"targets", result.targets},
                          {"context", flags.context},
                          {"weights", weights},
                          {"kv_dtype", kv_dtype_name(flags.model.kv_dtype_value())},
                          {"loss", result.loss()},
                          {"perplexity", result.perplexity()},
                          {"bits_per_byte", bits_per_byte},
                          {"seconds", seconds}};
    if (result.has_reference) {
      out["kl_base"] = "f32";
      out["mean_kl"] = result.mean_kl();
      out["top1_agreement"] = result.top1_agreement();
    }
    std::cout << to_json_text(out) << "\n";
    return 0;
  }
  std::printf("%s on %s: %s targets in %s sequences of at most %d (+ bos), %s weights, %s KV cache\n",
              loaded.path.string().c_str(), (flags.jsonl_file.empty() ? flags.text_file : flags.jsonl_file).c_str(),
              with_thousands(result.targets).c_str(), with_thousands(result.sequences).c_str(), flags.context,
              weights.c_str(), flags.model.kv_dtype.c_str());
  std::printf("loss %.4f nats · perplexity %.3f · %.4f bits per byte · %.1f s (%s tokens/s)\n", result.loss(),
              result.perplexity(), bits_per_byte, seconds,
              with_thousands(static_cast<long long>(static_cast<double>(result.targets) / seconds)).c_str());
  if (result.has_reference) {
    std::printf("against f32 weights and KV: mean KL %.3g nats per token · top-1 agreement %.2f %%\n", result.mean_kl(),
                100 * result.top1_agreement());
  }
  return 0;
}

}  // namespace

CommandAction add_perplexity_command(CLI::App& app) {
  auto flags = std::make_shared<PerplexityFlags>();
  CLI::App* command = app.add_subcommand("perplexity", "the model's loss, perplexity and bits per byte on a text");
  flags->model.add_to(*command);
  add_lora_flag(*command, flags->model.lora_path);
  command->add_option("-f,--file", flags->text_file, "a UTF-8 text: cut into windows of --ctx tokens, each after bos");
  command->add_option("--jsonl", flags->jsonl_file,
                      "documents, one {\"text\": …} per line: each bos + text + eos, scored after bos");
  command->add_option("--ctx", flags->context, "tokens per window (longer documents are cut)")
      ->default_val(256)
      ->check(integer_in(1, 1 << 20));
  command
      ->add_option("--kl-base", flags->kl_base,
                   "also run the model in f32 weights with an f32 KV cache and report the KL divergence and top-1 "
                   "agreement against it")
      ->check(CLI::IsMember({"f32"}));
  command->add_flag("--json", flags->json, "print the result as one JSON object");
  return [flags] { return run_perplexity(*flags); };
}

}  // namespace minigen::cli
