#pragma once
// Bindings that answer an unknown keyword argument with one minigen.Error naming it and the nearest accepted one
// (unknown_keyword.h), instead of pybind11's list of every overload's signature. The typed function keeps pybind11's
// conversions, checks and signature (help() shows it); the method the class gets takes (*args, **kwargs), checks the
// keyword names against the typed function's py::arg list (written once) and calls it.
#include <pybind11/pybind11.h>

#include <algorithm>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/error.h"
#include "unknown_keyword.h"

namespace minigen::python {

namespace keyword_check_detail {

inline void add_name(std::vector<std::string>& names, const pybind11::arg& arg) { names.emplace_back(arg.name); }
template <class Extra>
requires(!std::is_base_of_v<pybind11::arg, Extra>) void add_name(std::vector<std::string>&, const Extra&) {
}  // py::kw_only(), the docstring

}  // namespace keyword_check_detail

// The names of a binding's py::arg list.
template <class... Extra>
std::vector<std::string> keyword_names(const Extra&... extra) {
  std::vector<std::string> names;
  (keyword_check_detail::add_name(names, extra), ...);
  return names;
}

// Raises minigen.Error for the first keyword of `keywords` (in the caller's order) that is not in `accepted`, the
// message naming `function` ("Model.generate()").
inline void check_keywords(const std::string& function, const std::vector<std::string>& accepted,
                           const pybind11::kwargs& keywords) {
  for (const auto& [keyword, value] : keywords) {
    const std::string name = keyword.cast<std::string>();
    if (std::find(accepted.begin(), accepted.end(), name) != accepted.end()) continue;
    const bool value_is_true = PyObject_IsTrue(value.ptr()) == 1;
    PyErr_Clear();  // a value without a truth (-1) counts as false
    throw Error(unknown_keyword_message(function, name, value_is_true, accepted));
  }
}

// cls.def(name, function, extra...) with the keyword check; the message names the method as Class.name().
template <class Class, class Function, class... Extra>
void def_checking_keywords(Class& cls, const char* name, Function function, const Extra&... extra) {
  namespace py = pybind11;
  const py::object typed = py::cpp_function(std::move(function), py::name(name), py::is_method(cls), extra...);
  const std::string qualified = cls.attr("__name__").template cast<std::string>() + "." + name + "()";
  const std::string doc =
      typed.attr("__doc__").template cast<std::string>();  // the typed signature, then `extra`'s doc
  py::options options;  // the doc already opens with the typed signature: no second one for (*args, **kwargs)
  options.disable_function_signatures();
  cls.def(
      name,
      [typed, qualified, accepted = keyword_names(extra...)](const py::object& self, const py::args& args,
                                                             const py::kwargs& keywords) {
        check_keywords(qualified, accepted, keywords);
        return typed(self, *args, **keywords);
      },
      doc.c_str());
}

// cls.def(py::init(factory), extra...) with the keyword check; the message names the class as Class(), and help()
// shows the factory's signature under the class's name.
template <class Class, class Factory, class... Extra>
void def_init_checking_keywords(Class& cls, Factory factory, const Extra&... extra) {
  namespace py = pybind11;
  using Holder = typename Class::holder_type;
  const std::string class_name = cls.attr("__name__").template cast<std::string>();
  const py::object typed = py::cpp_function(std::move(factory), py::name(class_name.c_str()), extra...);
  const std::string doc = typed.attr("__doc__").template cast<std::string>();
  py::options options;
  options.disable_function_signatures();
  cls.def(py::init([typed, qualified = class_name + "()", accepted = keyword_names(extra...)](
                       const py::args& args, const py::kwargs& keywords) {
            check_keywords(qualified, accepted, keywords);
            return typed(*args, **keywords).template cast<Holder>();
          }),
          doc.c_str());
}

}  // namespace minigen::python
