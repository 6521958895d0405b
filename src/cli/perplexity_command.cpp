// `minigen perplexity`: the model's loss on a text, as llama-perplexity reports it — perplexity, bits per byte, and
// with --kl-base the KL divergence and top-1 agreement against the same model in fp32 weights and an fp32 KV cache.
// --llama-windows N scores exactly the targets `llama-perplexity -c N` scores (eval/perplexity.h), and
// --kl-base-out / --kl-base FILE save and compare a reference as its --kl-divergence-base / --kl-divergence do.
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
#include "eval/kl_base_file.h"
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
  int llama_window = 0;  // 0: minigen's own windows
  int chunks = -1;       // llama-perplexity's --chunks: at most this many windows (−1: all)
  std::string kl_base;   // "f32" (run it here) or a file of --kl-base-out
  std::string kl_base_out;
  bool force = false;
  bool json = false;

  bool kl_base_is_file() const { return !kl_base.empty() && kl_base != "f32"; }
};

// What is scored: the text's tokens (-f) or the documents (--jsonl), cut into sequences as they are scored.
struct ScoredInput {
  std::vector<int> text_tokens;
  std::vector<std::vector<int>> documents;
  int context = 0;
  int llama_window = 0;
  int chunks = -1;
  uint64_t text_bytes = 0;  // the bytes the targets spell, for bits per byte (the whole text; not with llama windows)

  PerplexitySequences sequences(int bos_id) const {
    if (llama_window > 0) return PerplexitySequences::llama_windows(text_tokens, bos_id, llama_window, chunks);
    return documents.empty() ? PerplexitySequences::text_windows(text_tokens, bos_id, context)
                             : PerplexitySequences::document_pieces(documents, context);
  }
};

ScoredInput read_input(const PerplexityFlags& flags, const Tokenizer& tokenizer) {
  ScoredInput input;
  input.context = flags.context;
  input.llama_window = flags.llama_window;
  input.chunks = flags.chunks;
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
    // llama-perplexity tokenizes the text with the model's bos in front (minigen's GGUF says add_bos_token).
    if (flags.llama_window > 0) input.text_tokens.push_back(tokenizer.bos_id());
    const std::vector<int> ids = tokenizer.encode(text);
    input.text_tokens.insert(input.text_tokens.end(), ids.begin(), ids.end());
    input.text_bytes = text.size();
  }
  if (input.sequences(tokenizer.bos_id()).size() == 0) throw Error("perplexity: the input has no text to score");
  return input;
}

// The combinations of flags that mean nothing, refused before the model loads.
void check_flags(const PerplexityFlags& flags) {
  if (flags.text_file.empty() == flags.jsonl_file.empty()) throw Error("give one of -f FILE and --jsonl FILE");
  const bool llama = flags.llama_window > 0;
  if (llama && !flags.jsonl_file.empty())
    throw Error("--llama-windows scores one plain text, as llama-perplexity does: give it with -f, not --jsonl");
  if (!llama && flags.chunks >= 0) throw Error("--chunks counts llama-perplexity's windows: it needs --llama-windows");
  if (!llama && (flags.kl_base_is_file() || !flags.kl_base_out.empty()))
    throw Error(std::string(flags.kl_base_out.empty() ? "--kl-base FILE" : "--kl-base-out") +
                " holds llama-perplexity's windows: it needs --llama-windows N");
  if (!flags.kl_base.empty() && !flags.kl_base_out.empty())
    throw Error("--kl-base-out saves a reference and --kl-base compares with one: give one of them");
  if (!flags.kl_base_out.empty()) {
    check_output_file(flags.kl_base_out);
    check_file_not_replaced(flags.kl_base_out, flags.force);
  }
}

// The saved reference must be of these very targets: the same tokens in the same windows, the same vocabulary.
void check_kl_base(const KlBaseFile& base, const std::string& name, const PerplexitySequences& sequences,
                   std::span<const int> text_tokens, int window, int vocab) {
  const KlBaseShape& shape = base.shape();
  if (shape.window != window)
    throw Error(name + " was written with --llama-windows " + std::to_string(shape.window) + ", not " +
                std::to_string(window));
  if (shape.vocab != vocab)
    throw Error(name + " holds a vocabulary of " + std::to_string(shape.vocab) + ", the model's is " +
                std::to_string(vocab));
  if (static_cast<std::size_t>(shape.windows) != sequences.size())
    throw Error(name + " holds " + std::to_string(shape.windows) + " windows, this text and --chunks give " +
                std::to_string(sequences.size()));
  const std::vector<int> saved = base.tokens();
  for (std::size_t i = 0; i < saved.size(); ++i) {
    if (saved[i] != text_tokens[i])
      throw Error(name + " was written for other tokens (token " + std::to_string(i) + " is " +
                  std::to_string(saved[i]) + " there, " + std::to_string(text_tokens[i]) +
                  " here): use the same text and tokenizer");
  }
}

int run_perplexity(const PerplexityFlags& flags) {
  check_flags(flags);
  std::unique_ptr<KlBaseFile> base;
  if (flags.kl_base_is_file()) base = std::make_unique<KlBaseFile>(resolve_user_file(flags.kl_base));
  LoadedModel loaded = flags.model.load();
  if (const std::string note = adapter_note(*loaded.model); !note.empty()) std::cerr << note << "\n";
  const int model_context = loaded.model->config.max_position_embeddings;
  if (flags.llama_window > model_context) {
    throw Error("--llama-windows " + std::to_string(flags.llama_window) + " is longer than the model's context of " +
                std::to_string(model_context));
  }
  if (flags.llama_window == 0 && flags.context + 1 > model_context) {
    throw Error("--ctx " + std::to_string(flags.context) + " needs " + std::to_string(flags.context + 1) +
                " positions (with bos); the model's context is " + std::to_string(model_context));
  }
  const ScoredInput input = read_input(flags, *loaded.tokenizer);
  const PerplexitySequences sequences = input.sequences(loaded.tokenizer->bos_id());
  ThreadPool pool(flags.model.thread_count());
  const WeightType weight_type = flags.model.weight_type(*loaded.model);
  Transformer transformer(*loaded.model, pool, weight_type, flags.model.activation_codes(weight_type));
  std::unique_ptr<Transformer> reference;
  if (flags.kl_base == "f32") reference = std::make_unique<Transformer>(*loaded.model, pool, WeightType::kF32);
  loaded.model->release_matrices();  // the packed copies are the ones that run
  const int vocab = loaded.model->config.vocab_size;
  // The tokens the windows hold, as both files store them (before bos replaces the first of each window).
  const std::span<const int> windowed_tokens =
      std::span<const int>(input.text_tokens).first(flags.llama_window > 0 ? sequences.size() * flags.llama_window : 0);
  SavedReferenceLogits saved;
  if (base != nullptr) {
    check_kl_base(*base, flags.kl_base, sequences, windowed_tokens, flags.llama_window, vocab);
    saved = [&base](int64_t first, int64_t count) { return base->logits(first, count); };
  }

  const auto start = std::chrono::steady_clock::now();
  // A progress line on stderr, redrawn when the percentage changes (at most 101 times, so a log stays short).
  int64_t shown_percent = -1;
  const PerplexityProgress progress = [&](int64_t done, int64_t total) {
    const int64_t percent = 100 * done / total;
    if (percent == shown_percent) return;
    shown_percent = percent;
    std::fprintf(stderr, "\r[perplexity] %3lld %% of %lld sequences", static_cast<long long>(percent),
                 static_cast<long long>(total));
    if (done == total) std::fprintf(stderr, "\n");
  };
  PerplexityResult result;
  if (flags.kl_base_out.empty()) {
    result = score_perplexity(transformer, reference.get(), sequences, progress, flags.model.kv_dtype_value(), saved);
  } else {
    // Written beside the destination and renamed over it once complete: an error midway leaves no file behind.
    write_file_atomically(flags.kl_base_out, [&](std::ostream& out) {
      const KlBaseShape shape{flags.llama_window, static_cast<int>(sequences.size()), vocab};
      KlBaseWriter writer(out, shape, windowed_tokens);
      result = score_perplexity(transformer, nullptr, sequences, progress, flags.model.kv_dtype_value(), {},
                                [&writer](std::span<const float> logits) { writer.append(logits); });
      writer.finish();
    });
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // Bits per byte need the bytes the targets spell; llama windows score half of each window, so it is left out there.
  const bool llama = flags.llama_window > 0;
  const double bits_per_byte = result.loss_sum / std::log(2.0) / static_cast<double>(input.text_bytes);
  const std::string weights = weights_label(transformer.weight_type(), transformer.activations());  // "q8·int8"
  const double kl_p99 = percentile(result.kl_values, 0.99);

  if (flags.json) {
    nlohmann::json out = {{"model", loaded.path.string()},
                          {"input", flags.jsonl_file.empty() ? flags.text_file : flags.jsonl_file},
                          {"documents", input.documents.empty() ? 1 : static_cast<int64_t>(input.documents.size())},
                          {"sequences", result.sequences},
                          {"targets", result.targets},
                          {"context", flags.context},
                          {"weights", weight_type_name(transformer.weight_type())},
                          {"kv_dtype", kv_dtype_name(flags.model.kv_dtype_value())},
                          {"loss", result.loss()},
                          {"perplexity", result.perplexity()},
                          {"seconds", seconds}};
    if (llama) {
      out["llama_windows"] = flags.llama_window;
      out.erase("context");
    } else {
      out["bits_per_byte"] = bits_per_byte;
    }
    if (const auto codes = reported_activations(transformer.weight_type(), transformer.activations()); !codes.empty()) {
      out["activations"] = codes;
    }
    if (!flags.kl_base_out.empty()) out["kl_base_out"] = flags.kl_base_out;
    if (result.has_reference) {
      out["kl_base"] = flags.kl_base;
      out["mean_kl"] = result.mean_kl();
      out["kl_p99"] = kl_p99;
      out["top1_agreement"] = result.top1_agreement();
    }
    std::cout << to_json_text(out) << "\n";
    return 0;
  }
  const std::string input_name = flags.jsonl_file.empty() ? flags.text_file : flags.jsonl_file;
  const std::string tokens_per_second =
      with_thousands(static_cast<long long>(static_cast<double>(result.targets) / seconds));
  if (llama) {
    std::printf(
        "%s on %s: %s targets in %s windows of %d (llama-perplexity's: bos first, the second half scored), "
        "%s weights, %s KV cache\n",
        loaded.path.string().c_str(), input_name.c_str(), with_thousands(result.targets).c_str(),
        with_thousands(result.sequences).c_str(), flags.llama_window, weights.c_str(), flags.model.kv_dtype.c_str());
    std::printf("loss %.4f nats · perplexity %.4f · %.1f s (%s tokens/s)\n", result.loss(), result.perplexity(),
                seconds, tokens_per_second.c_str());
  } else {
    std::printf("%s on %s: %s targets in %s sequences of at most %d (+ bos), %s weights, %s KV cache\n",
                loaded.path.string().c_str(), input_name.c_str(), with_thousands(result.targets).c_str(),
                with_thousands(result.sequences).c_str(), flags.context, weights.c_str(), flags.model.kv_dtype.c_str());
    std::printf("loss %.4f nats · perplexity %.3f · %.4f bits per byte · %.1f s (%s tokens/s)\n", result.loss(),
                result.perplexity(), bits_per_byte, seconds, tokens_per_second.c_str());
  }
  if (result.has_reference) {
    const std::string against = flags.kl_base == "f32" ? "f32 weights and KV" : flags.kl_base;
    std::printf("against %s: mean KL %.3g nats per token · KL p99 %.3g · top-1 agreement %.2f %%\n", against.c_str(),
                result.mean_kl(), kl_p99, 100 * result.top1_agreement());
  }
  if (!flags.kl_base_out.empty()) std::printf("reference saved: %s\n", flags.kl_base_out.c_str());
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
  CLI::Option* context = command->add_option("--ctx", flags->context, "tokens per window (longer documents are cut)")
                             ->default_val(256)
                             ->check(integer_in(1, 1 << 20));
  command
      ->add_option("--llama-windows", flags->llama_window,
                   "score the targets `llama-perplexity -c N` scores: windows of N tokens, bos first, second half")
      ->check(integer_in(3, 1 << 20))
      ->excludes(context);
  command->add_option("--chunks", flags->chunks, "with --llama-windows: at most this many windows (its --chunks)")
      ->check(integer_in(1, INT32_MAX));
  command->add_option("--kl-base", flags->kl_base,
                      "f32: also run the model in f32 weights with an f32 KV cache; or a file of --kl-base-out: "
                      "report the KL divergence (mean, p99) and top-1 agreement against it");
  command->add_option("--kl-base-out", flags->kl_base_out,
                      "with --llama-windows: save the model's logits at every target, for a later --kl-base FILE");
  add_force_flag(*command, flags->force);
  command->add_flag("--json", flags->json, "print the result as one JSON object");
  return [flags] { return run_perplexity(*flags); };
}

}  // namespace minigen::cli
