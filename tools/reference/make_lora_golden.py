#!/usr/bin/python3
"""Writes the LoRA fixtures in tests/data/lora/ with MiniMind's OWN model and LoRA code, run from a MiniMind checkout.

    /usr/bin/python3 tools/reference/make_lora_golden.py --minimind /path/to/minimind --minigen build/minigen

Run from the repository root with Debian's torch (`/usr/bin/python3`); CI never runs it, its outputs are committed.
MiniMind's model/model_minimind.py and model/model_lora.py are imported from the checkout and run unmodified; the
`transformers` names they import come from tools/reference/transformers_stub (Debian 12 has no transformers; see
its README), which only this script puts on sys.path.

Base weights: `minigen init-random --family F --seed 1 [--layers 2]`, the weights of tests/data/golden/<F>.safetensors.
Self-check first: MiniMind's fp32 logits on the prompts p0, p1, p2 against tests/data/golden/<F>.safetensors.
MiniMind2 has no qk-norm, which current MiniMind code always builds; its model code is taken from the last
MiniMind2-era commit (MINIMIND2_COMMIT, read with `git show` from the --minimind checkout's history, or --minimind2).
model_lora.py is the current one for every family (it does not depend on the model code).

For each family: apply_lora(model, rank); A ~ N(0, 0.02) (MiniMind's init) and B ~ N(0, sigma) from a seeded
torch.Generator; save_lora → <family>_r<rank>.pth (fp16, as MiniMind writes it). Then on a fresh model: apply_lora +
load_lora from that file (the fp16-rounded adapter, as eval_llm.py uses it, but in fp32: minigen computes in fp32) →
<family>_r<rank>.golden.safetensors (fp32):
  prompt.p{k}        [T]       prompt ids (float32); id i of prompt k = (37·i + 101·k + 5) mod 6400, T = 1, 7, 24
  logits_last.p{k}   [1, V]    logits at the last prompt position, one forward without cache
  greedy.p{k}        [32]      greedy tokens: argmax of MiniMind's forward re-run on the whole sequence each step,
                               eos ignored (float32 ids)
  greedy_margin.p{k} [32]      top-1 minus top-2 of those logits (raw logits, no temperature) at each step
Every golden's metadata also holds reference_merged_check: tools/reference's own forward (written from the spec, not
MiniMind's code) on the base weights with the adapter merged in fp32, against MiniMind's unmerged logits.
On minimind3 also MiniMind's merge_lora (the merged fp16 model is not kept): its logits against the unmerged ones are
in that golden's metadata (merge_lora_check).
PEFT-format fixtures (Hugging Face PEFT's on-disk layout, written here without the PEFT package):
  minimind3_peft_r16/       the adapter of minimind3_r16.pth with lora_alpha 32 (scaling 2), lora_B = B / 2 (fp32,
                            exact): greedy must equal minimind3_r16's exactly
  tiny_peft_all_r4/         random r = 4 adapter on every linear module of every tiny layer, lora_alpha 6 (scaling
                            1.5), fp32; golden tiny_peft_all_r4.golden.safetensors from MiniMind's model with those
                            modules wrapped as y = W x + 1.5 · B(A x) (peft_wrap below)
"""
import argparse
import hashlib
import importlib.util
import json
import pathlib
import subprocess
import sys
import tempfile

import torch
import torch.nn.functional as F

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
# MiniMind's model code imports transformers; this stand-in (only on this script's sys.path) provides what it needs.
sys.path.insert(0, str(HERE / "transformers_stub"))
import minimind_reference as ref  # noqa: E402
from safetensors_io import read_safetensors, write_safetensors  # noqa: E402

torch.set_num_threads(1)

SEED = 1  # weights seed: tests/data/golden's models
VOCAB_SIZE = 6400
PROMPT_LENGTHS = (1, 7, 24)
GREEDY_TOKENS = 32
LORA_A_STD = 0.02  # MiniMind's LoRA.__init__: A ~ N(0, 0.02)
# The last commit whose model_minimind.py builds MiniMind2 (no qk-norm, head_dim = hidden / heads); the next one,
# 101d7df "[update] minimind-3", adds q_norm/k_norm unconditionally.
MINIMIND2_COMMIT = "c090b69c4d41a2288301b600c9ca040127db0134"

# family, --layers (None: the family's own), LoRA rank, adapter seed, std of B. Each sigma is the smallest 0.02·2^j
# that changes the greedy continuation of every prompt from the base model's (B = 0 changes nothing; the random base
# models just repeat the last prompt token, a habit a small adapter does not break). A sweep of j = 0…8 gave:
# tiny 0.64, minimind3 0.64, minimind3-moe 5.12, minimind2 2.56.
FAMILIES = (
    ("tiny", None, 4, 101, 0.64),
    ("minimind3", 2, 16, 102, 0.64),
    ("minimind3-moe", 2, 8, 103, 5.12),
    ("minimind2", 2, 16, 104, 2.56),
)
PEFT_SAME_ALPHA = 32  # minimind3_peft_r16: r 16, scaling 2
PEFT_ALL = dict(family="tiny", rank=4, alpha=6, seed=105, a_std=LORA_A_STD, b_std=0.08,
                targets=("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"))


def prompt_ids(prompt_index, length):
    """The prompts of tests/data/golden: id i of prompt k = (37·i + 101·k + 5) mod 6400."""
    return [(i * 37 + prompt_index * 101 + 5) % VOCAB_SIZE for i in range(length)]


PROMPTS = [prompt_ids(k, length) for k, length in enumerate(PROMPT_LENGTHS)]


# ---------------------------------------------------------------------------------------------------------------
# MiniMind's code, imported from a checkout
# ---------------------------------------------------------------------------------------------------------------

def load_module(name, path):
    """Imports one file as module `name` (MiniMind's model files import only torch and transformers, so two
    versions of model_minimind.py can live side by side under different names)."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def git_commit(checkout):
    try:
        return subprocess.run(["git", "-C", str(checkout), "rev-parse", "HEAD"], check=True, capture_output=True,
                              text=True).stdout.strip()
    except (subprocess.CalledProcessError, FileNotFoundError):
        return "unknown (not a git checkout)"


class MiniMindCode:
    """The current model code and model_lora.py from --minimind, and the MiniMind2-era model code."""

    def __init__(self, minimind, minimind2, scratch):
        minimind = pathlib.Path(minimind)
        self.commit = git_commit(minimind)
        self.model = load_module("minimind_model_minimind", minimind / "model" / "model_minimind.py")
        self.lora = load_module("minimind_model_lora", minimind / "model" / "model_lora.py")
        if minimind2 is not None:
            legacy_path = pathlib.Path(minimind2) / "model" / "model_minimind.py"
            self.legacy_commit = git_commit(minimind2)
        else:  # the file as of MINIMIND2_COMMIT, from the checkout's history
            shown = subprocess.run(["git", "-C", str(minimind), "show", f"{MINIMIND2_COMMIT}:model/model_minimind.py"],
                                   capture_output=True)
            if shown.returncode != 0:
                sys.exit(f"{minimind}: cannot read model/model_minimind.py at {MINIMIND2_COMMIT} from its git history "
                         f"({shown.stderr.decode().strip()}); pass --minimind2 with a checkout of that commit")
            source = shown.stdout
            legacy_path = pathlib.Path(scratch) / "minimind2_model_minimind.py"
            legacy_path.write_bytes(source)
            self.legacy_commit = MINIMIND2_COMMIT
        self.legacy_model = load_module("minimind2_model_minimind", legacy_path)


def uses_qk_norm(weights):
    return any(name.endswith("self_attn.q_norm.weight") for name in weights)


def build_model(code, model_dir):
    """MiniMindForCausalLM with a MiniMindConfig matching config.json and the directory's weights (strict load).
    Returns (model, description of the code used)."""
    config = json.loads((model_dir / "config.json").read_text())
    weights, _ = read_safetensors(model_dir / "model.safetensors")
    state = {name: torch.from_numpy(array) for name, array in weights.items()}
    if not torch.equal(state["lm_head.weight"], state["model.embed_tokens.weight"]):
        raise AssertionError(f"{model_dir}: lm_head and embed_tokens differ, MiniMind ties them")
    common = {key: config[key] for key in ("hidden_size", "num_hidden_layers", "num_attention_heads",
                                           "num_key_value_heads", "intermediate_size", "vocab_size", "hidden_act",
                                           "max_position_embeddings", "rms_norm_eps", "rope_theta", "bos_token_id",
                                           "eos_token_id", "inference_rope_scaling", "use_moe")}
    common["dropout"] = 0.0
    if uses_qk_norm(weights):
        moe = {key: config[key] for key in ("num_experts", "num_experts_per_tok", "moe_intermediate_size",
                                            "norm_topk_prob") if key in config}
        if config.get("n_shared_experts", 0):
            raise AssertionError(f"{model_dir}: shared experts, which current MiniMind code does not build")
        mm_config = code.model.MiniMindConfig(head_dim=config["head_dim"],
                                              tie_word_embeddings=config["tie_word_embeddings"], **common, **moe)
        model = code.model.MiniMindForCausalLM(mm_config)
        description = f"model/model_minimind.py at {code.commit}"
    else:
        if config["head_dim"] * config["num_attention_heads"] != config["hidden_size"] or config["use_moe"]:
            raise AssertionError(f"{model_dir}: MiniMind2-era code needs head_dim = hidden / heads and no MoE")
        model = code.legacy_model.MiniMindForCausalLM(code.legacy_model.MiniMindConfig(**common))
        description = f"model/model_minimind.py at {code.legacy_commit} (MiniMind2: no qk-norm)"
    model.load_state_dict(state, strict=True)
    return model.eval(), description


# ---------------------------------------------------------------------------------------------------------------
# Forward, greedy
# ---------------------------------------------------------------------------------------------------------------

@torch.no_grad()
def prompt_logits(model, ids):
    """[T, V] logits at every position: MiniMind's forward, no cache."""
    return model(torch.tensor([ids])).logits[0].float()


@torch.no_grad()
def greedy(model, prompt, count=GREEDY_TOKENS):
    """(tokens, margins): argmax of MiniMind's forward re-run on the whole sequence at each step (no cache, eos
    ignored); margin = top-1 minus top-2 logit."""
    ids = list(prompt)
    tokens, margins = [], []
    for _ in range(count):
        last = model(torch.tensor([ids])).logits[0, -1].float()
        top = torch.topk(last, 2)
        token = int(torch.argmax(last))
        if token != int(top.indices[0]):
            raise AssertionError("argmax and topk disagree")
        tokens.append(token)
        margins.append(float(top.values[0] - top.values[1]))
        ids.append(token)
    return tokens, margins


def golden_tensors(model):
    """prompt/logits/greedy/greedy_margin for p0..p2, and the greedy tokens by prompt."""
    tensors, greedy_tokens = {}, []
    for k, prompt in enumerate(PROMPTS):
        tensors[f"prompt.p{k}"] = torch.tensor(prompt, dtype=torch.float32)
        # The last position only: [1, 6400] (every position of three prompts would be 0.8 MB per fixture).
        tensors[f"logits_last.p{k}"] = prompt_logits(model, prompt)[-1:].contiguous()
        tokens, margins = greedy(model, prompt)
        tensors[f"greedy.p{k}"] = torch.tensor(tokens, dtype=torch.float32)
        tensors[f"greedy_margin.p{k}"] = torch.tensor(margins, dtype=torch.float32)
        greedy_tokens.append(tokens)
    return tensors, greedy_tokens


def differing(tokens, base):
    return sum(int(a != b) for a, b in zip(tokens, base))


# ---------------------------------------------------------------------------------------------------------------
# Adapters
# ---------------------------------------------------------------------------------------------------------------

def wrapped_modules(model):
    return [name for name, module in model.named_modules() if hasattr(module, "lora")]


@torch.no_grad()
def randomize_lora(model, seed, b_std):
    """A ~ N(0, 0.02) and B ~ N(0, b_std) for every module apply_lora wrapped, in named_modules order, from one
    seeded generator."""
    generator = torch.Generator().manual_seed(seed)
    for name in wrapped_modules(model):
        lora = model.get_submodule(name).lora
        lora.A.weight.normal_(0.0, LORA_A_STD, generator=generator)
        lora.B.weight.normal_(0.0, b_std, generator=generator)


def peft_wrap(model, adapters, scaling):
    """PEFT's LoRA forward on MiniMind's modules, in the spirit of MiniMind's apply_lora but for any nn.Linear (not
    only square ones) and with a scaling: y = W x + scaling · B(A x).
    adapters: module name → (A [r, in], B [out, r])."""
    for name, (a, b) in adapters.items():
        module = model.get_submodule(name)
        if a.shape != (a.shape[0], module.in_features) or b.shape != (module.out_features, a.shape[0]):
            raise AssertionError(f"{name}: A {tuple(a.shape)}, B {tuple(b.shape)} do not fit {module}")

        def forward_with_adapter(x, base=module.forward, a=a, b=b):
            return base(x) + F.linear(F.linear(x, a), b) * scaling

        module.forward = forward_with_adapter


def peft_key(module_name, matrix):
    """PEFT's tensor name for a module of the wrapped model: base_model.model.<module path>.lora_A.weight."""
    return f"base_model.model.{module_name}.lora_{matrix}.weight"


def write_peft(out_dir, adapters, rank, alpha, targets, base_description):
    """adapter_config.json and adapter_model.safetensors (fp32), PEFT's layout."""
    out_dir.mkdir(parents=True, exist_ok=True)
    config = {
        "alpha_pattern": {},
        "base_model_name_or_path": base_description,
        "bias": "none",
        "fan_in_fan_out": False,
        "inference_mode": True,
        "init_lora_weights": True,
        "layers_pattern": None,
        "layers_to_transform": None,
        "lora_alpha": alpha,
        "lora_dropout": 0.0,
        "modules_to_save": None,
        "peft_type": "LORA",
        "r": rank,
        "rank_pattern": {},
        "revision": None,
        "target_modules": list(targets),
        "task_type": "CAUSAL_LM",
        "use_dora": False,
        "use_rslora": False,
    }
    (out_dir / "adapter_config.json").write_text(json.dumps(config, indent=2, sort_keys=True) + "\n")
    tensors = {}
    for name, (a, b) in adapters.items():
        tensors[peft_key(name, "A")] = a
        tensors[peft_key(name, "B")] = b
    write_safetensors(out_dir / "adapter_model.safetensors", tensors, metadata={"format": "pt"}, dtype="F32")


# ---------------------------------------------------------------------------------------------------------------
# Fixtures
# ---------------------------------------------------------------------------------------------------------------

def sha256(path):
    return hashlib.sha256(pathlib.Path(path).read_bytes()).hexdigest()


def size(path):
    path = pathlib.Path(path)
    if path.is_dir():
        return sum(p.stat().st_size for p in path.iterdir())
    return path.stat().st_size


def base_self_check(model, family, golden_dir):
    """MiniMind's base logits against tests/data/golden/<family>.safetensors (max |Δ| per prompt) and its greedy
    tokens against the first 32 of the fixture's greedy run (MiniMind's generate defaults, argmax: the same ids)."""
    golden, _ = read_safetensors(golden_dir / f"{family}.safetensors")
    differences, agree, base_greedy = [], [], []
    for k, prompt in enumerate(PROMPTS):
        if golden[f"prompt.p{k}"].tolist() != [float(i) for i in prompt]:
            raise AssertionError(f"{family}: prompt p{k} is not the golden fixture's")
        logits = prompt_logits(model, prompt)
        differences.append(float((logits - torch.from_numpy(golden[f"logits.p{k}"])).abs().max()))
        tokens, _ = greedy(model, prompt)
        base_greedy.append(tokens)
        agree.append(tokens == [int(t) for t in golden[f"greedy.p{k}"][:GREEDY_TOKENS]])
    return {"max_abs_logit_difference": differences, "greedy_agrees_with_golden": agree}, base_greedy


def max_difference(tensors, other):
    return max(float((tensors[f"logits.p{k}"] - other[f"logits.p{k}"]).abs().max()) for k in range(len(PROMPTS)))


class _ReferenceAsMiniMind:
    """tools/reference's MiniMindReference behind MiniMind's call convention: model(ids).logits."""

    def __init__(self, reference):
        self.reference = reference

    def __call__(self, ids):
        return type("Output", (), {"logits": self.reference.forward(ids)})


def reference_merged_check(model_dir, deltas, tensors, greedy_tokens):
    """minigen's independent reference (tools/reference/minimind_reference.py, written from the spec, not from
    MiniMind's code) on the base weights with every adapter merged in fp32 (W + scaling · B·A), against MiniMind's
    unmerged forward: a different implementation and a different rounding order, so its max |Δlogit| is a fair
    tolerance for minigen's own LoRA path."""
    arrays, _ = read_safetensors(model_dir / "model.safetensors")
    weights = {name: torch.from_numpy(array).float() for name, array in arrays.items()}
    for name, delta in deltas.items():
        weights[f"{name}.weight"] = weights[f"{name}.weight"] + delta
    config = json.loads((model_dir / "config.json").read_text())
    reference = _ReferenceAsMiniMind(ref.MiniMindReference(ref.config_from_json(config, weights), weights))
    merged, tokens = golden_tensors(reference)
    return {"max_abs_logit_difference": [float((merged[f"logits.p{k}"] - tensors[f"logits.p{k}"]).abs().max())
                                         for k in range(len(PROMPTS))],
            "greedy_agrees": [a == b for a, b in zip(tokens, greedy_tokens)],
            "max_abs_logit": max(float(tensors[f"logits.p{k}"].abs().max()) for k in range(len(PROMPTS)))}


def lora_deltas(model):
    """module name → B·A (fp32) for every module apply_lora wrapped (scaling 1, as MiniMind's LoRA)."""
    deltas = {}
    for name in wrapped_modules(model):
        lora = model.get_submodule(name).lora
        deltas[name] = (lora.B.weight @ lora.A.weight).detach()
    return deltas


def merge_check(code, model_dir, pth_path, rank, lora_tensors, lora_greedy, scratch):
    """MiniMind's merge_lora (fp16 state dict, W + B·A) loaded back into a fresh model in fp32, against the unmerged
    fp32 golden."""
    model, _ = build_model(code, model_dir)
    code.lora.apply_lora(model, rank)
    merged_path = pathlib.Path(scratch) / "merged.pth"
    code.lora.merge_lora(model, str(pth_path), str(merged_path))
    merged, _ = build_model(code, model_dir)
    merged.load_state_dict(torch.load(merged_path, map_location="cpu"), strict=True)
    tensors, tokens = golden_tensors(merged)
    result = {
        "what": "MiniMind merge_lora (fp16 weights, W + B·A) loaded into a fresh fp32 model, vs the unmerged fp32 "
                "golden of this file",
        "max_abs_logit_difference": [float((tensors[f"logits.p{k}"] - lora_tensors[f"logits.p{k}"]).abs().max())
                                     for k in range(len(PROMPTS))],
        "greedy_agrees": [a == b for a, b in zip(tokens, lora_greedy)],
        "greedy_differing_tokens": [differing(a, b) for a, b in zip(tokens, lora_greedy)],
        "merged_file_bytes": merged_path.stat().st_size,
    }
    merged_path.unlink()
    return result


def family_fixtures(code, minigen, family, layers, rank, seed, b_std, args, scratch):
    model_dir = pathlib.Path(scratch) / family
    command = [str(minigen), "init-random", "--family", family, "--seed", str(SEED), "--out", str(model_dir)]
    if layers is not None:
        command += ["--layers", str(layers)]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    out_dir = pathlib.Path(args.out)

    base, code_description = build_model(code, model_dir)
    self_check, base_greedy = base_self_check(base, family, pathlib.Path(args.golden))
    print(f"{family}: {code_description}")
    print(f"  self-check vs tests/data/golden/{family}.safetensors: max |Δlogit| "
          f"{', '.join(f'{d:.3g}' for d in self_check['max_abs_logit_difference'])}; greedy agrees "
          f"{self_check['greedy_agrees_with_golden']}")

    model, _ = build_model(code, model_dir)
    code.lora.apply_lora(model, rank)
    wrapped = wrapped_modules(model)
    randomize_lora(model, seed, b_std)
    pth_path = out_dir / f"{family}_r{rank}.pth"
    code.lora.save_lora(model, str(pth_path))
    unrounded, _ = golden_tensors(model)

    fresh, _ = build_model(code, model_dir)
    code.lora.apply_lora(fresh, rank)
    code.lora.load_lora(fresh, str(pth_path))
    tensors, lora_greedy = golden_tensors(fresh)
    changed = [differing(tokens, base_tokens) for tokens, base_tokens in zip(lora_greedy, base_greedy)]
    fp16_effect = max_difference(tensors, unrounded)
    cross = reference_merged_check(model_dir, lora_deltas(fresh), tensors, lora_greedy)
    print(f"  apply_lora(rank {rank}) wrapped {len(wrapped)}: {', '.join(wrapped)}")
    print(f"  B ~ N(0, {b_std}): greedy differs from the base in {changed} of {GREEDY_TOKENS} tokens; min margin "
          f"{min(float(tensors[f'greedy_margin.p{k}'].min()) for k in range(3)):.3g}; fp16 rounding of the "
          f"adapter moves logits by {fp16_effect:.3g}")
    print(f"  tools/reference on fp32-merged weights: max |Δlogit| "
          f"{', '.join(f'{d:.3g}' for d in cross['max_abs_logit_difference'])} (largest |logit| "
          f"{cross['max_abs_logit']:.3g}); greedy agrees {cross['greedy_agrees']}")

    metadata = {
        "family": family,
        "rank": str(rank),
        "seed": str(SEED),
        "layers": str(base.config.num_hidden_layers),
        "adapter_seed": str(seed),
        "adapter_init": json.dumps({"A_std": LORA_A_STD, "B_std": b_std, "generator": "torch.Generator"}),
        "adapter_file": pth_path.name,
        "adapter_sha256": sha256(pth_path),
        "wrapped_modules": json.dumps(wrapped),
        "prompts": json.dumps(PROMPTS),
        "greedy": f"{GREEDY_TOKENS} tokens, argmax of the last position of MiniMind's forward re-run on prompt + "
                  "tokens so far (no cache), eos ignored; greedy_margin = top-1 minus top-2 raw logit",
        "greedy_differs_from_base": json.dumps(changed),
        "base_self_check": json.dumps(self_check),
        "fp16_adapter_rounding_max_abs_logit_effect": repr(fp16_effect),
        "reference_merged_check": json.dumps(cross),
        "config_json": (model_dir / "config.json").read_text(),
        "weights_sha256": sha256(model_dir / "model.safetensors"),
        "minimind_model_code": code_description,
        "minimind_commit": code.commit,
        "source": f"minigen init-random --family {family} --seed {SEED}" + (f" --layers {layers}" if layers else ""),
        "producer": "tools/reference/make_lora_golden.py (MiniMind's model_minimind.py, apply_lora, save_lora, "
                    "load_lora; fp32, CPU)",
        "torch_version": torch.__version__,
    }

    if family == "minimind3":
        merge = merge_check(code, model_dir, pth_path, rank, tensors, lora_greedy, scratch)
        metadata["merge_lora_check"] = json.dumps(merge)
        differences = ", ".join(f"{d:.3g}" for d in merge["max_abs_logit_difference"])
        print(f"  merge_lora: max |Δlogit| vs unmerged {differences}"
              f"; greedy agrees {merge['greedy_agrees']}")
        metadata["peft_same_check"] = json.dumps(peft_same(code, model_dir, fresh, rank, tensors, lora_greedy,
                                                           out_dir))

    golden_path = out_dir / f"{family}_r{rank}.golden.safetensors"
    write_safetensors(golden_path, tensors, metadata=metadata, dtype="F32")

    if family == PEFT_ALL["family"]:
        peft_all(code, model_dir, base_greedy, out_dir)


def peft_same(code, model_dir, loaded, rank, tensors, lora_greedy, out_dir):
    """minimind3_peft_r16/: the .pth's adapter (fp16 values, as load_lora gave them) with lora_alpha 32, so
    lora_B = B / 2 exactly; checked by running it through peft_wrap."""
    scaling = PEFT_SAME_ALPHA / rank
    adapters = {}
    for name in wrapped_modules(loaded):
        lora = loaded.get_submodule(name).lora
        adapters[name] = (lora.A.weight.detach().clone(), lora.B.weight.detach().clone() / scaling)
        if not torch.equal(adapters[name][1] * scaling, lora.B.weight):
            raise AssertionError(f"{name}: B / {scaling} is not exact")
    targets = sorted({name.rsplit(".", 1)[1] for name in adapters})
    peft_dir = out_dir / f"minimind3_peft_r{rank}"
    write_peft(peft_dir, adapters, rank, PEFT_SAME_ALPHA, targets,
               f"minigen init-random --family minimind3 --seed {SEED} --layers 2")
    # Read back what was written and run it.
    stored, _ = read_safetensors(peft_dir / "adapter_model.safetensors")
    model, _ = build_model(code, model_dir)
    peft_wrap(model, {name: (torch.from_numpy(stored[peft_key(name, "A")]),
                             torch.from_numpy(stored[peft_key(name, "B")])) for name in adapters}, scaling)
    peft_tensors, peft_greedy = golden_tensors(model)
    check = {"max_abs_logit_difference_vs_pth": max_difference(peft_tensors, tensors),
             "greedy_equal_to_pth": peft_greedy == lora_greedy}
    if not check["greedy_equal_to_pth"]:
        raise AssertionError("minimind3 PEFT adapter: greedy differs from the .pth's")
    print(f"  {peft_dir.name}/: scaling {scaling}, through peft_wrap: max |Δlogit| vs the .pth golden "
          f"{check['max_abs_logit_difference_vs_pth']:.3g}, greedy equal {check['greedy_equal_to_pth']}")
    return check


def peft_all(code, model_dir, base_greedy, out_dir):
    """tiny_peft_all_r4/: a random adapter on every linear module of every layer, and its golden."""
    spec = PEFT_ALL
    scaling = spec["alpha"] / spec["rank"]
    model, code_description = build_model(code, model_dir)
    generator = torch.Generator().manual_seed(spec["seed"])
    adapters = {}
    for name, module in model.named_modules():
        if isinstance(module, torch.nn.Linear) and name.rsplit(".", 1)[-1] in spec["targets"]:
            a = torch.empty(spec["rank"], module.in_features).normal_(0.0, spec["a_std"], generator=generator)
            b = torch.empty(module.out_features, spec["rank"]).normal_(0.0, spec["b_std"], generator=generator)
            adapters[name] = (a, b)
    peft_dir = out_dir / f"{spec['family']}_peft_all_r{spec['rank']}"
    write_peft(peft_dir, adapters, spec["rank"], spec["alpha"], spec["targets"],
               f"minigen init-random --family {spec['family']} --seed {SEED}")
    stored, _ = read_safetensors(peft_dir / "adapter_model.safetensors")
    peft_wrap(model, {name: (torch.from_numpy(stored[peft_key(name, "A")]),
                             torch.from_numpy(stored[peft_key(name, "B")])) for name in adapters}, scaling)
    tensors, tokens = golden_tensors(model)
    changed = [differing(t, b) for t, b in zip(tokens, base_greedy)]
    wrapped = list(adapters)
    cross = reference_merged_check(model_dir, {name: (b @ a) * scaling for name, (a, b) in adapters.items()},
                                   tensors, tokens)
    print(f"  {peft_dir.name}/: {len(wrapped)} modules, scaling {scaling}, A ~ N(0, {spec['a_std']}), "
          f"B ~ N(0, {spec['b_std']}): greedy differs from the base in {changed} of {GREEDY_TOKENS}; min margin "
          f"{min(float(tensors[f'greedy_margin.p{k}'].min()) for k in range(3)):.3g}")
    print(f"    tools/reference on fp32-merged weights: max |Δlogit| "
          f"{', '.join(f'{d:.3g}' for d in cross['max_abs_logit_difference'])} (largest |logit| "
          f"{cross['max_abs_logit']:.3g}); greedy agrees {cross['greedy_agrees']}")
    metadata = {
        "family": spec["family"],
        "rank": str(spec["rank"]),
        "lora_alpha": str(spec["alpha"]),
        "scaling": repr(scaling),
        "seed": str(SEED),
        "adapter_seed": str(spec["seed"]),
        "adapter_init": json.dumps({"A_std": spec["a_std"], "B_std": spec["b_std"], "generator": "torch.Generator"}),
        "adapter_dir": peft_dir.name,
        "adapter_sha256": sha256(peft_dir / "adapter_model.safetensors"),
        "wrapped_modules": json.dumps(wrapped),
        "prompts": json.dumps(PROMPTS),
        "greedy": f"{GREEDY_TOKENS} tokens, argmax of the last position of MiniMind's forward re-run on prompt + "
                  "tokens so far (no cache), eos ignored; greedy_margin = top-1 minus top-2 raw logit",
        "greedy_differs_from_base": json.dumps(changed),
        "reference_merged_check": json.dumps(cross),
        "config_json": (model_dir / "config.json").read_text(),
        "weights_sha256": sha256(model_dir / "model.safetensors"),
        "minimind_model_code": code_description,
        "minimind_commit": code.commit,
        "source": f"minigen init-random --family {spec['family']} --seed {SEED}",
        "producer": "tools/reference/make_lora_golden.py (MiniMind's model_minimind.py with every listed module "
                    "wrapped as y = W x + scaling · B(A x), PEFT's LoRA forward; fp32, CPU)",
        "torch_version": torch.__version__,
    }
    write_safetensors(out_dir / f"{peft_dir.name}.golden.safetensors", tensors, metadata=metadata, dtype="F32")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--minimind", required=True, help="a MiniMind checkout (github jingyaogong/minimind)")
    parser.add_argument("--minimind2", help="a checkout of MiniMind2-era code (default: model/model_minimind.py at "
                                            f"{MINIMIND2_COMMIT[:7]} from --minimind's git history)")
    parser.add_argument("--minigen", default="build/minigen", help="the minigen binary (for init-random)")
    parser.add_argument("--out", default="tests/data/lora", help="fixture directory")
    parser.add_argument("--golden", default="tests/data/golden", help="the base models' golden fixtures")
    parser.add_argument("--families", help="comma-separated subset of " + ",".join(f[0] for f in FAMILIES))
    args = parser.parse_args()
    minigen = pathlib.Path(args.minigen)
    if not minigen.exists():
        sys.exit(f"{minigen} not found: build it first (cmake -S . -B build -G Ninja && ninja -C build minigen)")
    out_dir = pathlib.Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    chosen = set(args.families.split(",")) if args.families else {f[0] for f in FAMILIES}

    with tempfile.TemporaryDirectory(prefix="minigen_lora_golden_") as scratch:
        code = MiniMindCode(args.minimind, args.minimind2, scratch)
        print(f"MiniMind {code.commit} (MiniMind2 model code: {code.legacy_commit}), torch {torch.__version__}")
        for family, layers, rank, seed, b_std in FAMILIES:
            if family in chosen:
                family_fixtures(code, minigen, family, layers, rank, seed, b_std, args, scratch)

    print("files:")
    for path in sorted(out_dir.iterdir()):
        print(f"  {path.name:44s} {size(path):>9,} bytes")
    print(f"  total {sum(size(p) for p in out_dir.iterdir()):,} bytes")


if __name__ == "__main__":
    main()
