"""An independent PyTorch implementation of MiniMind's forward pass and generate loop: the oracle minigen is
tested against. Written from /work/shared/minimind-spec.md (§2 forward, §5 generate), in plain float32 torch, for
reading rather than speed.

    model = load_model("path/to/hf_dir")          # config.json + model.safetensors
    logits = model.forward(torch.tensor([[1, 2, 3]]))                  # [batch, tokens, vocab], no cache
    cache = KVCache(model.config.num_layers); model.forward(ids, cache)   # the same, filling the cache
    out = generate(model, ids, do_sample=False, max_new_tokens=16)     # MiniMind's generate, greedy

Run it with Debian's torch: /usr/bin/python3.
"""
import dataclasses
import json
import math
import pathlib
import re

import torch
import torch.nn.functional as F

from safetensors_io import read_safetensors

TOP_P_RULES = ("minimind", "hf", "llamacpp")


# ---------------------------------------------------------------------------------------------------------------
# Configuration
# ---------------------------------------------------------------------------------------------------------------

@dataclasses.dataclass
class ModelConfig:
    vocab_size: int
    hidden_size: int
    num_layers: int
    num_q_heads: int
    num_kv_heads: int
    head_dim: int
    intermediate_size: int  # dense MLP width (0 for MoE models)
    qk_norm: bool  # RMSNorm over head_dim on q and k before RoPE (minimind-3, tiny)
    rms_norm_eps: float
    rope_theta: float
    tie_word_embeddings: bool = True
    use_moe: bool = False
    num_experts: int = 0  # routed experts
    num_experts_per_token: int = 0  # router top-k
    num_shared_experts: int = 0  # always-on experts added to the routed output
    moe_intermediate_size: int = 0
    norm_topk_prob: bool = True
    bos_token_id: int = 1
    eos_token_id: int = 2


def _first_present(config_json, *names, default=None):
    for name in names:
        if config_json.get(name) is not None:
            return config_json[name]
    return default


def config_from_json(config_json, tensors):
    """A ModelConfig from config.json (MiniMind field names, or a converted "qwen3"/"llama" config) and the
    weight tensors: qk-norm is on iff the q_norm tensor exists (MiniMind's config has no flag for it), and MLP
    widths and expert counts are read from the tensor shapes and checked against the config where it states them."""
    model_type = config_json.get("model_type", "minimind")
    if model_type not in ("minimind", "qwen3", "llama", "qwen3_moe"):
        raise ValueError(f"unsupported model_type {model_type!r}")
    if config_json.get("rope_scaling"):
        # Off by default in minimind-3 (spec §2); the reference does not implement YaRN.
        raise NotImplementedError("rope_scaling (YaRN) is not implemented in the reference")

    hidden_size = int(config_json["hidden_size"])
    num_q_heads = int(config_json["num_attention_heads"])
    num_kv_heads = int(_first_present(config_json, "num_key_value_heads", default=num_q_heads))
    head_dim = int(_first_present(config_json, "head_dim", default=hidden_size // num_q_heads))
    layer_indices = {int(m.group(1)) for name in tensors if (m := re.match(r"model\.layers\.(\d+)\.", name))}
    num_layers = int(config_json["num_hidden_layers"])
    if layer_indices != set(range(num_layers)):
        raise ValueError(f"config.json says {num_layers} layers, the weights hold layers {sorted(layer_indices)}")

    use_moe = bool(config_json.get("use_moe", False)) or "model.layers.0.mlp.gate.weight" in tensors
    intermediate_size = 0
    num_experts = num_experts_per_token = num_shared_experts = moe_intermediate_size = 0
    if use_moe:
        expert_indices = {int(m.group(1)) for name in tensors
                          if (m := re.match(r"model\.layers\.0\.mlp\.experts\.(\d+)\.", name))}
        num_experts = len(expert_indices)
        stated = _first_present(config_json, "num_experts", "n_routed_experts")
        if stated is not None and int(stated) != num_experts:
            raise ValueError(f"config.json says {stated} experts, the weights hold {num_experts}")
        num_experts_per_token = int(_first_present(config_json, "num_experts_per_tok", default=1))
        num_shared_experts = len({int(m.group(1)) for name in tensors
                                  if (m := re.match(r"model\.layers\.0\.mlp\.shared_experts\.(\d+)\.", name))})
        stated = config_json.get("n_shared_experts")
        if stated is not None and int(stated) != num_shared_experts:
            raise ValueError(f"config.json says {stated} shared experts, the weights hold {num_shared_experts}")
        moe_intermediate_size = tensors["model.layers.0.mlp.experts.0.gate_proj.weight"].shape[0]
    else:
        intermediate_size = tensors["model.layers.0.mlp.gate_proj.weight"].shape[0]
        stated = config_json.get("intermediate_size")
        if stated is not None and int(stated) != intermediate_size:
            raise ValueError(f"config.json says intermediate_size {stated}, gate_proj has {intermediate_size} rows")

    return ModelConfig(
        vocab_size=int(config_json.get("vocab_size", tensors["model.embed_tokens.weight"].shape[0])),
        hidden_size=hidden_size,
        num_layers=num_layers,
        num_q_heads=num_q_heads,
        num_kv_heads=num_kv_heads,
        head_dim=head_dim,
        intermediate_size=intermediate_size,
        qk_norm="model.layers.0.self_attn.q_norm.weight" in tensors,
        rms_norm_eps=float(_first_present(config_json, "rms_norm_eps", default=1e-6)),
        rope_theta=float(_first_present(config_json, "rope_theta", default=1e6)),
        tie_word_embeddings=bool(_first_present(config_json, "tie_word_embeddings", default=True)),
        use_moe=use_moe,
        num_experts=num_experts,
        num_experts_per_token=num_experts_per_token,
        num_shared_experts=num_shared_experts,
        moe_intermediate_size=moe_intermediate_size,
        norm_topk_prob=bool(_first_present(config_json, "norm_topk_prob", default=True)),
        bos_token_id=int(_first_present(config_json, "bos_token_id", default=1)),
        eos_token_id=int(_first_present(config_json, "eos_token_id", default=2)),
    )


# ---------------------------------------------------------------------------------------------------------------
# The maths of one decoder block, as plain functions
# ---------------------------------------------------------------------------------------------------------------

def rms_norm(x, weight, eps):
    """weight · (x · rsqrt(mean(x²) + eps)), over the last dimension, in float32."""
    x = x.float()
    return weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps))


def rope_tables(head_dim, theta, num_positions):
    """cos and sin tables [num_positions, head_dim] built as MiniMind does, in float32:
    freqs = 1 / theta^(arange(0, d, 2) / d), angles = outer(positions, freqs), tables = [angles, angles]."""
    freqs = 1.0 / (theta ** (torch.arange(0, head_dim, 2)[: head_dim // 2].float() / head_dim))
    positions = torch.arange(num_positions).float()
    angles = torch.outer(positions, freqs).float()
    cos = torch.cat([torch.cos(angles), torch.cos(angles)], dim=-1)
    sin = torch.cat([torch.sin(angles), torch.sin(angles)], dim=-1)
    return cos, sin


def rotate_half(x):
    """(x1, x2) → (−x2, x1) over the two halves of the last dimension."""
    half = x.shape[-1] // 2
    return torch.cat([-x[..., half:], x[..., :half]], dim=-1)


def apply_rope(x, cos, sin):
    """Rotate-half RoPE. x [batch, tokens, heads, hd]; cos/sin [tokens, hd] for the tokens' absolute positions:
    out[i] = x[i]·cos − x[i+hd/2]·sin, out[i+hd/2] = x[i+hd/2]·cos + x[i]·sin."""
    cos = cos[None, :, None, :]
    sin = sin[None, :, None, :]
    return x * cos + rotate_half(x) * sin


def swiglu(x, gate, up, down):
    """down(silu(gate(x)) · up(x))."""
    return F.linear(F.silu(F.linear(x, gate)) * F.linear(x, up), down)


# ---------------------------------------------------------------------------------------------------------------
# KV cache and model
# ---------------------------------------------------------------------------------------------------------------

class KVCache:
    """Per layer, K (after qk-norm and RoPE) and V, both [batch, positions, kv_heads, head_dim], before repeat_kv."""

    def __init__(self, num_layers):
        self.keys = [None] * num_layers
        self.values = [None] * num_layers

    @property
    def length(self):
        return 0 if self.keys[0] is None else self.keys[0].shape[1]

    def append(self, layer, keys, values):
        """Appends this call's keys and values and returns everything cached for the layer."""
        if self.keys[layer] is not None:
            keys = torch.cat([self.keys[layer], keys], dim=1)
            values = torch.cat([self.values[layer], values], dim=1)
        self.keys[layer] = keys
        self.values[layer] = values
        return keys, values


class MiniMindReference:
    def __init__(self, config, weights):
        """weights: name → float32 torch tensor, MiniMind's state-dict names (spec §3)."""
        self.config = config
        self.weights = weights
        self.output_weight = (weights["model.embed_tokens.weight"] if config.tie_word_embeddings
                              else weights["lm_head.weight"])

    def _layer_weight(self, layer, name):
        return self.weights[f"model.layers.{layer}.{name}.weight"]

    def attention(self, layer, x, cos, sin, cache):
        """x: the normed hidden states [batch, tokens, hidden] at absolute positions past_len … past_len+tokens−1."""
        c = self.config
        batch, tokens, _ = x.shape
        q = F.linear(x, self._layer_weight(layer, "self_attn.q_proj")).view(batch, tokens, c.num_q_heads, c.head_dim)
        k = F.linear(x, self._layer_weight(layer, "self_attn.k_proj")).view(batch, tokens, c.num_kv_heads, c.head_dim)
        v = F.linear(x, self._layer_weight(layer, "self_attn.v_proj")).view(batch, tokens, c.num_kv_heads, c.head_dim)
        if c.qk_norm:  # over head_dim, before RoPE
            q = rms_norm(q, self._layer_weight(layer, "self_attn.q_norm"), c.rms_norm_eps)
            k = rms_norm(k, self._layer_weight(layer, "self_attn.k_norm"), c.rms_norm_eps)
        q = apply_rope(q, cos, sin)
        k = apply_rope(k, cos, sin)
        if cache is not None:
            k, v = cache.append(layer, k, v)
        key_count = k.shape[1]
        past_len = key_count - tokens  # keys cached before this call
        # Query head h reads kv head h // (q_heads / kv_heads): repeat each kv head that many times.
        group = c.num_q_heads // c.num_kv_heads
        k = k.repeat_interleave(group, dim=2)
        v = v.repeat_interleave(group, dim=2)
        q, k, v = (t.transpose(1, 2) for t in (q, k, v))  # [batch, heads, positions, hd]
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(c.head_dim)
        # Causal with an offset: the query at absolute position past_len + i sees keys 0 … past_len + i.
        query_positions = torch.arange(tokens)[:, None] + past_len
        key_positions = torch.arange(key_count)[None, :]
        scores = scores.masked_fill(key_positions > query_positions, float("-inf"))
        probabilities = F.softmax(scores.float(), dim=-1)
        out = (probabilities @ v).transpose(1, 2).reshape(batch, tokens, c.num_q_heads * c.head_dim)
        return F.linear(out, self._layer_weight(layer, "self_attn.o_proj"))

    def feed_forward(self, layer, x):
        c = self.config
        prefix = f"model.layers.{layer}.mlp"
        w = self.weights
        if not c.use_moe:
            return swiglu(x, w[f"{prefix}.gate_proj.weight"], w[f"{prefix}.up_proj.weight"],
                          w[f"{prefix}.down_proj.weight"])
        # Router: softmax over experts, top-k, weights normalised w / (Σw + 1e-20) when norm_topk_prob
        # (minimind-3 does this even for top-1, where it gives ≈ 1).
        router_probabilities = F.softmax(F.linear(x, w[f"{prefix}.gate.weight"]), dim=-1)
        top_weights, top_experts = torch.topk(router_probabilities, c.num_experts_per_token, dim=-1)
        if c.norm_topk_prob:
            top_weights = top_weights / (top_weights.sum(dim=-1, keepdim=True) + 1e-20)
        flat_x = x.reshape(-1, c.hidden_size)
        flat_weights = top_weights.reshape(-1, c.num_experts_per_token)
        flat_experts = top_experts.reshape(-1, c.num_experts_per_token)
        out = torch.zeros_like(flat_x)
        for expert in range(c.num_experts):
            # The tokens that chose this expert, and the router weight each gave it.
            token_rows, rank = (flat_experts == expert).nonzero(as_tuple=True)
            if token_rows.numel() == 0:
                continue
            expert_out = swiglu(flat_x[token_rows], w[f"{prefix}.experts.{expert}.gate_proj.weight"],
                                w[f"{prefix}.experts.{expert}.up_proj.weight"],
                                w[f"{prefix}.experts.{expert}.down_proj.weight"])
            out[token_rows] += flat_weights[token_rows, rank][:, None] * expert_out
        out = out.view_as(x)
        for shared in range(c.num_shared_experts):
            out = out + swiglu(x, w[f"{prefix}.shared_experts.{shared}.gate_proj.weight"],
                               w[f"{prefix}.shared_experts.{shared}.up_proj.weight"],
                               w[f"{prefix}.shared_experts.{shared}.down_proj.weight"])
        return out

    @torch.no_grad()
    def forward(self, ids, cache=None):
        """ids [batch, tokens] (int) → logits [batch, tokens, vocab], float32. With a cache, the tokens continue
        the cached sequence (positions start at cache.length) and their K, V are appended."""
        c = self.config
        ids = torch.as_tensor(ids, dtype=torch.long)
        past_len = 0 if cache is None else cache.length
        tokens = ids.shape[1]
        cos, sin = rope_tables(c.head_dim, c.rope_theta, past_len + tokens)
        cos, sin = cos[past_len:], sin[past_len:]
        h = self.weights["model.embed_tokens.weight"][ids]  # no scaling
        for layer in range(c.num_layers):
            h = h + self.attention(layer, rms_norm(h, self._layer_weight(layer, "input_layernorm"), c.rms_norm_eps),
                                   cos, sin, cache)
            h = h + self.feed_forward(
                layer, rms_norm(h, self._layer_weight(layer, "post_attention_layernorm"), c.rms_norm_eps))
        h = rms_norm(h, self.weights["model.norm.weight"], c.rms_norm_eps)
        return F.linear(h, self.output_weight)

    def new_cache(self):
        return KVCache(self.config.num_layers)


def load_model(directory):
    """A MiniMindReference from an HF model directory: config.json + model.safetensors."""
    directory = pathlib.Path(directory)
    with open(directory / "config.json") as stream:
        config_json = json.load(stream)
    arrays, _ = read_safetensors(directory / "model.safetensors")
    weights = {name: torch.from_numpy(array).float() for name, array in arrays.items()}
    return MiniMindReference(config_from_json(config_json, weights), weights)


# ---------------------------------------------------------------------------------------------------------------
# The filters of generate (spec §5), each on logits [batch, vocab]; removed tokens become −inf
# ---------------------------------------------------------------------------------------------------------------

def apply_repetition_penalty(logits, histories, penalty):
    """For each row, over the distinct ids of its history: logit > 0 ? logit / r : logit · r."""
    logits = logits.clone()
    for row in range(logits.shape[0]):
        seen = torch.unique(torch.as_tensor(histories[row], dtype=torch.long))
        values = logits[row, seen]
        logits[row, seen] = torch.where(values > 0, values / penalty, values * penalty)
    return logits


def apply_top_k(logits, top_k):
    """−inf for every logit strictly below the k-th largest; ties at the k-th survive."""
    top_k = min(top_k, logits.shape[-1])
    kth_largest = torch.topk(logits, top_k, dim=-1).values[..., -1:]
    return logits.masked_fill(logits < kth_largest, float("-inf"))


def _scatter_back(sorted_mask, order):
    """A mask over sorted positions → the same mask over token ids."""
    return torch.zeros_like(sorted_mask).scatter(-1, order, sorted_mask)


def apply_top_p(logits, top_p, rule="minimind"):
    """Nucleus filtering by one of three rules. Sorts are stable, so among equal logits the lower id ranks first
    in a descending sort (and last in HF's ascending one); torch's default sort, which MiniMind and HF call, gives
    no such promise (on the CPU it is not stable beyond a few dozen elements), so cuts through a group of equal
    logits are a convention of this reference.
      minimind: descending; remove = cumsum > p shifted right by one, the first never removed — keeps through the
                first token whose cumulative probability exceeds p.
      hf:       ascending; remove where the ascending cumsum ≤ 1 − p, never the most likely token.
      llamacpp: descending; keep until the cumulative probability reaches p (≥ p), that token included."""
    if rule == "hf":
        sorted_logits, order = torch.sort(logits, dim=-1, descending=False, stable=True)
        cumulative = torch.cumsum(F.softmax(sorted_logits, dim=-1), dim=-1)
        remove = cumulative <= 1 - top_p
        remove[..., -1] = False
    elif rule in ("minimind", "llamacpp"):
        sorted_logits, order = torch.sort(logits, dim=-1, descending=True, stable=True)
        cumulative = torch.cumsum(F.softmax(sorted_logits, dim=-1), dim=-1)
        reached = cumulative > top_p if rule == "minimind" else cumulative >= top_p
        remove = torch.zeros_like(reached)
        remove[..., 1:] = reached[..., :-1]  # shifted right: the token that crosses p stays
    else:
        raise ValueError(f"top_p_rule must be one of {TOP_P_RULES}, got {rule!r}")
    return logits.masked_fill(_scatter_back(remove, order), float("-inf"))


def apply_min_p(logits, min_p):
    """Keep tokens whose probability is ≥ min_p · the largest probability."""
    probabilities = F.softmax(logits, dim=-1)
    threshold = min_p * probabilities.max(dim=-1, keepdim=True).values
    return logits.masked_fill(probabilities < threshold, float("-inf"))


def filter_logits(logits, histories, temperature=0.85, repetition_penalty=1.0, top_k=50, top_p=0.85,
                  top_p_rule="minimind", min_p=0.0):
    """The chain in MiniMind's order: temperature → repetition penalty → top-k → top-p → min-p.
    logits [batch, vocab] (the last position's); histories: per row, every id so far (prompt + generated)."""
    if not temperature > 0:
        raise ValueError(f"temperature must be > 0, got {temperature}")
    logits = logits / temperature  # float32 in generate; kept_mask may pass float64 to probe rounding
    if repetition_penalty != 1.0:
        logits = apply_repetition_penalty(logits, histories, repetition_penalty)
    if top_k > 0:
        logits = apply_top_k(logits, top_k)
    if top_p < 1.0:
        logits = apply_top_p(logits, top_p, top_p_rule)
    if min_p > 0.0:
        logits = apply_min_p(logits, min_p)
    return logits


def kept_mask(logits, history=(), dtype=torch.float32, **params):
    """1 for every id of one logit vector that survives filter_logits, 0 for the rest."""
    filtered = filter_logits(torch.as_tensor(logits, dtype=dtype)[None, :], [list(history)], **params)
    return [int(value) for value in torch.isfinite(filtered[0]).tolist()]


# ---------------------------------------------------------------------------------------------------------------
# generate (spec §5)
# ---------------------------------------------------------------------------------------------------------------

@torch.no_grad()
def generate(model, input_ids, eos_token_id=2, max_new_tokens=64, temperature=0.85, top_p=0.85, top_k=50,
             repetition_penalty=1.0, do_sample=True, num_return_sequences=1, use_cache=True, top_p_rule="minimind",
             min_p=0.0, generator=None):
    """MiniMind's generate. input_ids [batch, prompt_len]; returns [batch · num_return_sequences, prompt_len + new]
    (prompt included). eos_token_id None never finishes a row (exactly max_new_tokens new tokens)."""
    ids = torch.as_tensor(input_ids, dtype=torch.long)
    ids = ids.repeat_interleave(num_return_sequences, dim=0)  # each prompt repeated as extra rows
    finished = torch.zeros(ids.shape[0], dtype=torch.bool)
    cache = model.new_cache() if use_cache else None
    for _ in range(max_new_tokens):
        past_len = cache.length if use_cache else 0
        logits = model.forward(ids[:, past_len:], cache)[:, -1, :]
        logits = filter_logits(logits, ids.tolist(), temperature=temperature, repetition_penalty=repetition_penalty,
                               top_k=top_k, top_p=top_p, top_p_rule=top_p_rule, min_p=min_p)
        if do_sample:
            next_token = torch.multinomial(F.softmax(logits, dim=-1), num_samples=1, generator=generator)
        else:
            next_token = torch.argmax(logits, dim=-1, keepdim=True)
        if eos_token_id is not None:
            next_token = torch.where(finished[:, None], torch.full_like(next_token, eos_token_id), next_token)
        ids = torch.cat([ids, next_token], dim=-1)
        if eos_token_id is not None:
            finished |= next_token[:, 0] == eos_token_id
            if finished.all():
                break
    return ids
