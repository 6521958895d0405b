#!/usr/bin/env python3
"""Turns minigen_kernel_bench's JSON output into the Markdown tables of benchmarks/README.md.

usage: python3 benchmarks/summarize.py results.json [more.json ...] > tables.md

Several files may be given (e.g. one run per benchmark group); later files win for a benchmark present twice. With
--benchmark_repetitions the median aggregate is used, otherwise the single run.
"""
import json
import sys


def load(paths):
    """name (without the /real_time suffix) -> benchmark entry."""
    runs, medians = {}, {}
    for path in paths:
        with open(path) as f:
            data = json.load(f)
        for entry in data["benchmarks"]:
            name = entry.get("run_name", entry["name"]).removesuffix("/real_time")
            if entry.get("run_type") == "aggregate":
                if entry.get("aggregate_name") == "median":
                    medians[name] = entry
            else:
                runs[name] = entry
    runs.update(medians)
    return runs


def microseconds(entry):
    """The time the benchmark's counters were computed from: wall time for T2 runs, CPU time otherwise."""
    scale = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}[entry["time_unit"]]
    name = entry.get("run_name", entry["name"])
    return entry["real_time" if name.endswith("/real_time") else "cpu_time"] * scale


def fmt(value, digits=1):
    return "—" if value is None else f"{value:,.{digits}f}"


def ratio(numerator, denominator):
    if numerator is None or not denominator:
        return "—"
    return f"{100.0 * numerator / denominator:.0f} %"


MODELS = ["tiny", "minimind2"]
MATRICES = ["qkv", "o", "gate_up", "down", "lm_head"]


def shape_order(shape):
    model, matrix = shape.split(".", 1)
    return (MODELS.index(model) if model in MODELS else len(MODELS), MATRICES.index(matrix)
            if matrix in MATRICES else len(MATRICES), shape)


def shapes_in(results, group):
    """Shape names of one group, in the model's order (tiny first; qkv, o, gate_up, down, lm_head)."""
    return sorted({name.split("/")[2] for name in results if name.split("/")[0] == group}, key=shape_order)


def counter(results, name, key, scale=1e-9):
    entry = results.get(name)
    return None if entry is None or key not in entry else entry[key] * scale


def prefill_table(results):
    lines = [
        "| matrix (K → N) | M | threads | minigen f32 | minigen bf16 | OpenBLAS sgemm | f32 / OpenBLAS | bf16 / OpenBLAS |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for shape in shapes_in(results, "BM_Matmul"):
        for rows in (128, 512):
            for threads in (1, 2):
                suffix = f"{shape}/M{rows}/T{threads}"
                f32 = counter(results, f"BM_Matmul/f32/{suffix}", "FLOPS")
                bf16 = counter(results, f"BM_Matmul/bf16/{suffix}", "FLOPS")
                blas = counter(results, f"BM_Sgemm/f32/{suffix}", "FLOPS")
                if f32 is None and blas is None:
                    continue
                lines.append(f"| {shape} | {rows} | {threads} | {fmt(f32)} | {fmt(bf16)} | {fmt(blas)} | "
                             f"{ratio(f32, blas)} | {ratio(bf16, blas)} |")
    return "\n".join(lines)


def decode_table(results, threads):
    lines = [
        "| matrix | M | f32 µs | f32 GB/s | bf16 µs | bf16 GB/s | OpenBLAS µs | OpenBLAS GB/s | OpenBLAS time / f32 time |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for shape in shapes_in(results, "BM_Decode"):
        for rows in (1, 8, 32):
            suffix = f"{shape}/M{rows}/T{threads}"
            cells = []
            times = {}
            for key, name in (("f32", f"BM_Decode/f32/{suffix}"), ("bf16", f"BM_Decode/bf16/{suffix}"),
                              ("blas", f"BM_SgemvDecode/f32/{suffix}")):
                entry = results.get(name)
                times[key] = None if entry is None else microseconds(entry)
                cells += [fmt(times[key], 2), fmt(counter(results, name, "weight_bytes"))]
            if times["f32"] is None and times["blas"] is None:
                continue
            speed = ratio(times["blas"], times["f32"]) if times["f32"] else "—"
            lines.append(f"| {shape} | {rows} | " + " | ".join(cells) + f" | {speed} |")
    return "\n".join(lines)


def attention_table(results):
    lines = ["| head_dim | cached keys | µs | K+V GB/s | Mkeys/s | GFLOP/s |", "|---:|---:|---:|---:|---:|---:|"]
    for name, entry in results.items():
        parts = name.split("/")
        if parts[0] != "BM_Attention":
            continue
        lines.append(f"| {parts[1][2:]} | {parts[2][4:]} | {fmt(microseconds(entry), 2)} | "
                     f"{fmt(entry['kv_bytes'] * 1e-9)} | {fmt(entry['keys'] * 1e-6, 0)} | "
                     f"{fmt(entry['FLOPS'] * 1e-9)} |")
    return "\n".join(lines)


def elementwise_table(results):
    lines = ["| kernel | size | ns per call | G elements/s |", "|---|---:|---:|---:|"]
    for name, entry in results.items():
        parts = name.split("/")
        if parts[0] not in ("BM_RMSNorm", "BM_SiluMul", "BM_Rope"):
            continue
        lines.append(f"| {parts[0][3:]} | {parts[1]} | {fmt(microseconds(entry) * 1e3)} | "
                     f"{fmt(entry['items_per_second'] * 1e-9, 2)} |")
    for name, entry in results.items():
        if name.startswith("BM_ThreadPool/"):
            lines.append(f"| ThreadPool parallel_for, empty body | {name.split('/')[-1]} | "
                         f"{fmt(microseconds(entry) * 1e3)} | — |")
    return "\n".join(lines)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    results = load(sys.argv[1:])
    print("### Prefill products (GFLOP/s = 2·M·K·N / time)\n")
    print(prefill_table(results))
    for threads in (1, 2):
        print(f"\n### Decode and small batches, {threads} thread{'s' if threads > 1 else ''} "
              "(GB/s = weight bytes streamed per call / time)\n")
        print(decode_table(results, threads))
    print("\n### Attention (one GQA group: 4 query heads, 1 of 2 kv heads)\n")
    print(attention_table(results))
    print("\n### Element-wise kernels and the thread pool\n")
    print(elementwise_table(results))


if __name__ == "__main__":
    main()
