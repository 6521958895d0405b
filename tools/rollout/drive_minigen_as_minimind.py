#!/usr/bin/python3
"""Drives a running `minigen serve` with MiniMind's OWN SGLangRolloutEngine, as trainer/train_grpo.py does, and checks
the numbers.

    mkdir -p /tmp/minimind && git --git-dir=/work/.mirror/jingyaogong+minimind/repo archive HEAD model trainer \\
        | tar -x -C /tmp/minimind
    ./build/minigen serve -m tests/data/rollout/policy_v1 --port 8998 &
    /usr/bin/python3 tools/rollout/drive_minigen_as_minimind.py --minimind /tmp/minimind
    kill %1

Run from any directory with Debian's torch and requests (`/usr/bin/python3`; python3-torch, python3-requests).
MiniMind's model/model_minimind.py and trainer/rollout_engine.py are imported from the --minimind checkout at run
time (minimind_checkout.py) and run unmodified; nothing of MiniMind's is copied here. Their `transformers` imports
come from tools/reference/transformers_stub (Debian 12 has no transformers), whose PreTrainedModel.save_pretrained
writes what transformers 4.57 writes with safe_serialization=False and whose AutoTokenizer returns the tokenizer
stand-in below once this script installs it as AutoTokenizer.factory.

The engine is built with MiniMind's factory, create_rollout_engine("sglang", sglang_base_url=..., sglang_model_path=
--model-dir, sglang_shared_path=--shared-path), as train_grpo.py builds it. Then, in order:
  1. engine.health() must be True; GET /get_model_info gives the starting weight_version, and its model_path must
     be --model-dir (its name or path: a server already updated serves the shared path, so restart it).
  2. The policy: MiniMind's MiniMindForCausalLM (fp32, eval) with a MiniMindConfig from --model-dir's config.json
     (its shape fields; a Qwen3-style config such as models/minigen-tiny-sft's maps one to one) and that directory's
     pytorch_model.bin or model.safetensors, strictly loaded: the weights the server was started on.
  3. B prompts of different lengths (seeded ids in 3..vocab-1), left-padded with pad id 0 plus an attention_mask, as
     train_grpo.py's tokenizer(..., padding_side="left") gives them; engine.rollout(prompt_ids, attention_mask,
     num_generations=G, max_new_tokens=N, temperature=0.8). Checked: the raw /generate answer (one logprob per
     output id, the same ids), every shape of the RolloutResult, prompt_lens, completion_mask, that each output row
     is its prompt + completion + right padding.
  4. The logprobs of the policy on the rollout's tokens, two ways, each against RolloutResult.per_token_logps on
     the completion positions that are real tokens (completion_mask 1):
       train_grpo   what train_grpo.py computes as per_token_logps (whose ratio to the rollout's
                    old_per_token_logps is the loss): one forward of the policy over output_ids with
                    full_mask = (output_ids != pad_token_id), log_softmax of logits[:, :-1] gathered at
                    output_ids[:, 1:], then at logp_pos = prompt_lens - 1 + arange(R). Written out here
                    (train_grpo.py's loop cannot be imported); rows whose completion contains pad id 0 before its
                    end are reported but not judged (full_mask hides that token from the attention, a MiniMind
                    artifact, not the server's)
       per_row      MiniMind's compute_per_token_logps(policy, prompt + completion, len(completion),
                    attention_mask=ones) on each row without padding, as TorchRolloutEngine calls it
     Both must agree within 1e-4 (--tolerance). Also reported, not judged: compute_per_token_logps on the whole
     right-padded batch (n_keep = R): its last R positions are the completion only for rows whose prompt is the
     longest; SGLang-shaped results need train_grpo.py's logp_pos.
  5. Every parameter of the policy gets N(0, 1) * 0.05 noise (torch.Generator seed 3, named_parameters order); then
     engine.update_policy(policy) (MiniMind's: halves the state_dict, save_pretrained into the shared path, the
     tokenizer's save_pretrained, POST /update_weights_from_disk). /get_model_info's weight_version must change, the
     shared path must hold the files (pytorch_model.bin: fp16, both tied keys).
  6. A second rollout, checked as in 3 and 4 against the perturbed policy with its weights rounded to fp16 and back.
     The rounding is needed because update_policy saves v.detach().half(): the server computes (in fp32) with the
     fp16-rounded weights, not the trainer's fp32 ones. The difference to the unrounded policy is reported too.
  7. engine.flush_cache() must be True.
Exit 0 when every check passes, 1 on any mismatch (each printed as FAIL). HTTP requests go through a recorder in
place of the engine's `http` attribute (MiniMind sets self.http = requests; the recorder forwards to requests), so
the transcript can show what was sent and, on a failure, the server's exact answer.

Not MiniMind's here: the tokenizer. StandInTokenizer has what rollout_engine.py uses: pad_token_id and
eos_token_id (from the model dir's tokenizer_config.json: <|endoftext|> 0, <|im_end|> 2), decode/batch_decode (a
real byte-level BPE decode with tokenizer.json's vocab) and save_pretrained (copies tokenizer.json and
tokenizer_config.json; a real tokenizer rewrites them and adds special_tokens_map.json).
"""
import argparse
import os

# OpenBLAS 0.3.21 misdetects this CPU; must be set before torch loads it. One thread: the models are tiny and the
# server shares the cores.
os.environ.setdefault("OPENBLAS_CORETYPE", "SkylakeX")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import copy  # noqa: E402
import json  # noqa: E402
import pathlib  # noqa: E402
import shutil  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import torch  # noqa: E402

try:
    import requests  # noqa: E402
except ImportError:
    sys.exit("error: this script talks HTTP with MiniMind's own client code, which needs requests "
             "(apt-get install python3-requests)")

import minimind_checkout  # noqa: E402  (tools/rollout/minimind_checkout.py: MiniMind's code from a checkout)

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parent.parent
# tools/reference (safetensors_io) and, before it, the transformers stand-in: MiniMind's model code and
# rollout_engine.py import transformers; the stub provides what they touch.
minimind_checkout.use_transformers_stub(with_reference=True)
import transformers  # noqa: E402  (the stub)
from safetensors_io import read_safetensors  # noqa: E402

torch.set_num_threads(1)

PROMPT_SEED = 1234
NOISE_SEED, NOISE_SCALE = 3, 0.05
TEMPERATURE = 0.8  # train_grpo.py's rollout temperature
# MiniMindConfig keyword arguments taken from config.json when present (the shape; a Qwen3 config names them alike).
CONFIG_KEYS = ("hidden_size", "num_hidden_layers", "use_moe", "vocab_size", "bos_token_id", "eos_token_id",
               "dropout", "flash_attn", "num_attention_heads", "num_key_value_heads", "head_dim", "hidden_act",
               "intermediate_size", "max_position_embeddings", "rms_norm_eps", "rope_theta", "tie_word_embeddings",
               "inference_rope_scaling", "num_experts", "num_experts_per_tok", "moe_intermediate_size",
               "norm_topk_prob", "router_aux_loss_coef", "max_seq_len")
# What update_policy leaves in the shared path (special_tokens_map.json: a real tokenizer's save_pretrained).
CHECKPOINT_FILES = {"config.json", "generation_config.json", "pytorch_model.bin", "tokenizer.json",
                    "tokenizer_config.json", "special_tokens_map.json"}


def say(message=""):
    print(message, flush=True)


class Failures:
    def __init__(self):
        self.items = []

    def check(self, ok, message):
        if not ok:
            self.items.append(message)
            say(f"FAIL: {message}")
        return ok


# ---------------------------------------------------------------------------------------------------------------
# MiniMind's code, imported from a checkout
# ---------------------------------------------------------------------------------------------------------------

def import_minimind(checkout):
    """minimind_checkout.import_minimind (requests is installed: this script exits without it, so the engine gets
    the real module), and the names of rollout_engine.py this script uses."""
    model_code, engine_code, _ = minimind_checkout.import_minimind(checkout)
    engine_file = pathlib.Path(checkout).resolve() / minimind_checkout.ENGINE_FILE
    for name in ("create_rollout_engine", "SGLangRolloutEngine", "compute_per_token_logps", "RolloutResult"):
        if not hasattr(engine_code, name):
            sys.exit(f"error: {engine_file} has no {name}; this script follows MiniMind's rollout_engine.py API")
    return model_code, engine_code


# ---------------------------------------------------------------------------------------------------------------
# The tokenizer stand-in (NOT MiniMind's tokenizer) and the HTTP recorder
# ---------------------------------------------------------------------------------------------------------------

def bytes_to_unicode():
    """GPT-2's byte-level alphabet: byte → the printable character byte-level BPE vocabularies spell it with."""
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + \
        list(range(ord("®"), ord("ÿ") + 1))
    characters = printable[:]
    extra = 0
    for byte in range(256):
        if byte not in printable:
            printable.append(byte)
            characters.append(256 + extra)
            extra += 1
    return dict(zip(printable, map(chr, characters)))


class StandInTokenizer:
    """What SGLangRolloutEngine uses of a tokenizer: pad_token_id, eos_token_id, decode, batch_decode,
    save_pretrained. Decoding is byte-level BPE with the directory's tokenizer.json (tokens concatenated, mapped back
    to bytes, UTF-8 with replacement); special tokens are left out when skip_special_tokens."""

    def __init__(self, directory):
        self.directory = pathlib.Path(directory)
        config = json.loads((self.directory / "tokenizer_config.json").read_text())
        by_content = {entry["content"]: int(index) for index, entry in config.get("added_tokens_decoder", {}).items()}
        self.pad_token_id = by_content[config["pad_token"]]
        self.eos_token_id = by_content[config["eos_token"]]
        tokenizer = json.loads((self.directory / "tokenizer.json").read_text())
        if tokenizer.get("decoder", {}).get("type") != "ByteLevel":
            raise ValueError(f"{self.directory}/tokenizer.json: decoder {tokenizer.get('decoder')}, not ByteLevel")
        self.tokens = {index: token for token, index in tokenizer["model"]["vocab"].items()}
        self.added = {entry["id"]: entry["content"] for entry in tokenizer.get("added_tokens", [])}
        self.special = {entry["id"] for entry in tokenizer.get("added_tokens", []) if entry.get("special")}
        self.byte_of = {character: byte for byte, character in bytes_to_unicode().items()}

    def decode(self, ids, skip_special_tokens=False, **kwargs):
        if hasattr(ids, "tolist"):
            ids = ids.tolist()
        pieces, pending = [], []
        for index in ids:
            if index in self.added:
                if pending:
                    pieces.append(bytes(pending).decode("utf-8", errors="replace"))
                    pending = []
                if not (skip_special_tokens and index in self.special):
                    pieces.append(self.added[index])
                continue
            pending.extend(self.byte_of.get(character, ord("?")) for character in self.tokens.get(index, ""))
        if pending:
            pieces.append(bytes(pending).decode("utf-8", errors="replace"))
        return "".join(pieces)

    def batch_decode(self, sequences, skip_special_tokens=False, **kwargs):
        if hasattr(sequences, "tolist"):
            sequences = sequences.tolist()
        return [self.decode(row, skip_special_tokens=skip_special_tokens) for row in sequences]

    def save_pretrained(self, save_directory, **kwargs):
        directory = pathlib.Path(save_directory)
        directory.mkdir(parents=True, exist_ok=True)
        written = []
        for name in ("tokenizer.json", "tokenizer_config.json"):
            shutil.copyfile(self.directory / name, directory / name)
            written.append(str(directory / name))
        return tuple(written)


def stand_in_tokenizer_factory(pretrained_model_name_or_path, **kwargs):
    """AutoTokenizer.from_pretrained(path, trust_remote_code=True) → StandInTokenizer(path)."""
    return StandInTokenizer(pretrained_model_name_or_path)


class RecordingHTTP:
    """Takes the place of the `requests` module in engine.http: forwards get/post to requests and keeps each
    exchange (method, path, JSON body, status, answer text, seconds)."""

    def __init__(self):
        self.exchanges = []

    def get(self, url, **kwargs):
        return self._call("GET", requests.get, url, **kwargs)

    def post(self, url, **kwargs):
        return self._call("POST", requests.post, url, **kwargs)

    def _call(self, method, function, url, **kwargs):
        record = {"method": method, "url": url, "json": kwargs.get("json"), "status": None, "text": None}
        self.exchanges.append(record)
        start = time.perf_counter()
        try:
            response = function(url, **kwargs)
        except Exception as error:
            record["error"] = repr(error)
            raise
        finally:
            record["seconds"] = time.perf_counter() - start
        record["status"] = response.status_code
        record["text"] = response.text
        return response

    def last(self, path):
        for record in reversed(self.exchanges):
            if record["url"].endswith(path):
                return record
        return None


def show_exchange(record, limit=2000):
    body = json.dumps(record["json"]) if record["json"] is not None else "(no body)"
    text = record["text"] if record["text"] is not None else record.get("error")
    if text is not None and len(text) > limit:
        text = text[:limit] + f"... ({len(record['text'])} characters)"
    say(f"    request:  {record['method']} {record['url']} {body}")
    say(f"    response: {record['status']} {text}")


# ---------------------------------------------------------------------------------------------------------------
# The policy
# ---------------------------------------------------------------------------------------------------------------

def build_policy(model_code, model_dir):
    """MiniMindForCausalLM (fp32, eval) from model_dir's config.json and weights, strictly loaded."""
    config = json.loads((model_dir / "config.json").read_text())
    kwargs = {key: config[key] for key in CONFIG_KEYS if key in config}
    policy = model_code.MiniMindForCausalLM(model_code.MiniMindConfig(**kwargs))
    if (model_dir / "pytorch_model.bin").is_file():
        state, source = torch.load(model_dir / "pytorch_model.bin", map_location="cpu"), "pytorch_model.bin"
    elif (model_dir / "model.safetensors").is_file():
        arrays, _ = read_safetensors(model_dir / "model.safetensors")
        state, source = {name: torch.from_numpy(array) for name, array in arrays.items()}, "model.safetensors"
    else:
        sys.exit(f"error: {model_dir} has neither pytorch_model.bin nor model.safetensors")
    dtypes = sorted({str(tensor.dtype).replace("torch.", "") for tensor in state.values()})
    state = {name.removeprefix("_orig_mod."): tensor.float() for name, tensor in state.items()}
    if "lm_head.weight" not in state and policy.config.tie_word_embeddings:
        state["lm_head.weight"] = state["model.embed_tokens.weight"]
    policy.load_state_dict(state, strict=True)
    if policy.config.tie_word_embeddings and policy.lm_head.weight is not policy.model.embed_tokens.weight:
        sys.exit("error: MiniMind did not tie lm_head and embed_tokens")
    return policy.eval(), f"{model_dir}/{source} ({', '.join(dtypes)}; strict load into fp32)"


@torch.no_grad()
def perturb(policy):
    generator = torch.Generator().manual_seed(NOISE_SEED)
    for _, parameter in policy.named_parameters():  # the tied embedding once
        parameter.add_(NOISE_SCALE * torch.randn(parameter.shape, generator=generator))


@torch.no_grad()
def fp16_rounded(policy):
    """A copy of the policy with every weight rounded to fp16 and back: the numbers update_policy's
    v.detach().half() hands the server."""
    rounded = copy.deepcopy(policy)
    for parameter in rounded.parameters():
        parameter.copy_(parameter.half().float())
    return rounded.eval()


def make_prompts(batch, vocab, pad_id):
    """B rows of lengths 5, 12, 19, …, seeded ids in 3..vocab-1, left-padded with pad_id (attention_mask 0 there)."""
    generator = torch.Generator().manual_seed(PROMPT_SEED)
    lengths = [5 + 7 * row for row in range(batch)]
    width = max(lengths)
    ids = torch.full((batch, width), pad_id, dtype=torch.long)
    mask = torch.zeros(batch, width, dtype=torch.long)
    for row, length in enumerate(lengths):
        ids[row, width - length:] = torch.randint(3, vocab, (length,), generator=generator)
        mask[row, width - length:] = 1
    return ids, mask, lengths


# ---------------------------------------------------------------------------------------------------------------
# Checks
# ---------------------------------------------------------------------------------------------------------------

def check_generate_answer(recorder, failures, expected_rows, max_new_tokens, eos_id):
    """The raw /generate answer: one [logprob, id, text] per output id, the same ids; returns the parsed list."""
    record = recorder.last("/generate")
    if not failures.check(record is not None and record["status"] == 200, "POST /generate did not answer 200"):
        show_exchange(record)
        return None
    answer = json.loads(record["text"])
    answer = answer if isinstance(answer, list) else [answer]
    failures.check(len(answer) == expected_rows, f"/generate gave {len(answer)} results, expected {expected_rows}")
    for row, result in enumerate(answer):
        meta = result.get("meta_info", {})
        ids = meta.get("output_ids", result.get("output_ids", []))
        logprobs = meta.get("output_token_logprobs", [])
        failures.check(len(logprobs) == len(ids),
                       f"row {row}: {len(logprobs)} output_token_logprobs for {len(ids)} output_ids (MiniMind pads "
                       f"the front with 0.0 or cuts)")
        failures.check([entry[1] for entry in logprobs] == ids, f"row {row}: logprob token ids != output_ids")
        failures.check(0 < len(ids) <= max_new_tokens, f"row {row}: {len(ids)} output ids for max_new_tokens "
                                                        f"{max_new_tokens}")
        failures.check(eos_id not in ids[:-1], f"row {row}: eos {eos_id} before the end of {ids}")
        failures.check(result.get("output_ids", ids) == ids, f"row {row}: output_ids differ from meta_info's")
    return answer


def check_shapes(result, prompts, lengths, generations, failures):
    rows = len(lengths) * generations
    completion_lengths = result.completion_mask.sum(dim=1).tolist()
    width = max(1, max(completion_lengths))
    expected = {
        "output_ids": (rows, max(lengths) + width),
        "completion_ids": (rows, width),
        "per_token_logps": (rows, width),
        "completion_mask": (rows, width),
        "prompt_lens": (rows,),
    }
    for name, shape in expected.items():
        actual = tuple(getattr(result, name).shape)
        failures.check(actual == shape, f"{name} shape {actual}, expected {shape}")
    failures.check(len(result.completions) == rows, f"{len(result.completions)} completions for {rows} rows")
    failures.check(result.per_token_logps.dtype == torch.float32,
                   f"per_token_logps dtype {result.per_token_logps.dtype}")
    expected_lens = torch.tensor(lengths).repeat_interleave(generations)
    failures.check(torch.equal(result.prompt_lens.cpu(), expected_lens),
                   f"prompt_lens {result.prompt_lens.tolist()}, expected {expected_lens.tolist()}")
    for row in range(rows):
        prompt = prompts[row // generations]
        p, c = lengths[row // generations], int(completion_lengths[row])
        output = result.output_ids[row].tolist()
        ok = (output[:p] == prompt and output[p:p + c] == result.completion_ids[row, :c].tolist()
              and all(x == 0 for x in output[p + c:]) and all(x == 0 for x in result.completion_ids[row, c:].tolist())
              and result.completion_mask[row, :c].all() and not result.completion_mask[row, c:].any())
        failures.check(ok, f"row {row}: output_ids is not prompt + completion + right padding")
    return completion_lengths


@torch.no_grad()
def train_grpo_logps(model, result, pad_id):
    """train_grpo.py's per_token_logps for a rollout result (its grpo_train_epoch, under autocast_ctx, which is
    nullcontext on CPU): one forward over output_ids with full_mask, gathered at logp_pos."""
    outputs = result.output_ids
    full_mask = (outputs != pad_id).long()
    logp_pos = result.prompt_lens.unsqueeze(1) - 1 + torch.arange(result.completion_ids.size(1)).unsqueeze(0)
    logits = model(outputs, attention_mask=full_mask).logits
    token_logps = torch.log_softmax(logits[:, :-1, :], dim=-1).gather(2, outputs[:, 1:].unsqueeze(-1)).squeeze(-1)
    return token_logps.gather(1, logp_pos)


@torch.no_grad()
def per_row_logps(engine_code, model, result, completion_lengths):
    """MiniMind's compute_per_token_logps on each row without padding (prompt + completion, mask of ones)."""
    values = torch.zeros_like(result.per_token_logps)
    for row, c in enumerate(completion_lengths):
        p = int(result.prompt_lens[row])
        ids = result.output_ids[row:row + 1, :p + c]
        values[row, :c] = engine_code.compute_per_token_logps(model, ids, c, attention_mask=torch.ones_like(ids))[0]
    return values


@torch.no_grad()
def whole_batch_logps(engine_code, model, result, pad_id):
    """compute_per_token_logps(model, output_ids, R, attention_mask=full_mask) on the right-padded batch."""
    outputs = result.output_ids
    return engine_code.compute_per_token_logps(model, outputs, result.completion_ids.size(1),
                                               attention_mask=(outputs != pad_id).long())


def max_diff(a, b, mask):
    mask = mask.bool()
    return float((a - b).abs()[mask].max()) if mask.any() else 0.0


def compare_logprobs(label, engine_code, model, result, completion_lengths, lengths, generations, pad_id, tolerance,
                     failures, reference=None):
    """The judged comparisons of step 4; returns the largest judged difference."""
    mask = result.completion_mask.bool()
    served = result.per_token_logps
    grpo = train_grpo_logps(model, result, pad_id)
    rows = per_row_logps(engine_code, model, result, completion_lengths)
    # Rows with the pad id inside the completion (not its last token): train_grpo's full_mask hides it.
    hidden = [row for row, c in enumerate(completion_lengths) if pad_id in result.completion_ids[row, :max(0, c - 1)]]
    judged = mask.clone()
    judged[hidden] = False
    d_grpo, d_rows = max_diff(grpo, served, judged), max_diff(rows, served, mask)
    say(f"  max |logprob(server) - logprob(policy)| on {int(mask.sum())} completion tokens ({label}):")
    say(f"    train_grpo.py's per_token_logps (full_mask, logp_pos):     {d_grpo:.3g}"
        + (f"  (rows {hidden} not judged: pad id {pad_id} inside the completion)" if hidden else ""))
    if hidden:
        say(f"      those rows: {max_diff(grpo, served, mask):.3g} (train_grpo masks the pad-id token out)")
    say(f"    compute_per_token_logps per row (unpadded, mask of ones): {d_rows:.3g}")
    failures.check(d_grpo < tolerance, f"{label}: train_grpo logprobs differ by {d_grpo:.3g} >= {tolerance}")
    failures.check(d_rows < tolerance, f"{label}: compute_per_token_logps differs by {d_rows:.3g} >= {tolerance}")
    whole = whole_batch_logps(engine_code, model, result, pad_id)
    longest = torch.tensor([lengths[row // generations] == max(lengths) for row in range(len(completion_lengths))])
    say(f"    (not judged) compute_per_token_logps on the padded batch, n_keep=R: "
        f"{max_diff(whole, served, mask & longest.unsqueeze(1)):.3g} on rows with the longest prompt, "
        f"{max_diff(whole, served, mask & ~longest.unsqueeze(1)):.3g} on the others (misaligned: use logp_pos)")
    if reference is not None:
        say(f"    (not judged) against the policy without fp16 rounding ({reference[0]}): "
            f"{max_diff(per_row_logps(engine_code, reference[1], result, completion_lengths), served, mask):.3g}")
    return max(d_grpo, d_rows)


def get_model_info(base_url, failures):
    response = requests.get(f"{base_url}/get_model_info", timeout=10)
    failures.check(response.status_code == 200, f"GET /get_model_info: {response.status_code} {response.text}")
    return response.json() if response.status_code == 200 else {}


def rollout_step(label, engine, engine_code, recorder, model, prompt_ids, attention_mask, prompts, lengths, args,
                 failures, pad_id, eos_id, reference=None):
    say(f"\n== {label}")
    start = time.perf_counter()
    try:
        result = engine.rollout(prompt_ids, attention_mask, num_generations=args.generations,
                                max_new_tokens=args.new_tokens, temperature=TEMPERATURE)
    except Exception as error:
        failures.check(False, f"{label}: engine.rollout raised {error!r}")
        record = recorder.last("/generate")
        if record is not None:
            show_exchange(record)
        return None, None
    seconds = time.perf_counter() - start
    record = recorder.last("/generate")
    body = record["json"]
    say(f"  sent POST /generate: {len(body['input_ids'])} input_ids lists of lengths "
        f"{[len(ids) for ids in body['input_ids']]}, sampling_params {json.dumps(body['sampling_params'])}, "
        f"return_logprob {body['return_logprob']}")
    say(f"  engine.rollout: {seconds * 1000:.1f} ms wall (HTTP {record['seconds'] * 1000:.1f} ms)")
    answer = check_generate_answer(recorder, failures, len(lengths) * args.generations, args.new_tokens, eos_id)
    completion_lengths = check_shapes(result, prompts, lengths, args.generations, failures)
    say(f"  RolloutResult: output_ids {list(result.output_ids.shape)}, completion_ids "
        f"{list(result.completion_ids.shape)}, per_token_logps {list(result.per_token_logps.shape)}, "
        f"completion_mask {list(result.completion_mask.shape)}, prompt_lens {result.prompt_lens.tolist()}, "
        f"{len(result.completions)} completions")
    say(f"  completion lengths {completion_lengths}")
    if answer:
        versions = sorted({result_["meta_info"].get("weight_version") for result_ in answer})
        reasons = [result_["meta_info"].get("finish_reason", {}).get("type") for result_ in answer]
        latency = max(result_["meta_info"].get("e2e_latency", 0.0) for result_ in answer)
        same_text = sum(text == result_.get("text") for text, result_ in zip(result.completions, answer))
        say(f"  meta_info: weight_version {versions}, finish_reason {reasons}, max e2e_latency {latency * 1000:.1f} ms")
        say(f"  completions[0] (stand-in decode) {result.completions[0]!r}; server text {answer[0].get('text')!r}; "
            f"{same_text}/{len(answer)} equal")
    biggest = compare_logprobs(label, engine_code, model, result, completion_lengths, lengths, args.generations,
                               pad_id, args.tolerance, failures, reference)
    return result, (seconds, biggest, answer)


def prepare_shared_path(shared, model_dir):
    if shared.resolve() == model_dir.resolve():
        sys.exit(f"error: --shared-path {shared} is the served model's directory; update_policy would overwrite it")
    if shared.exists():
        names = {path.name for path in shared.iterdir()}
        if not names <= CHECKPOINT_FILES:
            sys.exit(f"error: --shared-path {shared} holds {sorted(names - CHECKPOINT_FILES)}, not only what "
                     f"update_policy writes; give an empty or new directory")
        for name in names:
            (shared / name).unlink()
        return f"emptied (held {sorted(names)})" if names else "empty"
    return "new"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--minimind", required=True, help="a MiniMind checkout (model/ and trainer/)")
    parser.add_argument("--base-url", default="http://127.0.0.1:8998", help="the running minigen serve")
    parser.add_argument("--model-dir", type=pathlib.Path, default=REPO / "tests" / "data" / "rollout" / "policy_v1",
                        help="the directory the server was started on (-m); the policy and tokenizer come from it")
    parser.add_argument("--shared-path", type=pathlib.Path, default=pathlib.Path("/tmp/minigen_sglang_ckpt"),
                        help="SGLangRolloutEngine's shared_ckpt_path (emptied first; only update_policy's files)")
    parser.add_argument("--batch", type=int, default=2, help="B: prompts")
    parser.add_argument("--generations", type=int, default=4, help="G: num_generations")
    parser.add_argument("--new-tokens", type=int, default=24, help="N: max_new_tokens")
    parser.add_argument("--tolerance", type=float, default=1e-4, help="largest |Δlogprob| accepted")
    args = parser.parse_args()
    base_url = args.base_url.rstrip("/")
    model_dir = args.model_dir.resolve()
    failures = Failures()

    model_code, engine_code = import_minimind(args.minimind)
    say(f"MiniMind code from {pathlib.Path(args.minimind).resolve()}; torch {torch.__version__}, "
        f"requests {requests.__version__}")
    say(f"shared path {args.shared_path}: {prepare_shared_path(args.shared_path, model_dir)}")

    # MiniMind's __init__ calls AutoTokenizer.from_pretrained(model_path, trust_remote_code=True).
    transformers.AutoTokenizer.factory = stand_in_tokenizer_factory
    engine = engine_code.create_rollout_engine(engine_type="sglang", sglang_base_url=base_url,
                                               sglang_model_path=str(model_dir),
                                               sglang_shared_path=str(args.shared_path))
    recorder = RecordingHTTP()
    engine.http = recorder  # MiniMind's own methods call self.http.post / self.http.get
    tokenizer = engine.tokenizer
    say(f"engine: {type(engine).__name__}(base_url={engine.base_url!r}, shared_ckpt_path={engine.shared_ckpt_path!r},"
        f" timeout={engine.timeout}); tokenizer stand-in pad {tokenizer.pad_token_id}, eos {tokenizer.eos_token_id}")

    healthy = engine.health()
    say(f"engine.health(): {healthy}")
    if not failures.check(healthy, f"engine.health() is False: is `minigen serve` running at {base_url}?"):
        if recorder.exchanges:
            show_exchange(recorder.exchanges[-1])
        return 1
    info = get_model_info(base_url, failures)
    version_0 = info.get("weight_version")
    say(f"GET /get_model_info: {json.dumps(info)}")
    served = info.get("model_path")
    if not failures.check(served in (model_dir.name, str(model_dir)),
                          f"the server serves {served!r}, not --model-dir {model_dir} (after an update it serves the "
                          f"shared path: restart it on --model-dir)"):
        return 1

    policy, source = build_policy(model_code, model_dir)
    config = policy.config
    say(f"policy: MiniMindForCausalLM hidden {config.hidden_size}, {config.num_hidden_layers} layers, "
        f"{config.num_attention_heads} heads / {config.num_key_value_heads} KV, head_dim {config.head_dim}, "
        f"intermediate {config.intermediate_size}, vocab {config.vocab_size}; "
        f"{sum(p.numel() for p in policy.parameters()):,} parameters from {source}")
    pad_id, eos_id = tokenizer.pad_token_id, tokenizer.eos_token_id
    prompt_ids, attention_mask, lengths = make_prompts(args.batch, config.vocab_size, pad_id)
    prompts = [row[mask.bool()].tolist() for row, mask in zip(prompt_ids, attention_mask)]
    say(f"prompts: B={args.batch} of lengths {lengths}, left-padded to {prompt_ids.shape[1]} with {pad_id}; G="
        f"{args.generations}, max_new_tokens={args.new_tokens}, temperature={TEMPERATURE}")

    timings, diffs = {}, {}
    result, step = rollout_step("rollout 1 (starting weights)", engine, engine_code, recorder, policy, prompt_ids,
                                attention_mask, prompts, lengths, args, failures, pad_id, eos_id)
    if result is None:
        return 1
    timings["rollout 1"], diffs["rollout 1"], answer_1 = step
    failures.check(answer_1 is None or {r["meta_info"].get("weight_version") for r in answer_1} == {version_0},
                   f"rollout 1's weight_version is not /get_model_info's {version_0!r}")

    say("\n== update_policy")
    perturb(policy)
    say(f"  perturbed every parameter: += {NOISE_SCALE} * N(0, 1), torch.Generator seed {NOISE_SEED}")
    start = time.perf_counter()
    try:
        engine.update_policy(policy)
        updated = True
    except Exception as error:
        updated = False
        failures.check(False, f"engine.update_policy raised {error!r}")
    timings["update_policy"] = time.perf_counter() - start
    record = recorder.last("/update_weights_from_disk")
    if record is not None:
        say(f"  sent POST /update_weights_from_disk {json.dumps(record['json'])}: {record['status']} "
            f"{record['text'][:300] if record['text'] else record.get('error')} ({record['seconds'] * 1000:.1f} ms)")
    say(f"  engine.update_policy: {timings['update_policy'] * 1000:.1f} ms wall (save + POST)")
    if not updated:
        if record is not None:
            show_exchange(record)
        return report(failures, timings, diffs)
    files = sorted(args.shared_path.iterdir())
    say("  shared path: " + ", ".join(f"{path.name} {path.stat().st_size:,} B" for path in files))
    saved = torch.load(args.shared_path / "pytorch_model.bin", map_location="cpu")
    dtypes = {str(t.dtype) for t in saved.values()}
    failures.check(dtypes == {"torch.float16"}, f"saved dtypes {dtypes}")
    failures.check({"model.embed_tokens.weight", "lm_head.weight"} <= set(saved), "saved state lacks a tied key")
    say(f"  pytorch_model.bin: {len(saved)} tensors, {sorted(dtypes)}")
    served_config = model_dir / "config.json"
    say(f"  (not judged) config.json written is byte-identical to {served_config}: "
        f"{(args.shared_path / 'config.json').read_bytes() == served_config.read_bytes()} (expected for a MiniMind "
        f"config; a Qwen3-style one becomes a MiniMind one)")
    info = get_model_info(base_url, failures)
    version_1 = info.get("weight_version")
    say(f"  GET /get_model_info: {json.dumps(info)}")
    say(f"  weight_version {version_0!r} -> {version_1!r}")
    failures.check(version_1 is not None and version_1 != version_0, "weight_version did not change")

    rounded = fp16_rounded(policy)
    result, step = rollout_step("rollout 2 (updated weights)", engine, engine_code, recorder, rounded, prompt_ids,
                                attention_mask, prompts, lengths, args, failures, pad_id, eos_id,
                                reference=("fp32 perturbed policy", policy))
    if result is not None:
        timings["rollout 2"], diffs["rollout 2"], answer_2 = step
        failures.check(answer_2 is None or {r["meta_info"].get("weight_version") for r in answer_2} == {version_1},
                       f"rollout 2's weight_version is not {version_1!r}")

    say("\n== flush_cache")
    flushed = engine.flush_cache()
    record = recorder.last("/flush_cache")
    say(f"  engine.flush_cache(): {flushed} (POST /flush_cache: {record['status']} {record['text'][:200]!r})")
    failures.check(flushed, "flush_cache() is False")
    return report(failures, timings, diffs)


def report(failures, timings, diffs):
    say("\n== summary")
    say("  max |Δlogprob| judged: " + ", ".join(f"{name} {value:.3g}" for name, value in diffs.items()))
    say("  wall times: " + ", ".join(f"{name} {seconds * 1000:.1f} ms" for name, seconds in timings.items()))
    if failures.items:
        say(f"  {len(failures.items)} check(s) FAILED:")
        for item in failures.items:
            say(f"    - {item}")
        return 1
    say("  every check passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
