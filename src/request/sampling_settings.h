#pragma once
// Sampling settings as every frontend checks them: SamplingParams::validate's rules (sampling/sampling_params.h),
// with an out-of-range value raised as a RequestError on the parameter's own name ("top_p", "logit_bias") and the
// problem alone as its message ("must be in (0, 1], got 1.5"); each frontend writes the name in its own syntax in
// front of it (--top-p, 'top_p', top_p). Each frontend's syntax (flags, JSON fields, keyword arguments) fills the
// SamplingParams; their defaults are SamplingParams{}'s.
#include "request/request_error.h"
#include "sampling/sampling_params.h"

namespace minigen {

void check_sampling_settings(const SamplingParams& params);

// Whether the error check_sampling_settings raised is the temperature's: every frontend then adds how it asks for
// greedy decoding instead (a temperature of 0 is not a sampling temperature).
bool is_temperature_error(const RequestError& error);

}  // namespace minigen
