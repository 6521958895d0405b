"""Random-weight models in MiniMind's HF layout (config.json + model.safetensors, spec §3 names), written with
safetensors_io, so the reference can be exercised without the C++ binary. Not the same weights as
`minigen init-random`: fixtures come from that binary; these only test the reference against itself.

Shapes follow the spec's table (§1); `num_layers` can be lowered to keep tests fast.
"""
import json
import math
import pathlib

import numpy as np

from safetensors_io import write_safetensors

# name: (hidden, layers, q heads, kv heads, ffn width, qk-norm, rms eps, experts, top-k, shared experts)
FAMILIES = {
    "tiny": (256, 4, 8, 2, 64 * math.ceil(256 * math.pi / 64), True, 1e-6, 0, 0, 0),
    "minimind3": (768, 8, 8, 4, 64 * math.ceil(768 * math.pi / 64), True, 1e-6, 0, 0, 0),
    "minimind3-moe": (768, 8, 8, 4, 64 * math.ceil(768 * math.pi / 64), True, 1e-6, 4, 1, 0),
    "minimind2-small": (512, 8, 8, 2, 64 * math.ceil(int(512 * 8 / 3) / 64), False, 1e-5, 0, 0, 0),
    "minimind2": (768, 16, 8, 2, 2048, False, 1e-5, 0, 0, 0),
    "minimind2-moe": (640, 8, 8, 2, 1728, False, 1e-5, 4, 2, 1),
}
VOCAB_SIZE = 6400


def family_config_json(family, num_layers=None):
    hidden, layers, q_heads, kv_heads, ffn, qk_norm, eps, experts, top_k, shared = FAMILIES[family]
    config = {
        "model_type": "minimind",
        "hidden_size": hidden,
        "num_hidden_layers": num_layers or layers,
        "num_attention_heads": q_heads,
        "num_key_value_heads": kv_heads,
        "intermediate_size": ffn,
        "vocab_size": VOCAB_SIZE,
        "rms_norm_eps": eps,
        "rope_theta": 1e6,
        "max_position_embeddings": 32768,
        "tie_word_embeddings": True,
        "bos_token_id": 1,
        "eos_token_id": 2,
        "hidden_act": "silu",
        "use_moe": experts > 0,
    }
    if experts:
        config.update({"num_experts": experts, "num_experts_per_tok": top_k, "n_shared_experts": shared,
                       "moe_intermediate_size": ffn, "norm_topk_prob": True})
    return config


def random_tensors(config, seed, qk_norm):
    """Embeddings N(0, 0.25²), linear layers N(0, 1/fan_in), norms 1 ± 0.1, as minigen's random_weights: the
    blocks, not the input embedding, decide the next token (N(0, 1) embeddings make greedy repeat its input)."""
    rng = np.random.default_rng(seed)
    hidden = config["hidden_size"]
    head_dim = hidden // config["num_attention_heads"]
    q_width = config["num_attention_heads"] * head_dim
    kv_width = config["num_key_value_heads"] * head_dim

    def linear(rows, cols):
        return (rng.standard_normal((rows, cols)) / math.sqrt(cols)).astype(np.float32)

    def norm(size):
        return (1.0 + rng.uniform(-0.1, 0.1, size)).astype(np.float32)

    def feed_forward(prefix, width):
        return {f"{prefix}.gate_proj.weight": linear(width, hidden), f"{prefix}.up_proj.weight": linear(width, hidden),
                f"{prefix}.down_proj.weight": linear(hidden, width)}

    embed = (0.25 * rng.standard_normal((config["vocab_size"], hidden))).astype(np.float32)
    tensors = {"model.embed_tokens.weight": embed, "lm_head.weight": embed, "model.norm.weight": norm(hidden)}
    for layer in range(config["num_hidden_layers"]):
        p = f"model.layers.{layer}"
        tensors.update({
            f"{p}.input_layernorm.weight": norm(hidden),
            f"{p}.post_attention_layernorm.weight": norm(hidden),
            f"{p}.self_attn.q_proj.weight": linear(q_width, hidden),
            f"{p}.self_attn.k_proj.weight": linear(kv_width, hidden),
            f"{p}.self_attn.v_proj.weight": linear(kv_width, hidden),
            f"{p}.self_attn.o_proj.weight": linear(hidden, q_width),
        })
        if qk_norm:
            tensors[f"{p}.self_attn.q_norm.weight"] = norm(head_dim)
            tensors[f"{p}.self_attn.k_norm.weight"] = norm(head_dim)
        if config["use_moe"]:
            tensors[f"{p}.mlp.gate.weight"] = linear(config["num_experts"], hidden)
            for expert in range(config["num_experts"]):
                tensors.update(feed_forward(f"{p}.mlp.experts.{expert}", config["moe_intermediate_size"]))
            for shared in range(config["n_shared_experts"]):
                tensors.update(feed_forward(f"{p}.mlp.shared_experts.{shared}", config["moe_intermediate_size"]))
        else:
            tensors.update(feed_forward(f"{p}.mlp", config["intermediate_size"]))
    return tensors


def write_random_model(directory, family, seed=0, num_layers=None, dtype="F32"):
    """Writes config.json and model.safetensors for a random model of `family` into `directory`."""
    directory = pathlib.Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    config = family_config_json(family, num_layers)
    with open(directory / "config.json", "w") as stream:
        json.dump(config, stream, indent=2)
    write_safetensors(directory / "model.safetensors", random_tensors(config, seed, FAMILIES[family][5]),
                      metadata={"format": "pt", "producer": "tools/reference/random_models.py"}, dtype=dtype)
    return directory
