// Section 10, written: how often the answers parse with and without the schema, how much of the vocabulary the
// mask removes, what top-p keeps after it, and the first answer of each run.
#include <string>
#include <vector>

#include "core/format.h"
#include "lab/section_reports.h"

namespace minigen::lab {
namespace {

nlohmann::json run_json(const ConstrainedRun& run) {
  return nlohmann::json{{"parsed", run.parsed},
                        {"stopped", run.stopped},
                        {"mean_removed_share", mean(run.removed_share)},
                        {"median_kept_candidates", median(run.kept_candidates)},
                        {"mean_kept_candidates", mean(run.kept_candidates)},
                        {"texts", run.texts}};
}

// What the two runs showed: how many free answers parse, whether every constrained answer that stopped by itself is
// valid, and whether the mask left top-p fewer candidates.
std::string reading_paragraph(const ConstrainingData& data, const Words& say) {
  const ConstrainedRun& free = data.free;
  const ConstrainedRun& constrained = data.constrained;
  const std::string samples = std::to_string(data.samples);
  const std::string of = say(" of ", " / ");
  std::string text =
      free.parsed == 0
          ? say("Without the schema no answer parses (0 of " + samples +
                    "): the model answers in prose, as it was "
                    "trained to. ",
                "没有模式约束时，没有一个回答能解析（0 / " + samples + "）：模型按训练的方式用自然语言回答。")
          : say("Without the schema " + std::to_string(free.parsed) + " of " + samples +
                    " answers parse: the model sometimes writes the format on its own. ",
                "没有模式约束时，有 " + std::to_string(free.parsed) + " / " + samples +
                    " 个回答能解析：模型有时会自己写出这种格式。");
  const std::string parsed = std::to_string(constrained.parsed) + of + samples;
  text += constrained.parsed >= constrained.stopped
              ? say("With it, every answer that ended by itself is a valid document (" + parsed +
                        " parse; an answer cut by the token limit cannot be complete). ",
                    "有模式约束时，每个自行结束的回答都是有效的文档（" + parsed +
                        " 能解析；被 token 上限截断的回答不可能完整）。")
              : say("With it, **not every answer that ended by itself is valid** (" + parsed + " parse, " +
                        std::to_string(constrained.stopped) + " ended by eos) — a bug in the grammar stage. ",
                    "有模式约束时，**并非每个自行结束的回答都有效**（" + parsed + " 能解析，" +
                        std::to_string(constrained.stopped) + " 个以 eos 结束）——这是语法阶段的错误。");
  const std::string removed = fixed(100 * mean(constrained.removed_share), 2);
  const std::string vocab = with_thousands(data.vocab_size);
  text += say("The mask removes " + removed + " % of the " + vocab +
                  " ids per step on average: inside a string nearly every token may follow, at a brace or a key only "
                  "one. ",
              "掩码平均每步去掉 " + vocab + " 个 id 中的 " + removed +
                  " %：在字符串内部几乎任何 token 都可以接在后面，在括号或键的位置只有一个。");
  const double kept_constrained = median(constrained.kept_candidates);
  const double kept_free = median(free.kept_candidates);
  const std::string kept = fixed(kept_constrained, 0);
  const std::string kept_without = fixed(kept_free, 0);
  text +=
      kept_constrained < kept_free
          ? say("top-p then keeps a median of " + kept + " candidates instead of " + kept_without +
                    ": where the grammar leaves one token, the nucleus is that token, and the temperature no longer "
                    "matters. ",
                "随后 top-p 保留的候选中位数为 " + kept + "，而不是 " + kept_without +
                    "：语法只留下一个 token 的地方，top-p 的候选集合就只有这一个 token，温度也就不再起作用。")
          : say("top-p kept a median of " + kept + " candidates with the schema against " + kept_without +
                    " without: here the mask did not narrow the nucleus. ",
                "有模式约束时 top-p 保留的候选中位数为 " + kept + "，无约束时为 " + kept_without +
                    "：这里掩码并没有缩小 top-p 的候选集合。");
  text += say(
      "The cost is a different text, not only a different format — the mask renormalises the model's "
      "probabilities over what is left, which can push a small model into answers it would rarely give.",
      "代价是不同的文本，而不仅是不同的格式——掩码在剩下的 token 上重新归一化模型的概率，这可能把小模型推向它很少会给出"
      "的回答。");
  return text;
}

}  // namespace

ReportSection constraining_report(const ConstrainingData& data, Language language) {
  const Words say{language};
  ReportSection section;
  section.key = "constraining";
  section.title = say("Constraining the sampler", "约束采样器");
  const std::string samples = std::to_string(data.samples);
  const std::string seed = std::to_string(data.seed);
  const std::string new_tokens = std::to_string(data.new_tokens);
  section.paragraph(say(
      "Temperature, top-k and top-p reshape the model's distribution; none of them can promise a format. A grammar "
      "stage can: placed first in the chain, it sets every token that would take the text out of a language — here "
      "JSON valid against a schema — to −inf, then the usual stages run on what is left and the chosen token "
      "advances the grammar. eos is allowed only where the document is complete. The SFT model is asked \"" +
          data.question + "\" " + samples + " times (MiniMind's sampling defaults, seed " + seed + ", up to " +
          new_tokens + " tokens), once freely and once with the schema `" + data.schema.dump() +
          "` (`--json-schema`, or `response_format` in the API). An answer counts as parsed when it is a JSON object "
          "with exactly these two strings within their lengths, checked without the grammar.",
      "温度、top-k 和 top-p 改变模型分布的形状，但都不能保证格式。语法阶段可以：它放在链条的最前面，把所有会让文本偏离"
      "某种语言——这里是符合模式的 JSON——的 token 设为 −inf，然后通常的各阶段在剩下的 token 上运行，选出的 token "
      "推进语法。只有"
      "在文档完整的地方才允许 eos。SFT 模型被问 " +
          samples + " 次" + say.quoted(data.question) + "（MiniMind 的默认抽样设置，种子 " + seed + "，最多 " +
          new_tokens + " 个 token），一次自由回答，一次使用模式 `" + data.schema.dump() +
          "`（`--json-schema`，或 API 中的 `response_format`）。一个回答只有是恰好包含这两个字符串且长度符合要求的 "
          "JSON 对象时才算能解析，检查时不使用语法。"));

  const auto row = [&](const std::string& name, const ConstrainedRun& run, bool masked) {
    return std::vector<std::string>{name,
                                    std::to_string(run.parsed) + say(" of ", " / ") + samples,
                                    std::to_string(run.stopped) + say(" of ", " / ") + samples,
                                    masked ? fixed(100 * mean(run.removed_share), 2) + " %" : "—",
                                    fixed(median(run.kept_candidates), 0),
                                    fixed(mean(run.kept_candidates), 1)};
  };
  const ConstrainedRun& free = data.free;
  const ConstrainedRun& constrained = data.constrained;
  section.table(ReportTable{
      {say("sampling", "抽样"), say("answers that parse and validate", "能解析并通过验证的回答"),
       say("ended by eos", "以 eos 结束"), say("vocabulary removed per step (mean)", "每步去掉的词表比例（平均）"),
       say("top-p kept candidates (median)", "top-p 保留的候选（中位数）"), say("(mean)", "（平均）")},
      {row(say("free", "自由"), free, false), row(say("with the schema", "使用模式"), constrained, true)}});
  section.paragraph(reading_paragraph(data, say));
  section.paragraph(say("First answers: free — \"", "第一个回答：自由——“") + printable_text(free.texts.front()) +
                    say("\"; with the schema — `", "”；使用模式——`") + printable_text(constrained.texts.front()) +
                    "`.");

  section.data["schema"] = data.schema;
  section.data["samples"] = data.samples;
  section.data["max_new_tokens"] = data.new_tokens;
  section.data["free"] = run_json(free);
  section.data["constrained"] = run_json(constrained);
  section.summary.push_back("constraining: answers that parse " + std::to_string(free.parsed) + " of " + samples +
                            " free, " + std::to_string(constrained.parsed) + " with a schema; the mask removes " +
                            fixed(100 * mean(constrained.removed_share), 1) + " % of the vocabulary per step");
  return section;
}

}  // namespace minigen::lab
