// The Python module `minigen` (README.md, "Python"): pybind11 bindings of python_model.h. Every call that computes
// releases the GIL; minigen::Error becomes minigen.Error with the message the CLI prints.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <climits>
#include <cstring>

#include "core/error.h"
#include "python_model.h"
#include "python_stream.h"

namespace py = pybind11;
using namespace py::literals;

namespace minigen::python {
namespace {

// `minigen generate --json`'s object as a Python dict, and its fields as attributes (same names as the JSON).
struct Result {
  nlohmann::json summary;
};

py::object to_python(const nlohmann::json& value) { return py::module_::import("json").attr("loads")(value.dump()); }

py::list per_sequence(const Result& result, const char* field) {
  py::list out;
  for (const nlohmann::json& sequence : result.summary["sequences"]) out.append(to_python(sequence[field]));
  return out;
}

Prompt to_prompt(const py::object& prompt, bool chat, const std::string& system) {
  Prompt out;
  out.chat = chat;
  out.system = system;
  if (py::isinstance<py::str>(prompt)) {
    out.text = prompt.cast<std::string>();
  } else {
    if (chat) throw Error("chat=True takes the user message as a str, not token ids");
    out.ids = prompt.cast<std::vector<int>>();
    if (out.ids.empty()) throw Error("give a prompt: a non-empty text or a list of token ids");
  }
  return out;
}

// The keyword arguments generate() and stream() share, as GenerateOptions; the defaults are SamplingParams{}'s and
// the CLI's (-n 256), so that a call without them is `minigen generate` without flags.
struct GenerateArguments {
  std::vector<int> prompt;
  GenerateOptions options;
  int num_return_sequences = 1;
};

GenerateArguments generate_arguments(const PythonModel& model, const py::object& prompt, bool chat,
                                     const std::string& system, int max_new_tokens, float temperature, float top_p,
                                     int top_k, float min_p, float repetition_penalty, bool greedy, uint64_t seed,
                                     bool use_cache, bool ignore_eos, int num_return_sequences) {
  GenerateArguments out;
  out.prompt = model.encode(to_prompt(prompt, chat, system));
  out.options.max_new_tokens = max_new_tokens;
  out.options.use_cache = use_cache;
  out.options.ignore_eos = ignore_eos;
  out.options.kv_dtype = model.kv_dtype();
  SamplingParams& sampling = out.options.sampling;
  sampling.temperature = temperature;
  sampling.top_p = top_p;
  sampling.top_k = top_k;
  sampling.min_p = min_p;
  sampling.repetition_penalty = repetition_penalty;
  sampling.greedy = greedy;
  sampling.seed = seed;
  out.num_return_sequences = num_return_sequences;
  return out;
}

template <class Class, class Function>
void def_generate_like(Class& cls, const char* name, Function function, const char* doc) {
  const SamplingParams defaults;
  cls.def(name, function, py::arg("prompt"), py::kw_only(), py::arg("chat") = false, py::arg("system") = "",
          py::arg("max_new_tokens") = 256, py::arg("temperature") = defaults.temperature,
          py::arg("top_p") = defaults.top_p, py::arg("top_k") = defaults.top_k, py::arg("min_p") = defaults.min_p,
          py::arg("repetition_penalty") = defaults.repetition_penalty, py::arg("greedy") = defaults.greedy,
          py::arg("seed") = defaults.seed, py::arg("use_cache") = true, py::arg("ignore_eos") = false,
          py::arg("num_return_sequences") = 1, doc);
}

std::vector<ChatMessage> to_messages(const py::list& messages) {
  std::vector<ChatMessage> out;
  for (const py::handle& item : messages) {
    const py::dict message = item.cast<py::dict>();
    if (!message.contains("role") || !message.contains("content"))
      throw Error("each message needs a \"role\" and a \"content\"");
    ChatMessage one{message["role"].cast<std::string>(), message["content"].cast<std::string>()};
    if (message.contains("reasoning_content")) one.reasoning_content = message["reasoning_content"].cast<std::string>();
    out.push_back(std::move(one));
  }
  return out;
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
  py::register_exception<Error>(module, "Error");

  py::class_<Result> result(module, "GenerateResult",
                            "what `minigen generate --json` prints: .summary, and its fields");
  result.def_property_readonly("summary", [](const Result& r) { return to_python(r.summary); })
      .def_property_readonly("sequences", [](const Result& r) { return to_python(r.summary["sequences"]); })
      .def_property_readonly("texts", [](const Result& r) { return per_sequence(r, "text"); })
      .def_property_readonly("token_ids", [](const Result& r) { return per_sequence(r, "token_ids"); })
      .def_property_readonly("finish_reasons", [](const Result& r) { return per_sequence(r, "finish_reason"); })
      .def("__repr__", [](const Result& r) { return "minigen.GenerateResult(" + r.summary.dump() + ")"; });
  for (const char* field :
       {"model", "prompt_tokens", "forward_calls", "forward_tokens", "kv_cache_bytes", "kv_cache_bytes_allocated",
        "weights", "weight_bytes", "resident_bytes", "ttft_ms", "itl_ms", "total_ms", "settings"}) {
    result.def_property_readonly(field, [field](const Result& r) { return to_python(r.summary[field]); });
  }

  py::class_<PythonCache, std::shared_ptr<PythonCache>>(
      module, "Cache", "one sequence's KV cache: Model.forward(ids, cache=c) appends K and V of ids and advances it")
      .def_property_readonly("length", &PythonCache::length, "tokens held (the next position)")
      .def_property_readonly("bytes_used", &PythonCache::bytes_used,
                             "length · 2 · layers · kv_heads · head_dim · bytes")
      .def_property_readonly("bytes_allocated", &PythonCache::bytes_allocated)
      .def("truncate", &PythonCache::truncate, py::arg("length"), "keep the first `length` positions")
      .def("__len__", &PythonCache::length);

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

  py::class_<PythonModel, std::shared_ptr<PythonModel>> model(module, "Model");
  model
      .def(py::init([](const std::string& path, const std::string& weights, int threads, int heads,
                       const std::string& tokenizer, bool yarn, const std::string& kv_dtype) {
             // The CLI's ranges for --threads and --heads.
             if (threads < 0 || threads > 1024) throw Error("threads must be in [0, 1024] (0: one per core)");
             if (heads < 1 || heads > 1024) throw Error("heads must be in [1, 1024]");
             cli::ModelFlags flags;
             flags.model_path = path;
             flags.weights = weights;
             flags.threads = threads;
             flags.num_q_heads = heads;
             flags.tokenizer_path = tokenizer;
             flags.yarn = yarn;
             flags.kv_dtype = kv_dtype;
             const py::gil_scoped_release release;
             return std::make_shared<PythonModel>(flags);
           }),
           py::arg("path"), py::kw_only(), py::arg("weights") = "", py::arg("threads") = 0, py::arg("heads") = 8,
           py::arg("tokenizer") = "", py::arg("yarn") = false, py::arg("kv_dtype") = "f32",
           "an HF directory or a MiniMind .pth, loaded as `minigen -m PATH --weights … --threads …` loads it")
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
      .def_property_readonly("vocab_size", [](const PythonModel& m) { return m.config().vocab_size; })
      .def_property_readonly("bos_token_id", [](const PythonModel& m) { return m.config().bos_token_id; })
      .def_property_readonly("eos_token_id", [](const PythonModel& m) { return m.config().eos_token_id; })
      .def_property_readonly("kv_bytes_per_token",
                             [](const PythonModel& m) { return m.config().kv_bytes_per_token(m.kv_dtype()); })
      .def(
          "tokenize",
          [](const PythonModel& m, const std::string& text, bool chat, const std::string& system, bool bos) {
            if (chat || bos) return m.encode(to_prompt(py::str(text), chat, system));
            return m.tokenizer().encode(text);
          },
          py::arg("text"), py::kw_only(), py::arg("chat") = false, py::arg("system") = "", py::arg("bos") = true,
          "the ids generate() feeds for this prompt: bos + text, or with chat=True the ChatML user turn")
      .def(
          "detokenize",
          [](const PythonModel& m, const std::vector<int>& ids, bool skip_special_tokens) {
            return py::bytes(m.tokenizer().decode(ids, skip_special_tokens)).attr("decode")("utf-8", "replace");
          },
          py::arg("ids"), py::kw_only(), py::arg("skip_special_tokens") = false)
      .def(
          "chat_prompt",
          [](const PythonModel& m, const py::list& messages, bool add_generation_prompt, bool thinking) {
            return m.encode_messages(to_messages(messages), add_generation_prompt, thinking);
          },
          py::arg("messages"), py::kw_only(), py::arg("add_generation_prompt") = true, py::arg("thinking") = false,
          "ids of [{'role': …, 'content': …}, …] in the model's chat template")
      .def(
          "new_cache",
          [](std::shared_ptr<PythonModel> m, int capacity) {
            if (capacity < 1) throw Error("capacity must be at least 1");
            return std::make_shared<PythonCache>(std::move(m), capacity);
          },
          py::arg("capacity") = 64, "an empty KV cache for forward(ids, cache=…); it grows as needed")
      .def("forward", &forward, py::arg("ids"), py::kw_only(), py::arg("cache") = py::none(),
           "logits of every fed position, numpy float32 [len(ids), vocab]");
  def_generate_like(
      model, "generate",
      [](PythonModel& m, const py::object& prompt, bool chat, const std::string& system, int max_new_tokens,
         float temperature, float top_p, int top_k, float min_p, float repetition_penalty, bool greedy, uint64_t seed,
         bool use_cache, bool ignore_eos, int num_return_sequences) {
        GenerateArguments call =
            generate_arguments(m, prompt, chat, system, max_new_tokens, temperature, top_p, top_k, min_p,
                               repetition_penalty, greedy, seed, use_cache, ignore_eos, num_return_sequences);
        const py::gil_scoped_release release;
        return Result{m.generate(call.prompt, call.num_return_sequences, call.options)};
      },
      "MiniMind's generate: num_return_sequences rows of the prompt; a GenerateResult (`minigen generate --json`)");
  def_generate_like(
      model, "stream",
      [](std::shared_ptr<PythonModel> m, const py::object& prompt, bool chat, const std::string& system,
         int max_new_tokens, float temperature, float top_p, int top_k, float min_p, float repetition_penalty,
         bool greedy, uint64_t seed, bool use_cache, bool ignore_eos, int num_return_sequences) {
        if (num_return_sequences != 1) throw Error("stream() decodes one row: num_return_sequences must be 1");
        GenerateArguments call =
            generate_arguments(*m, prompt, chat, system, max_new_tokens, temperature, top_p, top_k, min_p,
                               repetition_penalty, greedy, seed, use_cache, ignore_eos, num_return_sequences);
        m->check_run(call.prompt, 1, call.options);  // raise here, not at the first piece
        return std::make_unique<TextStream>(std::move(m), std::move(call.prompt), std::move(call.options));
      },
      "generate() one row, yielding text pieces as they are decoded (as the CLI prints them)");
}
