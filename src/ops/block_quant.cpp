#include "ops/block_quant.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.h"
#include "ops/weight_type.h"

namespace minigen {
namespace {

// Rounds to nearest, ties to even (std::nearbyint in the default rounding mode), then clamps.
// A NaN (an activation that already overflowed) gets code 0, so the integer sums stay defined.
int32_t code_of(float ratio, int low, int high) {
  if (std::isnan(ratio)) return 0;
  const float rounded = std::nearbyint(ratio);
  return static_cast<int32_t>(std::clamp(rounded, static_cast<float>(low), static_cast<float>(high)));
}

void check_finite(float value) {
  if (!std::isfinite(value)) throw Error("cannot quantize a weight that is not finite (" + std::to_string(value) + ")");
}

// The scale as stored: fp16. A block whose scale overflows fp16 cannot be stored; weights that large do not occur
// in trained models, so it is an error rather than a silent clamp.
float stored_scale(float scale, uint16_t& bits) {
  bits = float_to_f16(scale);
  const float stored = f16_to_float(bits);
  if (std::isinf(stored)) throw Error("a weight block's scale (" + std::to_string(scale) + ") does not fit in fp16");
  return stored;
}

}  // namespace

uint16_t quantize_q8_block(const float* values, int count, int8_t* codes) {
  float absmax = 0.0f;
  for (int i = 0; i < count; ++i) {
    check_finite(values[i]);
    absmax = std::max(absmax, std::fabs(values[i]));
  }
  uint16_t bits;
  const float d = stored_scale(absmax / 127.0f, bits);
  for (int i = 0; i < kQuantBlock; ++i)
    codes[i] = static_cast<int8_t>(i < count && d != 0.0f ? code_of(values[i] / d, -127, 127) : 0);
  return bits;
}

uint16_t quantize_q4_block(const float* values, int count, int8_t* codes) {
  float extreme = 0.0f;
  for (int i = 0; i < count; ++i) {
    check_finite(values[i]);
    if (std::fabs(values[i]) > std::fabs(extreme)) extreme = values[i];
  }
  uint16_t bits;
  const float d = stored_scale(extreme / -8.0f, bits);
  for (int i = 0; i < kQuantBlock; ++i)
    codes[i] = static_cast<int8_t>(i < count && d != 0.0f ? code_of(values[i] / d, -8, 7) : 0);
  return bits;
}

void prepare_quantized_rows(QuantizedRows& out, int rows, int in_features, ActivationCodes codes) {
  out.rows = rows;
  out.blocks = quant_blocks(in_features);
  out.codes = codes;
  const std::size_t needed = out.row_offset(rows);
  if (needed > out.capacity) {
    out.int8_values = hwy::AllocateAligned<int8_t>(needed);
    out.int16_values = hwy::AllocateAligned<int16_t>(needed);
    if (!out.int8_values || !out.int16_values) throw Error("out of memory quantizing activations");
    out.capacity = needed;
  }
  out.scales.resize(static_cast<std::size_t>(rows) * out.blocks);
  out.sums.resize(out.scales.size());
}

void quantize_rows(QuantizedRows& out, const float* x, int in_features, int row_begin, int row_end) {
  const int top = out.codes == ActivationCodes::kInt8 ? 127 : 32767;
  for (int r = row_begin; r < row_end; ++r) {
    const float* row = x + static_cast<std::size_t>(r) * in_features;
    for (int b = 0; b < out.blocks; ++b) {
      const int first = b * kQuantBlock;
      const int count = std::min(kQuantBlock, in_features - first);
      float absmax = 0.0f;
      for (int i = 0; i < count; ++i) absmax = std::max(absmax, std::fabs(row[first + i]));
      const float d = absmax / static_cast<float>(top);
      const bool usable = d != 0.0f && std::isfinite(d);
      int32_t sum = 0;
      for (int i = 0; i < kQuantBlock; ++i) {
        const int32_t code = i < count && usable ? code_of(row[first + i] / d, -top, top) : 0;
        if (out.codes == ActivationCodes::kInt8) {
          out.int8_values[out.row_offset(r) + first + i] = static_cast<int8_t>(code);
        }
        out.int16_values[out.row_offset(r) + first + i] = static_cast<int16_t>(code);
        sum += code;
      }
      out.scales[static_cast<std::size_t>(r) * out.blocks + b] = d;
      out.sums[static_cast<std::size_t>(r) * out.blocks + b] = sum;
    }
  }
}

}  // namespace minigen
