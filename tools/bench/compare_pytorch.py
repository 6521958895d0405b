#!/usr/bin/python3
"""Side-by-side speed of the PyTorch reference `generate` and `minigen generate`, same model, prompt ids and machine.

    /usr/bin/python3 tools/bench/compare_pytorch.py --threads 1,2

For every thread count T and cache on/off it runs both engines (greedy, eos ignored, exactly N new tokens) R times
after one warm-up and reports the medians of TTFT, inter-token latency, decode tokens/s and total time, the
minigen ÷ PyTorch ratios, and each engine's cache-off ÷ cache-on time beside the forward-token ratio. Run it with
Debian's torch: /usr/bin/python3 (the `python3` on PATH cannot see torch).
"""
import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
# torch links libblas.so.3 by name and this machine's default is Debian's reference BLAS (several times slower);
# putting the OpenMP build of OpenBLAS first on LD_LIBRARY_PATH makes torch use it without touching the system.
# The OpenMP build (not pthread) so that torch.set_num_threads also sets OpenBLAS's thread count.
OPENBLAS_DIRECTORY = pathlib.Path("/usr/lib/x86_64-linux-gnu/openblas-openmp")
PREPARED_MARK = "MINIGEN_BENCH_PREPARED"  # set on the re-executed process: the variables this script set


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default=str(ROOT / "models/minigen-tiny-sft"), help="HF model directory")
    parser.add_argument("--prompt-file", default=str(ROOT / "examples/genesis-183.txt"),
                        help="raw prompt text (base-model form: bos + text)")
    parser.add_argument("-n", "--new-tokens", type=int, default=64, help="new tokens per run (eos ignored)")
    parser.add_argument("--threads", default=str(os.cpu_count() or 1),
                        help="thread counts, comma-separated (default: the number of cores)")
    parser.add_argument("--runs", type=int, default=3, help="timed runs per configuration (median), after a warm-up")
    parser.add_argument("--json", help="write every number to this file")
    parser.add_argument("--minigen", default=str(ROOT / "build/minigen"), help="the minigen binary")
    parser.add_argument("--weights", help="passed to minigen as --weights X (only when given)")
    parser.add_argument("--system-blas", action="store_true",
                        help="leave torch on the system's libblas.so.3 instead of loading OpenBLAS")
    args = parser.parse_args()
    args.threads = [int(part) for part in args.threads.split(",") if part.strip()]
    if not args.threads or min(args.threads) < 1 or args.new_tokens < 2 or args.runs < 1:
        parser.error("need --threads ≥ 1, -n ≥ 2 (for an inter-token time) and --runs ≥ 1")
    return args


def prepare_environment(args):
    """Sets the BLAS/OpenMP variables and re-executes this script once, because OPENBLAS_CORETYPE and
    LD_LIBRARY_PATH only act when the libraries are loaded (the dynamic loader reads LD_LIBRARY_PATH at exec).
    Returns the names of the variables this script set (after the re-exec)."""
    if PREPARED_MARK in os.environ:
        return [name for name in os.environ[PREPARED_MARK].split(",") if name]
    environment = dict(os.environ)
    changed = []
    if not environment.get("OPENBLAS_CORETYPE"):
        # OpenBLAS 0.3.21 does not know this Zen CPU and falls back to Prescott kernels; it has AVX-512.
        environment["OPENBLAS_CORETYPE"] = "SkylakeX"
        changed.append("OPENBLAS_CORETYPE")
    if not environment.get("OMP_WAIT_POLICY"):
        # With another job on the two cores, spinning OpenMP workers wait on each other: torch at 2 threads was
        # measured 13-70x slower than at 1 thread under a load of 5, and as fast as 1 thread with passive waiting.
        environment["OMP_WAIT_POLICY"] = "PASSIVE"
        changed.append("OMP_WAIT_POLICY")
    if not args.system_blas and (OPENBLAS_DIRECTORY / "libblas.so.3").exists():
        previous = environment.get("LD_LIBRARY_PATH")
        environment["LD_LIBRARY_PATH"] = str(OPENBLAS_DIRECTORY) + (":" + previous if previous else "")
        changed.append("LD_LIBRARY_PATH")
    environment[PREPARED_MARK] = ",".join(changed)
    os.execve(sys.executable, [sys.executable] + sys.argv, environment)


ARGS = parse_args()
SET_BY_SCRIPT = prepare_environment(ARGS)

try:
    import torch  # noqa: E402  (after the environment is set: OpenBLAS reads it when torch loads it)
except ImportError:
    raise SystemExit(f"{sys.executable} cannot import torch: run this script with /usr/bin/python3 (Debian's torch)")

sys.dont_write_bytecode = True  # write nothing outside tools/bench (no __pycache__ beside the imported modules)
sys.path.insert(0, str(ROOT / "tools/reference"))
sys.path.insert(0, str(ROOT / "tools/train"))
import minimind_reference as ref  # noqa: E402
from runtime import loaded_blas  # noqa: E402  (which BLAS file this process mapped)


def check_matmul():
    """A misdetected or mis-set OpenBLAS core type computes garbage rather than failing: compare one float32
    matmul with a float64 sum of products before timing anything."""
    generator = torch.Generator().manual_seed(0)
    a = torch.randn(64, 256, generator=generator)
    b = torch.randn(256, 96, generator=generator)
    naive = (a.double()[:, :, None] * b.double()[None, :, :]).sum(1)
    error = ((a @ b).double() - naive).abs().max().item()
    if not error < 1e-3:  # float32 rounding of 256-term sums of N(0, 1) products is ~1e-5
        raise SystemExit(f"torch matmul differs from the naive product by {error}: wrong BLAS kernels")
    return error


def run_command(command):
    result = subprocess.run([str(part) for part in command], capture_output=True, text=True, env=os.environ.copy())
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(map(str, command))} exited with {result.returncode}:\n{result.stderr.strip()}")
    return result.stdout


def prompt_ids(text):
    """The ids `minigen generate -f` feeds: bos + minigen's encoding of the text. Asked from minigen itself
    (through a JSONL file, so the text reaches it byte for byte) so that both engines see the same ids."""
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", encoding="utf-8", delete=False) as stream:
        stream.write(json.dumps({"text": text}) + "\n")
    try:
        output = run_command([ARGS.minigen, "tokenize", "-m", ARGS.model, "--bos", "--jsonl", stream.name])
    finally:
        os.unlink(stream.name)
    return json.loads(output.splitlines()[0])


def run_minigen(threads, use_cache):
    """One `minigen generate --json`; the timings are minigen's own (generate only, model load excluded)."""
    command = [ARGS.minigen, "generate", "-m", ARGS.model, "-f", ARGS.prompt_file, "--greedy", "--ignore-eos",
               "-n", ARGS.new_tokens, "--json", "--threads", threads]
    if not use_cache:
        command.append("--no-cache")
    if ARGS.weights:
        command += ["--weights", ARGS.weights]
    start = time.perf_counter()
    output = json.loads(run_command(command))
    process_ms = (time.perf_counter() - start) * 1e3
    return {"ttft_ms": output["ttft_ms"], "itl_ms": output["itl_ms"], "total_ms": output["total_ms"],
            "process_ms": process_ms, "prompt_tokens": output["prompt_tokens"],
            "token_ids": output["sequences"][0]["token_ids"]}


def run_reference(model, ids, use_cache):
    """One call of the reference generate (greedy, eos_token_id=None: exactly N tokens), timed in process.
    generate picks token k right before it calls forward for step k + 1, so the start of the second forward call
    is when the first token is known: TTFT = that minus the start, like minigen's first_token_time."""
    forward_starts = []
    original_forward = model.forward

    def timed_forward(*args, **kwargs):
        forward_starts.append(time.perf_counter())
        return original_forward(*args, **kwargs)

    model.forward = timed_forward  # an instance attribute shadows the method generate calls
    try:
        start = time.perf_counter()
        out = ref.generate(model, torch.tensor([ids]), eos_token_id=None, max_new_tokens=ARGS.new_tokens,
                           do_sample=False, use_cache=use_cache)
        end = time.perf_counter()
    finally:
        del model.forward
    total_ms = (end - start) * 1e3
    ttft_ms = (forward_starts[1] - start) * 1e3
    return {"ttft_ms": ttft_ms, "itl_ms": (total_ms - ttft_ms) / (len(forward_starts) - 1), "total_ms": total_ms,
            "token_ids": out[0, len(ids):].tolist()}


def measure(run):
    """One warm-up, then ARGS.runs timed runs; the median of each metric (taken separately, as `minigen lab`)."""
    run()
    runs = [run() for _ in range(ARGS.runs)]
    summary = {key: statistics.median(r[key] for r in runs)
               for key in ("ttft_ms", "itl_ms", "total_ms", "process_ms") if key in runs[0]}
    summary["decode_tokens_per_s"] = 1e3 / summary["itl_ms"]  # N − 1 decode tokens over (total − TTFT)
    summary["runs"] = [{key: value for key, value in r.items() if key != "token_ids"} for r in runs]
    summary["token_ids"] = [r["token_ids"] for r in runs]
    return summary


def environment_header(blas_error):
    cpu = "unknown"
    with open("/proc/cpuinfo") as stream:
        for line in stream:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break

    def variable(name):
        value = os.environ.get(name, "(unset)")
        return f"{name}={value} ({'set by this script' if name in SET_BY_SCRIPT else 'from the environment'})"

    mtime = os.path.getmtime(ARGS.minigen)
    return {
        "minigen_mtime": mtime, "cpu": cpu, "cores": os.cpu_count(), "load_average": list(os.getloadavg()),
        "torch": torch.__version__, "python": sys.executable, "blas": loaded_blas(),
        "blas_check_max_abs_error": blas_error,
        "OPENBLAS_CORETYPE": os.environ.get("OPENBLAS_CORETYPE"), "OMP_WAIT_POLICY": os.environ.get("OMP_WAIT_POLICY"),
        "lines": [f"CPU        {cpu}, {os.cpu_count()} cores, load average "
                  + " ".join(f"{x:.2f}" for x in os.getloadavg()) + " at start",
                  f"torch      {torch.__version__} ({sys.executable}), BLAS {loaded_blas()}",
                  f"           matmul vs naive float64 product: max |error| {blas_error:.1e}",
                  f"env        {variable('OPENBLAS_CORETYPE')}; {variable('OMP_WAIT_POLICY')}",
                  f"threads    {', '.join(map(str, ARGS.threads))} (torch.set_num_threads / minigen --threads)",
                  # minigen is under active development: say which build was measured.
                  f"minigen    {ARGS.minigen} (modified {time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(mtime))})"],
    }


def ratio(a, b):
    return f"{a / b:.2f}x" if a < 10 * b else f"{a / b:.1f}x"


def main():
    text = pathlib.Path(ARGS.prompt_file).read_text(encoding="utf-8")
    ids = prompt_ids(text)
    prompt, new = len(ids), ARGS.new_tokens
    model = ref.load_model(ARGS.model)
    torch.set_num_threads(ARGS.threads[0])
    header = environment_header(check_matmul())
    for line in header.pop("lines"):
        print(line)
    print(f"model      {ARGS.model}, prompt {ARGS.prompt_file}: P = {prompt} tokens (bos + text, ids from "
          f"`minigen tokenize --bos`), N = {new} greedy tokens, eos ignored")
    print(f"timing     median of {ARGS.runs} runs after 1 warm-up; minigen: its own --json stats (generate only); "
          f"PyTorch: in-process around generate(); both exclude model loading")
    if ARGS.weights:
        print(f"minigen    --weights {ARGS.weights}")

    results = []  # one entry per (engine, cache, threads)
    for threads in ARGS.threads:
        torch.set_num_threads(threads)
        for use_cache in (True, False):
            for engine in ("PyTorch", "minigen"):
                print(f"running {engine} cache {'on' if use_cache else 'off'} threads {threads} ...",
                      file=sys.stderr, flush=True)
                if engine == "PyTorch":
                    summary = measure(lambda: run_reference(model, ids, use_cache))
                else:
                    summary = measure(lambda: run_minigen(threads, use_cache))
                    if summary["runs"][0]["prompt_tokens"] != prompt:
                        raise SystemExit(f"minigen fed {summary['runs'][0]['prompt_tokens']} prompt tokens, "
                                         f"tokenize gave {prompt}: the engines would not see the same ids")
                results.append({"engine": engine, "cache": use_cache, "threads": threads, **summary})

    def find(engine, use_cache, threads):
        return next(r for r in results if (r["engine"], r["cache"], r["threads"]) == (engine, use_cache, threads))

    print()
    print(f"{'engine':8s} {'cache':5s} {'threads':>7s} {'TTFT ms':>9s} {'ITL ms':>8s} {'decode tok/s':>12s} "
          f"{'total ms':>9s}")
    for threads in ARGS.threads:
        for use_cache in (True, False):
            for engine in ("PyTorch", "minigen"):
                r = find(engine, use_cache, threads)
                print(f"{engine:8s} {'on' if use_cache else 'off':5s} {threads:7d} {r['ttft_ms']:9.1f} "
                      f"{r['itl_ms']:8.2f} {r['decode_tokens_per_s']:12.1f} {r['total_ms']:9.1f}")

    print("\nminigen vs PyTorch (how many times faster minigen is: tok/s ratio, time ratios PyTorch ÷ minigen)")
    print(f"{'cache':5s} {'threads':>7s} {'decode tok/s':>12s} {'TTFT':>8s} {'total':>8s}")
    speedups = []
    for threads in ARGS.threads:
        for use_cache in (True, False):
            torch_r, mini_r = find("PyTorch", use_cache, threads), find("minigen", use_cache, threads)
            speedup = {"cache": use_cache, "threads": threads,
                       "decode_tokens_per_s": mini_r["decode_tokens_per_s"] / torch_r["decode_tokens_per_s"],
                       "ttft": torch_r["ttft_ms"] / mini_r["ttft_ms"], "total": torch_r["total_ms"] / mini_r["total_ms"]}
            speedups.append(speedup)
            print(f"{'on' if use_cache else 'off':5s} {threads:7d} {ratio(mini_r['decode_tokens_per_s'], torch_r['decode_tokens_per_s']):>12s} "
                  f"{ratio(torch_r['ttft_ms'], mini_r['ttft_ms']):>8s} {ratio(torch_r['total_ms'], mini_r['total_ms']):>8s}")

    # Tokens that enter forward: with the cache P + N − 1 (the prompt once, then one token per step, the last new
    # token never fed); without it the whole sequence every step, P·N + N(N−1)/2.
    cached_tokens = prompt + new - 1
    uncached_tokens = prompt * new + new * (new - 1) // 2
    token_ratio = uncached_tokens / cached_tokens
    print(f"\ncache off ÷ on, time (forward tokens: {uncached_tokens:,} / {cached_tokens:,} = {token_ratio:.1f}x)")
    print(f"{'engine':8s} {'threads':>7s} {'total':>8s} {'ITL':>8s} {'TTFT':>8s}")
    cache_ratios = []
    for threads in ARGS.threads:
        for engine in ("PyTorch", "minigen"):
            on, off = find(engine, True, threads), find(engine, False, threads)
            cache_ratios.append({"engine": engine, "threads": threads, "total": off["total_ms"] / on["total_ms"],
                                 "itl": off["itl_ms"] / on["itl_ms"], "ttft": off["ttft_ms"] / on["ttft_ms"]})
            print(f"{engine:8s} {threads:7d} {ratio(off['total_ms'], on['total_ms']):>8s} "
                  f"{ratio(off['itl_ms'], on['itl_ms']):>8s} {ratio(off['ttft_ms'], on['ttft_ms']):>8s}")

    # Greedy on the same ids: every run of both engines, cache on or off, must give the same N ids.
    all_ids = [ids_ for r in results for ids_ in r["token_ids"]]
    identical = all(run_ids == all_ids[0] for run_ids in all_ids) and len(all_ids[0]) == new
    print(f"\ntoken ids identical: {'yes' if identical else 'no'} ({len(all_ids)} runs, {new} tokens each)")
    if not identical:
        for r in results:
            print(f"  {r['engine']} cache {'on' if r['cache'] else 'off'} threads {r['threads']}: {r['token_ids'][0]}")
    # Not used in the table: minigen's whole process also loads the model and tokenizer, which PyTorch does once.
    minigen_process = [f"cache {'on' if r['cache'] else 'off'} threads {r['threads']}: {r['process_ms']:.0f}"
                       for r in results if r["engine"] == "minigen"]
    print(f"minigen process wall time incl. loading (ms, median): {'; '.join(minigen_process)}")

    load_at_end = list(os.getloadavg())
    print("load average at end: " + " ".join(f"{x:.2f}" for x in load_at_end) + " (other jobs share these cores)")

    if ARGS.json:
        header["load_average_at_end"] = load_at_end
        report = {"environment": header, "settings": {"model": ARGS.model, "prompt_file": ARGS.prompt_file,
                                                      "prompt_tokens": prompt, "new_tokens": new, "runs": ARGS.runs,
                                                      "threads": ARGS.threads, "minigen": ARGS.minigen,
                                                      "weights": ARGS.weights, "prompt_ids": ids},
                  "results": [{k: v for k, v in r.items() if k != "token_ids"} | {"token_ids": r["token_ids"][0]}
                              for r in results],
                  "minigen_speedup": speedups, "cache_off_over_on": cache_ratios,
                  "forward_tokens": {"cache": cached_tokens, "no_cache": uncached_tokens, "ratio": token_ratio},
                  "token_ids_identical": identical}
        with open(ARGS.json, "w") as stream:
            json.dump(report, stream, indent=2)
        print(f"numbers: {ARGS.json}")
    sys.exit(0 if identical else 1)


if __name__ == "__main__":
    main()
