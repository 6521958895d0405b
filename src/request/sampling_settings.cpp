#include "request/sampling_settings.h"

#include <string>

namespace minigen {

void check_sampling_settings(const SamplingParams& params) {
  try {
    params.validate();
  } catch (const InvalidSamplingParam& invalid) {
    throw RequestError(std::string(sampling_param_name(invalid.param())), invalid.problem());
  }
}

bool is_temperature_error(const RequestError& error) {
  return error.field() == sampling_param_name(SamplingParam::kTemperature);
}

}  // namespace minigen
