#!/usr/bin/python3
"""Times MiniMind's OWN GRPO rollout path, trainer/rollout_engine.py's TorchRolloutEngine.rollout, on CPU.

    mkdir -p /tmp/minimind && git --git-dir=/work/.mirror/jingyaogong+minimind/repo archive HEAD model trainer \\
        | tar -x -C /tmp/minimind
    /usr/bin/python3 tools/rollout/time_torch_rollout.py --minimind /tmp/minimind --model tiny-sft
    /usr/bin/python3 tools/rollout/time_torch_rollout.py --minimind /tmp/minimind --model random-64m --new-tokens 32

Run with Debian's torch (`/usr/bin/python3`, package python3-torch) from any directory. What is timed is exactly
`TorchRolloutEngine(policy_model, tokenizer, device="cpu", autocast_ctx=nullcontext()).rollout(prompt_ids,
attention_mask, num_generations=G, max_new_tokens=N, temperature=T)`: MiniMind's model.generate (its own sampling
loop with its own KV cache, MiniMindForCausalLM.generate, not Hugging Face's GenerationMixin) on the B prompts each
repeated G times, then compute_per_token_logps (a second full forward over prompt + completion for the per-token
logprobs GRPO needs), then tokenizer.batch_decode. model/model_minimind.py and trainer/rollout_engine.py are imported
from the --minimind checkout at run time (minimind_checkout.py) and run unmodified; nothing of MiniMind's is copied
here. The `transformers` names they import come from tools/reference/transformers_stub (Debian 12 has no
transformers; see its README).

What is NOT MiniMind's here:
  * the tokenizer: a stand-in carrying pad/eos ids (read from the model's tokenizer_config.json) whose batch_decode
    returns a placeholder string per row; MiniMind's real tokenizer would turn ids into text, a cost that is small
    next to the model (it is timed separately and reported as decode_s);
  * the prompts: fixed pseudo-random ids in 3..6399 (no special tokens), all of length P unless --ragged, in which
    case they are left-padded with pad_token_id as train_grpo.py's tokenizer(..., padding_side="left") would do;
  * eos: by default the stand-in tokenizer's eos_token_id is None, which MiniMind's generate reads as "no eos", so
    every row runs the full N tokens and the throughput does not depend on when a model happens to emit <|im_end|>.
    --eos-id ID (e.g. 2) uses a real eos: generate then stops only when EVERY row has finished (finished rows keep
    being computed and are filled with eos), so the slots computed are still B*G*R for R = the longest row.

Environment (set before torch loads, each only if the environment does not already set it): OPENBLAS_CORETYPE=SkylakeX
(OpenBLAS 0.3.21 misdetects this CPU), OPENBLAS_NUM_THREADS=--threads, OMP_WAIT_POLICY=PASSIVE (--omp-wait-policy;
libgomp's spinning workers are 2-4x slower when another job shares the cores); torch.set_num_threads(--threads, 2).
Debian's torch uses whatever libblas.so.3 the system's alternative names: the script reports the library it loaded
and warns unless it is OpenBLAS (Debian's reference BLAS makes these matmuls ~10x slower), after checking one matmul.

Timing split (by wrapping, not changing, MiniMind's functions on this process's objects): generate_s = the model's
generate call, of which prefill_s is its first forward and decode_forward_s the other forwards (the rest of
generate_s is its sampling: temperature, top-k, top-p sort, multinomial, and the torch.cat of ids and masks);
logprob_s = compute_per_token_logps; decode_s = batch_decode. tokens_per_s = completion slots computed (B*G*R) /
rollout_s.
"""
import argparse
import os

# OpenBLAS misdetects this CPU (wrong kernels or a crash); must be set before torch loads OpenBLAS.
_CORETYPE_WAS_SET = "OPENBLAS_CORETYPE" in os.environ
os.environ.setdefault("OPENBLAS_CORETYPE", "SkylakeX")
# Debian's OpenBLAS (pthread build) starts its own threads, one per core unless told; match --threads.
_early = argparse.ArgumentParser(add_help=False)
_early.add_argument("--threads", type=int, default=2)
_early.add_argument("--omp-wait-policy", default="PASSIVE")
_EARLY = _early.parse_known_args()[0]
os.environ.setdefault("OPENBLAS_NUM_THREADS", str(_EARLY.threads))
# torch's OpenMP workers spin (ACTIVE) by default; when another job shares the two cores, spinning workers wait on
# each other and small ops take milliseconds (MiniMind's prefill measured 7x slower here under a C++ build). Read by
# libgomp when torch loads it, so it is set here; --omp-wait-policy unset leaves the environment alone.
_OMP_WAIT_WAS_SET = "OMP_WAIT_POLICY" in os.environ
if _EARLY.omp_wait_policy.lower() != "unset":
    os.environ.setdefault("OMP_WAIT_POLICY", _EARLY.omp_wait_policy)

import datetime  # noqa: E402
import inspect  # noqa: E402
import json  # noqa: E402
import pathlib  # noqa: E402
import platform  # noqa: E402
import resource  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from contextlib import nullcontext  # noqa: E402

import torch  # noqa: E402

import minimind_checkout  # noqa: E402  (tools/rollout/minimind_checkout.py: MiniMind's code from a checkout)

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parent.parent
# tools/reference (safetensors_io) and, before it, the transformers stand-in: MiniMind's model code and
# rollout_engine.py import transformers; the stub provides what they touch.
minimind_checkout.use_transformers_stub(with_reference=True)
from safetensors_io import read_safetensors  # noqa: E402

MODELS = {"tiny-sft": REPO / "models" / "minigen-tiny-sft"}
PROMPT_SEED = 1234
# MiniMindConfig keyword arguments taken from a config.json when present (dropout is forced to 0: inference).
CONFIG_KEYS = ("hidden_size", "num_hidden_layers", "use_moe", "vocab_size", "bos_token_id", "eos_token_id",
               "flash_attn", "num_attention_heads", "num_key_value_heads", "head_dim", "hidden_act",
               "intermediate_size", "max_position_embeddings", "rms_norm_eps", "rope_theta", "tie_word_embeddings",
               "inference_rope_scaling", "num_experts", "num_experts_per_tok", "moe_intermediate_size",
               "norm_topk_prob", "router_aux_loss_coef")


def log(message):
    print(message, file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------------------------
# MiniMind's code, imported from a checkout
# ---------------------------------------------------------------------------------------------------------------

def check_own_generate(model_code):
    """TorchRolloutEngine.rollout calls policy_model.generate(input_ids=, attention_mask=, max_new_tokens=,
    do_sample=True, temperature=, num_return_sequences=1, pad_token_id=, eos_token_id=). MiniMind's model defines
    its own generate; with the stub's empty GenerationMixin nothing else could run, so insist on it."""
    cls = model_code.MiniMindForCausalLM
    owner = next((klass for klass in cls.__mro__ if "generate" in vars(klass)), None)
    if owner is not cls:
        sys.exit("error: this MiniMind's MiniMindForCausalLM defines no generate() of its own (it would rely on "
                 "Hugging Face's GenerationMixin, which the stub does not provide); this script does not imitate it")
    defaults = {name: p.default for name, p in inspect.signature(cls.generate).parameters.items()
                if p.default is not inspect.Parameter.empty and isinstance(p.default, (int, float, bool))}
    return defaults


# ---------------------------------------------------------------------------------------------------------------
# Models
# ---------------------------------------------------------------------------------------------------------------

def load_state(model_dir):
    safetensors_path = model_dir / "model.safetensors"
    bin_path = model_dir / "pytorch_model.bin"
    if safetensors_path.is_file():
        arrays, _ = read_safetensors(safetensors_path)
        return {name: torch.from_numpy(array) for name, array in arrays.items()}, safetensors_path.name
    if bin_path.is_file():
        return torch.load(bin_path, map_location="cpu"), bin_path.name
    sys.exit(f"error: {model_dir} has neither model.safetensors nor pytorch_model.bin")


def build_from_dir(model_code, model_dir):
    """MiniMindForCausalLM with a MiniMindConfig from config.json and the directory's weights, strictly loaded."""
    config = json.loads((model_dir / "config.json").read_text())
    kwargs = {key: config[key] for key in CONFIG_KEYS if key in config}
    kwargs["dropout"] = 0.0
    mm_config = model_code.MiniMindConfig(**kwargs)
    model = model_code.MiniMindForCausalLM(mm_config)
    state, weights_file = load_state(model_dir)
    state = {name.removeprefix("_orig_mod."): tensor.float() for name, tensor in state.items()}
    if "lm_head.weight" not in state and mm_config.tie_word_embeddings:
        state["lm_head.weight"] = state["model.embed_tokens.weight"]  # tied: MiniMind's lm_head IS embed_tokens
    if mm_config.tie_word_embeddings and not torch.equal(state["lm_head.weight"], state["model.embed_tokens.weight"]):
        sys.exit(f"error: {model_dir}: tie_word_embeddings but lm_head and embed_tokens differ")
    try:
        model.load_state_dict(state, strict=True)
    except RuntimeError as error:
        sys.exit(f"error: {model_dir}/{weights_file} does not fit MiniMind's current model code "
                 f"(MiniMind2-era weights have no q_norm/k_norm): {error}")
    return model, f"{model_dir} ({weights_file}, strict load)"


def build_random_64m(model_code, seed):
    """minimind-3 as MiniMind's README names it (64M): MiniMindConfig's defaults, hidden 768, 8 layers; random
    weights (PyTorch's default init under torch.manual_seed(seed): the stub's post_init initialises nothing)."""
    torch.manual_seed(seed)
    model = model_code.MiniMindForCausalLM(model_code.MiniMindConfig(hidden_size=768, num_hidden_layers=8,
                                                                     dropout=0.0))
    return model, f"MiniMindConfig() defaults (minimind-3, '64M'), random weights, seed {seed}"


def special_ids(model_dir):
    """(pad id, eos id) from a tokenizer_config.json: pad_token '<|endoftext|>' = 0 and eos_token '<|im_end|>' = 2 for
    MiniMind's tokenizer (also used when the directory has none)."""
    path = None if model_dir is None else model_dir / "tokenizer_config.json"
    if path is None or not path.is_file():
        return 0, 2, "MiniMind's tokenizer ids (<|endoftext|> 0, <|im_end|> 2)"
    config = json.loads(path.read_text())
    by_content = {entry["content"]: int(index) for index, entry in config.get("added_tokens_decoder", {}).items()}
    pad = by_content[config.get("pad_token") or "<|endoftext|>"]
    eos = by_content[config["eos_token"]]
    return pad, eos, f"{path}: pad_token {config.get('pad_token')!r} = {pad}, eos_token {config['eos_token']!r} = {eos}"


class StandInTokenizer:
    """NOT MiniMind's tokenizer: what TorchRolloutEngine.rollout reads of one (pad_token_id, eos_token_id,
    batch_decode). batch_decode returns a placeholder per row instead of text (its time is reported as decode_s)."""

    def __init__(self, pad_token_id, eos_token_id):
        self.pad_token_id = pad_token_id
        self.eos_token_id = eos_token_id
        self.decode_seconds = 0.0

    def batch_decode(self, sequences, skip_special_tokens=True):
        start = time.perf_counter()
        texts = [f"<{len(row)} ids, not decoded>" for row in sequences.tolist()]
        self.decode_seconds += time.perf_counter() - start
        return texts


# ---------------------------------------------------------------------------------------------------------------
# Timing probes: wrappers on this process's objects; MiniMind's code runs unchanged inside them
# ---------------------------------------------------------------------------------------------------------------

class Probes:
    def __init__(self, model, engine_code):
        self.reset()
        original_generate = model.generate
        original_forward = model.forward
        original_logps = engine_code.compute_per_token_logps
        probes = self

        def generate(*args, **kwargs):
            probes.in_generate = True
            start = time.perf_counter()
            try:
                return original_generate(*args, **kwargs)
            finally:
                probes.generate_s += time.perf_counter() - start
                probes.in_generate = False

        def forward(*args, **kwargs):
            start = time.perf_counter()
            try:
                return original_forward(*args, **kwargs)
            finally:
                if probes.in_generate:
                    probes.forward_times.append(time.perf_counter() - start)

        def compute_per_token_logps(*args, **kwargs):
            start = time.perf_counter()
            try:
                return original_logps(*args, **kwargs)
            finally:
                probes.logprob_s += time.perf_counter() - start

        model.generate = generate  # instance attributes: rollout() calls model.generate, generate self.forward
        model.forward = forward
        engine_code.compute_per_token_logps = compute_per_token_logps  # rollout() looks this global up per call

    def reset(self):
        self.in_generate = False
        self.generate_s = 0.0
        self.logprob_s = 0.0
        self.forward_times = []


def make_prompts(batch, length, vocab, pad_id, ragged):
    generator = torch.Generator().manual_seed(PROMPT_SEED)
    ids = torch.randint(3, vocab, (batch, length), generator=generator)
    mask = torch.ones(batch, length, dtype=torch.long)
    if ragged:  # row i is shorter by (i * 7) mod (P / 2) tokens, left-padded with pad_id as train_grpo.py pads
        for row in range(batch):
            cut = (row * 7) % max(1, length // 2)
            ids[row, :cut] = pad_id
            mask[row, :cut] = 0
    return ids, mask


def loaded_blas():
    """The library that libblas.so.3 resolved to in this process (Debian's torch links libblas.so.3, whichever the
    system's alternative or LD_LIBRARY_PATH points to; reference BLAS is ~10x slower than OpenBLAS for these
    matmuls). Reference BLAS is mapped under its own name (libblas.so.3.x); OpenBLAS's libblas.so.3 is a link to
    libopenblas*.so, which may also be mapped for liblapack.so.3 alone, so reference BLAS is looked for first."""
    with open("/proc/self/maps") as maps:
        paths = {line.split()[-1] for line in maps if len(line.split()) >= 6}
    for wanted in ("libblas.so", "libopenblas", "libblis", "libmkl"):
        for path in sorted(paths):
            if pathlib.Path(path).name.startswith(wanted):
                return path
    return "(none)"


def check_blas():
    """One float32 matmul against a float64 naive product: a misdetected OpenBLAS kernel computes garbage."""
    generator = torch.Generator().manual_seed(0)
    a = torch.randn(64, 256, generator=generator)
    b = torch.randn(256, 96, generator=generator)
    error = ((a @ b).double() - (a.double()[:, :, None] * b.double()[None, :, :]).sum(1)).abs().max().item()
    if not error < 1e-3:
        sys.exit(f"error: BLAS self-check failed (matmul off by {error}); check OPENBLAS_CORETYPE")
    blas = loaded_blas()
    if "openblas" not in blas:
        log(f"warning: BLAS is {blas}, not OpenBLAS: torch's matmuls will be several times slower")
    return blas, error


def cpu_model_name():
    try:
        for line in subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout.splitlines():
            if line.startswith("Model name:"):
                return line.split(":", 1)[1].strip()
    except (subprocess.CalledProcessError, FileNotFoundError):
        pass
    return platform.processor() or "unknown"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minimind", required=True, help="a MiniMind checkout (model/ and trainer/)")
    parser.add_argument("--minimind-rev", help="MiniMind commit to report (default: git rev-parse in --minimind)")
    parser.add_argument("--model", choices=sorted([*MODELS, "random-64m"]), default="tiny-sft")
    parser.add_argument("--model-dir", type=pathlib.Path,
                        help="a MiniMind-format HF directory (config.json + model.safetensors or pytorch_model.bin); "
                             "overrides --model")
    parser.add_argument("--batch", type=int, default=4, help="B: prompts")
    parser.add_argument("--generations", type=int, default=6, help="G: completions per prompt")
    parser.add_argument("--new-tokens", type=int, default=256, help="N: max_new_tokens")
    parser.add_argument("--prompt-tokens", type=int, default=40, help="P: prompt length")
    parser.add_argument("--ragged", action="store_true", help="prompts of different lengths, left-padded")
    parser.add_argument("--temperature", type=float, default=0.8)
    parser.add_argument("--eos-id", default="none",
                        help="the stand-in tokenizer's eos_token_id: 'none' (default: rows never stop early) or an id")
    parser.add_argument("--threads", type=int, default=2, help="torch.set_num_threads (and OPENBLAS_NUM_THREADS)")
    parser.add_argument("--omp-wait-policy", default="PASSIVE",
                        help="OMP_WAIT_POLICY unless the environment has one: PASSIVE (default), ACTIVE (libgomp's "
                             "default behaviour), or 'unset'")
    parser.add_argument("--seed", type=int, default=0, help="random-64m weights and the sampling seed")
    parser.add_argument("--warmup-tokens", type=int, default=4,
                        help="an untimed rollout of this many new tokens first (0: none)")
    parser.add_argument("--repeats", type=int, default=1, help="timed rollouts (each is reported)")
    args = parser.parse_args()

    torch.set_num_threads(args.threads)
    blas, blas_error = check_blas()
    checkout = pathlib.Path(args.minimind)
    model_code, engine_code, stubbed_requests = minimind_checkout.import_minimind(checkout)
    generate_defaults = check_own_generate(model_code)

    model_dir = args.model_dir or MODELS.get(args.model)
    if model_dir is not None:
        model_dir = pathlib.Path(model_dir)
        model, source = build_from_dir(model_code, model_dir)
        model_name = str(args.model_dir) if args.model_dir else args.model
    else:
        model, source = build_random_64m(model_code, args.seed)
        model_name = args.model
    model.eval()
    config = model.config
    parameters = sum(p.numel() for p in model.parameters())  # tied embedding counted once

    pad_id, real_eos, special_source = special_ids(model_dir)
    eos_id = None if args.eos_id.lower() == "none" else int(args.eos_id)
    tokenizer = StandInTokenizer(pad_id, eos_id)
    engine = engine_code.TorchRolloutEngine(model, tokenizer, device="cpu", autocast_ctx=nullcontext())
    probes = Probes(model, engine_code)
    prompt_ids, attention_mask = make_prompts(args.batch, args.prompt_tokens, config.vocab_size, pad_id, args.ragged)

    def rollout(new_tokens):
        return engine.rollout(prompt_ids, attention_mask, num_generations=args.generations,
                              max_new_tokens=new_tokens, temperature=args.temperature)

    log(f"BLAS {blas} (self-check |error| {blas_error:.1e}); OPENBLAS_CORETYPE={os.environ['OPENBLAS_CORETYPE']} "
        f"({'from the environment' if _CORETYPE_WAS_SET else 'set by this script'}), "
        f"OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY', '(unset)')}; torch {torch.__version__}, "
        f"{torch.get_num_threads()} threads; model {model_name}: {source}, {parameters / 1e6:.1f}M parameters")
    if args.warmup_tokens > 0:
        torch.manual_seed(args.seed)
        rollout(args.warmup_tokens)
    runs = []
    for repeat in range(args.repeats):
        probes.reset()
        tokenizer.decode_seconds = 0.0
        torch.manual_seed(args.seed + repeat)
        start = time.perf_counter()
        result = rollout(args.new_tokens)
        rollout_s = time.perf_counter() - start

        rows, slots = result.completion_ids.shape
        is_eos = result.completion_ids == real_eos
        has_eos = is_eos.any(dim=1)
        first_eos = torch.where(has_eos, is_eos.int().argmax(dim=1), torch.full_like(has_eos, slots, dtype=torch.long))
        # train_grpo.py's completion_mask: tokens up to and including the first <|im_end|>
        until_eos = int(torch.minimum(first_eos + 1, torch.full_like(first_eos, slots)).sum())
        logps = result.per_token_logps
        if logps.shape != (rows, slots) or not torch.isfinite(logps).all():
            sys.exit(f"error: per_token_logps {tuple(logps.shape)} (expected {(rows, slots)}) or not finite")
        computed = rows * slots
        forwards = probes.forward_times
        runs.append({
            "rollout_s": round(rollout_s, 4),
            "tokens_per_s": round(computed / rollout_s, 2),
            "completion_tokens": computed,
            "completion_slots_per_row": slots,
            "tokens_until_first_real_eos": until_eos,
            "rows_with_real_eos": int(has_eos.sum()),
            "completion_mask_sum": int(result.completion_mask.sum()),
            "generate_s": round(probes.generate_s, 4),
            "generate_tokens_per_s": round(computed / probes.generate_s, 2) if probes.generate_s else None,
            "prefill_s": round(forwards[0], 4) if forwards else None,
            "decode_forward_s": round(sum(forwards[1:]), 4),
            "generate_forwards": len(forwards),
            "sampling_and_other_in_generate_s": round(probes.generate_s - sum(forwards), 4),
            "logprob_s": round(probes.logprob_s, 4),
            "decode_s": round(tokenizer.decode_seconds, 6),
            "rest_s": round(rollout_s - probes.generate_s - probes.logprob_s - tokenizer.decode_seconds, 4),
            "max_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        })
        log(f"run {repeat + 1}/{args.repeats}: {runs[-1]}")

    best = max(runs, key=lambda run: run["tokens_per_s"])
    record = {
        "tool": "tools/rollout/time_torch_rollout.py",
        "what": "MiniMind trainer/rollout_engine.py TorchRolloutEngine.rollout: model.generate (MiniMind's own) + "
                "compute_per_token_logps + batch_decode (stand-in tokenizer)",
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "cpu": cpu_model_name(),
        "nproc": os.cpu_count(),
        "loadavg_at_end": [round(x, 2) for x in os.getloadavg()],
        "torch": torch.__version__,
        "python": platform.python_version(),
        "threads": torch.get_num_threads(),
        "openblas_coretype": os.environ["OPENBLAS_CORETYPE"],
        "openblas_coretype_set_by_script": not _CORETYPE_WAS_SET,
        "openblas_num_threads": os.environ["OPENBLAS_NUM_THREADS"],
        "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY", "(unset: libgomp spins)"),
        "omp_wait_policy_from_environment": _OMP_WAIT_WAS_SET,
        "blas": blas,
        "minimind": str(checkout.resolve()),
        "minimind_rev": (args.minimind_rev or minimind_checkout.git_commit(checkout)
                         or "unknown (not a git checkout; pass --minimind-rev)"),
        "requests_stubbed": stubbed_requests,
        "sdpa_prefill": bool(getattr(config, "flash_attn", False)
                             and hasattr(torch.nn.functional, "scaled_dot_product_attention")),
        "model": model_name,
        "model_source": source,
        "parameters": parameters,
        "config": {key: getattr(config, key) for key in ("hidden_size", "num_hidden_layers", "num_attention_heads",
                                                         "num_key_value_heads", "head_dim", "intermediate_size",
                                                         "vocab_size", "tie_word_embeddings", "use_moe")},
        "batch": args.batch, "generations": args.generations, "rows": args.batch * args.generations,
        "prompt_tokens": args.prompt_tokens, "ragged": args.ragged, "new_tokens": args.new_tokens,
        "temperature": args.temperature,
        "generate_defaults_in_effect": {k: generate_defaults[k] for k in ("top_k", "top_p", "repetition_penalty")
                                        if k in generate_defaults},
        "pad_token_id": pad_id, "eos_token_id_passed": eos_id, "real_eos_id": real_eos, "special_ids": special_source,
        "tokenizer": "stand-in: pad/eos ids only, batch_decode returns placeholders (not MiniMind's tokenizer)",
        "warmup_tokens": args.warmup_tokens,
        "runs": runs,
        "best": best,
    }
    sampling = ", ".join(f"{k} {v}" for k, v in record["generate_defaults_in_effect"].items())
    human = (f"MiniMind TorchRolloutEngine.rollout, {model_name} ({parameters / 1e6:.1f}M params), "
             f"B{args.batch} G{args.generations} P{args.prompt_tokens} N{args.new_tokens} T{args.temperature} "
             f"({sampling} from generate's defaults), {record['threads']} threads, torch {torch.__version__}, "
             f"BLAS {blas}, OPENBLAS_CORETYPE={record['openblas_coretype']}"
             f"{' (set by this script)' if record['openblas_coretype_set_by_script'] else ''}, "
             f"OMP_WAIT_POLICY={record['omp_wait_policy']}: "
             f"{best['completion_tokens']} completion tokens in {best['rollout_s']:.2f} s = "
             f"{best['tokens_per_s']:.1f} tok/s (generate {best['generate_s']:.2f} s [prefill {best['prefill_s']:.2f} s, "
             f"decode forwards {best['decode_forward_s']:.2f} s, sampling/other {best['sampling_and_other_in_generate_s']:.2f} s], "
             f"logprob pass {best['logprob_s']:.2f} s); eos {'none: rows never stop early' if eos_id is None else eos_id}"
             f"{'' if args.repeats == 1 else f'; best of {args.repeats}'}")
    print(human)
    print(json.dumps(record, ensure_ascii=False), flush=True)


if __name__ == "__main__":
    main()
