// Section 8, written: usually the cause of "the answers changed" is on the sampling side — an unfixed seed, or
// sampling on one side and greedy on the other — not the cache. Greedy first halves the search.
#include <string>
#include <vector>

#include "lab/section_reports.h"

namespace minigen::lab {
namespace {

nlohmann::json check_json(const SeedCheck& check) {
  const RowComparison& comparison = check.comparison;
  nlohmann::json json = {{"check", check.question},
                         {"answers_identical", comparison.token_ids_identical},
                         {"first_differing_step", comparison.first_differing_step},
                         {"logits_bit_identical", comparison.logits_bit_identical}};
  if (check.answers_kept) {
    json["a"] = {{"setup", check.setup_a}, {"token_ids", check.token_ids_a}, {"text", check.text_a}};
    json["b"] = {{"setup", check.setup_b}, {"token_ids", check.token_ids_b}, {"text", check.text_b}};
    json["max_abs_logit_difference"] = comparison.max_abs_logit_difference;
  }
  return json;
}

const char* identical_or(bool identical, const char* otherwise) { return identical ? "identical" : otherwise; }

// What the checks showed, in the table's order: different seeds, same seed with the cache on and off, greedy with the
// cache on and off, the usual bug (sampling against greedy), and alone against in a batch.
std::string reading_paragraph(const SeedData& data, const Words& say) {
  const RowComparison& seeds = data.checks[0].comparison;
  const RowComparison& cache = data.checks[1].comparison;
  const RowComparison& greedy = data.checks[2].comparison;
  const RowComparison& usual_bug = data.checks[3].comparison;
  const RowComparison& batch = data.checks.back().comparison;
  std::string text =
      seeds.token_ids_identical
          ? say("Different seeds gave the same answer here: the model was sure enough at every step that both draws "
                "picked the same tokens (likelier with a short answer or a peaked model). ",
                "这里不同的种子给出了相同的回答：模型在每一步都足够有把握，两次抽样选中了同样的 "
                "token（回答很短或模型分布"
                "很尖锐时更可能发生）。")
          : say("Different seeds gave different answers (the logits differ too once the answers diverge, since each "
                "step continues a different text). ",
                "不同的种子给出了不同的回答（回答分叉之后 logits 也不同，因为每一步续写的是不同的文本）。");
  const bool cache_exact = cache.token_ids_identical && cache.logits_bit_identical;
  text += cache_exact ? say("With the same seed, turning the cache on or off changed nothing, bit for bit",
                            "种子相同时，打开或关闭缓存没有任何改变，逐位相同")
                      : say("With the same seed, turning the cache on or off **changed the output** — a bug",
                            "种子相同时，打开或关闭缓存**改变了输出**——这是一个错误");
  text += batch.token_ids_identical
              ? say(", and sharing the batch changed nothing either. ", "；共享批次也没有任何改变。")
              : say(", but sharing the batch **changed the answer** — a bug. ",
                    "；但共享批次**改变了回答**——这是一个错误。");
  text += say("Greedy decoding is the quickest test when a report comes in: ",
              "收到这类问题报告时，贪心解码是最快的检验：");
  text += greedy.token_ids_identical
              ? say("here the greedy answers with and without the cache agree token for token, so the cache is "
                    "exonerated and a difference lies in how the two runs sample. ",
                    "这里有缓存和无缓存的贪心回答逐个 token 一致，所以缓存是清白的，差别在于两次运行的抽样方式。")
              : say("here even the greedy answers differ with and without the cache, so look at the cache and the "
                    "position bookkeeping. ",
                    "这里连贪心回答在有无缓存时都不同，所以要检查缓存和位置的记录是否正确。");
  text += usual_bug.token_ids_identical
              ? say("The usual culprit (sampling on one side, greedy on the other) happened to give the same answer "
                    "in this run, so it could not show here.",
                    "常见的罪魁祸首（一边抽样、一边贪心解码）在本次运行中碰巧给出了相同的回答，所以这里显示不出来。")
              : say("The usual culprit reproduces: sampling on one side and greedy on the other gave different answers "
                    "(first differing token " +
                        std::to_string(usual_bug.first_differing_step) + ").",
                    "常见的罪魁祸首重现了：一边抽样、一边贪心解码给出了不同的回答（第一个不同的 token 在第 " +
                        std::to_string(usual_bug.first_differing_step) + " 步）。");
  return text;
}

}  // namespace

ReportSection seed_report(const SeedData& data, Language language) {
  const Words say{language};
  ReportSection section;
  section.key = "seeds";
  section.title = say("\"The answers changed when I turned the cache on\"", "“我打开缓存后回答就变了”");
  const std::string new_tokens = std::to_string(data.new_tokens);
  section.paragraph(say(
      "A classic bug report. Section 1 showed that the cache cannot change a token, so the cause is almost always on "
      "the sampling side: the two runs drew different random numbers (no fixed seed, or a shared random generator "
      "whose state depends on what ran before), or one side sampled while the other decoded greedily. MiniMind draws "
      "every row from torch's single global generator, so even with a fixed seed a row's draws depend on the other "
      "rows and on every draw made earlier. minigen gives each row its own stream keyed by (seed, row, step): the "
      "same request draws the same numbers whatever else happens. Each check below runs the SFT model on \"" +
          data.prompt + "\" (up to " + new_tokens +
          " tokens, MiniMind's sampling defaults unless greedy) and compares the two answers.",
      "一个经典的问题报告。第 1 节已经说明缓存不可能改变 token，所以原因几乎总在抽样这一边：两次运行抽到了不同的随机数"
      "（没有固定种子，或共享的随机数生成器的状态取决于之前运行过什么），或者一边抽样而另一边用贪心解码。MiniMind 的"
      "每一行都从 torch 唯一的全局生成器抽样，所以即使固定了种子，一行的抽样也取决于其他行和之前的每一次抽样。minigen "
      "给每一行一个由（种子，行，步）决定的独立随机流：同一个请求不论其他情况如何，都抽到相同的数。下面每项检查都让 "
      "SFT 模型回答" +
          say.quoted(data.prompt) + "（最多 " + new_tokens +
          " 个 token，除贪心解码外使用 MiniMind 的默认抽样设置），并比较两个回答。"));

  ReportTable table{
      {say("check", "检查"), say("run A", "运行 A"), say("run B", "运行 B"), say("answers identical", "回答相同"),
       say("first differing token", "第一个不同的 token"), say("logits bit-identical", "logits 逐位相等")},
      {}};
  nlohmann::json results = nlohmann::json::array();
  for (const SeedCheck& check : data.checks) {
    const RowComparison& comparison = check.comparison;
    table.rows.push_back({say.label(check.question), say.label(check.setup_a), say.label(check.setup_b),
                          comparison.token_ids_identical ? say("yes", "是") : say("no", "否"),
                          comparison.token_ids_identical ? "—" : std::to_string(comparison.first_differing_step),
                          comparison.logits_bit_identical ? say("yes", "是") : say("no", "否")});
    results.push_back(check_json(check));
  }
  section.table(std::move(table));
  section.paragraph(reading_paragraph(data, say));

  const bool different_seeds_same = data.checks[0].comparison.token_ids_identical;
  const bool cache_on_off_same = data.checks[1].comparison.token_ids_identical;
  const bool greedy_on_off_same = data.checks[2].comparison.token_ids_identical;
  const bool alone_and_in_batch_same = data.checks.back().comparison.token_ids_identical;
  section.data["checks"] = results;
  section.data["max_new_tokens"] = data.new_tokens;
  section.data["prompt"] = data.prompt;
  section.data["different_seeds_differ"] = !different_seeds_same;
  section.data["same_seed_cache_on_off_identical"] = cache_on_off_same;
  section.data["greedy_cache_on_off_identical"] = greedy_on_off_same;
  section.data["alone_and_in_batch_identical"] = alone_and_in_batch_same;
  section.summary.push_back(std::string("seeds: different seeds ") +
                            (different_seeds_same ? "gave the SAME answer" : "differ") +
                            "; same seed with cache on/off " + identical_or(cache_on_off_same, "DIFFER") +
                            "; greedy on/off " + identical_or(greedy_on_off_same, "DIFFER") + "; alone vs in a batch " +
                            identical_or(alone_and_in_batch_same, "DIFFER"));
  return section;
}

}  // namespace minigen::lab
