#include "bench/bench_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "core/format.h"

namespace minigen::bench {

std::string weights_label(const ConfigurationResult& configuration) {
  return weights_label(configuration.weight_type,
                       configuration.activations.value_or(default_activation_codes(configuration.weight_type)));
}

namespace {

std::string format(const char* pattern, double value) {
  char text[64];
  std::snprintf(text, sizeof text, pattern, value);
  return text;
}

std::string threads_text(int threads) { return std::to_string(threads) + (threads == 1 ? " thread" : " threads"); }

std::string model_label(const ModelDescription& model) {
  return model.family + " " + format("%.3g", static_cast<double>(model.parameters) / 1e6) + " M";
}

std::string time_unit(const TestResult& test) {
  if (test.time_per == "token") return " ms/token";
  if (test.time_per == "step") return " ms/step";
  return " ms";
}

// "41 % of compute bound": the test against its roofline ceiling (bench/roofline.h).
std::string bound_text(const TestResult& test) {
  if (!test.bound) return "";
  return format("%.0f %% of ", 100.0 * test.bound->fraction) +
         (test.bound->resource == "compute" ? "compute bound" : "bandwidth bound");
}

std::string versus(const TestResult& test, const ConfigurationResult& configuration) {
  if (test.kind == "generate") return format("%.0f %% of bound", 100.0 * configuration.bound.fraction_of_bound);
  if (test.kind == "prompt" || test.kind == "ttft") return bound_text(test);
  if (test.kind == "batch_decode" && test.speedup_vs_batch1) {
    return format("%.2f× b1", *test.speedup_vs_batch1) + (test.bound ? " · " + bound_text(test) : "");
  }
  if (test.kind == "batch_decode") return bound_text(test);
  if (test.kind == "generate_no_cache") {
    const double wall = test.uncached_total_ms->mean / test.cached_total_ms->mean;
    const double tokens =
        static_cast<double>(test.forward_tokens_uncached) / static_cast<double>(test.forward_tokens_cached);
    return format("wall %.1f× cached", wall) + format(" · forward tokens %.1f×", tokens);
  }
  if (test.kind == "long_context") {
    return "KV " + with_thousands(static_cast<long long>(test.kv_bytes)) + " B" +
           (test.bound ? " · " + bound_text(test) : "");
  }
  if (test.lora) {
    const LoraComparison& lora = *test.lora;
    std::string text = format("%.2f× ", lora.fraction_of_base) + lora.base_test +
                       (test.kind == "lora_batch" ? " without adapters" : " without the adapter") +
                       format(" (target ≥ %.2f)", lora.target_fraction);
    if (lora.mixed_over_separate) text += format(" · %.2f× separate", *lora.mixed_over_separate);
    return text;
  }
  if (test.one_shot) {
    const OneShotComparison& one_shot = *test.one_shot;
    std::string text = format("%.2f× ", one_shot.ratio) + one_shot.against +
                       format(test.kind == "one_shot_ttft" ? " %.2f ms" : " %.3f ms", one_shot.against_ms.mean) +
                       format(" (target ≤ %.1f)", one_shot.target_ratio);
    if (one_shot.load_ms) text += format(" · load %.1f ms before it", one_shot.load_ms->mean);
    if (one_shot.warm_itl_ms) text += format(" · warm %.3f ms", one_shot.warm_itl_ms->mean);
    if (one_shot.tg_step_ms) text += " · " + one_shot.tg_name + format("'s step %.3f ms", one_shot.tg_step_ms->mean);
    return text;
  }
  return "";
}

nlohmann::json lora_json(const LoraComparison& lora);

nlohmann::json statistic_json(const Statistic& statistic) {
  return {{"mean", statistic.mean}, {"stddev", statistic.stddev}, {"samples", statistic.samples}};
}

nlohmann::json test_json(const TestResult& test) {
  nlohmann::json json = {
      {"name", test.name},
      {"kind", test.kind},
      {"batch_size", test.batch_size},
      {"tokens_per_second", test.tokens_per_second ? statistic_json(*test.tokens_per_second) : nlohmann::json(nullptr)},
      {"time_ms", statistic_json(test.time_ms)},
      {"time_per", test.time_per}};
  if (test.speedup_vs_batch1) json["speedup_vs_batch1"] = *test.speedup_vs_batch1;
  if (test.kind == "generate_no_cache") {
    json["cached_total_ms"] = statistic_json(*test.cached_total_ms);
    json["uncached_total_ms"] = statistic_json(*test.uncached_total_ms);
    json["wall_time_ratio"] = test.uncached_total_ms->mean / test.cached_total_ms->mean;
    json["forward_tokens_cached"] = test.forward_tokens_cached;
    json["forward_tokens_uncached"] = test.forward_tokens_uncached;
    json["forward_token_ratio"] =
        static_cast<double>(test.forward_tokens_uncached) / static_cast<double>(test.forward_tokens_cached);
    json["tokens_identical"] = test.tokens_identical;
  }
  if (test.kind == "long_context") {
    json["kv_dtype"] = kv_dtype_name(*test.kv_dtype);
    json["kv_bytes"] = test.kv_bytes;
  }
  if (test.lora) json["lora"] = lora_json(*test.lora);
  if (test.bound) {
    json["bound"] = {{"resource", test.bound->resource},
                     {"time_ms", test.bound->time_ms},
                     {"time_per", test.time_per},
                     {"fraction", test.bound->fraction}};
  }
  if (test.one_shot) {
    const OneShotComparison& one_shot = *test.one_shot;
    nlohmann::json& comparison = json["one_shot"];
    comparison = {{"against", one_shot.against},
                  {"against_ms", statistic_json(one_shot.against_ms)},
                  {"ratio", one_shot.ratio},
                  {"target_ratio", one_shot.target_ratio},
                  {"target_met", one_shot.ratio <= one_shot.target_ratio},
                  {"prompt_tokens", one_shot.prompt_tokens},
                  {"new_tokens", one_shot.new_tokens},
                  {"tokens_identical", one_shot.tokens_identical}};
    if (one_shot.load_ms) comparison["load_ms"] = statistic_json(*one_shot.load_ms);
    if (one_shot.warm_itl_ms) comparison["warm_itl_ms"] = statistic_json(*one_shot.warm_itl_ms);
    if (one_shot.tg_step_ms) comparison[one_shot.tg_name + "_step_ms"] = statistic_json(*one_shot.tg_step_ms);
  }
  return json;
}

nlohmann::json lora_json(const LoraComparison& lora) {
  nlohmann::json json = {{"adapters", lora.adapters},
                         {"rows", lora.rows},
                         {"base_test", lora.base_test},
                         {"base_tokens_per_second", statistic_json(lora.base_tokens_per_second)},
                         {"fraction_of_base", lora.fraction_of_base},
                         {"target_fraction", lora.target_fraction},
                         {"target_met", lora.fraction_of_base >= lora.target_fraction},
                         {"greedy_tokens", lora.greedy_tokens},
                         {"rows_differing_from_base", lora.rows_differing_from_base}};
  if (lora.separate_tokens_per_second) {
    json["separate_tokens_per_second"] = statistic_json(*lora.separate_tokens_per_second);
    json["mixed_over_separate"] = *lora.mixed_over_separate;
    json["mixed_equals_separate"] = lora.mixed_equals_separate;
  } else {
    json["first_difference"] = lora.first_difference;
  }
  return json;
}

// The adapters, then each LoRA test's arithmetic: the fraction of its base run and the target, and what the
// adapters did to the greedy tokens (proof that the low-rank term ran).
void lora_lines(const BenchReport& report, std::ostringstream& out) {
  if (!report.lora) return;
  const LoraDescription& lora = *report.lora;
  out << "LoRA adapters: ";
  if (lora.source == "random") {
    out << lora.count << " random, MiniMind's shape (A ~ N(0, " << format("%g", lora.a_std) << "²), B ~ N(0, "
        << format("%g", lora.b_std) << "²), scale 1)";
  } else {
    out << lora.source << " and " << lora.count - 1 << (lora.count == 2 ? " copy" : " copies") << " of it";
  }
  out << ": " << lora.summary << "; " << with_thousands(lora.parameters) << " parameters each ("
      << decimal_bytes(static_cast<double>(lora.parameters) * 4) << " fp32), "
      << format("%.2f %%", 100.0 * static_cast<double>(lora.parameters) / static_cast<double>(lora.model_parameters))
      << " of the model; each test is timed in turn with its base run, repetition by repetition (so the base's tok/s "
         "here is not the table's row of that name)\n";
  for (const ConfigurationResult& configuration : report.configurations) {
    for (const TestResult& test : configuration.tests) {
      if (!test.lora) continue;
      const LoraComparison& c = *test.lora;
      out << "  " << weights_label(configuration) << ", " << threads_text(configuration.threads) << ": " << test.name
          << " " << with_thousands(std::llround(test.tokens_per_second->mean)) << " ÷ " << c.base_test
          << (test.kind == "lora_batch" ? " without adapters " : " without the adapter ")
          << with_thousands(std::llround(c.base_tokens_per_second.mean))
          << " tok/s = " << format("%.2f", c.fraction_of_base) << format(" (target ≥ %.2f: ", c.target_fraction)
          << (c.fraction_of_base >= c.target_fraction ? "met)" : "not met)");
      if (c.separate_tokens_per_second) {
        out << "; one batch of " << c.rows / c.adapters << " rows per adapter, one after another: "
            << with_thousands(std::llround(c.separate_tokens_per_second->mean))
            << " tok/s → mixed = " << format("%.2f× separate", *c.mixed_over_separate) << ", tokens "
            << (c.mixed_equals_separate ? "identical" : "DIFFER") << "; " << c.rows_differing_from_base << " of "
            << c.rows << " rows' greedy tokens differ from the base's";
      } else if (c.first_difference >= 0) {
        out << "; greedy tokens differ from the base's from token " << c.first_difference;
      } else {
        out << "; greedy tokens equal to the base's (" << c.greedy_tokens << " of " << c.greedy_tokens << ")";
      }
      out << "\n";
    }
  }
}

void bandwidth_lines(const BenchReport& report, std::ostringstream& out) {
  if (report.bandwidth.empty()) return;
  out << "memory read bandwidth (SIMD sum, each thread its own share, best of all runs; GB = 10^9 B):\n";
  int shown_threads = 0;
  for (const BandwidthMeasurement& measured : report.bandwidth) {
    if (measured.threads != shown_threads) {
      out << (shown_threads == 0 ? "" : "\n") << "  " << threads_text(measured.threads) << ":";
      shown_threads = measured.threads;
    }
    out << "  " << decimal_bytes(static_cast<double>(measured.buffer_bytes)) << " buffer "
        << format("%.1f GB/s", measured.bytes_per_second / 1e9) << " (" << measured.runs << " runs)";
  }
  out << "\n";
}

void bound_lines(const BenchReport& report, std::ostringstream& out) {
  if (report.configurations.empty()) return;
  out << "bandwidth bound of decoding (one decode step reads every weight once):\n";
  for (const ConfigurationResult& configuration : report.configurations) {
    const BandwidthBound& bound = configuration.bound;
    out << "  " << weights_label(configuration) << ", " << threads_text(configuration.threads)
        << ": bound = " << format("%.1f GB/s", bound.bytes_per_second / 1e9) << " ÷ "
        << decimal_bytes(static_cast<double>(configuration.weight_bytes)) << " = "
        << with_thousands(std::llround(bound.bound_tokens_per_second)) << " tok/s ("
        << (bound.cache_resident ? "weights fit the cache: " : "weights stream from DRAM: ")
        << decimal_bytes(static_cast<double>(bound.buffer_bytes)) << " buffer); " << bound.generate_test << " "
        << with_thousands(std::llround(bound.generate_tokens_per_second))
        << " tok/s = " << format("%.0f %% of bound", 100.0 * bound.fraction_of_bound) << "\n";
  }
}

void roofline_lines(const BenchReport& report, std::ostringstream& out) {
  bool any = false;
  for (const ConfigurationResult& configuration : report.configurations) any |= configuration.peak.ops_per_second > 0;
  if (!any) return;
  out << "compute peak of each kernel's instruction (every thread, independent chains; a multiply-add is 2 ops), and "
         "the prefill against it:\n";
  for (const ConfigurationResult& configuration : report.configurations) {
    const ComputePeak& peak = configuration.peak;
    out << "  " << weights_label(configuration) << ", " << threads_text(configuration.threads) << ": "
        << peak.instruction;
    if (peak.ops_per_second > 0) out << format(" = %.0f GOP/s", peak.ops_per_second / 1e9);
    for (const TestResult& test : configuration.tests) {
      if (test.kind != "prompt" || !test.bound) continue;
      const double achieved = test.bound->time_ms * peak.ops_per_second / test.time_ms.mean;  // ops/s
      out << "; " << test.name << " " << format("%.0f GOP/s", achieved / 1e9) << " = "
          << format("%.0f %%", 100.0 * test.bound->fraction);
    }
    out << "\n";
  }
}

void no_cache_lines(const BenchReport& report, std::ostringstream& out) {
  for (const ConfigurationResult& configuration : report.configurations) {
    for (const TestResult& test : configuration.tests) {
      if (test.kind != "generate_no_cache") continue;
      out << "no cache, " << weights_label(configuration) << ", " << threads_text(configuration.threads)
          << " (P = " << report.options.prompt_tokens << ", N = " << report.options.generate_tokens
          << "): " << format("%.1f ms", test.uncached_total_ms->mean) << " vs "
          << format("%.1f ms", test.cached_total_ms->mean)
          << " with the cache = " << format("%.1f×", test.uncached_total_ms->mean / test.cached_total_ms->mean)
          << " wall time; forward tokens P·N + N(N−1)/2 = " << with_thousands(test.forward_tokens_uncached)
          << " vs P + N − 1 = " << with_thousands(test.forward_tokens_cached) << " = "
          << format("%.1f×",
                    static_cast<double>(test.forward_tokens_uncached) / static_cast<double>(test.forward_tokens_cached))
          << "; tokens " << (test.tokens_identical ? "identical" : "DIFFER") << "\n";
    }
  }
}

void drift_line(const BenchReport& report, std::ostringstream& out) {
  if (!report.drift) return;
  const DriftResult& drift = *report.drift;
  out << "bf16 drift (prefill of " << drift.prompt_tokens
      << " tokens, bf16 vs f32 weights): max |Δ logit| = " << exact_or_scientific(drift.max_abs_logit_difference)
      << " over " << with_thousands(drift.logits_compared) << " logits; last-position argmax "
      << (drift.f32_last_argmax == drift.bf16_last_argmax ? "agrees" : "differs") << " (" << drift.f32_last_argmax
      << (drift.f32_last_argmax == drift.bf16_last_argmax ? " = " : " vs ") << drift.bf16_last_argmax
      << "); greedy tokens identical " << drift.greedy_identical << " of " << drift.greedy_tokens;
  if (drift.first_divergence >= 0) out << " (first difference at token " << drift.first_divergence << ")";
  out << "\n";
}

}  // namespace

std::string mean_plus_minus(const Statistic& statistic, int decimals) {
  return grouped(statistic.mean, decimals) + " ± " + grouped(statistic.stddev, decimals);
}

std::string decimal_bytes(double bytes) {
  if (bytes < 1e3) return format("%.0f B", bytes);
  if (bytes < 1e6) return format("%.3g kB", bytes / 1e3);
  if (bytes < 1e9) return format("%.3g MB", bytes / 1e6);
  return format("%.3g GB", bytes / 1e9);
}

std::string render_table(const BenchReport& report) {
  std::ostringstream out;
  out << "| model | weights | threads | test | t/s (mean ± sd) | time (mean ± sd) | vs |\n"
      << "|---|---|---:|---|---:|---:|---|\n";
  const std::string model = model_label(report.model);
  for (const ConfigurationResult& configuration : report.configurations) {
    for (const TestResult& test : configuration.tests) {
      out << "| " << model << " | " << weights_label(configuration) << " | " << configuration.threads << " | "
          << test.name << " | "
          << (test.tokens_per_second ? mean_plus_minus(*test.tokens_per_second, 2) : std::string("—")) << " | "
          << mean_plus_minus(test.time_ms, 3) << time_unit(test) << " | " << versus(test, configuration) << " |\n";
    }
  }
  return out.str();
}

std::string render_text(const BenchReport& report) {
  std::ostringstream out;
  const SystemDescription& system = report.system;
  const BenchOptions& options = report.options;
  out << "cpu       " << system.cpu_model << " · " << system.cores << " cores · SIMD " << system.simd_target;
  if (!system.openblas_coretype.empty()) out << " · OPENBLAS_CORETYPE=" << system.openblas_coretype;
  out << "\nmodel     " << report.model.source << " · " << report.model.family << " · "
      << with_thousands(static_cast<long long>(report.model.parameters)) << " parameters · context "
      << with_thousands(report.model.context) << "\nweights   ";
  std::vector<std::string> shown;
  for (const ConfigurationResult& configuration : report.configurations) {
    if (std::find(shown.begin(), shown.end(), weights_label(configuration)) != shown.end()) continue;
    out << (shown.empty() ? "" : " · ") << weights_label(configuration) << " "
        << decimal_bytes(static_cast<double>(configuration.weight_bytes)) << " ("
        << with_thousands(static_cast<long long>(configuration.weight_bytes)) << " B)";
    shown.push_back(weights_label(configuration));
  }
  out << " read per decode step\nsettings  pp " << options.prompt_tokens << " · tg " << options.generate_tokens
      << " · batch decode";
  for (std::size_t i = 0; i < options.batch_sizes.size(); ++i) out << (i == 0 ? " b" : ", b") << options.batch_sizes[i];
  out << " (" << options.generate_tokens << " steps after a " << options.batch_prompt_tokens
      << "-token prefix per row) · KV cache " << kv_dtype_name(options.kv_dtypes.front());
  if (!options.long_context_tokens.empty()) {
    out << " · long context: " << options.long_context_decode_tokens << " steps after";
    for (int tokens : options.long_context_tokens) out << ' ' << tokens;
    out << " tokens, KV";
    for (KvDType dtype : options.kv_dtypes) out << ' ' << kv_dtype_name(dtype);
  }
  if (options.lora()) {
    out << " · LoRA: tg with one adapter, b" << options.lora_batch_rows << " over " << options.lora_adapters
        << " adapters";
  }
  if (options.one_shot) {
    out << " · one-shot: `minigen generate -f " << options.one_shot->text_path.string() << " --greedy -n "
        << options.generate_tokens << "` (" << options.one_shot->ids.size()
        << " prompt tokens) as a fresh process, in turn with the same generation warm in this one";
  }
  out << "\n          " << options.repetitions << " repetitions after 1 warm-up · mean ± sample sd\n\n"
      << render_table(report) << "\n";
  bandwidth_lines(report, out);
  bound_lines(report, out);
  roofline_lines(report, out);
  no_cache_lines(report, out);
  lora_lines(report, out);
  drift_line(report, out);
  out << "elapsed " << fixed(report.elapsed_s, 1) << " s\n";
  return out.str();
}

nlohmann::json report_json(const BenchReport& report) {
  const BenchOptions& options = report.options;
  std::vector<std::string> weight_names;
  for (WeightType type : options.weight_types) weight_names.emplace_back(weight_type_name(type));
  std::vector<std::string> kv_dtype_names;
  for (KvDType dtype : options.kv_dtypes) kv_dtype_names.emplace_back(kv_dtype_name(dtype));
  nlohmann::json json = {
      {"system",
       {{"cpu_model", report.system.cpu_model},
        {"cores", report.system.cores},
        {"simd_target", report.system.simd_target},
        {"openblas_coretype", report.system.openblas_coretype.empty()
                                  ? nlohmann::json(nullptr)
                                  : nlohmann::json(report.system.openblas_coretype)}}},
      {"model",
       {{"source", report.model.source},
        {"family", report.model.family},
        {"parameters", report.model.parameters},
        {"context", report.model.context},
        {"vocab_size", report.model.vocab_size}}},
      {"settings",
       {{"prompt_tokens", options.prompt_tokens},
        {"generate_tokens", options.generate_tokens},
        {"batch_sizes", options.batch_sizes},
        {"threads", options.thread_counts},
        {"weights", weight_names},
        {"kv_dtypes", kv_dtype_names},
        {"long_context_tokens", options.long_context_tokens},
        {"long_context_decode_tokens", options.long_context_decode_tokens},
        {"lora_rank", options.lora_rank},
        {"lora", options.lora_path.empty() ? nlohmann::json(nullptr) : nlohmann::json(options.lora_path)},
        {"lora_batch_rows", options.lora_batch_rows},
        {"lora_adapters", options.lora_adapters},
        {"no_cache", options.no_cache},
        {"repetitions", options.repetitions},
        {"quick", options.quick},
        {"batch_prompt_tokens", options.batch_prompt_tokens},
        {"dram_buffer_bytes", options.dram_buffer_bytes},
        {"bandwidth_runs", options.bandwidth_runs}}},
      {"bandwidth", nlohmann::json::array()},
      {"results", nlohmann::json::array()},
      {"bf16_drift", nullptr},
      {"lora", nullptr},
      {"elapsed_s", report.elapsed_s},
  };
  if (report.lora) {
    const LoraDescription& lora = *report.lora;
    json["lora"] = {{"source", lora.source},
                    {"summary", lora.summary},
                    {"adapters", lora.count},
                    {"rank", lora.rank},
                    {"parameters_per_adapter", lora.parameters},
                    {"fp32_bytes_per_adapter", lora.parameters * 4},
                    {"model_parameters", lora.model_parameters},
                    {"a_std", lora.source == "random" ? nlohmann::json(lora.a_std) : nlohmann::json(nullptr)},
                    {"b_std", lora.source == "random" ? nlohmann::json(lora.b_std) : nlohmann::json(nullptr)}};
  }
  for (const BandwidthMeasurement& measured : report.bandwidth) {
    json["bandwidth"].push_back({{"threads", measured.threads},
                                 {"buffer_bytes", measured.buffer_bytes},
                                 {"bytes_per_second", measured.bytes_per_second},
                                 {"runs", measured.runs},
                                 {"passes_per_run", measured.passes_per_run},
                                 {"checksum", measured.checksum},
                                 {"expected_checksum", measured.expected_checksum}});
  }
  for (const ConfigurationResult& configuration : report.configurations) {
    nlohmann::json tests = nlohmann::json::array();
    for (const TestResult& test : configuration.tests) tests.push_back(test_json(test));
    const BandwidthBound& bound = configuration.bound;
    json["results"].push_back(
        {{"weights", weight_type_name(configuration.weight_type)},
         {"activations",
          [&] {
            const auto codes = reported_activations(
                configuration.weight_type,
                configuration.activations.value_or(default_activation_codes(configuration.weight_type)));
            return codes.empty() ? nlohmann::json(nullptr) : nlohmann::json(codes);
          }()},
         {"threads", configuration.threads},
         {"weight_bytes", configuration.weight_bytes},
         {"tests", tests},
         {"bound",
          {{"bytes_per_second", bound.bytes_per_second},
           {"buffer_bytes", bound.buffer_bytes},
           {"cache_resident", bound.cache_resident},
           {"bound_tokens_per_second", bound.bound_tokens_per_second},
           {"generate_test", bound.generate_test},
           {"generate_tokens_per_second", bound.generate_tokens_per_second},
           {"fraction_of_bound", bound.fraction_of_bound}}},
         {"compute_peak",
          {{"instruction", configuration.peak.instruction}, {"ops_per_second", configuration.peak.ops_per_second}}}});
  }
  if (report.drift) {
    const DriftResult& drift = *report.drift;
    json["bf16_drift"] = {{"prompt_tokens", drift.prompt_tokens},
                          {"threads", drift.threads},
                          {"max_abs_logit_difference", drift.max_abs_logit_difference},
                          {"logits_compared", drift.logits_compared},
                          {"f32_last_argmax", drift.f32_last_argmax},
                          {"bf16_last_argmax", drift.bf16_last_argmax},
                          {"last_argmax_agrees", drift.f32_last_argmax == drift.bf16_last_argmax},
                          {"greedy_tokens", drift.greedy_tokens},
                          {"greedy_identical", drift.greedy_identical},
                          {"first_divergence", drift.first_divergence}};
  }
  return json;
}

}  // namespace minigen::bench
