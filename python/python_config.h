#pragma once
// Model.config: the model's shape as attributes (m.config.hidden_size, as in Hugging Face) and as a dict
// (dict(m.config), m.config.to_dict(), m.config["layers"]). The fields are PythonModel::config_fields()'s.
#include <pybind11/pybind11.h>

namespace minigen::python {

struct ConfigView {
  pybind11::dict fields;
};

// Defines minigen.ModelConfig.
void define_model_config(pybind11::module_& module);

}  // namespace minigen::python
