#!/usr/bin/python3
"""The course module's experiment, from Python: cache on/off, tokens fed, cache bytes, temperature, and (with
Debian's python3-torch) minigen's logits against the PyTorch reference in tools/reference.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/kv_cache_experiment.py [MODEL_DIR]
"""
import pathlib
import sys
import time

import numpy as np

import minigen

ROOT = pathlib.Path(__file__).resolve().parents[2]
MODEL = sys.argv[1] if len(sys.argv) > 1 else str(ROOT / "models" / "minigen-tiny-sft")
QUESTION = "What does 'river' mean?"

m = minigen.Model(MODEL, weights="f32", threads=2)
prompt = m.tokenize(QUESTION, chat=True)
P, N = len(prompt), 32
print(f"model {m.path}: vocab {m.vocab_size}, {m.weights} weights, {m.threads} threads; prompt P = {P} tokens")

m.generate(prompt, max_new_tokens=4)  # warm-up: the first run pays for page faults and thread start-up

print("\n1. The KV cache on and off: same tokens, far fewer tokens fed")
for use_cache in (True, False):
    runs = [m.generate(prompt, max_new_tokens=N, ignore_eos=True, seed=1, use_cache=use_cache) for _ in range(5)]
    r = runs[0]
    ttft_ms, itl_ms = (float(np.median([getattr(run, field) for run in runs])) for field in ("ttft_ms", "itl_ms"))
    formula = P + N - 1 if use_cache else P * N + N * (N - 1) // 2  # the module's two formulas
    print(f"   use_cache={use_cache!s:5}  forward_tokens {r.forward_tokens:5} (formula {formula:5})  "
          f"TTFT {ttft_ms:4.1f} ms  then {itl_ms:5.2f} ms/token (medians of 5)  first ids {r.token_ids[0][:6]}")

print("\n2. Decoding by hand with a cache: feed the prompt once, then one token per step")
cache = m.new_cache()
fed = prompt
for step in range(4):
    logits = m.forward(fed, cache=cache)  # [len(fed), vocab]; the last row predicts the next token
    token = int(np.argmax(logits[-1]))
    print(f"   step {step}: fed {len(fed):2} ids, cache holds {cache.length:2} positions = {cache.bytes_used:6} B, "
          f"argmax {token} {m.detokenize([token])!r}")
    fed = [token]
no_cache = m.forward(prompt)[-1]
with_cache = m.forward(prompt, cache=m.new_cache())[-1]
print(f"   prompt logits with and without a cache: max |Δ| = {np.abs(no_cache - with_cache).max()}")

print("\n3. Bytes: 2 (K and V) · layers · kv heads · head_dim · 4 B per token")
print(f"   {m.kv_bytes_per_token} B per token → {100 * m.kv_bytes_per_token:,} B at 100 tokens, "
      f"{32768 * m.kv_bytes_per_token:,} B at the 32,768-token context")

print("\n4. Temperature: distinct answers among 8 samples (top-p 0.85, top-k 50)")
for temperature in (None, 0.3, 0.7, 1.0, 1.3):
    settings = dict(greedy=True) if temperature is None else dict(temperature=temperature)
    r = m.generate(prompt, max_new_tokens=16, num_return_sequences=8, seed=1, **settings)
    label = "greedy " if temperature is None else f"T = {temperature}"
    print(f"   {label}: {len(set(map(tuple, r.token_ids)))} distinct  e.g. {r.texts[0][:60]!r}")

print("\n5. Streaming: text pieces as they are decoded")
print("   ", end="")
for piece in m.stream(QUESTION, chat=True, max_new_tokens=24, greedy=True):
    print(piece, end="|", flush=True)
print()

try:
    import torch
except ImportError:
    print("\n6. (python3-torch is not installed: no comparison with the PyTorch reference)")
    sys.exit(0)
sys.path.insert(0, str(ROOT / "tools" / "reference"))
import minimind_reference  # noqa: E402

torch.set_num_threads(1)
reference = minimind_reference.load_model(MODEL)
expected = reference.forward([prompt])[0].numpy()
got = m.forward(prompt)
print("\n6. Against the PyTorch reference (tools/reference, float32 torch)")
print(f"   logits [{P} × {m.vocab_size}]: max |Δ| = {np.abs(got - expected).max():.3g}, "
      f"argmax agrees at {np.mean(got.argmax(1) == expected.argmax(1)) * 100:.0f} % of positions")
