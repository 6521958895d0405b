#include "lab/report_introduction.h"

#include "core/format.h"
#include "lab/report_thresholds.h"

namespace minigen::lab {
namespace {

nlohmann::json cost_json(const ForwardCost& cost) {
  return {{"seconds_per_call", cost.seconds_per_call},
          {"seconds_per_token", cost.seconds_per_token},
          {"seconds_per_attention_pair", cost.seconds_per_attention_pair},
          {"seconds_per_row_step", cost.seconds_per_row_step}};
}

// Estimated against measured seconds per section, and the calibration behind the estimate.
std::string timing_paragraph(const RunDescription& run, const Words& say) {
  const auto prices = [&](const ForwardCost& cost) {
    return fixed(cost.seconds_per_call * 1e3, 2) + say(" ms per forward call + ", " ms/次前向调用 + ") +
           fixed(cost.seconds_per_token * 1e3, 3) + say(" ms per fed token + ", " ms/输入 token + ") +
           fixed(cost.seconds_per_attention_pair * 1e6, 3) + say(" µs per attention pair + ", " µs/注意力对 + ") +
           fixed(cost.seconds_per_row_step * 1e3, 3) + say(" ms per row and step", " ms/行·步");
  };
  std::string text =
      say("Run time per section, estimated before the run from a few timed forwards of each model (base: " +
              prices(run.base_cost) + "; SFT: " + prices(run.sft_cost) + "), then measured:\n",
          "每节的运行时间：运行前根据每个模型几次计时的前向计算估计（基础：" + prices(run.base_cost) + "；SFT：" +
              prices(run.sft_cost) + "），然后实测：\n");
  text += say("\n| section | estimated | measured |\n|---|---:|---:|", "\n| 节 | 估计 | 实测 |\n|---|---:|---:|");
  for (std::size_t i = 0; i < run.section_titles.size(); ++i) {
    text += "\n| " + std::to_string(i + 1) + ". " + run.section_titles[i] + " | " +
            duration_text(run.estimate.section_seconds[i]) + " | " + fixed(run.measured_seconds[i], 1) + " s |";
  }
  return text;
}

// The note on one model that played both parts, in the report's language.
std::string one_model_note(OneModelForBoth which, const Words& say) {
  switch (which) {
    case OneModelForBoth::kNo:
      return {};
    case OneModelForBoth::kOnlyBaseGiven:
      return say(
          "Only `--base` was given, so the SFT sections (5–8 and 10, and section 9's SFT rows) ran on that same "
          "pretrained model. It was not trained to answer questions: its answers show how the sampler behaves, "
          "not how a chat model answers. Give `--sft` to measure a chat model.",
          "只给了 `--base`，所以 SFT 各节（第 5–8、10 节，以及第 9 节的 SFT 行）也在这个预训练模型上运行。它没有"
          "被训练来回答问题：它的回答展示的是采样器的行为，而不是对话模型怎样回答。要测量对话模型，请给出 "
          "`--sft`。");
    case OneModelForBoth::kOnlySftGiven:
      return say(
          "Only `--sft` was given, so the base sections (1–4, and section 9's base rows and weight types) ran "
          "on that same chat model. Give `--base` to measure a pretrained model.",
          "只给了 `--sft`，所以基础模型各节（第 1–4 节，以及第 9 节的基础模型行和权重类型）也在这个对话模型上"
          "运行。要测量预训练模型，请给出 `--base`。");
  }
  return {};
}

// Why the shipped Chinese material was used, in the report's language; empty when it was not.
std::string chinese_set_reason(const RunDescription& run, const Words& say) {
  if (!run.chinese_set) return {};
  return (run.chinese_set_for_report ? say("the report is in Chinese (`--lang zh`)", "报告是中文的（`--lang zh`）")
                                     : say("the base model's tokenizer is MiniMind's (not minigen-6400)",
                                           "基础模型的分词器是 MiniMind 的（不是 minigen-6400）")) +
         say(", so the shipped Chinese material (`examples/zh`: Tang and Song poems, twelve questions) stands in for "
             "what was not given",
             "，所以由 minigen 自带的中文材料（`examples/zh`：唐诗、宋词和十二个问题）补上没有给出的部分");
}

}  // namespace

std::string model_text(const ModelSummary& model, Language language) {
  const Words say{language};
  std::string text = "`" + model.path + "` (" + model.format + ", " + model.stored_dtype + ") — " + model.family +
                     ", " + with_thousands(model.parameters) + say(" parameters, ", " 个参数，") +
                     std::to_string(model.layers) + say(" layers, ", " 层，") + std::to_string(model.q_heads) +
                     say(" query heads, ", " 个查询头，") + std::to_string(model.kv_heads) +
                     say(" key/value heads, head_dim ", " 个键/值头，head_dim ") + std::to_string(model.head_dim) +
                     say(", context ", "，上下文 ") + with_thousands(model.context);
  if (model.experts > 0) {
    text += say(
        ", " + std::to_string(model.experts) + " experts (top " + std::to_string(model.experts_per_token) + ")",
        "，" + std::to_string(model.experts) + " 个专家（取前 " + std::to_string(model.experts_per_token) + " 个）");
  }
  if (model.yarn_factor) text += say(", ", "，") + "YaRN ×" + fixed(*model.yarn_factor, 0);
  return text;
}

std::string section_model_line(SectionModels models, const RunDescription& run, Language language) {
  const Words say{language};
  switch (models) {
    case SectionModels::kBase:
      return say("*Model: base, ", "*模型：基础，") + model_text(run.base, language) + say(".*", "。*");
    case SectionModels::kSft:
      return say("*Model: SFT, ", "*模型：SFT，") + model_text(run.sft, language) + say(".*", "。*");
    case SectionModels::kBoth:
      break;
  }
  return say("*Models: base and SFT (above); the weight types on the base model.*",
             "*模型：基础模型和 SFT 模型（见上）；权重类型在基础模型上测量。*");
}

std::optional<double> f32_perplexity(const std::vector<KvTypeResult>& kv_rows) {
  for (const KvTypeResult& row : kv_rows) {
    if (row.dtype == KvDType::kF32 && row.perplexity.targets > 0) return row.perplexity.perplexity();
  }
  return std::nullopt;
}

std::optional<std::string> untrained_warning(const RunDescription& run, Language language) {
  const Words say{language};
  std::string models;
  const auto check = [&](const std::string& english, const std::string& chinese, const ModelSummary& model,
                         const std::optional<double>& perplexity) {
    if (!perplexity || !looks_untrained(*perplexity, model.vocab_size)) return;
    models += say((models.empty() ? "the " : " and the ") + english + " model (perplexity " + fixed(*perplexity, 1) +
                      ", vocabulary " + with_thousands(model.vocab_size) + ")",
                  (models.empty() ? "" : "和") + chinese + "模型（困惑度 " + fixed(*perplexity, 1) + "，词表大小 " +
                      with_thousands(model.vocab_size) + "）");
  };
  check("base", "基础", run.base, run.base_perplexity);
  check("SFT", "SFT ", run.sft, run.sft_perplexity);
  if (models.empty()) return std::nullopt;
  return say("> **Warning: " + models +
                 " looks untrained.** Its perplexity on the held-out documents (section 9) is at or above its "
                 "vocabulary size: it predicts the next token no better than a uniform guess. The cache sections "
                 "(1–4) still hold, since they count work and compare runs, but the sampling sections (5–8, 10) "
                 "describe noise rather than a learned distribution: expect no peaked steps, answers that read as "
                 "random tokens, and numbers unlike a trained model's.",
             "> **警告：" + models +
                 "看起来没有训练过。** 它在留出文档上的困惑度（第 9 节）不低于词表大小：它预测下一个 token 并不比均匀"
                 "随机猜测更好。缓存相关的各节（1–4）仍然成立，因为它们统计计算量并比较运行结果；但采样相关的各节"
                 "（5–8、10）描述的是噪声，而不是学到的分布：不会有尖锐的步，回答读起来像随机 token，数字也与训练过的"
                 "模型不同。");
}

std::vector<std::string> introduction(const RunDescription& run, Language language) {
  const Words say{language};
  std::vector<std::string> paragraphs;
  if (const std::optional<std::string> warning = untrained_warning(run, language)) paragraphs.push_back(*warning);
  const std::string genesis_tokens = std::to_string(run.genesis_text_prompt_tokens);
  const std::string threads = std::to_string(run.threads);
  const std::string note = one_model_note(run.one_model_for_both, say);
  const std::string reason = chinese_set_reason(run, say);
  const std::vector<std::string> fixed_paragraphs = {
      say("This report measures what the course module on KV caches and sampling claims, on the models below. Every "
          "number comes from minigen's generate loop — the same loop as MiniMind's `generate`, with counters added — "
          "or from its cache and configuration code; nothing is estimated. Each section states a claim, how it was "
          "measured, the numbers, and what they mean; every sentence that compares numbers is chosen from the "
          "numbers themselves. The machine-readable numbers are in `report.json`, the plots are SVG files beside "
          "this report.",
          "本报告在下列模型上测量课程中关于 KV 缓存和采样的模块所说的结论。每个数字都来自 minigen 的生成循环——与 "
          "MiniMind 的 `generate` 相同的循环，只是加了计数器——或来自它的缓存和配置代码；没有任何估计值。每一节先陈述"
          "一个结论，再说明如何测量、给出数字以及它们的含义；每一句比较数字的话都是根据数字本身选出的。机器可读的数字"
          "在 `report.json` 中，图是本报告旁边的 SVG 文件。"),
      say("Two ideas run through the sections. The **KV cache** decides how much is computed: it never changes which "
          "token comes out (sections 1–4, on the base model). The **sampler** (greedy decoding, temperature, top-p) "
          "decides which token is chosen from the model's distribution (sections 5–8, on the SFT model). Section 9 "
          "shrinks the cache's and the weights' element types on both models and measures what that gives up; "
          "section 10 adds a grammar stage to the sampler and shows what it takes away; section 11 puts a LoRA adapter "
          "on the SFT model and measures its size, what it changes and one batch serving several adapters.",
          "各节贯穿两个概念。**KV 缓存**决定计算量：它从不改变输出哪个 token（第 1–4 节，基础模型）。**采样器**（贪心"
          "解码、温度、top-p）决定从模型的分布中选出哪个 token（第 5–8 节，SFT 模型）。第 9 节在两个模型上缩小缓存和"
          "权重的元素类型，并测量由此放弃了什么；第 10 节给采样器加上语法阶段，展示它拿走了什么；第 11 节给 SFT "
          "模型加上 "
          "LoRA 适配器，测量它的大小、它改变了什么，以及一个批次同时服务多个适配器。"),
      say("Models:\n\n- base (pretrained, for the cache sections): " + model_text(run.base, language) +
              "\n- SFT (chat, for the sampling sections): " + model_text(run.sft, language),
          "模型：\n\n- 基础模型（预训练，用于缓存各节）：" + model_text(run.base, language) +
              "\n- SFT 模型（对话，用于采样各节）：" + model_text(run.sft, language)) +
          (note.empty() ? std::string() : say("\n\n**Note:** ", "\n\n**注意：**") + note),
      say("Material: base-model prompts cut from `" + run.prompt_text_source + "`; questions from `" +
              run.chat_prompts_source + "`; section 9's perplexity on `" + run.eval_source + "` (" +
              (run.eval_is_documents ? "documents" : "a plain text") + ")",
          "材料：基础模型的提示截取自 `" + run.prompt_text_source + "`；问题来自 `" + run.chat_prompts_source +
              "`；第 9 节的困惑度在 `" + run.eval_source + "`（" + (run.eval_is_documents ? "文档" : "纯文本") +
              "）上计算") +
          (reason.empty() ? say(".", "。") : say(" — ", "——") + reason + say(".", "。")),
      say("Prompts are built with each model's own tokenizer. The prompt text (`" + run.prompt_text_source + "`) is " +
              genesis_tokens +
              " tokens with bos for the base model's tokenizer; every prompt of P tokens is that token sequence cut "
              "(a shipped text is repeated where it is shorter than P) to exactly P, so the 183-token prompt is 183 "
              "tokens for any "
              "tokenizer. Chat prompts use " +
              run.chat_template + ", thinking off.",
          "提示用每个模型自己的分词器构建。提示文本（`" + run.prompt_text_source + "`）用基础模型的分词器加上 bos 共 " +
              genesis_tokens +
              " 个 token；每个 P 个 token 的提示都是把这个 token 序列截断（自带的文本不够 P 个 token 时会重复）到恰好 "
              "P "
              "个，所以对任何"
              "分词器，183 个 token 的提示都是 183 个 token。对话提示使用 " +
              (run.chat_template_zh.empty() ? run.chat_template : run.chat_template_zh) + "，关闭思考。"),
      say(std::string("Run: ") + (run.quick ? "`--quick` (smaller grids, fewer repeats and samples)" : "full") + ", " +
              threads + " threads, weights read as " + run.weights +
              ". Times depend on the machine and on what else it runs; counts, bytes and tokens do not.",
          std::string("运行：") + (run.quick ? "`--quick`（更小的网格，更少的重复和样本）" : "完整") + "，" + threads +
              " 个线程，权重读作 " + run.weights +
              "。时间取决于机器和它同时运行的其他程序；计数、字节数和 token 则不然。"),
  };
  paragraphs.insert(paragraphs.end(), fixed_paragraphs.begin(), fixed_paragraphs.end());
  if (!run.cuts.empty()) {
    std::string cuts =
        say("Cut from the default sizes (the estimate at full size was ", "相对默认规模的缩减（完整规模的估计为 ") +
        duration_text(run.estimate.estimated_seconds_before) + say("):", "）：");
    for (const std::string& cut : run.cuts) cuts += "\n- " + cut;
    paragraphs.push_back(cuts);
  }
  paragraphs.push_back(timing_paragraph(run, say));
  return paragraphs;
}

nlohmann::json settings_json(const RunDescription& run) {
  return {{"quick", run.quick},
          {"threads", run.threads},
          {"weights", run.requested_weights},
          {"base_model", run.base_description},
          {"sft_model", run.sft_description},
          {"chat_template", run.chat_template},
          {"genesis_text_prompt_tokens", run.genesis_text_prompt_tokens},
          {"material",
           {{"prompt_text", run.prompt_text_source},
            {"chat_prompts", run.chat_prompts_source},
            {"eval", run.eval_source},
            {"eval_format", run.eval_is_documents ? "jsonl documents" : "plain text"},
            {"chinese_set_reason", chinese_set_reason(run, Words{})}}},
          {"models_note", one_model_note(run.one_model_for_both, Words{})},
          {"cuts", run.cuts},
          {"estimated_seconds_at_default_sizes", run.estimate.estimated_seconds_before},
          {"estimated_seconds", run.estimate.estimated_seconds},
          {"calibration", {{"base", cost_json(run.base_cost)}, {"sft", cost_json(run.sft_cost)}}}};
}

}  // namespace minigen::lab
