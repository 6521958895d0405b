#!/usr/bin/python3
"""Self-check of the reference implementation: hand-computed RMSNorm and RoPE, safetensors round trips, the KV
cache (prefill vs token-by-token logits, cache on/off greedy), and the sampling filters on hand-picked cases.

    /usr/bin/python3 tools/reference/check_reference.py

Needs only torch and numpy; the models are random ones written by random_models.py into a temporary directory.
Prints one line per check and exits non-zero on the first failure.
"""
import math
import pathlib
import sys
import tempfile

import numpy as np
import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import minimind_reference as ref  # noqa: E402
from random_models import write_random_model  # noqa: E402
from safetensors_io import read_safetensors, write_safetensors  # noqa: E402

torch.set_num_threads(1)


def check(name, condition, detail=""):
    if not condition:
        print(f"FAIL {name} {detail}")
        sys.exit(1)
    print(f"ok   {name} {detail}")


def check_rms_norm():
    x = torch.tensor([1.0, 2.0, 3.0, 4.0])
    weight = torch.tensor([1.0, 0.5, 2.0, -1.0])
    eps = 1e-6
    scale = 1.0 / math.sqrt((1 + 4 + 9 + 16) / 4 + eps)  # mean(x²) = 7.5
    expected = torch.tensor([1 * 1 * scale, 0.5 * 2 * scale, 2 * 3 * scale, -1 * 4 * scale])
    got = ref.rms_norm(x, weight, eps)
    check("rmsnorm hand case", torch.allclose(got, expected, rtol=0, atol=1e-6), f"max err {(got - expected).abs().max():.2e}")


def check_rope():
    head_dim, theta = 4, 1e6
    x = torch.tensor([[[[1.0, 2.0, 3.0, 4.0]]]])  # [batch, tokens, heads, hd]
    cos, sin = ref.rope_tables(head_dim, theta, 8)
    for position in (0, 1, 5):
        # freq_i = theta^(−2i/hd): [1, 1e−3]; the pairs are (x0, x2) and (x1, x3).
        a0, a1 = position * 1.0, position * theta ** -0.5
        expected = torch.tensor([1 * math.cos(a0) - 3 * math.sin(a0), 2 * math.cos(a1) - 4 * math.sin(a1),
                                 3 * math.cos(a0) + 1 * math.sin(a0), 4 * math.cos(a1) + 2 * math.sin(a1)])
        got = ref.apply_rope(x, cos[position:position + 1], sin[position:position + 1])[0, 0, 0]
        check(f"rope hand case, position {position}", torch.allclose(got, expected, rtol=0, atol=1e-6),
              f"max err {(got - expected).abs().max():.2e}")


def check_safetensors(directory):
    values = np.array([[1.0, -2.5, 65504.0, 2.0 ** -24], [0.1, 1.0 + 2.0 ** -8, 1.0 + 3 * 2.0 ** -8, -0.0]],
                      dtype=np.float32)
    # bf16 keeps 8 significant bits: 1 + 2^-8 is a tie → 1 (even); 1 + 3·2^-8 is a tie → 1 + 2^-6 (even).
    expected_bf16 = np.array([[1.0, -2.5, 65536.0, 2.0 ** -24], [0.10009765625, 1.0, 1.0 + 2.0 ** -6, -0.0]],
                             dtype=np.float32)
    for dtype, expected in (("F32", values), ("F16", values.astype(np.float16).astype(np.float32)),
                            ("BF16", expected_bf16)):
        path = directory / f"roundtrip_{dtype}.safetensors"
        write_safetensors(path, {"b": values, "a": values[0]}, metadata={"note": "x"}, dtype=dtype)
        tensors, metadata = read_safetensors(path)
        ok = (np.array_equal(tensors["b"], expected) and np.array_equal(tensors["a"], expected[0])
              and metadata == {"note": "x"} and (path.stat().st_size - 8) % 8 == 0)
        check(f"safetensors {dtype} round trip", ok)


def naive_logits(model, ids):
    """The spec's formulas written out a second way, in float64, with loops over heads and keys and RoPE angles
    computed per element (theta^(−2i/hd)), to cross-check the reference's vectorised code: GQA head mapping,
    causal mask, qk-norm before RoPE, router top-k and shared experts."""
    c, w = model.config, {name: value.double() for name, value in model.weights.items()}

    def norm(x, weight):
        return weight * x / torch.sqrt((x * x).mean(-1, keepdim=True) + c.rms_norm_eps)

    def rope(vector, position):
        half = c.head_dim // 2
        out = vector.clone()
        for i in range(half):
            angle = position * c.rope_theta ** (-2 * i / c.head_dim)
            out[i] = vector[i] * math.cos(angle) - vector[i + half] * math.sin(angle)
            out[i + half] = vector[i + half] * math.cos(angle) + vector[i] * math.sin(angle)
        return out

    def mlp(x, prefix):
        gate = x @ w[f"{prefix}.gate_proj.weight"].T
        return (gate / (1 + torch.exp(-gate)) * (x @ w[f"{prefix}.up_proj.weight"].T)) @ w[f"{prefix}.down_proj.weight"].T

    tokens = len(ids)
    h = w["model.embed_tokens.weight"][torch.tensor(ids)]
    for layer in range(c.num_layers):
        p = f"model.layers.{layer}"
        x = norm(h, w[f"{p}.input_layernorm.weight"])
        q = (x @ w[f"{p}.self_attn.q_proj.weight"].T).view(tokens, c.num_q_heads, c.head_dim)
        k = (x @ w[f"{p}.self_attn.k_proj.weight"].T).view(tokens, c.num_kv_heads, c.head_dim)
        v = (x @ w[f"{p}.self_attn.v_proj.weight"].T).view(tokens, c.num_kv_heads, c.head_dim)
        if c.qk_norm:
            q, k = norm(q, w[f"{p}.self_attn.q_norm.weight"]), norm(k, w[f"{p}.self_attn.k_norm.weight"])
        q = torch.stack([torch.stack([rope(q[t, head], t) for head in range(c.num_q_heads)]) for t in range(tokens)])
        k = torch.stack([torch.stack([rope(k[t, head], t) for head in range(c.num_kv_heads)]) for t in range(tokens)])
        attended = torch.zeros(tokens, c.num_q_heads, c.head_dim, dtype=torch.float64)
        for t in range(tokens):
            for head in range(c.num_q_heads):
                kv_head = head // (c.num_q_heads // c.num_kv_heads)
                scores = torch.tensor([float(q[t, head] @ k[s, kv_head]) / math.sqrt(c.head_dim)
                                       for s in range(t + 1)], dtype=torch.float64)
                attended[t, head] = torch.softmax(scores, 0) @ v[: t + 1, kv_head]
        h = h + attended.reshape(tokens, -1) @ w[f"{p}.self_attn.o_proj.weight"].T
        x = norm(h, w[f"{p}.post_attention_layernorm.weight"])
        if not c.use_moe:
            h = h + mlp(x, f"{p}.mlp")
            continue
        routed = torch.zeros_like(x)
        for t in range(tokens):
            router = torch.softmax(x[t] @ w[f"{p}.mlp.gate.weight"].T, 0)
            chosen = sorted(range(c.num_experts), key=lambda e: -float(router[e]))[: c.num_experts_per_token]
            total = sum(float(router[e]) for e in chosen)
            for e in chosen:
                weight = float(router[e]) / (total + 1e-20) if c.norm_topk_prob else float(router[e])
                routed[t] += weight * mlp(x[t], f"{p}.mlp.experts.{e}")
            for shared in range(c.num_shared_experts):
                routed[t] += mlp(x[t], f"{p}.mlp.shared_experts.{shared}")
        h = h + routed
    return norm(h, w["model.norm.weight"]) @ w["model.embed_tokens.weight"].T


def check_model_cache(directory, family, num_layers):
    model_dir = write_random_model(directory / family, family, seed=7, num_layers=num_layers)
    model = ref.load_model(model_dir)
    ids = torch.tensor([[1, 50, 600, 4000, 6399, 36, 37, 1234, 5, 900, 17]])

    # Logits of these random models reach ~100, so the float32 gap between one prefill and token-by-token calls
    # (different matmul shapes, different summation order) is measured relative to the largest logit.
    full = model.forward(ids)
    scale = full.abs().max().item()
    naive = naive_logits(model, ids[0].tolist())
    gap = (full[0].double() - naive).abs().max().item()
    check(f"{family}: logits vs a float64 loop-by-loop forward", gap <= 1e-5 * scale,
          f"max |diff| {gap:.2e} = {gap / scale:.1e} of max |logit| {scale:.1f}")
    cache = model.new_cache()
    step_by_step = torch.cat([model.forward(ids[:, t:t + 1], cache) for t in range(ids.shape[1])], dim=1)
    gap = (full - step_by_step).abs().max().item()
    check(f"{family}: prefill vs token-by-token logits", gap <= 1e-5 * scale,
          f"max |diff| {gap:.2e} = {gap / scale:.1e} of max |logit| {scale:.1f}")

    cache = model.new_cache()
    chunked = torch.cat([model.forward(ids[:, :4], cache), model.forward(ids[:, 4:9], cache),
                         model.forward(ids[:, 9:], cache)], dim=1)
    gap = (full - chunked).abs().max().item()
    check(f"{family}: prefill vs chunks on top of the cache", gap <= 1e-5 * scale,
          f"max |diff| {gap:.2e} = {gap / scale:.1e} of max |logit| {scale:.1f}")

    greedy = dict(do_sample=False, max_new_tokens=24, eos_token_id=None)
    with_cache = ref.generate(model, ids, use_cache=True, **greedy)
    without_cache = ref.generate(model, ids, use_cache=False, **greedy)
    check(f"{family}: greedy cache on == cache off", torch.equal(with_cache, without_cache),
          f"({with_cache.shape[1] - ids.shape[1]} tokens)")
    return model


def check_generate_loop(model):
    ids = torch.tensor([[1, 50, 600, 4000]])
    out = ref.generate(model, ids, do_sample=False, max_new_tokens=6, eos_token_id=None)
    # Make the first generated token the eos: that row must stop at once.
    first = int(out[0, 4])
    stopped = ref.generate(model, ids, do_sample=False, max_new_tokens=6, eos_token_id=first)
    check("generate stops when every row is finished", stopped.shape[1] == 5 and int(stopped[0, 4]) == first)
    # Two prompts, one finishing early: the finished row is padded with eos while the other runs on.
    second = torch.tensor([[1, 7, 8, 9]])
    reference_second = ref.generate(model, second, do_sample=False, max_new_tokens=6, eos_token_id=None)
    if first not in reference_second[0, 4:].tolist():
        both = ref.generate(model, torch.cat([ids, second]), do_sample=False, max_new_tokens=6, eos_token_id=first)
        padded = both[0, 4:].tolist() == [first] * (both.shape[1] - 4)
        check("finished rows are padded with eos", padded and torch.equal(both[1], reference_second[0]))
    rows = ref.generate(model, ids, max_new_tokens=5, num_return_sequences=3, eos_token_id=None,
                        generator=torch.Generator().manual_seed(0))
    check("num_return_sequences repeats the prompt", rows.shape == (3, 9) and torch.equal(rows[:, :4], ids.repeat(3, 1)))


def mask(logits, **params):
    return ref.kept_mask(logits, **{"temperature": 1.0, "top_k": 0, "top_p": 1.0, **params})


def check_filters():
    nucleus = torch.log(torch.tensor([0.5, 0.3, 0.1, 0.1])).tolist()
    kept = {rule: sum(mask(nucleus, top_p=0.8, top_p_rule=rule)) for rule in ref.TOP_P_RULES}
    check("top-p [0.5, 0.3, 0.1, 0.1], p = 0.8: minimind keeps 3, hf 2, llamacpp 2",
          kept == {"minimind": 3, "hf": 2, "llamacpp": 2}, str(kept))
    check("top-k keeps ties at the k-th", mask([3.0, 1.0, 2.0, 2.0, 0.0], top_k=2) == [1, 0, 1, 1, 0])
    penalized = ref.apply_repetition_penalty(torch.tensor([[2.0, -2.0, 1.0, -1.0]]), [[0, 1, 1, 0]], 2.0)
    check("repetition penalty is sign-aware over distinct ids", penalized.tolist() == [[1.0, -4.0, 1.0, -1.0]])
    # min-p 0.3: probabilities ∝ [1, e^-1, e^-2, e^-3] → ratios to the top 1, 0.37, 0.14, 0.05.
    check("min-p keeps prob ≥ min_p · max", mask([0.0, -1.0, -2.0, -3.0], min_p=0.3) == [1, 1, 0, 0])
    # Temperature first: at T = 0.5 the same top-p keeps fewer tokens than at T = 1.
    wide = mask([2.0, 1.5, 1.0, 0.0], top_p=0.6)
    narrow = mask([2.0, 1.5, 1.0, 0.0], top_p=0.6, temperature=0.5)
    check("temperature is applied before top-p", sum(narrow) < sum(wide), f"{wide} vs {narrow}")


def main():
    print(f"torch {torch.__version__}, {torch.get_num_threads()} thread")
    check_rms_norm()
    check_rope()
    check_filters()
    with tempfile.TemporaryDirectory() as temporary:
        directory = pathlib.Path(temporary)
        check_safetensors(directory)
        tiny = check_model_cache(directory, "tiny", None)
        check_model_cache(directory, "minimind2", 2)
        check_model_cache(directory, "minimind3-moe", 2)
        check_model_cache(directory, "minimind2-moe", 2)
        check_generate_loop(tiny)
    print("all checks passed")


if __name__ == "__main__":
    main()
