"""Model.forward against the logits `minigen generate` samples from, bit for bit.

No flag of the program prints logits, so tests/step_logits.cpp runs the CLI's generate loop (loaded through the
same ModelSettings as the CLI, greedy, KV cache on) in a separate process and writes every step's raw logits. Step k's logits
are the last row of forward(prompt + the first k new tokens): with the cache inside generate, in one call without a
cache here, and step by step on a minigen.Cache. minigen promises those are the same bits (the lab's section 1).
"""
import json
import subprocess
import tempfile

import numpy as np
import pytest

import minigen
from conftest import SFT, cli_generate_json, step_logits_binary

QUESTION = "What does 'river' mean?"
STEPS = 8


def cli_step_logits(weights, threads, prompt):
    with tempfile.NamedTemporaryFile(suffix=".f32") as out:
        done = subprocess.run([step_logits_binary(), SFT, weights, str(threads), str(STEPS), out.name, *map(str, prompt)],
                              capture_output=True, text=True, check=True)
        tokens = json.loads(done.stdout)
        logits = np.fromfile(out.name, dtype=np.float32).reshape(len(tokens), -1)
    return tokens, logits


def same_bits(a, b):
    return a.dtype == b.dtype == np.float32 and a.shape == b.shape and np.array_equal(a.view(np.uint32), b.view(np.uint32))


@pytest.mark.parametrize("weights", ["f32", "bf16", "q8", "q4"])
def test_forward_equals_the_cli_generate_logits_bit_for_bit(weights):
    model = minigen.Model(SFT, weights=weights, threads=2)
    prompt = model.tokenize(QUESTION, chat=True)
    tokens, steps = cli_step_logits(weights, 1, prompt)  # one thread there, two here: the same bits
    assert steps.shape == (len(tokens), model.vocab_size)
    cache = model.new_cache()
    fed = prompt
    for k, token in enumerate(tokens):
        whole = model.forward(prompt + tokens[:k])
        assert whole.shape == (len(prompt) + k, model.vocab_size)
        assert same_bits(whole[-1], steps[k]), f"step {k}: forward without a cache"
        assert same_bits(model.forward(fed, cache=cache)[-1], steps[k]), f"step {k}: forward on a cache"
        fed = [token]
    assert cache.length == len(prompt) + len(tokens) - 1


def test_greedy_tokens_equal_the_program():
    model = minigen.Model(SFT, threads=2)
    tokens, _ = cli_step_logits("f32", 2, model.tokenize(QUESTION, chat=True))
    cli = cli_generate_json("-m", SFT, "--chat", QUESTION, "--greedy", "-n", str(STEPS))
    assert cli["sequences"][0]["token_ids"] == tokens


def test_every_position_equals_its_prefix(sft):
    ids = sft.tokenize("The LORD is my shepherd; I shall not want.")
    logits = sft.forward(ids)
    assert logits.dtype == np.float32 and logits.shape == (len(ids), sft.vocab_size)
    for i in (0, len(ids) // 2, len(ids) - 1):
        assert same_bits(logits[i], sft.forward(ids[: i + 1])[-1])


def test_cache_counts_tokens_and_bytes(sft):
    cache = sft.new_cache()
    ids = sft.tokenize("In the beginning")
    sft.forward(ids, cache=cache)
    sft.forward([ids[-1]], cache=cache)
    assert len(cache) == cache.length == len(ids) + 1
    assert cache.bytes_used == cache.length * sft.kv_bytes_per_token  # 2 · layers · kv heads · head_dim · 4 B
    assert cache.bytes_allocated >= cache.bytes_used
    cache.truncate(2)
    assert cache.length == 2
