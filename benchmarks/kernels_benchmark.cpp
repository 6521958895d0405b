// Micro-benchmarks of minigen's kernels (src/ops/) at the shapes the shipped tiny model and MiniMind2 really use,
// with OpenBLAS on the same matrix shapes as the yardstick (benchmarks/README.md has the results).
//
// Groups, selectable with --benchmark_filter (e.g. '^BM_(Matmul|Sgemm)/'):
//   BM_Matmul/<f32|f16|bf16|q8|q8a8|q4>/<model>.<matrix>/M<rows>/T<threads>   prefill product, M = 128, 512 FLOPS =
//   2·M·K·N / s BM_Sgemm/f32/<model>.<matrix>/M<rows>/T<threads>           OpenBLAS cblas_sgemm, same shapes
//   BM_Decode/<f32|f16|bf16|q8|q8a8|q4>/<model>.<matrix>/M<rows>/T<threads>   M = 1, 8, 32: weight bytes streamed / s
//   BM_SgemvDecode/...                                         OpenBLAS at M = 1 (sgemv) and 8, 32 (sgemm)
//   BM_Attention/hd<head_dim>/keys<n>                          one GQA group (4 query heads) over n cached keys
//   BM_RMSNorm/n<n>, BM_SiluMul/n<n>, BM_Rope/hd<head_dim>     elements / s (items_per_second)
//   BM_ThreadPool/handoff/T<threads>                           one parallel_for with an empty body, ns
//
// Single-threaded runs (T1 and the kernels without a pool) are timed by the calling thread's CPU time, so that a
// co-tenant process time-slicing the core (a build on this shared 2-core machine) does not show up as a slower
// kernel. Two-thread runs (T2) must use wall time — the helper's work is not in the caller's CPU time — and are only
// meaningful when the second core is free. The minigen groups are registered before the OpenBLAS ones because
// OpenBLAS's idle threads keep spinning for a while after a call and would steal the second core from a minigen run
// that follows.
#include <cblas.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "ops/activation.h"
#include "ops/attention.h"
#include "ops/kv_block.h"
#include "ops/kv_dtype.h"
#include "ops/matmul.h"
#include "ops/packed_matrix.h"
#include "ops/rmsnorm.h"
#include "ops/rope.h"
#include "ops/simd_override.h"
#include "ops/thread_pool.h"
#include "ops/weight_type.h"

namespace minigen {
namespace {

// One nn.Linear of a model: out_features × in_features, named model.matrix. Stacked matrices are benchmarked as the
// transformer runs them, as one product (model/packed_weights.cpp stacks q, k, v and gate, up).
struct MatrixShape {
  const char* name;
  int in_features;
  int out_features;
};

// tiny (models/minigen-tiny-*): hidden 256, 8 q heads, 2 kv heads, head_dim 32, ffn 832, vocab 6400.
// MiniMind2 (src/model/config.cpp, dense_family "minimind2"): hidden 768, 8 q heads, 2 kv heads, head_dim 96,
// ffn 2048, vocab 6400.  qkv = q_heads·head_dim + 2·kv_heads·head_dim outputs; gate_up = 2·ffn outputs.
constexpr MatrixShape kMatrixShapes[] = {
    {"tiny.qkv", 256, 256 + 2 * 2 * 32}, {"tiny.o", 256, 256},
    {"tiny.gate_up", 256, 2 * 832},      {"tiny.down", 832, 256},
    {"tiny.lm_head", 256, 6400},         {"minimind2.qkv", 768, 768 + 2 * 2 * 96},
    {"minimind2.o", 768, 768},           {"minimind2.gate_up", 768, 2 * 2048},
    {"minimind2.down", 2048, 768},       {"minimind2.lm_head", 768, 6400},
};
constexpr int kPrefillRows[] = {128, 512};
constexpr int kDecodeRows[] = {1, 8, 32};
constexpr int kThreadCounts[] = {1, 2};
// The products benchmarked: each weight type with its default activation codes, and q8 × int8 activations (W8A8)
// as "q8a8".
struct ProductKind {
  const char* name;
  WeightType type;
  ActivationCodes activations;
};
constexpr ProductKind kProductKinds[] = {
    {"f32", WeightType::kF32, ActivationCodes::kInt16},   {"f16", WeightType::kF16, ActivationCodes::kInt16},
    {"bf16", WeightType::kBF16, ActivationCodes::kInt16}, {"q8", WeightType::kQ8, ActivationCodes::kInt16},
    {"q8a8", WeightType::kQ8, ActivationCodes::kInt8},    {"q4", WeightType::kQ4, ActivationCodes::kInt8}};

std::vector<float> random_floats(std::size_t count, uint32_t seed) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> values(count);
  for (float& value : values) value = uniform(generator);
  return values;
}

// A counter Google Benchmark divides by the elapsed time after multiplying by the iteration count, so `per_call`
// is what one call does (flops, bytes) and the report shows it per second.
benchmark::Counter rate(double per_call) {
  return benchmark::Counter(per_call, benchmark::Counter::kIsIterationInvariantRate);
}

double product_flops(const MatrixShape& shape, int rows) {
  return 2.0 * rows * shape.in_features * shape.out_features;  // one multiply and one add per weight per row
}

std::string matrix_name(const char* group, const char* type, const MatrixShape& shape, int rows, int threads) {
  return std::string(group) + "/" + type + "/" + shape.name + "/M" + std::to_string(rows) + "/T" +
         std::to_string(threads);
}

// minigen's matmul. Decode runs report the weight bytes the kernel streams per call as well: at M = 1 every
// weight is used once, so memory (or cache) bandwidth, not arithmetic, bounds the step.
void bench_matmul(benchmark::State& state, MatrixShape shape, ProductKind kind, int rows, int threads, bool decode) {
  const std::vector<float> weights = random_floats(static_cast<std::size_t>(shape.out_features) * shape.in_features, 1);
  PackedMatrix packed(weights.data(), shape.out_features, shape.in_features, kind.type);
  if (is_block_quantized(kind.type)) packed.use_activations(kind.activations);
  const std::vector<float> x = random_floats(static_cast<std::size_t>(rows) * shape.in_features, 2);
  std::vector<float> out(static_cast<std::size_t>(rows) * shape.out_features);
  ThreadPool pool(threads);
  for (auto _ : state) {
    matmul(out.data(), x.data(), packed, rows, pool);
    benchmark::ClobberMemory();
  }
  state.counters["FLOPS"] = rate(product_flops(shape, rows));
  if (decode) state.counters["weight_bytes"] = rate(static_cast<double>(packed.bytes()));
}

// OpenBLAS on the same product: out [M×N] = x [M×K] · Wᵀ with W row-major [N×K], as nn.Linear stores it.
// M = 1 goes through sgemv, the routine a BLAS user would call for one row.
void bench_openblas(benchmark::State& state, MatrixShape shape, int rows, int threads, bool decode) {
  const int k = shape.in_features;
  const int n = shape.out_features;
  const std::vector<float> weights = random_floats(static_cast<std::size_t>(n) * k, 1);
  const std::vector<float> x = random_floats(static_cast<std::size_t>(rows) * k, 2);
  std::vector<float> out(static_cast<std::size_t>(rows) * n);
  openblas_set_num_threads(threads);
  for (auto _ : state) {
    if (rows == 1) {
      cblas_sgemv(CblasRowMajor, CblasNoTrans, n, k, 1.0f, weights.data(), k, x.data(), 1, 0.0f, out.data(), 1);
    } else {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, n, k, 1.0f, x.data(), k, weights.data(), k, 0.0f,
                  out.data(), n);
    }
    benchmark::ClobberMemory();
  }
  state.counters["FLOPS"] = rate(product_flops(shape, rows));
  if (decode) state.counters["weight_bytes"] = rate(static_cast<double>(weights.size() * sizeof(float)));
}

// One GQA group: 4 query heads sharing kv head 1 of a 2-kv-head cache, over num_keys cached positions in `dtype`.
// The group reads its own kv head's keys and values once: 2 · num_keys · head_dim · bytes per element (+ int8's
// two scales per key).
void bench_attention(benchmark::State& state, int head_dim, int num_keys, KvDType dtype) {
  constexpr int kGroupSize = 4;
  const KvBlockLayout layout{2, head_dim, dtype};
  const int num_blocks = (num_keys + KvBlockLayout::kBlockTokens - 1) / KvBlockLayout::kBlockTokens;
  std::vector<std::byte> storage(layout.block_bytes() * num_blocks);
  for (int p = 0; p < num_blocks * KvBlockLayout::kBlockTokens; ++p) {
    const std::vector<float> key = random_floats(layout.kv_width(), 3 + 2 * p);
    const std::vector<float> value = random_floats(layout.kv_width(), 4 + 2 * p);
    layout.write(storage.data() + layout.block_bytes() * (p / KvBlockLayout::kBlockTokens),
                 p % KvBlockLayout::kBlockTokens, key.data(), value.data());
  }
  std::vector<const std::byte*> blocks;
  for (int b = 0; b < num_blocks; ++b) blocks.push_back(storage.data() + layout.block_bytes() * b);
  const std::vector<float> queries = random_floats(static_cast<std::size_t>(kGroupSize) * head_dim, 4);
  std::vector<float> out(queries.size());
  std::vector<float> scores(static_cast<std::size_t>(kGroupSize) * num_blocks * KvBlockLayout::kBlockTokens);
  const AttentionGroup group{queries.data(), out.data(), kGroupSize, 1};
  for (auto _ : state) {
    attend(group, blocks, num_keys, layout, scores.data());
    benchmark::ClobberMemory();
  }
  const double scale_bytes = dtype == KvDType::kInt8 ? 2.0 * sizeof(float) : 0.0;
  state.counters["kv_bytes"] = rate(num_keys * (2.0 * head_dim * kv_dtype_bytes(dtype) + scale_bytes));
  state.counters["keys"] = rate(num_keys);
  // q·k and p·v: two fmas per key, dimension and query head.
  state.counters["FLOPS"] = rate(4.0 * kGroupSize * num_keys * head_dim);
}

void bench_rmsnorm(benchmark::State& state, int n) {
  const std::vector<float> x = random_floats(n, 5);
  const std::vector<float> weight = random_floats(n, 6);
  std::vector<float> out(n);
  for (auto _ : state) {
    rmsnorm(out.data(), x.data(), weight.data(), n, 1e-5f);
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * n);
}

void bench_silu_mul(benchmark::State& state, int n) {
  // Gate values in [−8, 8] cover both tails of silu's exp, as real pre-activations do.
  std::vector<float> gate = random_floats(n, 7);
  for (float& g : gate) g *= 8.0f;
  const std::vector<float> up = random_floats(n, 8);
  std::vector<float> out(n);
  for (auto _ : state) {
    silu_mul(out.data(), gate.data(), up.data(), n);
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * n);
}

void bench_rope(benchmark::State& state, int head_dim) {
  constexpr int kPositions = 4096;
  const RopeTable table(head_dim, kPositions, 1e6, std::nullopt);
  std::vector<float> head = random_floats(head_dim, 9);
  int position = 0;
  for (auto _ : state) {
    // Rotating in place keeps the vector's norm, so repeated calls neither overflow nor underflow. Walking the
    // positions reads a different cos/sin row each call, as a prefill does.
    table.apply(head.data(), position);
    position = (position + 1) % kPositions;
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * head_dim);
}

void bench_thread_pool(benchmark::State& state, int threads) {
  ThreadPool pool(threads);
  for (auto _ : state) {
    pool.parallel_for(threads, [](int64_t begin, int64_t end) { benchmark::DoNotOptimize(begin + end); });
  }
}

void register_benchmarks() {
  // Names ending in T2 are the multi-threaded runs, timed by the wall clock (see the top of the file).
  const auto add = [](const std::string& name, auto&& function, auto... args) {
    benchmark::internal::Benchmark* benchmark = benchmark::RegisterBenchmark(name.c_str(), function, args...);
    if (name.ends_with("/T2")) benchmark->UseRealTime();
  };
  for (const MatrixShape& shape : kMatrixShapes) {
    for (int rows : kPrefillRows) {
      for (const ProductKind& kind : kProductKinds) {
        for (int threads : kThreadCounts) {
          add(matrix_name("BM_Matmul", kind.name, shape, rows, threads), bench_matmul, shape, kind, rows, threads,
              false);
        }
      }
    }
  }
  for (const MatrixShape& shape : kMatrixShapes) {
    for (int rows : kDecodeRows) {
      for (const ProductKind& kind : kProductKinds) {
        for (int threads : kThreadCounts) {
          add(matrix_name("BM_Decode", kind.name, shape, rows, threads), bench_matmul, shape, kind, rows, threads,
              true);
        }
      }
    }
  }
  for (KvDType dtype : {KvDType::kF32, KvDType::kBF16, KvDType::kF16, KvDType::kInt8}) {
    for (int head_dim : {32, 96}) {
      for (int num_keys : {128, 512, 2048}) {
        // f32 keeps the names it had before the cache had other element types. Appended piece by piece: GCC 12
        // reports a false -Wrestrict for "literal" + std::string.
        std::string name = "BM_Attention/hd" + std::to_string(head_dim);
        name += "/keys";
        name += std::to_string(num_keys);
        if (dtype != KvDType::kF32) {
          name += '/';
          name += kv_dtype_name(dtype);
        }
        add(name, bench_attention, head_dim, num_keys, dtype);
      }
    }
  }
  for (int n : {256, 768}) add("BM_RMSNorm/n" + std::to_string(n), bench_rmsnorm, n);
  for (int n : {832, 2048}) add("BM_SiluMul/n" + std::to_string(n), bench_silu_mul, n);
  for (int head_dim : {32, 64, 96}) add("BM_Rope/hd" + std::to_string(head_dim), bench_rope, head_dim);
  for (int threads : kThreadCounts) {
    add("BM_ThreadPool/handoff/T" + std::to_string(threads), bench_thread_pool, threads);
  }
  for (const MatrixShape& shape : kMatrixShapes) {
    for (int rows : kPrefillRows) {
      for (int threads : kThreadCounts) {
        add(matrix_name("BM_Sgemm", "f32", shape, rows, threads), bench_openblas, shape, rows, threads, false);
      }
    }
  }
  for (const MatrixShape& shape : kMatrixShapes) {
    for (int rows : kDecodeRows) {
      for (int threads : kThreadCounts) {
        add(matrix_name("BM_SgemvDecode", "f32", shape, rows, threads), bench_openblas, shape, rows, threads, true);
      }
    }
  }
}

// OpenBLAS must compute the same product before its speed means anything: sgemm against matmul_reference on a
// small ragged shape. The sums differ in order (OpenBLAS splits k), so the bound is relative to Σ|x·w|.
bool openblas_agrees_with_reference() {
  constexpr int kRows = 5, kIn = 37, kOut = 21;
  const std::vector<float> x = random_floats(kRows * kIn, 10);
  const std::vector<float> weights = random_floats(kOut * kIn, 11);
  std::vector<float> expected(kRows * kOut);
  std::vector<float> actual(kRows * kOut);
  matmul_reference(expected.data(), x.data(), weights.data(), kRows, kIn, kOut);
  openblas_set_num_threads(1);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, kRows, kOut, kIn, 1.0f, x.data(), kIn, weights.data(), kIn, 0.0f,
              actual.data(), kOut);
  for (int r = 0; r < kRows; ++r) {
    for (int o = 0; o < kOut; ++o) {
      double magnitude = 0.0;
      for (int k = 0; k < kIn; ++k) magnitude += std::fabs(double(x[r * kIn + k]) * weights[o * kIn + k]);
      const double difference = std::fabs(double(actual[r * kOut + o]) - expected[r * kOut + o]);
      if (!(difference <= 1e-5 * magnitude + 1e-30)) {
        std::fprintf(stderr,
                     "error: OpenBLAS sgemm disagrees with matmul_reference at row %d, output %d: %.9g vs %.9g\n", r, o,
                     actual[r * kOut + o], expected[r * kOut + o]);
        return false;
      }
    }
  }
  return true;
}

// minigen's own kernel is held bit for bit to the reference by its tests; checking here too keeps a benchmark of a
// half-written kernel from being mistaken for a result.
bool matmul_matches_reference() {
  constexpr int kRows = 7, kIn = 45, kOut = 40;
  const std::vector<float> x = random_floats(kRows * kIn, 12);
  const std::vector<float> weights = random_floats(kOut * kIn, 13);
  const PackedMatrix packed(weights.data(), kOut, kIn, WeightType::kF32);
  std::vector<float> expected(kRows * kOut);
  std::vector<float> actual(kRows * kOut);
  matmul_reference(expected.data(), x.data(), weights.data(), kRows, kIn, kOut);
  ThreadPool pool(2);
  matmul(actual.data(), x.data(), packed, kRows, pool);
  return std::memcmp(expected.data(), actual.data(), expected.size() * sizeof(float)) == 0;
}

}  // namespace
}  // namespace minigen

int main(int argc, char** argv) {
  const char* coretype = std::getenv("OPENBLAS_CORETYPE");
  if (coretype == nullptr || *coretype == '\0') {
    std::fprintf(stderr,
                 "warning: OPENBLAS_CORETYPE is unset; OpenBLAS 0.3.21 does not know AMD Zen 5 and may fall back to "
                 "Prescott kernels (4-5x slower). Run with OPENBLAS_CORETYPE=SkylakeX for a fair comparison.\n");
  }
  std::fprintf(stderr, "OpenBLAS core: %s (%s)\n", openblas_get_corename(), openblas_get_config());
  try {
    minigen::apply_simd_override_from_environment();  // MINIGEN_SIMD=avx2|scalar, as in minigen itself
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  if (!minigen::openblas_agrees_with_reference()) return 1;
  if (!minigen::matmul_matches_reference()) {
    std::fprintf(stderr,
                 "warning: minigen's matmul does not match matmul_reference bit for bit on a 7x45x40 product\n");
  }
  minigen::register_benchmarks();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::AddCustomContext("openblas_core", openblas_get_corename());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
