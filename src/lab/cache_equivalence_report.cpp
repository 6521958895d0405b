// Section 1, written: the claim that the cache changes nothing in the output, the table of every pair compared,
// and a verdict chosen by what the pairs showed.
#include <algorithm>
#include <string>

#include "core/format.h"
#include "lab/section_reports.h"

namespace minigen::lab {
namespace {

std::string verdict(bool holds, const Words& say) { return holds ? say("yes", "是") : say("**NO**", "**否**"); }

nlohmann::json run_json(const EquivalenceRun& run, int new_tokens, uint64_t seed) {
  const RowComparison& comparison = run.comparison;
  return {{"prompt", run.prompt_name},
          {"prompt_tokens", run.prompt_tokens},
          {"new_tokens", new_tokens},
          {"decoding", run.sampled ? "sampled" : "greedy"},
          {"seed", run.sampled ? nlohmann::json(seed) : nlohmann::json(nullptr)},
          {"token_ids_identical", comparison.token_ids_identical},
          {"first_differing_step", comparison.first_differing_step},
          {"logits_bit_identical", comparison.logits_bit_identical},
          {"max_abs_logit_difference", comparison.max_abs_logit_difference},
          {"logits_compared", comparison.logits_compared},
          {"token_ids_cached", run.token_ids_cached},
          {"token_ids_uncached", run.token_ids_uncached}};
}

// What the compared pairs showed: the claim held bit for bit, held for the tokens only, or failed.
std::string verdict_paragraph(bool all_tokens_identical, bool all_bit_identical, double max_difference,
                              bool sampled_pairs_identical, bool any_sampled, const Words& say) {
  std::string text;
  if (all_tokens_identical && all_bit_identical) {
    text =
        say("Every pair agrees: the same token ids, and logits equal bit for bit (max |Δ| = 0). Bit equality is "
            "stronger than the module needs: it holds in minigen because each logit is summed in one fixed order "
            "whether a position is computed in a long no-cache pass or alone on top of the cache. Engines that pick "
            "different kernels for the two shapes (typical on GPUs) see differences around 1e-6 instead — too "
            "small to change a token except at a near-tie.",
            "每一对都一致：token id 相同，logits 逐位相等（最大 |Δ| = 0）。逐位相等比课程所需的更强：在 minigen 中"
            "它成立，是因为无论一个位置是在无缓存的长前向中计算，还是单独在缓存之上计算，每个 logit 都按同一个固定"
            "顺序求和。为两种形状选用不同内核的引擎（GPU 上很常见）会看到大约 1e-6 的差别——除非两个 token 几乎打平，"
            "否则小到不足以改变 token。");
  } else if (all_tokens_identical) {
    text =
        say("Every pair chose the same token ids, but the logits are not bit-identical (max |Δ| = " +
                exact_or_scientific(max_difference) +
                "): the two modes summed some logits in a different order. The module's claim — the same tokens — "
                "holds; a near-tie between two tokens could still part them.",
            "每一对选出的 token id 都相同，但 logits 并非逐位相等（最大 |Δ| = " + exact_or_scientific(max_difference) +
                "）：两种模式对某些 logit 的求和顺序不同。课程的结论——token 相同——成立；但两个 token 几乎打平时仍可能"
                "分开。");
  } else {
    text = say("**Not every pair agrees** — see the table; this contradicts the module's claim and is a bug.",
               "**并非每一对都一致**——见上表；这与课程的结论相矛盾，是一个错误。");
  }
  if (any_sampled && sampled_pairs_identical) {
    text +=
        say(" The sampled pairs agree too because minigen draws each step's random number from (seed, row, step) "
            "only, so both runs face the same draw at every step (section 8 comes back to this).",
            "抽样的那几对也一致，因为 minigen 每一步的随机数只由（种子，行，步）决定，两次运行在每一步面对的是同一个"
            "随机数（第 8 节会再谈到这一点）。");
  }
  return text;
}

}  // namespace

ReportSection cache_equivalence_report(const CacheEquivalenceData& data, Language language) {
  const Words say{language};
  ReportSection section;
  section.key = "cache_equivalence";
  section.title = say("Same tokens with and without the KV cache", "有无 KV 缓存，token 相同");
  section.paragraph(
      say("Generating text means running the model once per new token. Without a cache, every step feeds the whole "
          "sequence so far (prompt plus everything generated) through the network again. With a KV cache, the keys and "
          "values that attention computed for earlier positions are stored, and each step feeds only the newest token. "
          "Because attention is causal, a position's keys and values depend only on the tokens at or before it, so a "
          "later token can never change them: reusing them is exact, not an approximation. The claim to check: the "
          "cache saves work and changes nothing in the output.",
          "生成文本意味着每个新 token 都要运行一次模型。没有缓存时，每一步都要把到目前为止的整个序列（提示加上已生成的"
          "全部内容）重新送进网络。有了 KV 缓存，注意力为之前各位置算出的键和值被保存下来，每一步只输入最新的 token。"
          "由于注意力是因果的，一个位置的键和值只取决于它及它之前的 token，后来的 token "
          "永远改变不了它们：复用它们是精确的，"
          "不是近似。要检验的结论：缓存节省计算，且完全不改变输出。"));
  const std::string new_tokens = std::to_string(data.new_tokens);
  const std::string seed = std::to_string(data.sampling_seed);
  const std::string vocab = std::to_string(data.vocab_size);
  section.paragraph(say(
      "The base model continues each prompt for " + new_tokens +
          " tokens (eos ignored so that every run has exactly that many), once with the cache and "
          "once without, by greedy decoding and by sampling with seed " +
          seed + ". For every pair we compare the token ids and every logit of every step (" + vocab + " per step).",
      "基础模型把每个提示续写 " + new_tokens +
          " 个 token（忽略 eos，使每次运行都恰好生成这么多），有缓存、无缓存各一次，分别用贪心解码和种子为 " + seed +
          " 的抽样。对每一对，我们比较 token id 以及每一步的每个 logit（每步 " + vocab + " 个）。"));

  ReportTable table{{say("prompt", "提示"), say("prompt tokens P", "提示 token 数 P"), say("decoding", "解码方式"),
                     say("token ids identical", "token id 相同"), "max |Δ logit|",
                     say("logits bit-identical", "logits 逐位相等"), say("logits compared", "比较的 logits 数")},
                    {}};
  nlohmann::json runs = nlohmann::json::array();
  bool all_tokens_identical = true;
  bool all_bit_identical = true;
  bool sampled_pairs_identical = true;
  bool any_sampled = false;
  double max_difference = 0;
  for (const EquivalenceRun& run : data.runs) {
    const RowComparison& comparison = run.comparison;
    all_tokens_identical = all_tokens_identical && comparison.token_ids_identical;
    all_bit_identical = all_bit_identical && comparison.logits_bit_identical;
    if (run.sampled) {
      any_sampled = true;
      sampled_pairs_identical = sampled_pairs_identical && comparison.token_ids_identical;
    }
    max_difference = std::max(max_difference, comparison.max_abs_logit_difference);
    const std::string decoding = run.sampled ? say("sampled, seed ", "抽样，种子 ") + seed : say("greedy", "贪心解码");
    table.rows.push_back({say.label(run.prompt_name), std::to_string(run.prompt_tokens), decoding,
                          verdict(comparison.token_ids_identical, say),
                          exact_or_scientific(comparison.max_abs_logit_difference),
                          verdict(comparison.logits_bit_identical, say), with_thousands(comparison.logits_compared)});
    runs.push_back(run_json(run, data.new_tokens, data.sampling_seed));
  }
  section.table(std::move(table));
  section.paragraph(verdict_paragraph(all_tokens_identical, all_bit_identical, max_difference, sampled_pairs_identical,
                                      any_sampled, say));
  if (data.genesis_continuation_text) {
    section.paragraph(
        all_tokens_identical
            ? say("The greedy continuation of the 183-token prompt, identical in both modes (whether it reads well "
                  "depends on how far the base model was trained):",
                  "183 个 token 提示的贪心续写，两种模式下完全相同（读起来是否通顺取决于基础模型训练到什么程度）：")
            : say("The greedy continuation of the 183-token prompt with the cache (whether it reads well depends on "
                  "how far the base model was trained):",
                  "183 个 token 提示在有缓存时的贪心续写（读起来是否通顺取决于基础模型训练到什么程度）："));
    // Model output as report text: a model can stop inside a UTF-8 character.
    const std::string continuation = printable_text(*data.genesis_continuation_text);
    section.paragraph(blockquote(continuation));
    section.data["genesis_continuation_text"] = continuation;
  }

  section.data["runs"] = runs;
  section.data["all_token_ids_identical"] = all_tokens_identical;
  section.data["all_logits_bit_identical"] = all_bit_identical;
  section.data["max_abs_logit_difference"] = max_difference;
  section.data["genesis_prompt_tokens"] = data.genesis_prompt_tokens;
  section.data["genesis_text_prompt_tokens"] = data.genesis_text_prompt_tokens;
  section.data["prompt_text"] = data.prompt_text_source;
  section.summary.push_back(
      "cache on/off: token ids identical in " + std::string(all_tokens_identical ? "every" : "NOT every") + " one of " +
      std::to_string(runs.size()) + " runs, max |Δ logit| = " + exact_or_scientific(max_difference) +
      (all_bit_identical ? " (bit-identical)" : ""));
  return section;
}

}  // namespace minigen::lab
