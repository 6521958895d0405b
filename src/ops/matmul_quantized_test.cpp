#include "ops/matmul_quantized.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "ops/block_quant.h"
#include "ops/matmul.h"
#include "ops/matmul_quantized_avx_vnni.h"
#include "ops/matmul_quantized_vnni.h"
#include "ops/ops_test_util.h"
#include "ops/simd_targets_test_util.h"

namespace minigen {
namespace {

using testing::bitwise_equal;
using testing::pseudo_random_vector;

TEST(BlockQuant, Q8RoundsToNearestEvenWithTheAbsmaxScale) {
  std::vector<float> values = {127.0f, -3.5f, 2.5f, 0.4f, -0.6f, -127.0f};  // absmax 127: d = 1 exactly
  int8_t codes[kQuantBlock];
  const uint16_t scale = quantize_q8_block(values.data(), static_cast<int>(values.size()), codes);
  EXPECT_EQ(f16_to_float(scale), 1.0f);
  EXPECT_EQ(std::vector<int>(codes, codes + 7), (std::vector<int>{127, -4, 2, 0, -1, -127, 0}));  // 0: padding
  const float zeros[3] = {0, 0, 0};
  EXPECT_EQ(quantize_q8_block(zeros, 3, codes), 0);
  EXPECT_EQ(codes[0], 0);
  const float bad[2] = {1.0f, std::numeric_limits<float>::infinity()};
  EXPECT_THROW(quantize_q8_block(bad, 2, codes), std::exception);
}

TEST(BlockQuant, Q4MapsTheLargestMagnitudeToMinusEight) {
  std::vector<float> values = {-8.0f, 3.5f, 2.5f, 7.0f, 0.49f};  // extreme −8: d = 1
  int8_t codes[kQuantBlock];
  EXPECT_EQ(f16_to_float(quantize_q4_block(values.data(), 5, codes)), 1.0f);
  EXPECT_EQ(std::vector<int>(codes, codes + 5), (std::vector<int>{-8, 4, 2, 7, 0}));
  values = {8.0f, 3.5f, -8.0f};  // extreme +8: d = −1, and −8 / −1 = 8 clamps to 7
  EXPECT_EQ(f16_to_float(quantize_q4_block(values.data(), 3, codes)), -1.0f);
  EXPECT_EQ(std::vector<int>(codes, codes + 3), (std::vector<int>{-8, -4, 7}));
}

TEST(BlockQuant, ActivationRowsKeepAnFp32ScaleAndTheCodeSums) {
  std::vector<float> x(40, 0.0f);  // two blocks: 32 + 8 (the rest padding)
  x[0] = 2.54f;                    // absmax → code 127 (int8) or 32767 (int16)
  x[1] = -1.27f;  // half of it: −63.5 → −64 (int8: a tie, to even); −16383.5 → −16384 (int16)
  x[33] = 1.0f;   // second block: its only value
  for (ActivationCodes codes : {ActivationCodes::kInt8, ActivationCodes::kInt16}) {
    const int top = codes == ActivationCodes::kInt8 ? 127 : 32767;
    QuantizedRows rows;
    prepare_quantized_rows(rows, 1, 40, codes);
    quantize_rows(rows, x.data(), 40, 0, 1);
    EXPECT_EQ(rows.blocks, 2);
    EXPECT_EQ(rows.scale(0, 0), 2.54f / static_cast<float>(top));
    EXPECT_EQ(rows.code(0, 0), top);
    EXPECT_EQ(rows.code(0, 1), static_cast<int>(std::nearbyint(-1.27f / (2.54f / static_cast<float>(top)))));
    EXPECT_EQ(rows.code(0, 1), codes == ActivationCodes::kInt8 ? -64 : -16384);
    EXPECT_EQ(rows.sum(0, 0), top + rows.code(0, 1));
    EXPECT_EQ(rows.code(0, 33), top);
    EXPECT_EQ(rows.code(0, 63), 0);
    EXPECT_EQ(rows.sum(0, 1), top);
  }
}

TEST(PackedMatrix, QuantizedCodesAndScalesRoundTrip) {
  const int out = 19, in = 70;  // a ragged panel and a ragged block
  const auto weight = pseudo_random_vector(static_cast<std::size_t>(out) * in, 9);
  for (WeightType type : {WeightType::kQ8, WeightType::kQ4}) {
    const PackedMatrix packed(weight.data(), out, in, type);
    EXPECT_EQ(packed.blocks(), 3);
    // 2 panels × 3 blocks × (codes + 16 fp16 scales): 544 bytes per group for q8, 288 for q4.
    EXPECT_EQ(packed.bytes(), 2u * 3 * (type == WeightType::kQ8 ? 544 : 288));
    int8_t codes[kQuantBlock];
    for (int o : {0, 7, 15, 16, 18}) {
      for (int b = 0; b < 3; ++b) {
        const int count = std::min(kQuantBlock, in - b * kQuantBlock);
        const float* source = weight.data() + static_cast<std::size_t>(o) * in + b * kQuantBlock;
        const uint16_t scale =
            type == WeightType::kQ8 ? quantize_q8_block(source, count, codes) : quantize_q4_block(source, count, codes);
        EXPECT_EQ(packed.block_scale(o, b), f16_to_float(scale));
        for (int k = 0; k < count; ++k) {
          ASSERT_EQ(packed.code(o, b * kQuantBlock + k), codes[k]) << o << " " << b << " " << k;
          EXPECT_EQ(packed.at(o, b * kQuantBlock + k), f16_to_float(scale) * codes[k]);
        }
      }
      std::vector<float> row(in);
      packed.row(o, row.data());
      for (int k = 0; k < in; ++k) ASSERT_EQ(row[k], packed.at(o, k)) << o << " " << k;  // row() walks per block
      // Quantization error is at most half a step (d / 2), except at q4's clamped end: the extreme maps to −8,
      // and a weight of the opposite sign near its magnitude (+8) is clamped to 7, a whole step off.
      for (int k = 0; k < in; ++k) {
        const bool clamped = type == WeightType::kQ4 && packed.code(o, k) == 7;
        EXPECT_LE(std::fabs(row[k] - weight[static_cast<std::size_t>(o) * in + k]),
                  std::fabs(packed.block_scale(o, k / kQuantBlock)) * (clamped ? 1.0f : 0.5f) + 1e-7f);
      }
    }
  }
}

struct QuantizedShape {
  int rows, in, out;
};

// Every (weights, activations) pair a product runs: q8 × int16 (the default), q8 × int8 (W8A8), q4 × int8.
struct QuantizedKind {
  WeightType type;
  ActivationCodes codes;
};
constexpr QuantizedKind kQuantizedKinds[] = {{WeightType::kQ8, ActivationCodes::kInt16},
                                             {WeightType::kQ8, ActivationCodes::kInt8},
                                             {WeightType::kQ4, ActivationCodes::kInt8}};

PackedMatrix packed_as(const std::vector<float>& weight, int out, int in, QuantizedKind kind) {
  PackedMatrix packed(weight.data(), out, in, kind.type);
  packed.use_activations(kind.codes);
  return packed;
}

std::string kind_name(QuantizedKind kind) {
  return std::string(weight_type_name(kind.type)) + " × " + std::string(activation_codes_name(kind.codes));
}

class MatmulQuantizedSimd : public testing::EverySimdTarget {};

// Every kernel variant of the current target: where the CPU has the VNNI instructions, the VNNI kernel (AVX-512
// VNNI on the AVX-512 target, AVX-VNNI on the AVX2 one) and the plain one.
std::vector<bool> vnni_settings() {
  if (!avx512_vnni_kernel_enabled() && !avx_vnni_kernel_enabled()) return {false};
  return {true, false};
}

// Turns both VNNI kernels on (where the CPU has them) or off for its lifetime.
class VnniKernels {
 public:
  explicit VnniKernels(bool enabled)
      : avx512_(set_avx512_vnni_kernel_for_test(enabled)), avx_(set_avx_vnni_kernel_enabled(enabled)) {}
  ~VnniKernels() {
    set_avx512_vnni_kernel_for_test(avx512_);
    set_avx_vnni_kernel_enabled(avx_);
  }
  VnniKernels(const VnniKernels&) = delete;
  VnniKernels& operator=(const VnniKernels&) = delete;

 private:
  const bool avx512_, avx_;
};

void expect_kernel_matches_reference(ThreadPool& pool, bool vnni) {
  for (const QuantizedShape shape :
       {QuantizedShape{1, 1, 1}, QuantizedShape{1, 32, 16}, QuantizedShape{2, 33, 17}, QuantizedShape{3, 64, 40},
        QuantizedShape{4, 100, 48}, QuantizedShape{5, 259, 67}, QuantizedShape{7, 64, 16}, QuantizedShape{8, 128, 32},
        QuantizedShape{9, 768, 32}, QuantizedShape{37, 96, 33}, QuantizedShape{70, 160, 50}}) {
    for (const QuantizedKind kind : kQuantizedKinds) {
      const auto x = pseudo_random_vector(static_cast<std::size_t>(shape.rows) * shape.in, 3);
      const auto weight = pseudo_random_vector(static_cast<std::size_t>(shape.out) * shape.in, 4);
      const PackedMatrix packed = packed_as(weight, shape.out, shape.in, kind);
      for (MatmulOutput mode : {MatmulOutput::kStore, MatmulOutput::kAddTo}) {
        auto simd = pseudo_random_vector(static_cast<std::size_t>(shape.rows) * shape.out, 5);
        auto reference = simd;
        matmul(simd.data(), x.data(), packed, shape.rows, pool, mode);
        matmul_reference_quantized(reference.data(), x.data(), packed, shape.rows, mode);
        EXPECT_TRUE(bitwise_equal(simd.data(), reference.data(), simd.size()))
            << shape.rows << "×" << shape.in << "→" << shape.out << " " << kind_name(kind)
            << (vnni ? " (VNNI kernel)" : "");
      }
    }
  }
}

// The kernel, in every target this CPU runs, against the scalar reference, bit for bit: every row tile (1–8 and
// beyond, across the 32-row blocks), ragged panels, in_features that are not a multiple of 32, both output modes.
TEST_P(MatmulQuantizedSimd, MatchesScalarReferenceBitForBit) {
  ThreadPool pool(2);
  for (const bool vnni : vnni_settings()) {
    const VnniKernels kernels(vnni);
    expect_kernel_matches_reference(pool, vnni);
  }
}

void expect_ties_and_nan_as_the_scalar_loop() {
  ThreadPool pool(1);
  const int in = 96;
  const auto weight = pseudo_random_vector(static_cast<std::size_t>(16) * in, 21);
  for (const QuantizedKind kind : kQuantizedKinds) {
    const float top = kind.codes == ActivationCodes::kInt16 ? 32767.0f : 127.0f;
    std::vector<float> x(in, 0.0f);
    x[0] = top;  // d = 1 in the first block: 2.5 → 2, 3.5 → 4, −0.5 → −0
    x[1] = 2.5f;
    x[2] = 3.5f;
    x[3] = -0.5f;
    x[40] = std::numeric_limits<float>::quiet_NaN();  // second block
    x[41] = 1.0f;
    x[70] = -7.25f;  // third block
    const PackedMatrix packed = packed_as(weight, 16, in, kind);
    std::vector<float> simd(16), reference(16);
    matmul(simd.data(), x.data(), packed, 1, pool);
    matmul_reference_quantized(reference.data(), x.data(), packed, 1);
    EXPECT_TRUE(bitwise_equal(simd.data(), reference.data(), 16)) << kind_name(kind);
    for (float value : simd) EXPECT_TRUE(std::isfinite(value));
  }
}

// The vectorized activation quantization against the scalar one: ties (x / d = k + ½ round to even) and a NaN
// (the scalar max skips it and its code is 0) give the same codes, so the same bits.
TEST_P(MatmulQuantizedSimd, ActivationTiesAndNanQuantizeAsTheScalarLoopDoes) {
  for (const bool vnni : vnni_settings()) {
    const VnniKernels kernels(vnni);
    expect_ties_and_nan_as_the_scalar_loop();
  }
}

// A hand-checked element: one block, weights with d = 1 (absmax 127), activations with absmax 127 (d_x = 1).
TEST(MatmulQuantized, HandComputedIntegerDot) {
  ThreadPool pool(1);
  std::vector<float> weight(32, 0.0f), x(32, 0.0f);
  weight[0] = 127;
  weight[1] = -2;
  weight[31] = 5;
  x[0] = 1;
  x[1] = 127;
  x[31] = -3;
  float out = 0;
  matmul(&out, x.data(), PackedMatrix(weight.data(), 1, 32, WeightType::kQ8), 1, pool);
  // d_w = 1 (codes 127, −2, 5); int16 activations: d_x = 127 / 32767, codes 258, 32767, −774.
  EXPECT_EQ(out, static_cast<float>(127 * 258 - 2 * 32767 + 5 * -774) * (1.0f * (127.0f / 32767.0f)));
  EXPECT_NEAR(out, 127.0f * 1 - 2 * 127 + 5 * -3, 0.01f);
  matmul(&out, x.data(), PackedMatrix(weight.data(), 1, 32, WeightType::kQ4), 1, pool);
  // q4: d_w = 127 / −8, codes −8, 0 (−2 / d_w rounds to 0), 0; int8 activations: d_x = 1, codes 1, 127, −3.
  EXPECT_EQ(out, static_cast<float>(-8 * 1) * (f16_to_float(float_to_f16(127.0f / -8.0f)) * 1.0f));
  // q8 × int8 activations: d_w = 1, d_x = 1, codes 1, 127, −3 — the integer dot itself.
  PackedMatrix w8a8(weight.data(), 1, 32, WeightType::kQ8);
  w8a8.use_activations(ActivationCodes::kInt8);
  matmul(&out, x.data(), w8a8, 1, pool);
  EXPECT_EQ(out, static_cast<float>(127 * 1 - 2 * 127 + 5 * -3));
}

// Codes of the extremes: weight −127 and activation −127 (the most negative products, where an unsigned-offset
// kernel would be off by the offset if it forgot the correction), and +127 × +127, in every block of a long row.
TEST_P(MatmulQuantizedSimd, W8A8ExtremeCodesSumExactly) {
  ThreadPool pool(2);
  const int in = 256, out = 32;
  std::vector<float> weight(static_cast<std::size_t>(out) * in), x(static_cast<std::size_t>(3) * in);
  for (std::size_t i = 0; i < weight.size(); ++i) weight[i] = (i % 3 == 0) ? -127.0f : 127.0f;
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = (i % 5 == 0) ? 127.0f : -127.0f;
  for (const bool vnni : vnni_settings()) {
    const VnniKernels kernels(vnni);
    const PackedMatrix packed = packed_as(weight, out, in, {WeightType::kQ8, ActivationCodes::kInt8});
    std::vector<float> result(static_cast<std::size_t>(3) * out);
    matmul(result.data(), x.data(), packed, 3, pool);
    for (int r = 0; r < 3; ++r) {
      for (int o = 0; o < out; ++o) {
        int64_t dot = 0;
        for (int k = 0; k < in; ++k) {
          dot += static_cast<int64_t>(weight[static_cast<std::size_t>(o) * in + k]) *
                 x[static_cast<std::size_t>(r) * in + k];
        }
        ASSERT_EQ(result[static_cast<std::size_t>(r) * out + o], static_cast<float>(dot))
            << r << " " << o << " " << vnni;
      }
    }
  }
}

TEST(PackedMatrix, ActivationCodesFollowTheTypeAndRefuseWhatItCannotRun) {
  const auto weight = pseudo_random_vector(64, 2);
  PackedMatrix q8(weight.data(), 2, 32, WeightType::kQ8), q4(weight.data(), 2, 32, WeightType::kQ4),
      f32(weight.data(), 2, 32, WeightType::kF32);
  EXPECT_EQ(q8.activations(), ActivationCodes::kInt16);
  EXPECT_EQ(q4.activations(), ActivationCodes::kInt8);
  q8.use_activations(ActivationCodes::kInt8);
  EXPECT_EQ(q8.activations(), ActivationCodes::kInt8);
  EXPECT_THROW(q4.use_activations(ActivationCodes::kInt16), std::exception);
  EXPECT_THROW(f32.use_activations(ActivationCodes::kInt8), std::exception);
  EXPECT_EQ(parse_activation_codes("int8"), ActivationCodes::kInt8);
  EXPECT_EQ(activation_codes_name(ActivationCodes::kInt16), "int16");
  EXPECT_THROW(parse_activation_codes("int4"), std::exception);
}

// q8 stays close to the fp32 product; q4 further off, but far better than noise.
TEST(MatmulQuantized, ApproximatesTheFp32Product) {
  ThreadPool pool(1);
  const int in = 512, out_features = 64, rows = 3;
  const auto x = pseudo_random_vector(static_cast<std::size_t>(rows) * in, 11);
  const auto weight = pseudo_random_vector(static_cast<std::size_t>(out_features) * in, 12);
  std::vector<float> exact(rows * out_features), q8(exact.size()), q4(exact.size());
  matmul_reference(exact.data(), x.data(), weight.data(), rows, in, out_features);
  matmul(q8.data(), x.data(), PackedMatrix(weight.data(), out_features, in, WeightType::kQ8), rows, pool);
  matmul(q4.data(), x.data(), PackedMatrix(weight.data(), out_features, in, WeightType::kQ4), rows, pool);
  double norm = 0, error8 = 0, error4 = 0;
  for (std::size_t i = 0; i < exact.size(); ++i) {
    norm += exact[i] * exact[i];
    error8 += (q8[i] - exact[i]) * (q8[i] - exact[i]);
    error4 += (q4[i] - exact[i]) * (q4[i] - exact[i]);
  }
  EXPECT_LT(std::sqrt(error8 / norm), 0.01);  // relative RMS error
  EXPECT_LT(std::sqrt(error4 / norm), 0.12);
  EXPECT_GT(std::sqrt(error4 / norm), std::sqrt(error8 / norm));
}

MINIGEN_FOR_EVERY_SIMD_TARGET(MatmulQuantizedSimd);

}  // namespace
}  // namespace minigen
