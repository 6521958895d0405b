// The Python module `minigen` (README.md, "Python"): pybind11 bindings of python_model.h. Every call that computes
// releases the GIL; minigen::Error becomes minigen.Error with the message the CLI prints.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <climits>
#include <cstring>

#include "core/error.h"
#include "core/format.h"
#include "core/json_parse.h"
#include "core/json_text.h"
#include "keyword_check.h"
#include "python_config.h"
#include "python_model.h"
#include "python_stream.h"
#include "request/output_grammar.h"
#include "request/request_error.h"
#include "request/tools.h"
#include "sampling/top_p_rule.h"

namespace py = pybind11;
using namespace py::literals;

namespace minigen::python {
namespace {

// `minigen generate --json`'s object as a Python dict, and its fields as attributes (same names as the JSON).
struct Result {
  nlohmann::json summary;
};

// Token text can hold bytes that are not UTF-8 (a row may stop inside a character): they become U+FFFD, as in the
// CLI's --json output, instead of an exception.
py::object to_python(const nlohmann::json& value) {
  return py::module_::import("json").attr("loads")(to_json_text(value));
}

py::list per_sequence(const Result& result, const char* field) {
  py::list out;
  for (const nlohmann::json& sequence : result.summary["sequences"]) out.append(to_python(sequence[field]));
  return out;
}

// A Python value (dict, list, str, numbers) as JSON, keys in the order Python holds them (json.dumps's order).
nlohmann::ordered_json to_json(const py::handle& value, const char* name) {
  const std::string text = py::module_::import("json").attr("dumps")(value).cast<std::string>();
  try {
    return parse_untrusted_json<nlohmann::ordered_json>(text);
  } catch (const Error& error) {
    throw Error(std::string(name) + " " + error.what());
  }
}

// A prompt's ids: a list, a tuple or a numpy array of ints. A list of prompts is refused with what to do instead.
std::vector<int> prompt_ids(const py::object& prompt) {
  const std::string shape = "prompt must be a str or a list of token ids (ints), got ";
  if (!py::isinstance<py::sequence>(prompt) || py::isinstance<py::bytes>(prompt))
    throw Error(shape + py::str(py::type::of(prompt).attr("__name__")).cast<std::string>());
  for (const py::handle item : prompt.cast<py::sequence>()) {
    if (py::isinstance<py::str>(item) || py::isinstance<py::sequence>(item))
      throw Error(
          "one prompt per call: a str or a list of token ids, not a list of prompts (num_return_sequences=N "
          "samples one prompt N times)");
  }
  try {
    return prompt.cast<std::vector<int>>();
  } catch (const py::cast_error&) {
    throw Error(shape + py::repr(prompt).cast<std::string>());
  }
}

Prompt to_prompt(const py::object& prompt, bool chat, const std::string& system) {
  Prompt out;
  out.chat = chat;
  out.system = system;
  if (py::isinstance<py::str>(prompt)) {
    out.text = prompt.cast<std::string>();
  } else {
    if (chat) throw Error("chat=True takes the user message as a str, not token ids");
    out.ids = prompt_ids(prompt);
    if (out.ids.empty()) throw Error("give a prompt: a non-empty text or a list of token ids");
  }
  return out;
}

// The keyword arguments generate() and stream() share. Their defaults are SamplingParams{}'s and the CLI's (-n 256),
// so a call without them is `minigen generate` without flags; each has the meaning of the flag of the same name.
struct GenerateKeywords {
  bool chat = false;
  std::string system = {};
  bool think = false;
  py::object tools = py::none();  // None or OpenAI's tools array (list of dicts)
  std::string tool_choice = "auto";
  py::object json_schema = py::none();  // None, a dict or a JSON string
  bool json_object = false;
  int max_new_tokens = 256;
  SamplingParams sampling = {};
  py::object logit_bias = py::none();  // None or {token id: bias}
  std::string top_p_rule = "minimind";
  bool use_cache = true;
  bool ignore_eos = false;
  int num_return_sequences = 1;
};

// The keyword arguments in the request layer's terms (src/request/), as the CLI's prompt, grammar and sampling flags
// are; errors name the arguments.
RunRequest run_request(const PythonModel& model, const py::object& prompt, const GenerateKeywords& keywords) {
  if (!keywords.chat && (keywords.think || !keywords.tools.is_none() || !keywords.system.empty()))
    throw Error("system, think and tools are for chat=True");
  if (keywords.tool_choice != "auto" && keywords.tools.is_none())
    throw Error("tool_choice '" + keywords.tool_choice + "' needs tools=[...]");
  if (!keywords.json_schema.is_none() && keywords.json_object) throw Error("give json_schema or json_object, not both");
  RunRequest run;
  run.chat = keywords.chat;
  run.thinking = keywords.think;
  run.tools_offered = !keywords.tools.is_none() && keywords.tool_choice != "none";
  Prompt text = to_prompt(prompt, keywords.chat, keywords.system);
  text.thinking = keywords.think;
  const nlohmann::ordered_json tools = keywords.tools.is_none() ? nullptr : to_json(keywords.tools, "tools");
  std::vector<ToolFunction> functions;
  if (!tools.is_null()) {
    try {
      functions = tool_functions(tools);
    } catch (const RequestError& error) {
      throw Error(std::string("tools: ") + error.what());
    }
  }
  if (run.tools_offered) text.tools = tools;
  run.prompt = model.encode(text);

  GenerateOptions& options = run.options;
  options.max_new_tokens = keywords.max_new_tokens;
  options.use_cache = keywords.use_cache;
  options.ignore_eos = keywords.ignore_eos;
  options.kv_dtype = model.kv_dtype();
  options.sampling = keywords.sampling;
  try {
    options.sampling.top_p_rule = parse_top_p_rule(keywords.top_p_rule);
  } catch (const Error&) {
    throw Error("top_p_rule must be one of minimind, hf, llamacpp; got '" + keywords.top_p_rule + "'");
  }
  if (!keywords.logit_bias.is_none()) {
    const std::string shape = "logit_bias must be a dict of token id (int) to bias (float)";
    if (!py::isinstance<py::dict>(keywords.logit_bias)) throw Error(shape);
    for (const auto& [key, value] : keywords.logit_bias.cast<py::dict>()) {
      if (!py::isinstance<py::int_>(key) || !(py::isinstance<py::float_>(value) || py::isinstance<py::int_>(value)))
        throw Error(shape);
      const long long token = key.cast<long long>();
      if (token < 0 || token > INT_MAX)
        throw Error("logit_bias names token " + std::to_string(token) + ", outside the vocabulary");
      options.sampling.logit_bias.push_back(
          {static_cast<int>(token), sampling_float(SamplingParam::kLogitBias, value.cast<double>())});
    }
  }
  if (keywords.json_object || !keywords.json_schema.is_none()) {
    nlohmann::ordered_json schema;  // null: any JSON object
    if (py::isinstance<py::str>(keywords.json_schema)) {
      try {
        schema = parse_untrusted_json<nlohmann::ordered_json>(keywords.json_schema.cast<std::string>());
      } catch (const Error& error) {
        throw Error(std::string("json_schema: the string ") + error.what());
      }
    } else if (!keywords.json_schema.is_none()) {
      schema = to_json(keywords.json_schema, "json_schema");
    }
    if (!keywords.json_schema.is_none() && schema.is_null()) throw Error("json_schema: give a JSON Schema, not null");
    try {
      options.grammars = {std::make_shared<const CompiledGrammar>(json_output_grammar(schema), model.vocabulary())};
    } catch (const Error& error) {
      throw Error(std::string("json_schema: ") + error.what());
    }
  }
  if (const ToolChoice choice = ToolChoice::from_text(keywords.tool_choice); choice.forces_call()) {
    const std::string problem = "tool_choice '" + keywords.tool_choice + "': ";
    std::shared_ptr<const CompiledGrammar> forced;
    try {
      forced =
          tool_choice_grammar(functions, choice, keywords.think, model.vocabulary(/*plain_added_tokens_as_text=*/true));
    } catch (const Error& error) {
      throw Error(problem + error.what());
    }
    try {
      check_one_output_grammar(!options.grammars.empty(), /*forces_tool_call=*/true);
    } catch (const RequestError&) {
      throw Error(problem + "it forces a tool call, which cannot be combined with json_schema or json_object");
    }
    options.grammars = {std::move(forced)};
  }
  run.num_return_sequences = keywords.num_return_sequences;
  return run;
}

// seed=: an int in [0, 2**64 − 1], or −1 for a random seed (sampling_params.h's kRandomSeed), which the summary's
// settings.seed then reports.
uint64_t seed_from(const py::object& seed) {
  const char* problem = "seed must be an integer in [0, 2**64 - 1], or -1 for a random seed";
  if (!py::isinstance<py::int_>(seed) || py::isinstance<py::bool_>(seed)) throw Error(problem);
  if (seed.equal(py::int_(kRandomSeed))) return draw_random_seed();
  try {
    return seed.cast<uint64_t>();
  } catch (const py::cast_error&) {  // negative, or above 2**64 - 1
    throw Error(problem);
  }
}

// Defines generate() or stream(): the keyword arguments are listed once, here, and `run` gets them as a RunRequest.
// The float defaults are the decimals SamplingParams{} was written with (help() shows temperature=0.85, not the
// float's 0.8500000238418579); an unknown keyword raises minigen.Error naming the nearest (keyword_check.h).
template <class Class, class Run>
void def_generate_like(Class& cls, const char* name, Run run, const char* doc) {
  const SamplingParams defaults;
  def_checking_keywords(
      cls, name,
      [run](std::shared_ptr<PythonModel> model, const py::object& prompt, bool chat, const std::string& system,
            bool think, const py::object& tools, const std::string& tool_choice, const py::object& json_schema,
            bool json_object, int max_new_tokens, double temperature, double top_p, int top_k, double min_p,
            double repetition_penalty, double frequency_penalty, double presence_penalty, const py::object& logit_bias,
            bool greedy, const py::object& seed, const std::string& top_p_rule, bool use_cache, bool ignore_eos,
            int num_return_sequences) {
        GenerateKeywords keywords;
        keywords.chat = chat;
        keywords.system = system;
        keywords.think = think;
        keywords.tools = tools;
        keywords.tool_choice = tool_choice;
        keywords.json_schema = json_schema;
        keywords.json_object = json_object;
        keywords.max_new_tokens = max_new_tokens;
        SamplingParams& sampling = keywords.sampling;
        // Python's floats are doubles: each is judged as given (temperature=1e-320 is refused, not greedy).
        sampling.temperature = sampling_float(SamplingParam::kTemperature, temperature);
        sampling.top_p = sampling_float(SamplingParam::kTopP, top_p);
        sampling.top_k = top_k;
        sampling.min_p = sampling_float(SamplingParam::kMinP, min_p);
        sampling.repetition_penalty = sampling_float(SamplingParam::kRepetitionPenalty, repetition_penalty);
        sampling.frequency_penalty = sampling_float(SamplingParam::kFrequencyPenalty, frequency_penalty);
        sampling.presence_penalty = sampling_float(SamplingParam::kPresencePenalty, presence_penalty);
        sampling.greedy = greedy;
        sampling.seed = seed_from(seed);
        keywords.logit_bias = logit_bias;
        keywords.top_p_rule = top_p_rule;
        keywords.use_cache = use_cache;
        keywords.ignore_eos = ignore_eos;
        keywords.num_return_sequences = num_return_sequences;
        RunRequest request = run_request(*model, prompt, keywords);
        return run(std::move(model), std::move(request));
      },
      py::arg("prompt"), py::kw_only(), py::arg("chat") = false, py::arg("system") = "", py::arg("think") = false,
      py::arg("tools") = py::none(), py::arg("tool_choice") = "auto", py::arg("json_schema") = py::none(),
      py::arg("json_object") = false, py::arg("max_new_tokens") = 256,
      py::arg("temperature") = as_typed_decimal(defaults.temperature),
      py::arg("top_p") = as_typed_decimal(defaults.top_p), py::arg("top_k") = defaults.top_k,
      py::arg("min_p") = as_typed_decimal(defaults.min_p),
      py::arg("repetition_penalty") = as_typed_decimal(defaults.repetition_penalty),
      py::arg("frequency_penalty") = as_typed_decimal(defaults.frequency_penalty),
      py::arg("presence_penalty") = as_typed_decimal(defaults.presence_penalty), py::arg("logit_bias") = py::none(),
      py::arg("greedy") = defaults.greedy, py::arg("seed") = defaults.seed, py::arg("top_p_rule") = "minimind",
      py::arg("use_cache") = true, py::arg("ignore_eos") = false, py::arg("num_return_sequences") = 1, doc);
}

py::array_t<float> forward(PythonModel& model, const std::vector<int>& ids, PythonCache* cache) {
  std::vector<float> logits;
  {
    const py::gil_scoped_release release;
    model.forward(ids, cache, logits);
  }
  const auto vocab = static_cast<py::ssize_t>(model.config().vocab_size);
  py::array_t<float> out({static_cast<py::ssize_t>(ids.size()), vocab});
  std::memcpy(out.mutable_data(), logits.data(), logits.size() * sizeof(float));
  return out;
}

}  // namespace
}  // namespace minigen::python

PYBIND11_MODULE(minigen, module) {
  using namespace minigen;
  using namespace minigen::python;
  module.doc() = "minigen: MiniMind-family models in C++ (forward, KV cache, MiniMind's generate and its counters)";
  module.attr("__version__") = MINIGEN_VERSION;  // the same as `minigen --version` (CMake's project version)
  py::register_exception<Error>(module, "Error");

  py::class_<Result> result(module, "GenerateResult",
                            "what `minigen generate --json` prints: .summary, and its fields");
  result.def_property_readonly("summary", [](const Result& r) { return to_python(r.summary); })
      .def_property_readonly("sequences", [](const Result& r) { return to_python(r.summary["sequences"]); })
      .def_property_readonly("texts", [](const Result& r) { return per_sequence(r, "text"); })
      .def_property_readonly("token_ids", [](const Result& r) { return per_sequence(r, "token_ids"); })
      .def_property_readonly("finish_reasons", [](const Result& r) { return per_sequence(r, "finish_reason"); })
      .def("__repr__", [](const Result& r) { return "minigen.GenerateResult(" + to_json_text(r.summary) + ")"; });
  for (const char* field : {"model", "prompt_tokens", "forward_calls", "forward_tokens", "kv_cache_bytes",
                            "kv_cache_bytes_allocated", "recompute_buffer_bytes", "weights", "weight_bytes",
                            "resident_bytes", "ttft_ms", "itl_ms", "total_ms", "settings"}) {
    result.def_property_readonly(field, [field](const Result& r) { return to_python(r.summary[field]); });
  }

  py::class_<PythonCache, std::shared_ptr<PythonCache>> cache(
      module, "Cache", "one sequence's KV cache: Model.forward(ids, cache=c) appends K and V of ids and advances it");
  cache.def_property_readonly("length", &PythonCache::length, "tokens held (the next position)")
      .def_property_readonly("bytes_used", &PythonCache::bytes_used,
                             "length · 2 · layers · kv_heads · head_dim · bytes")
      .def_property_readonly("bytes_allocated", &PythonCache::bytes_allocated)
      .def("__len__", &PythonCache::length);
  def_checking_keywords(
      cache, "truncate", [](PythonCache& self, int length) { self.truncate(length); }, py::arg("length"),
      "keep the first `length` positions");

  py::class_<TextStream>(module, "Stream", "text pieces as they are decoded; .result once the loop has ended")
      .def("__iter__", [](TextStream& self) -> TextStream& { return self; })
      .def("__next__",
           [](TextStream& self) {
             std::optional<std::string> piece;
             {
               const py::gil_scoped_release release;
               piece = self.next();
             }
             if (!piece) throw py::stop_iteration();
             return *piece;
           })
      .def_property_readonly("result", [](const TextStream& self) { return Result{self.summary()}; });

  define_model_config(module);

  py::class_<PythonModel, std::shared_ptr<PythonModel>> model(module, "Model");
  def_init_checking_keywords(
      model,
      [](const std::string& path, const std::string& weights, int threads, int heads, const std::string& tokenizer,
         bool yarn, const std::string& kv_dtype, const std::string& lora, const std::string& activations) {
        // The CLI's ranges for --threads and --heads.
        if (threads < 0 || threads > 1024) throw Error("threads must be in [0, 1024] (0: one per core)");
        if (heads < 1 || heads > 1024) throw Error("heads must be in [1, 1024]");
        ModelSettings settings;
        settings.model_path = path;
        settings.weights = weights;
        settings.threads = threads;
        settings.num_q_heads = heads;
        settings.tokenizer_path = tokenizer;
        settings.yarn = yarn;
        settings.kv_dtype = kv_dtype;
        settings.lora_path = lora;
        if (!activations.empty()) parse_activation_codes(activations);  // "unknown activation codes 'x' (expected …)"
        settings.activations = activations;
        const py::gil_scoped_release release;
        return std::make_shared<PythonModel>(settings);
      },
      py::arg("path"), py::kw_only(), py::arg("weights") = "", py::arg("threads") = 0, py::arg("heads") = 8,
      py::arg("tokenizer") = "", py::arg("yarn") = false, py::arg("kv_dtype") = "f32", py::arg("lora") = "",
      py::arg("activations") = "",
      "an HF directory or a MiniMind .pth, loaded as `minigen -m PATH --weights … --activations … --threads … --lora "
      "…` loads it");
  model
      .def("__repr__",
           [](const PythonModel& m) {
             return "minigen.Model('" + m.loaded().path.string() + "', weights='" +
                    std::string(weight_type_name(m.transformer().weight_type())) +
                    "', threads=" + std::to_string(m.transformer().threads()) + ")";
           })
      .def_property_readonly("path", [](const PythonModel& m) { return m.loaded().path.string(); })
      .def_property_readonly("weights",
                             [](const PythonModel& m) { return weight_type_name(m.transformer().weight_type()); })
      .def_property_readonly("threads", [](const PythonModel& m) { return m.transformer().threads(); })
      .def_property_readonly(
          "activations",
          [](const PythonModel& m) -> py::object {
            const auto codes = reported_activations(m.transformer().weight_type(), m.transformer().activations());
            return codes.empty() ? py::object(py::none()) : py::object(py::str(std::string(codes)));
          },
          "q8/q4: the activation codes of the products ('int16' or 'int8'); None for f32, f16, bf16")
      .def_property_readonly(
          "config", [](const PythonModel& m) { return ConfigView{to_python(m.config_fields()).cast<py::dict>()}; },
          "the model's shape (minigen.ModelConfig): `minigen info --json`'s fields and config.json's names, as "
          "attributes (config.hidden_size) and as a dict (dict(config))")
      .def_property_readonly("vocab_size", [](const PythonModel& m) { return m.config().vocab_size; })
      .def_property_readonly("bos_token_id", [](const PythonModel& m) { return m.config().bos_token_id; })
      .def_property_readonly("eos_token_id", [](const PythonModel& m) { return m.config().eos_token_id; })
      .def_property_readonly("kv_bytes_per_token",
                             [](const PythonModel& m) { return m.config().kv_bytes_per_token(m.kv_dtype()); });
  def_checking_keywords(
      model, "tokenize",
      [](const PythonModel& m, const std::string& text, bool chat, const std::string& system, bool bos) {
        if (chat || bos) return m.encode(to_prompt(py::str(text), chat, system));
        return m.tokenizer().encode(text);
      },
      py::arg("text"), py::kw_only(), py::arg("chat") = false, py::arg("system") = "", py::arg("bos") = true,
      "the ids generate() feeds for this prompt: bos + text, or with chat=True the ChatML user turn");
  def_checking_keywords(
      model, "detokenize",
      [](const PythonModel& m, const std::vector<int>& ids, bool skip_special_tokens) {
        // Bytes that are not UTF-8 (ids that stop inside a character) become U+FFFD, as in generate's texts.
        const std::string bytes = m.tokenizer().decode(ids, skip_special_tokens);
        return py::reinterpret_steal<py::str>(
            PyUnicode_DecodeUTF8(bytes.data(), static_cast<py::ssize_t>(bytes.size()), "replace"));
      },
      py::arg("ids"), py::kw_only(), py::arg("skip_special_tokens") = false,
      "the text of token ids (a str; bytes that are not UTF-8 become U+FFFD)");
  def_checking_keywords(
      model, "chat_prompt",
      [](const PythonModel& m, const py::list& messages, const py::object& tools, bool add_generation_prompt,
         bool thinking) {
        return m.encode_messages(to_json(messages, "messages"), tools.is_none() ? nullptr : to_json(tools, "tools"),
                                 add_generation_prompt, thinking);
      },
      py::arg("messages"), py::kw_only(), py::arg("tools") = py::none(), py::arg("add_generation_prompt") = true,
      py::arg("thinking") = false,
      "ids of an OpenAI messages list ([{'role': …, 'content': …}, …], tool calls and results too) in the model's "
      "chat template, with `tools` (OpenAI's array) offered");
  def_checking_keywords(
      model, "new_cache",
      [](std::shared_ptr<PythonModel> m, int capacity) {
        // Beyond the context a cache cannot be used; the bound also keeps new_cache(capacity=2**24) from
        // reserving 32 GiB (the kernel killed the process before it).
        const int context = m->config().max_position_embeddings;
        if (capacity < 1 || capacity > context)
          throw Error("capacity must be in [1, " + std::to_string(context) + "] (the model's context)");
        return std::make_shared<PythonCache>(std::move(m), capacity);
      },
      py::arg("capacity") = 64, "an empty KV cache for forward(ids, cache=…); it grows as needed");
  def_checking_keywords(model, "forward", &forward, py::arg("ids"), py::kw_only(), py::arg("cache") = py::none(),
                        "logits of every fed position, numpy float32 [len(ids), vocab]");
  def_generate_like(
      model, "generate",
      [](std::shared_ptr<PythonModel> m, RunRequest run) {
        const py::gil_scoped_release release;
        return Result{m->generate(run)};
      },
      "MiniMind's generate: num_return_sequences rows of the prompt; a GenerateResult (`minigen generate --json`)");
  def_generate_like(
      model, "stream",
      [](std::shared_ptr<PythonModel> m, RunRequest run) {
        if (run.num_return_sequences != 1) throw Error("stream() decodes one row: num_return_sequences must be 1");
        m->check_run(run);  // raise here, not at the first piece
        return std::make_unique<TextStream>(std::move(m), std::move(run));
      },
      "generate() one row, yielding text pieces as they are decoded (as the CLI prints them)");
}
