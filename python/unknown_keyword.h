#pragma once
// The message for a keyword argument a function of the module does not take: the nearest accepted name, or for the
// names Hugging Face's and OpenAI's users type (max_length, do_sample, n...) what minigen calls them. Plain C++: the
// bindings (keyword_check.h) call it with the names of their py::arg list.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace minigen::python {

// The accepted name closest to `name` (a typo, or a prefix such as "temp"), or nothing when none is close.
std::optional<std::string> nearest_name(std::string_view name, const std::vector<std::string>& accepted);

// "Model.generate(): unknown keyword 'temprature'; did you mean 'temperature'?". `value_is_true` is the value's
// truth (do_sample=False and do_sample=True call for different advice).
std::string unknown_keyword_message(std::string_view function, std::string_view keyword, bool value_is_true,
                                    const std::vector<std::string>& accepted);

}  // namespace minigen::python
