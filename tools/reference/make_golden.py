#!/usr/bin/python3
"""Regenerates every golden fixture in tests/data/golden/ from the reference implementation.

    /usr/bin/python3 tools/reference/make_golden.py            # random-weight models + sampler masks
    /usr/bin/python3 tools/reference/make_golden.py --shipped  # also models/minigen-tiny-{base,sft} if present
    /usr/bin/python3 tools/reference/make_golden.py --shipped-only

Run from the repository root after building build/minigen (the weights come from `minigen init-random`, the same
random_weights(config, seed) the C++ tests call). For each family it writes <family>.safetensors (fp32) with,
for three fixed prompts p0, p1, p2 of 1, 7 and 24 tokens:
  prompt.p{k}        [T]       the prompt ids (as float32; also in __metadata__["prompts"])
  logits.p{k}        [T, V]    logits at every prompt position, one forward without cache
  greedy.p{k}        [64]      MiniMind's generate, greedy, KV cache, eos ignored (float32 ids); cache off agrees
  greedy_margin.p{k} [64]      top-1 minus top-2 of the logits (÷ temperature) at each greedy step
  step_top_ids.p{k}  [64, 8]   at each greedy step: the 8 largest logits' ids (float32) …
  step_top.p{k}      [64, 8]   … and values, from the cached decode (tests cached decode logits numerically)
  greedy_penalty.p{k}, greedy_penalty_margin.p{k}  [64]   the same greedy run with repetition penalty 2
__metadata__ holds family, seed, layers, prompts, the generate settings, the model's config.json, and a
fingerprint of the weights (embed_tokens_first8, and weights_sha256 of the model.safetensors init-random wrote).
The shipped models (--shipped) get <name>.safetensors with the same tensors for three real prompts instead: two base
prompts (bos + KJV text, bos + a dictionary entry's head) and one ChatML question; __metadata__["prompt_texts"] holds
[kind, text] for each, the ids come from tools/train/bpe.py (a Python tokenizer independent of minigen's), so the C++
test also checks that minigen's tokenizer and chat template give the same ids.
sampler_masks.json holds kept-token masks of the filter chain on hand-picked logit vectors.

Needs only Debian's torch and numpy; threads are limited to one.
"""
import argparse
import hashlib
import json
import pathlib
import subprocess
import sys
import tempfile

import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import minimind_reference as ref  # noqa: E402
from safetensors_io import write_safetensors  # noqa: E402

torch.set_num_threads(1)

# (family, --layers override or None for the family's own count): the four real families with 2 layers, as the
# C++ tests' test_config() builds them.
RANDOM_MODELS = (("tiny", None), ("minimind3", 2), ("minimind3-moe", 2), ("minimind2", 2), ("minimind2-moe", 2))
SEED = 1  # the C++ tests' random_test_model default
SHIPPED_MODELS = ("minigen-tiny-base", "minigen-tiny-sft")
PROMPT_LENGTHS = (1, 7, 24)
# Prompts of the shipped models: ("base", text) is bos + text, ("chat", question) a one-turn ChatML prompt with the
# generation prompt in its non-thinking form (empty think block), as `minigen generate --chat` builds it.
SHIPPED_PROMPTS = (("base", "Genesis 1:1 In the beginning"),
                   ("base", "river\n(noun)\n1."),
                   ("chat", "What does 'river' mean?"))
GREEDY_TOKENS = 64
STEP_TOP = 8
VOCAB_SIZE = 6400
# MiniMind's generate defaults, with the draw replaced by argmax; eos None = ignore eos, always 64 new tokens.
GREEDY_SETTINGS = dict(temperature=0.85, top_k=50, top_p=0.85, top_p_rule="minimind", repetition_penalty=1.0,
                       min_p=0.0, do_sample=False, eos_token_id=None, max_new_tokens=GREEDY_TOKENS)
# The same greedy run through MiniMind's repetition penalty. Random models fall into loops of one token (the wide
# 2-layer families mostly repeat the last prompt token), which penalty 2 breaks: 4 to 64 distinct tokens per run,
# so the cache is read at many different positions. The price is smaller argmax margins (greedy_penalty_margin).
PENALTY_SETTINGS = {**GREEDY_SETTINGS, "repetition_penalty": 2.0}


def prompt_ids(prompt_index, length):
    """Deterministic prompt ids spread over the vocabulary: (i·37 + k·101 + 5) mod 6400."""
    return [(i * 37 + prompt_index * 101 + 5) % VOCAB_SIZE for i in range(length)]


def shipped_prompt_ids(model_dir):
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "train"))
    from bpe import ByteLevelBPE
    tokenizer = ByteLevelBPE.load(str(model_dir))
    prompts = []
    for kind, text in SHIPPED_PROMPTS:
        if kind == "base":
            prompts.append([tokenizer.token_id("<|im_start|>")] + tokenizer.encode(text))
        else:
            prompts.append(tokenizer.encode(f"<|im_start|>user\n{text}<|im_end|>\n"
                                            f"<|im_start|>assistant\n<think>\n\n</think>\n\n"))
    return prompts


def init_random(minigen, family, layers, out_dir, tokenizer):
    command = [str(minigen), "init-random", "--family", family, "--seed", str(SEED), "--out", str(out_dir)]
    if layers is not None:
        command += ["--layers", str(layers)]
    if tokenizer is not None:
        command += ["--tokenizer", str(tokenizer)]
    subprocess.run(command, check=True)


def cached_decode_logits(model, prompt, tokens):
    """Last-position logits of each generate step [len(tokens), V], from a cached decode: the prompt in one call,
    then one token per call, as generate feeds them."""
    cache = model.new_cache()
    step_logits = [model.forward(torch.tensor([prompt]), cache)[0, -1]]
    for token in tokens[:-1]:
        step_logits.append(model.forward(torch.tensor([[token]]), cache)[0, -1])
    return torch.stack(step_logits)


def greedy_continuation(model, prompt, settings, description):
    """generate's greedy tokens with the cache, checked against generate without cache."""
    ids = torch.tensor([prompt])
    with_cache = ref.generate(model, ids, use_cache=True, **settings)[0, len(prompt):]
    without_cache = ref.generate(model, ids, use_cache=False, **settings)[0, len(prompt):]
    if not torch.equal(with_cache, without_cache):
        first = int((with_cache != without_cache).nonzero()[0])
        raise AssertionError(f"{description}: greedy with cache differs from without at step {first}")
    return with_cache.tolist()


def argmax_margins(model, prompt, tokens, settings, description):
    """Top-1 minus top-2 of the logits argmax chose from at each step: temperature and repetition penalty applied
    (top-k and top-p never change the argmax). Also checks the argmax is the token generate chose."""
    step_logits = cached_decode_logits(model, prompt, tokens) / settings["temperature"]
    margins = []
    for step, token in enumerate(tokens):
        logits = step_logits[step:step + 1]
        if settings["repetition_penalty"] != 1.0:
            logits = ref.apply_repetition_penalty(logits, [prompt + tokens[:step]], settings["repetition_penalty"])
        top = torch.topk(logits[0], 2)
        if int(top.indices[0]) != token:
            raise AssertionError(f"{description}: step {step} argmax {int(top.indices[0])}, generate chose {token}")
        margins.append(float(top.values[0] - top.values[1]))
    return torch.tensor(margins)


def model_fixture(model, description, prompts):
    """(tensors, metadata) for one model: prompt logits, greedy continuations with cache (checked against cache
    off), their argmax margins and the cached decode's top logits."""
    tensors = {}
    for k, prompt in enumerate(prompts):
        name = f"{description} p{k}"
        tensors[f"prompt.p{k}"] = torch.tensor(prompt, dtype=torch.float32)
        tensors[f"logits.p{k}"] = model.forward(torch.tensor([prompt]))[0]

        greedy = greedy_continuation(model, prompt, GREEDY_SETTINGS, name)
        tensors[f"greedy.p{k}"] = torch.tensor(greedy, dtype=torch.float32)
        tensors[f"greedy_margin.p{k}"] = argmax_margins(model, prompt, greedy, GREEDY_SETTINGS, name)
        top = torch.topk(cached_decode_logits(model, prompt, greedy), STEP_TOP, dim=-1)
        tensors[f"step_top_ids.p{k}"] = top.indices.float()
        tensors[f"step_top.p{k}"] = top.values

        penalized = greedy_continuation(model, prompt, PENALTY_SETTINGS, name + " (penalty)")
        tensors[f"greedy_penalty.p{k}"] = torch.tensor(penalized, dtype=torch.float32)
        tensors[f"greedy_penalty_margin.p{k}"] = argmax_margins(model, prompt, penalized, PENALTY_SETTINGS, name)
        print(f"  p{k}: {len(prompt):2d} prompt tokens; greedy {greedy[:6]}…, {len(set(greedy))} distinct, "
              f"min margin {float(tensors[f'greedy_margin.p{k}'].min()):.3g}; with penalty {penalized[:6]}…, "
              f"{len(set(penalized))} distinct, min margin {float(tensors[f'greedy_penalty_margin.p{k}'].min()):.3g}")
    metadata = {
        "prompts": json.dumps(prompts),
        "greedy_settings": json.dumps(GREEDY_SETTINGS),
        "greedy_penalty_settings": json.dumps(PENALTY_SETTINGS),
        "producer": "tools/reference/make_golden.py",
        "torch_version": torch.__version__,
    }
    return tensors, metadata


def write_model_fixture(model_dir, out_path, extra_metadata, prompts):
    model = ref.load_model(model_dir)
    tensors, metadata = model_fixture(model, out_path.stem, prompts)
    metadata.update(extra_metadata)
    metadata["layers"] = str(model.config.num_layers)
    metadata["config_json"] = (pathlib.Path(model_dir) / "config.json").read_text()
    # A fingerprint of the weights, so a test can tell that random_weights(config, seed) still makes these weights.
    metadata["embed_tokens_first8"] = json.dumps(model.weights["model.embed_tokens.weight"][0, :8].tolist())
    metadata["weights_sha256"] = hashlib.sha256((pathlib.Path(model_dir) / "model.safetensors").read_bytes()).hexdigest()
    write_safetensors(out_path, tensors, metadata=metadata, dtype="F32")
    print(f"  wrote {out_path} ({out_path.stat().st_size:,} bytes)")


# ---------------------------------------------------------------------------------------------------------------
# Sampler masks
# ---------------------------------------------------------------------------------------------------------------

LOGIT_VECTORS = {
    "peaked": [8.0, 2.0, 1.5, 1.0, 0.5, 0.0, -0.5, -1.0, -2.0, -3.0],
    "flat": [0.0] * 12,
    "ties": [2.0, 1.0, 2.0, 0.5, 1.0, 2.0, -1.0, 0.5, 0.0, -3.0],
    "all_negative": [-1.0, -3.5, -2.0, -0.5, -7.0, -2.5, -4.0, -1.5, -6.0, -0.75, -3.0, -5.0],
    "mixed_sign": [3.0, -2.0, 0.5, -0.5, 2.5, 0.0, -1.0, 1.5, -3.0, 1.0, 2.0, -1.5],
    "two_levels": [4.0, 4.0, 4.0, 1.0, 1.0, 1.0, 1.0, 1.0, -2.0, -2.0, -2.0, -2.0, -2.0, -2.0, -2.0, -2.0],
    "geometric": [-0.7 * i for i in range(14)],
    "irregular": [0.37, -1.21, 2.05, 0.88, -0.43, 1.62, -2.7, 0.11, 1.95, -0.05, 0.74, -1.66, 2.31, 0.52, -0.9, 1.18],
    "large_magnitude": [50.0, 48.0, 47.5, 30.0, 10.0, 0.0, -10.0, -40.0],
    "near_flat": [0.10, 0.05, 0.0, -0.05, 0.12, 0.02, -0.1, 0.08],
    "plateau_top": [1.0, 1.0, 0.0, -1.0, -1.0, -2.0, -5.0, -5.0, -9.0],
    "nucleus_boundary": [float(x) for x in torch.log(torch.tensor([0.5, 0.3, 0.1, 0.1])).tolist()],
}
# Earlier ids of the row (prompt + generated), repeats included: the repetition penalty reads the distinct ones.
HISTORIES = {name: [(3 * i + 1) % len(logits) for i in range(5)] + [0, 0] for name, logits in LOGIT_VECTORS.items()}

BASE = dict(temperature=1.0, top_k=0, top_p=1.0, top_p_rule="minimind", min_p=0.0, repetition_penalty=1.0)
PARAMETER_SETS = [
    dict(top_k=3),
    dict(top_k=5, temperature=0.7),
    *[dict(top_p=0.9, temperature=0.7, top_p_rule=rule) for rule in ref.TOP_P_RULES],
    *[dict(top_p=0.5, temperature=1.3, top_p_rule=rule) for rule in ref.TOP_P_RULES],
    *[dict(top_p=0.8, top_p_rule=rule) for rule in ref.TOP_P_RULES],
    dict(min_p=0.1),
    dict(min_p=0.3, temperature=2.0),
    dict(temperature=0.85, top_k=50, top_p=0.85),  # MiniMind's generate defaults
    dict(temperature=0.85, top_k=50, top_p=0.95),  # MiniMind's eval script
    dict(repetition_penalty=1.3, top_k=4),
    dict(repetition_penalty=2.0, top_p=0.7, top_p_rule="hf", min_p=0.05),
    dict(temperature=0.9, top_k=6, top_p=0.9, top_p_rule="llamacpp", min_p=0.05, repetition_penalty=1.1),
]


def mask_is_robust(logits, history, params, mask):
    """(float_boundary, tie_order_dependent). A mask is float-boundary when float64 arithmetic or a 1e-4 relative
    change of every logit gives another mask: rounding, not the rule, decided it. It is tie-order dependent when
    reversing the ids changes which ids are kept: the rule cut through a group of equal logits, so the answer
    depends on how ties are ordered."""
    variants = [ref.kept_mask(logits, history, dtype=torch.float64, **params)]
    for scale in (1 + 1e-4, 1 - 1e-4):
        variants.append(ref.kept_mask([x * scale for x in logits], history, **params))
    float_boundary = any(variant != mask for variant in variants)
    size = len(logits)
    reversed_history = [size - 1 - i for i in history]
    reversed_mask = ref.kept_mask(logits[::-1], reversed_history, **params)[::-1]
    return float_boundary, reversed_mask != mask


def sampler_masks():
    cases, boundary_cases = [], []
    for name, logits in LOGIT_VECTORS.items():
        history = HISTORIES[name]
        for index, overrides in enumerate(PARAMETER_SETS):
            params = {**BASE, **overrides}
            mask = ref.kept_mask(logits, history, **params)
            case = {"name": f"{name}/{index}", "logits": logits, "history": history, **params,
                    "kept": mask, "kept_count": sum(mask)}
            float_boundary, tie_order_dependent = mask_is_robust(logits, history, params, mask)
            if float_boundary or tie_order_dependent:
                case.update(float_boundary=float_boundary, tie_order_dependent=tie_order_dependent)
                boundary_cases.append(case)
            else:
                cases.append(case)
    return {
        "description": "Kept-token masks (1 kept, 0 removed) of the reference filter chain on hand-picked logits.",
        "chain": ["temperature", "repetition_penalty", "top_k", "top_p", "min_p"],
        "conventions": {
            "temperature": "logits / T, float32",
            "repetition_penalty": "over the distinct ids of history: logit > 0 ? logit / r : logit * r; 1 = off",
            "top_k": "remove logits strictly below the k-th largest (ties at the k-th stay); 0 = off",
            "top_p": "1 = off. minimind: descending, keep through the first token whose cumulative probability "
                     "exceeds p. hf: ascending, remove while the cumulative probability is <= 1 - p, never the top. "
                     "llamacpp: descending, keep until the cumulative probability reaches p (>= p), that token "
                     "included. Probabilities are softmax after the earlier stages, float32; sorts are stable.",
            "min_p": "keep probability >= min_p * largest probability, after top-p; 0 = off",
        },
        "cases": cases,
        "boundary_cases_note": "Cases decided by float rounding (float_boundary: float64 or a 1e-4 relative change "
                               "of the logits gives another mask) or by the order of tied logits "
                               "(tie_order_dependent: the reference's stable sorts rank the lower id first in a "
                               "descending sort and last in hf's ascending one). kept_count is the robust part "
                               "when only tie order matters; the masks are the reference's (torch float32).",
        "boundary_cases": boundary_cases,
    }


def dump_one_case_per_line(masks):
    """JSON with each case on its own line, so that a regenerated file diffs case by case."""
    lines = ["{"]
    items = list(masks.items())
    for index, (key, value) in enumerate(items):
        comma = "," if index + 1 < len(items) else ""
        if isinstance(value, list):
            lines.append(f"{json.dumps(key)}: [")
            lines += [json.dumps(case) + ("," if i + 1 < len(value) else "") for i, case in enumerate(value)]
            lines.append("]" + comma)
        else:
            lines.append(f"{json.dumps(key)}: {json.dumps(value, indent=1)}{comma}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--minigen", default="build/minigen", help="the C++ binary (for init-random)")
    parser.add_argument("--out", default="tests/data/golden", help="fixture directory")
    parser.add_argument("--tokenizer", help="tokenizer directory for init-random (default: minigen's own)")
    parser.add_argument("--shipped", action="store_true", help="also models/minigen-tiny-base and -sft")
    parser.add_argument("--shipped-only", action="store_true", help="only the shipped models' fixtures")
    parser.add_argument("--masks-only", action="store_true", help="only sampler_masks.json (no binary needed)")
    args = parser.parse_args()
    out_dir = pathlib.Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)

    if args.shipped_only:
        args.shipped = True
    masks = sampler_masks() if not args.shipped_only else None
    masks_path = out_dir / "sampler_masks.json"
    if masks is not None:
        with open(masks_path, "w") as stream:
            stream.write(dump_one_case_per_line(masks))
        print(f"wrote {masks_path}: {len(masks['cases'])} cases, {len(masks['boundary_cases'])} boundary cases "
              f"({masks_path.stat().st_size:,} bytes)")
    if args.masks_only:
        return

    minigen = pathlib.Path(args.minigen)
    if not minigen.exists():
        sys.exit(f"{minigen} not found: build it first (cmake -S . -B build -G Ninja && ninja -C build minigen)")
    with tempfile.TemporaryDirectory(prefix="minigen_golden_") as temporary:
        for family, layers in RANDOM_MODELS if not args.shipped_only else ():
            model_dir = pathlib.Path(temporary) / family
            init_random(minigen, family, layers, model_dir, args.tokenizer)
            print(f"{family} (seed {SEED}, {layers or 'all'} layers):")
            write_model_fixture(model_dir, out_dir / f"{family}.safetensors",
                                {"family": family, "seed": str(SEED), "source": "minigen init-random"},
                                [prompt_ids(k, length) for k, length in enumerate(PROMPT_LENGTHS)])

    for name in SHIPPED_MODELS:
        model_dir = pathlib.Path("models") / name
        if not args.shipped:
            continue
        if not (model_dir / "config.json").exists():
            print(f"{model_dir}: not there yet, skipped")
            continue
        print(f"{name}:")
        write_model_fixture(model_dir, out_dir / f"{name}.safetensors",
                            {"family": name, "source": f"models/{name}",
                             "prompt_texts": json.dumps(SHIPPED_PROMPTS)},
                            shipped_prompt_ids(model_dir))


if __name__ == "__main__":
    main()
