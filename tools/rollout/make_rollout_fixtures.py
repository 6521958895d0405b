#!/usr/bin/python3
"""Writes tests/data/rollout/: checkpoints in the layout of MiniMind's SGLang weight update, and golden logprobs.

    rm -rf /tmp/minimind && mkdir -p /tmp/minimind
    git --git-dir=/work/.mirror/jingyaogong+minimind/repo archive HEAD model trainer requirements.txt \
        | tar -x -C /tmp/minimind
    /usr/bin/python3 tools/rollout/make_rollout_fixtures.py --minimind /tmp/minimind \
        --minimind-commit "$(git --git-dir=/work/.mirror/jingyaogong+minimind/repo rev-parse HEAD)"

Run from the repository root with Debian's torch (`/usr/bin/python3`); CI never runs it, its outputs are committed.
MiniMind's code is imported from the checkout at run time (minimind_checkout.py) and runs unmodified; none of it
is copied here:
  model/model_minimind.py      MiniMindConfig, MiniMindForCausalLM (forward, generate, weight tying)
  trainer/rollout_engine.py    compute_per_token_logps: the logprobs of MiniMind's torch rollout engine and of its
                               GRPO loss (log_softmax of the raw logits at each completion position)
Their `transformers` imports come from tools/reference/transformers_stub (Debian 12 has no transformers; see its
README). rollout_engine.py also imports `requests`, which compute_per_token_logps does not use: if it is not
installed, a placeholder module stands in while the file is imported.

What it writes (every directory is what SGLangRolloutEngine.update_policy leaves in its shared_ckpt_path):
  policy_v1/, policy_v2/   a 2-layer minimind-3 model (hidden 32, 2 heads, 1 KV head, head_dim 16, intermediate
                           96, vocab 6400, tied embeddings, qk-norm), random weights from seed 1 and seed 2
  policy_wrong_shape/      policy_v1 with intermediate_size 64: its MLP tensors are policy_v1's cut to 64; every
                           other tensor and every other config value is policy_v1's (but moe_intermediate_size,
                           which MiniMindConfig derives from intermediate_size)
  golden.json              per policy: 3 prompts; greedy continuation (16 tokens), its logprobs and top-1/top-2
                           margins; logprobs of 16 forced tokens (teacher forcing); configs and sha256 of every file

update_policy does
    state_dict = {k: v.detach().half().cpu() for k, v in unwrapped.state_dict().items()}
    unwrapped.save_pretrained(abs_path, state_dict=state_dict, safe_serialization=False)
    self.tokenizer.save_pretrained(abs_path)
write_checkpoint() below runs the first two lines as they are, on the stub, whose PreTrainedModel.save_pretrained
(tools/reference/transformers_stub/transformers/saving.py; drive_minigen_as_minimind.py's update_policy calls the
same one) writes the files in the layout transformers 4.57 (MiniMind's requirements.txt pins transformers==4.57.6)
gives them; for the third it copies the tokenizer files:
  config.json              PretrainedConfig.to_json_string(use_diff=True): json.dumps(indent=2, sort_keys=True) + "\\n"
                           of the attributes that differ from a bare PretrainedConfig's (all of MiniMindConfig's own
                           fields are kept; tie_word_embeddings = true equals the base default and is left out),
                           plus architectures, model_type, transformers_version and "dtype" (4.56+ spelling, not
                           "torch_dtype"): the dtype of the model's parameters at save time, "float32" for a policy
                           trained in fp32 under autocast as MiniMind's GRPO does, although the weights are fp16
  generation_config.json   GenerationConfig.from_model_config(config), diff form (save_pretrained writes it for any
                           model that can generate; MiniMindForCausalLM subclasses GenerationMixin)
  pytorch_model.bin        torch.save(state_dict) (zip format) of the halved state_dict: one shard, keys in
                           state_dict order, both model.embed_tokens.weight and lm_head.weight (separate fp16
                           tensors after .half(); transformers only drops aliases in its safetensors path)
  tokenizer.json, tokenizer_config.json   copied from models/minigen-tiny-sft (what tokenizer.save_pretrained would
                           rewrite; special_tokens_map.json, which it also writes, is not emulated)

Golden numbers: fp32 CPU, on the fp16 weights read back from pytorch_model.bin and upcast (.float()).
  greedy_ids        16 tokens, argmax of the last logits of MiniMind's forward re-run on prompt + tokens so far
                    (no cache, eos ignored); MiniMind's generate (KV cache, do_sample=False) must give the same
  greedy_margin     top-1 minus top-2 raw logit at each of those steps (every one >= MIN_MARGIN)
  greedy_logprobs   compute_per_token_logps(model, [prompt + greedy_ids], n_keep=16)[0]
  forced_ids        16 fixed pseudo-random ids; forced_logprobs = compute_per_token_logps(model, [prompt +
                    forced_ids], n_keep=16)[0]
Logprobs are of the raw logits (temperature 1), as compute_per_token_logps computes them; floats are written with
Python's repr of the float32 values (exact).
"""
import argparse
import hashlib
import json
import math
import pathlib
import shutil

import torch

import minimind_checkout  # tools/rollout/minimind_checkout.py: MiniMind's code from a checkout

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent
# MiniMind's code imports transformers; this stand-in (only on this script's sys.path) provides what it needs.
minimind_checkout.use_transformers_stub()
from transformers.saving import TRANSFORMERS_VERSION  # noqa: E402  (the layout save_pretrained writes: 4.57.6)

torch.set_num_threads(1)

TOKENIZER_DIR = ROOT / "models" / "minigen-tiny-sft"
VOCAB_SIZE = 6400
# The model shape. MiniMind names the head counts num_attention_heads / num_key_value_heads; head_dim defaults to
# hidden_size // num_attention_heads = 16. rope_theta, rms_norm_eps, max_position_embeddings: MiniMind's defaults.
SHAPE = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=1,
             intermediate_size=96, vocab_size=VOCAB_SIZE)
WRONG_INTERMEDIATE = 64
# trainer/train_grpo.py builds its config with max_seq_len = args.max_seq_len + args.max_gen_len (768 + 1024 by
# default), a key MiniMindConfig does not read but PretrainedConfig keeps, so config.json carries it.
GRPO_MAX_SEQ_LEN = 768 + 1024
POLICIES = (("policy_v1", 1), ("policy_v2", 2))
# Initialisation: every tensor from one torch.Generator seeded with the policy's seed, in named_parameters() order
# (embed_tokens, which lm_head shares, comes first). Embeddings N(0, 0.4), linear weights N(0, 0.25), RMSNorm weights
# (input/post-attention/final norm, q_norm, k_norm) 1 + N(0, 0.1). With these the greedy tokens of the prompts
# below have probabilities of roughly 0.02 to 0.23 and do not merely repeat the last prompt token.
EMBED_STD, LINEAR_STD, NORM_STD = 0.4, 0.25, 0.1
PROMPT_LENGTHS = (5, 12, 23)
NEW_TOKENS = 16
MIN_MARGIN = 1e-2  # a prompt is redrawn while any greedy step of either policy has a smaller top-1/top-2 margin
MAX_ATTEMPTS = 20


# ---------------------------------------------------------------------------------------------------------------
# MiniMind's code, imported from a checkout
# ---------------------------------------------------------------------------------------------------------------

class MiniMind:
    def __init__(self, checkout, commit):
        checkout = pathlib.Path(checkout)
        # compute_per_token_logps does no HTTP: rollout_engine.py's requests may be a placeholder (see the docstring)
        self.model, self.rollout, _ = minimind_checkout.import_minimind(checkout)
        self.commit = (commit or minimind_checkout.git_commit(checkout)
                       or "unknown (not a git checkout; pass --minimind-commit)")
        requirements = checkout / "requirements.txt"
        self.transformers_pin = None
        if requirements.is_file():
            for line in requirements.read_text().splitlines():
                if line.strip().lower().startswith("transformers=="):
                    self.transformers_pin = line.strip().split("==", 1)[1]
            if self.transformers_pin not in (None, TRANSFORMERS_VERSION):
                print(f"warning: {requirements} pins transformers=={self.transformers_pin}; config.json files say "
                      f"{TRANSFORMERS_VERSION} (TRANSFORMERS_VERSION)")

    def config(self, intermediate_size):
        shape = dict(SHAPE, intermediate_size=intermediate_size)
        hidden, layers = shape.pop("hidden_size"), shape.pop("num_hidden_layers")
        return self.model.MiniMindConfig(hidden_size=hidden, num_hidden_layers=layers, use_moe=False,
                                         max_seq_len=GRPO_MAX_SEQ_LEN, **shape)


# ---------------------------------------------------------------------------------------------------------------
# Weights
# ---------------------------------------------------------------------------------------------------------------

@torch.no_grad()
def random_policy(mm, seed):
    """MiniMindForCausalLM (fp32) with the weights of `seed` (see EMBED_STD etc.)."""
    torch.manual_seed(seed)
    model = mm.model.MiniMindForCausalLM(mm.config(SHAPE["intermediate_size"]))
    generator = torch.Generator().manual_seed(seed)
    for name, parameter in model.named_parameters():
        if name.endswith("norm.weight"):
            parameter.copy_(1.0 + NORM_STD * torch.randn(parameter.shape, generator=generator))
        elif name == "model.embed_tokens.weight":
            parameter.normal_(0.0, EMBED_STD, generator=generator)
        elif name.endswith("proj.weight"):
            parameter.normal_(0.0, LINEAR_STD, generator=generator)
        else:
            raise AssertionError(f"no initialisation rule for {name}")
    if model.lm_head.weight is not model.model.embed_tokens.weight:
        raise AssertionError("MiniMind did not tie lm_head and embed_tokens")
    return model.eval()


@torch.no_grad()
def wrong_shape_policy(mm, base):
    """policy_v1 with intermediate_size WRONG_INTERMEDIATE: MLP tensors cut to size, the rest copied."""
    model = mm.model.MiniMindForCausalLM(mm.config(WRONG_INTERMEDIATE))
    source = base.state_dict()
    state = {}
    for name, tensor in model.state_dict().items():
        value = source[name]
        if name.endswith(("gate_proj.weight", "up_proj.weight")):
            value = value[:WRONG_INTERMEDIATE, :]
        elif name.endswith("down_proj.weight"):
            value = value[:, :WRONG_INTERMEDIATE]
        if value.shape != tensor.shape:
            raise AssertionError(f"{name}: {tuple(value.shape)} vs {tuple(tensor.shape)}")
        state[name] = value.clone()
    model.load_state_dict(state, strict=True)
    return model.eval()


# ---------------------------------------------------------------------------------------------------------------
# The files of save_pretrained (model) and tokenizer.save_pretrained
# ---------------------------------------------------------------------------------------------------------------

def write_checkpoint(model, out_dir):
    """What SGLangRolloutEngine.update_policy leaves in its directory (see the module docstring)."""
    if out_dir.exists():
        shutil.rmtree(out_dir)
    out_dir.mkdir(parents=True)
    state_dict = {k: v.detach().half().cpu() for k, v in model.state_dict().items()}  # update_policy's own lines
    model.save_pretrained(out_dir, state_dict=state_dict, safe_serialization=False)  # the stub's (saving.py)
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copyfile(TOKENIZER_DIR / name, out_dir / name)


def read_checkpoint(mm, directory):
    """A checkpoint read back: its config.json → MiniMindConfig, pytorch_model.bin (checked: fp16, both tied keys,
    exactly the model's state_dict keys) → an fp32 MiniMindForCausalLM (strict load)."""
    config = json.loads((directory / "config.json").read_text())
    state = torch.load(directory / "pytorch_model.bin", map_location="cpu")
    for key in ("model.embed_tokens.weight", "lm_head.weight"):
        if key not in state:
            raise AssertionError(f"{directory}: no {key}")
    if not torch.equal(state["model.embed_tokens.weight"], state["lm_head.weight"]):
        raise AssertionError(f"{directory}: embed_tokens and lm_head differ")
    dtypes = {str(tensor.dtype) for tensor in state.values()}
    if dtypes != {"torch.float16"}:
        raise AssertionError(f"{directory}: dtypes {dtypes}")
    fields = {key: value for key, value in config.items()
              if key not in ("architectures", "model_type", "transformers_version", "dtype", "rope_scaling")}
    model = mm.model.MiniMindForCausalLM(mm.model.MiniMindConfig(**fields))
    if set(model.state_dict()) != set(state):
        raise AssertionError(f"{directory}: keys {sorted(set(state) ^ set(model.state_dict()))} differ")
    model.load_state_dict({k: v.float() for k, v in state.items()}, strict=True)
    return model.eval(), state


def sha256(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


# ---------------------------------------------------------------------------------------------------------------
# Golden numbers
# ---------------------------------------------------------------------------------------------------------------

def prompt_candidate(index, attempt):
    """Distinct ids in 3..6399 (no <|endoftext|>, <|im_start|>, <|im_end|>), from a seeded generator."""
    generator = torch.Generator().manual_seed(1000 + 100 * index + attempt)
    return (torch.randperm(VOCAB_SIZE - 3, generator=generator)[:PROMPT_LENGTHS[index]] + 3).tolist()


def forced_ids(index):
    generator = torch.Generator().manual_seed(2000 + index)
    return torch.randint(3, VOCAB_SIZE, (NEW_TOKENS,), generator=generator).tolist()


@torch.no_grad()
def greedy(model, prompt):
    """(tokens, margins): argmax of MiniMind's forward re-run on the whole sequence each step, no cache, no eos."""
    ids, tokens, margins = list(prompt), [], []
    for _ in range(NEW_TOKENS):
        last = model(torch.tensor([ids])).logits[0, -1]
        top = torch.topk(last, 2)
        token = int(torch.argmax(last))
        if token != int(top.indices[0]):
            raise AssertionError("argmax and topk disagree")
        tokens.append(token)
        margins.append(float(top.values[0] - top.values[1]))
        ids.append(token)
    return tokens, margins


@torch.no_grad()
def generate_greedy(model, prompt):
    """MiniMind's own generate with its KV cache, sampling off (raw argmax), eos ignored."""
    out = model.generate(input_ids=torch.tensor([prompt]), max_new_tokens=NEW_TOKENS, do_sample=False,
                         temperature=1.0, top_k=0, top_p=1.0, eos_token_id=None, use_cache=True)
    return out[0, len(prompt):].tolist()


@torch.no_grad()
def logprobs(mm, model, prompt, completion):
    values = mm.rollout.compute_per_token_logps(model, torch.tensor([prompt + completion]), len(completion))
    return [float(x) for x in values[0]]


@torch.no_grad()
def top1_logprobs(model, prompt, completion):
    """max log_softmax at each completion position: what a greedy token's logprob must equal."""
    logits = model(torch.tensor([prompt + completion])).logits[0, len(prompt) - 1:-1]
    return logits.log_softmax(-1).max(-1).values.tolist()


def choose_prompts(models):
    """Prompt k: the first candidate whose greedy margins are >= MIN_MARGIN on every policy."""
    prompts, attempts = [], []
    for index in range(len(PROMPT_LENGTHS)):
        for attempt in range(MAX_ATTEMPTS):
            prompt = prompt_candidate(index, attempt)
            if all(min(greedy(model, prompt)[1]) >= MIN_MARGIN for model in models):
                prompts.append(prompt)
                attempts.append(attempt)
                break
            print(f"  prompt {index} candidate {attempt}: a greedy margin < {MIN_MARGIN}, redrawn")
        else:
            raise AssertionError(f"prompt {index}: no candidate in {MAX_ATTEMPTS} has margins >= {MIN_MARGIN}")
    return prompts, attempts


def policy_golden(mm, model, prompts):
    records, checks = [], []
    for index, prompt in enumerate(prompts):
        tokens, margins = greedy(model, prompt)
        cached = generate_greedy(model, prompt)
        if cached != tokens:
            raise AssertionError(f"prompt {index}: generate (KV cache) {cached} != re-forward greedy {tokens}")
        greedy_lp = logprobs(mm, model, prompt, tokens)
        top1 = top1_logprobs(model, prompt, tokens)
        forced = forced_ids(index)
        forced_lp = logprobs(mm, model, prompt, forced)
        if not all(lp > -math.log(VOCAB_SIZE) for lp in greedy_lp):
            raise AssertionError(f"prompt {index}: a greedy logprob <= log(1/{VOCAB_SIZE})")
        if len(set(round(lp, 3) for lp in greedy_lp)) < 4:
            raise AssertionError(f"prompt {index}: greedy logprobs barely vary: {greedy_lp}")
        checks.append(max(abs(a - b) for a, b in zip(greedy_lp, top1)))
        records.append({
            "prompt_ids": prompt,
            "greedy_ids": tokens,
            "greedy_logprobs": greedy_lp,
            "greedy_margin": margins,
            "forced_ids": forced,
            "forced_logprobs": forced_lp,
        })
    return records, max(checks)


# ---------------------------------------------------------------------------------------------------------------
# Output
# ---------------------------------------------------------------------------------------------------------------

def dumps(value, indent=0):
    """JSON with indentation, but lists of numbers on one line."""
    pad = "  " * indent
    if isinstance(value, dict):
        if not value:
            return "{}"
        items = [f'{pad}  {json.dumps(k)}: {dumps(v, indent + 1)}' for k, v in value.items()]
        return "{\n" + ",\n".join(items) + f"\n{pad}}}"
    if isinstance(value, list) and any(isinstance(v, (dict, list)) for v in value):
        items = [f"{pad}  {dumps(v, indent + 1)}" for v in value]
        return "[\n" + ",\n".join(items) + f"\n{pad}]"
    return json.dumps(value)


def tensor_shapes(state):
    return {name: list(tensor.shape) for name, tensor in state.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--minimind", required=True,
                        help="a MiniMind checkout (a directory with model/model_minimind.py, trainer/rollout_engine.py)")
    parser.add_argument("--minimind-commit", help="its commit (default: git rev-parse HEAD in --minimind)")
    parser.add_argument("--out", default=str(ROOT / "tests" / "data" / "rollout"), help="fixture directory")
    args = parser.parse_args()
    out_dir = pathlib.Path(args.out)
    mm = MiniMind(args.minimind, args.minimind_commit)
    print(f"MiniMind {mm.commit}, torch {torch.__version__}")

    out_dir.mkdir(parents=True, exist_ok=True)
    fp32_models = {}
    for name, seed in POLICIES:
        fp32_models[name] = random_policy(mm, seed)
        write_checkpoint(fp32_models[name], out_dir / name)
    write_checkpoint(wrong_shape_policy(mm, fp32_models["policy_v1"]), out_dir / "policy_wrong_shape")

    # Everything below runs on the checkpoints as written: fp16 weights read back, upcast to fp32.
    loaded = {name: read_checkpoint(mm, out_dir / name) for name in
              [name for name, _ in POLICIES] + ["policy_wrong_shape"]}
    prompts, attempts = choose_prompts([loaded[name][0] for name, _ in POLICIES])

    golden = {
        "description": "Golden logprobs for minigen's SGLang-compatible rollout server, computed with MiniMind's "
                       "own model code and compute_per_token_logps on the fp16 checkpoints in this directory "
                       "(read back and upcast to fp32; CPU). See tools/rollout/README.md.",
        "producer": "tools/rollout/make_rollout_fixtures.py",
        "minimind_commit": mm.commit,
        "minimind_code": ["model/model_minimind.py (MiniMindConfig, MiniMindForCausalLM)",
                          "trainer/rollout_engine.py (compute_per_token_logps)"],
        "torch_version": torch.__version__,
        "transformers_version_emulated": TRANSFORMERS_VERSION,
        "definitions": {
            "greedy_ids": f"{NEW_TOKENS} tokens: argmax of the last-position logits of MiniMind's forward re-run "
                          "on prompt + tokens so far (no cache), eos never stops it; MiniMind's generate with its "
                          "KV cache (do_sample=False) gives the same tokens",
            "greedy_margin": "top-1 minus top-2 raw logit at each greedy step",
            "greedy_logprobs": f"compute_per_token_logps(model, [prompt_ids + greedy_ids], n_keep={NEW_TOKENS})[0]:"
                               " log_softmax of the raw logits (temperature 1) at each completion position",
            "forced_ids": f"{NEW_TOKENS} fixed pseudo-random ids (teacher forcing)",
            "forced_logprobs": f"compute_per_token_logps(model, [prompt_ids + forced_ids], n_keep={NEW_TOKENS})[0]",
            "prompt_ids": f"distinct ids in 3..{VOCAB_SIZE - 1}, lengths {list(PROMPT_LENGTHS)}; the same prompts "
                          f"for every policy, each the first seeded candidate whose greedy margins are all >= "
                          f"{MIN_MARGIN} on both policies",
        },
        "prompt_candidate_attempts": attempts,
        "init": {"generator": "torch.Generator().manual_seed(seed), named_parameters() order",
                 "embed_std": EMBED_STD, "linear_std": LINEAR_STD,
                 "norm_weights": f"1 + N(0, {NORM_STD})"},
        "policies": {},
    }
    for name, seed in POLICIES:
        model, state = loaded[name]
        records, top1_check = policy_golden(mm, model, prompts)
        golden["policies"][name] = {
            "seed": seed,
            "config": json.loads((out_dir / name / "config.json").read_text()),
            "files_sha256": {path.name: sha256(path) for path in sorted((out_dir / name).iterdir())},
            "max_abs_greedy_logprob_minus_top1_logprob": top1_check,
            "prompts": records,
        }
        probabilities = [math.exp(lp) for record in records for lp in record["greedy_logprobs"]]
        print(f"{name}: greedy token probabilities {min(probabilities):.3f}..{max(probabilities):.3f}, min margin "
              f"{min(m for r in records for m in r['greedy_margin']):.3g}, |greedy logprob - top-1 logprob| <= "
              f"{top1_check:.3g}")
        for record in records:
            print(f"  prompt {record['prompt_ids']}\n    greedy {record['greedy_ids']}")

    v1_state, wrong_state = loaded["policy_v1"][1], loaded["policy_wrong_shape"][1]
    v1_config = json.loads((out_dir / "policy_v1" / "config.json").read_text())
    wrong_config = json.loads((out_dir / "policy_wrong_shape" / "config.json").read_text())
    golden["policy_wrong_shape"] = {
        "derived_from": "policy_v1",
        "config_differences": {key: [v1_config[key], wrong_config[key]] for key in v1_config
                               if v1_config[key] != wrong_config[key]},
        "tensor_shape_differences": {name: [list(v1_state[name].shape), list(wrong_state[name].shape)]
                                     for name in v1_state if v1_state[name].shape != wrong_state[name].shape},
        "identical_tensors": sorted(name for name in v1_state if torch.equal(v1_state[name], wrong_state[name])),
        "files_sha256": {path.name: sha256(path) for path in sorted((out_dir / "policy_wrong_shape").iterdir())},
    }
    golden["tensor_shapes"] = tensor_shapes(v1_state)
    (out_dir / "golden.json").write_text(dumps(golden) + "\n")

    print("files:")
    total = 0
    for path in sorted(out_dir.rglob("*")):
        if path.is_file():
            total += path.stat().st_size
            print(f"  {str(path.relative_to(out_dir)):44s} {path.stat().st_size:>9,} bytes")
    print(f"  total {total:,} bytes")


if __name__ == "__main__":
    main()
