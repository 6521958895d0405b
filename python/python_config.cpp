#include "python_config.h"

#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "unknown_keyword.h"

namespace py = pybind11;

namespace minigen::python {
namespace {

std::vector<std::string> field_names(const ConfigView& config) {
  std::vector<std::string> names;
  for (const auto& [name, value] : config.fields) names.push_back(name.cast<std::string>());
  return names;
}

// A missing field is an AttributeError or a KeyError, as Python expects (hasattr, getattr with a default, `in`),
// naming the nearest field: hidden is hidden_size, num_layers is layers.
std::string missing_field(const ConfigView& config, const std::string& name) {
  std::string message = "minigen.ModelConfig has no field '" + name + "'";
  if (const auto nearest = nearest_name(name, field_names(config))) message += "; did you mean '" + *nearest + "'?";
  return message;
}

}  // namespace

void define_model_config(py::module_& module) {
  py::class_<ConfigView>(module, "ModelConfig",
                         "the model's shape: `minigen info --json`'s fields and config.json's names (hidden_size, "
                         "num_hidden_layers, num_attention_heads, num_key_value_heads, max_position_embeddings, ...), "
                         "as attributes and as a dict (dict(config), config.to_dict(), config['layers'])")
      .def("__getattr__",
           [](const ConfigView& config, const std::string& name) -> py::object {
             if (!config.fields.contains(name)) throw py::attribute_error(missing_field(config, name));
             return config.fields[name.c_str()];
           })
      .def("__getitem__",
           [](const ConfigView& config, const std::string& name) -> py::object {
             if (!config.fields.contains(name)) throw py::key_error(missing_field(config, name));
             return config.fields[name.c_str()];
           })
      .def("__contains__",
           [](const ConfigView& config, const std::string& name) { return config.fields.contains(name); })
      .def("__iter__", [](const ConfigView& config) { return py::iter(config.fields); })
      .def("__len__", [](const ConfigView& config) { return config.fields.size(); })
      .def("__dir__",
           [](const ConfigView& config) {
             std::vector<std::string> names = field_names(config);
             names.insert(names.end(), {"keys", "to_dict"});
             return names;
           })
      .def("keys", [](const ConfigView& config) { return config.fields.attr("keys")(); })
      .def(
          "to_dict", [](const ConfigView& config) { return py::dict(config.fields.attr("copy")()); },
          "the fields as a new dict")
      .def("__eq__",
           [](const ConfigView& config, const py::object& other) {
             if (py::isinstance<ConfigView>(other)) return config.fields.equal(other.cast<const ConfigView&>().fields);
             return config.fields.equal(other);
           })
      .def("__repr__", [](const ConfigView& config) {
        return "minigen.ModelConfig(" + py::repr(config.fields).cast<std::string>() + ")";
      });
}

}  // namespace minigen::python
