// Section 7, written: the padding row-steps per temperature setting, one batch step by step as a plot, and why
// serving engines batch differently.
#include <string>
#include <utility>
#include <vector>

#include "core/format.h"
#include "lab/section_reports.h"

namespace minigen::lab {
namespace {

void add_trace_plot(ReportSection& section, const PaddingTrace& trace, const Words& say) {
  PlotSeries generating{say("rows still generating", "仍在生成的行"), {}, {}, "steps"};
  PlotSeries padding{say("rows padded with eos (wasted)", "用 eos 填充的行（浪费）"), {}, {}, "steps dashtype 2"};
  for (std::size_t step = 0; step < trace.padded_rows.size(); ++step) {
    generating.x.push_back(static_cast<double>(step));
    generating.y.push_back(trace.generating_rows[step]);
    padding.x.push_back(static_cast<double>(step));
    padding.y.push_back(trace.padded_rows[step]);
  }
  section.plot(PlotSpec{"eos_padding.svg",
                        say("One batch at T = 1.0: rows generating and rows padded, per step",
                            "T = 1.0 的一个批次：每一步仍在生成的行和被填充的行"),
                        say("step (one new token per row)", "步（每行一个新 token）"),
                        say("rows of the batch", "批次中的行数"),
                        false,
                        false,
                        {},
                        {generating, padding},
                        std::make_pair(0.0, trace.rows + 2.0),
                        "top right"},
               say("Every row is computed at every step until the last row finishes; the padded rows' work is wasted.",
                   "在最后一行结束之前，每一行在每一步都要计算；被填充的行所做的计算都浪费了。"));
}

// What the totals say: no padding at all, or how much, and which setting wasted the largest share.
std::string reading_sentence(const EosPaddingData& data, const Words& say) {
  const PaddingTotals& all = data.all;
  if (all.padding_row_steps == 0) {
    return say(
        "No row finished before the rest of its batch in this run (no padding row-step), so there is no waste "
        "to show here: every batch's rows stopped together or at the token limit.",
        "本次运行中没有哪一行早于同批次的其他行结束（没有填充的行步），所以这里没有浪费可展示：每个批次的各行同时"
        "停止，或都到达了 token 上限。");
  }
  const PaddingSetting* most = &data.settings.front();
  for (const PaddingSetting& setting : data.settings) {
    if (setting.totals.wasted_share() > most->totals.wasted_share()) most = &setting;
  }
  const std::string share = fixed(100.0 * all.wasted_share(), 1);
  const std::string most_share = fixed(100.0 * most->totals.wasted_share(), 1);
  return say("In this run " + share + " % of the row-steps computed were padding; the most at " + most->setting + " (" +
                 most_share + " %).",
             "本次运行中计算的行步有 " + share + " % 是填充；最多的是 " + say.label(most->setting) + "（" + most_share +
                 " %）。");
}

}  // namespace

ReportSection eos_padding_report(const EosPaddingData& data, Language language) {
  const Words say{language};
  ReportSection section;
  section.key = "eos_padding";
  section.title = say("Eos padding in a batch", "批次中的 eos 填充");
  const std::string rows = std::to_string(data.rows_per_batch);
  section.paragraph(say(
      "Section 5 ran each temperature as one batch of " + rows +
          " rows. MiniMind's generate — and minigen's, which follows it — stops a batch only when every row has "
          "produced eos (or the token limit is reached). A row that finished early is still fed at every later step, "
          "padded with eos: the model computes a token for it, and the result is thrown away. minigen counts these "
          "padding steps per row. With the cache each padding step is one token of forward work (plus its cache "
          "entry); the share below is padding steps over all row-steps computed.",
      "第 5 节把每个温度作为一个 " + rows +
          " 行的批次运行。MiniMind 的 `generate`——以及沿用它的 minigen——只有在每一行都生成了 eos（或达到 token 上限）时"
          "才停止一个批次。提前结束的行在之后的每一步仍会被输入，用 eos 填充：模型为它计算一个 token，然后把结果丢掉。"
          "minigen 统计每一行的这些填充步。有缓存时，每个填充步是一个 token "
          "的前向计算（外加它的缓存条目）；下表的比例是"
          "填充步占所有计算的行步的比例。"));

  ReportTable table{{say("setting", "设置"), say("batches", "批次数"), say("rows ended with eos", "以 eos 结束的行"),
                     say("steps per batch (mean)", "每批次步数（平均）"), say("useful row-steps", "有用的行步"),
                     say("padding row-steps (wasted)", "填充的行步（浪费）"), say("wasted share", "浪费比例")},
                    {}};
  nlohmann::json by_setting = nlohmann::json::array();
  for (const PaddingSetting& setting : data.settings) {
    const PaddingTotals& totals = setting.totals;
    const int batch_count = static_cast<int>(setting.batches.size());
    nlohmann::json per_batch = nlohmann::json::array();
    for (const PaddedBatch& batch : setting.batches) {
      per_batch.push_back({{"prompt_index", batch.prompt_index},
                           {"forward_calls", batch.forward_calls},
                           {"padding_steps_per_row", batch.padding_steps_per_row}});
    }
    table.rows.push_back({say.label(setting.setting), std::to_string(batch_count),
                          std::to_string(totals.rows_ended_with_eos) + say(" of ", " / ") + std::to_string(totals.rows),
                          fixed(static_cast<double>(totals.forward_calls) / batch_count, 1),
                          with_thousands(totals.useful_row_steps), with_thousands(totals.padding_row_steps),
                          fixed(100.0 * totals.wasted_share(), 1) + " %"});
    by_setting.push_back({{"setting", setting.setting},
                          {"rows", totals.rows},
                          {"rows_ended_with_eos", totals.rows_ended_with_eos},
                          {"forward_calls", totals.forward_calls},
                          {"useful_row_steps", totals.useful_row_steps},
                          {"padding_row_steps", totals.padding_row_steps},
                          {"wasted_share", totals.wasted_share()},
                          {"batches", per_batch}});
  }
  section.table(std::move(table));
  section.paragraph(reading_sentence(data, say));
  if (data.trace) add_trace_plot(section, *data.trace, say);
  section.paragraph(say(
      "The waste grows with the spread of answer lengths in a batch: one long answer keeps every finished row "
      "running. That is why serving engines (vLLM, TGI, llama.cpp's server) do not batch like this. They batch "
      "requests of different lengths continuously: a finished sequence leaves the batch at once and a waiting request "
      "takes its place, each with its own cache. The principle — one forward call over many sequences — is the "
      "same; the bookkeeping is what gets harder. (minigen keeps MiniMind's behaviour here so that the waste can be "
      "measured.)",
      "浪费随批次中回答长度的差异而增大：一个长回答会让所有已结束的行继续运行。这就是服务引擎（vLLM、TGI、llama.cpp "
      "的服务器）不这样组批的原因。它们连续地组批不同长度的请求：结束的序列立即离开批次，等待的请求取代它的位置，每个"
      "都有自己的缓存。原理——一次前向调用处理多个序列——是一样的；难的是记录每个序列的缓存和位置。（minigen 在这里保留 "
      "MiniMind 的行为，"
      "以便测量这种浪费。）"));

  const PaddingTotals& all = data.all;
  section.data["settings"] = by_setting;
  section.data["total_padding_row_steps"] = all.padding_row_steps;
  section.data["total_useful_row_steps"] = all.useful_row_steps;
  section.data["wasted_share"] = all.wasted_share();
  section.summary.push_back("eos padding: " + with_thousands(all.padding_row_steps) + " of " +
                            with_thousands(all.padding_row_steps + all.useful_row_steps) +
                            " row-steps were padding for finished rows (" + fixed(100.0 * all.wasted_share(), 1) +
                            " % wasted)");
  return section;
}

}  // namespace minigen::lab
