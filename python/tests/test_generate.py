"""Model.generate and Model.stream against `minigen generate --json`, and the module's counters."""
import pytest

import minigen
from conftest import BASE, SFT, cli_generate_json

TIMINGS = {"load_ms", "ttft_ms", "itl_ms", "total_ms", "resident_bytes"}  # measured per run; everything else must agree
VERSE = "The LORD is my shepherd"


def without_timings(summary):
    return {key: value for key, value in summary.items() if key not in TIMINGS}


@pytest.mark.parametrize("use_cache", [True, False])
def test_generate_equals_the_program(base, use_cache):
    r = base.generate(VERSE, max_new_tokens=32, temperature=0.85, top_p=0.85, top_k=50, seed=1, use_cache=use_cache,
                      num_return_sequences=4)
    cli = cli_generate_json("-m", BASE, "-p", VERSE, "-n", "32", "--temperature", "0.85", "--top-p", "0.85",
                            "--top-k", "50", "--seed", "1", "--num-return-sequences", "4", "--threads", "2",
                            *([] if use_cache else ["--no-cache"]))
    assert set(r.summary) == set(cli)
    assert without_timings(r.summary) == without_timings(cli)
    assert r.texts == [s["text"] for s in cli["sequences"]]
    assert r.token_ids == [s["token_ids"] for s in cli["sequences"]]
    assert len(set(map(tuple, r.token_ids))) > 1  # four sampled rows, not one repeated


def test_defaults_are_the_programs(sft):
    r = sft.generate("What does 'river' mean?", chat=True, max_new_tokens=24)
    cli = cli_generate_json("-m", SFT, "--chat", "What does 'river' mean?", "-n", "24")
    assert r.settings == cli["settings"]
    assert r.token_ids == [s["token_ids"] for s in cli["sequences"]]
    assert r.texts == [s["text"] for s in cli["sequences"]]


def test_prompt_as_ids_equals_prompt_as_text(sft):
    ids = sft.tokenize(VERSE)
    assert ids[0] == sft.bos_token_id
    assert sft.detokenize(ids, skip_special_tokens=True) == VERSE
    assert sft.generate(ids, max_new_tokens=8, seed=3).token_ids == sft.generate(VERSE, max_new_tokens=8, seed=3).token_ids


@pytest.mark.parametrize("use_cache", [True, False])
def test_counters_obey_the_formulas(base, use_cache):
    n = 12
    r = base.generate(VERSE, max_new_tokens=n, ignore_eos=True, seed=5, use_cache=use_cache, num_return_sequences=3)
    p = r.prompt_tokens
    per_row = p + n - 1 if use_cache else p * n + n * (n - 1) // 2
    assert [s["forward_tokens"] for s in r.sequences] == [per_row] * 3
    assert r.forward_tokens == 3 * per_row
    assert r.forward_calls == n
    if use_cache:  # the cache holds every fed position: P + N − 1 per row
        assert r.kv_cache_bytes == 3 * (p + n - 1) * base.kv_bytes_per_token
        assert r.recompute_buffer_bytes == 0
    else:  # no cache to report; the last step recomputed K and V of those positions
        assert r.kv_cache_bytes == 0
        assert r.recompute_buffer_bytes == 3 * (p + n - 1) * base.kv_bytes_per_token
    assert r.ttft_ms > 0 and r.itl_ms > 0


def test_cache_on_and_off_give_the_same_tokens(sft):
    kwargs = dict(max_new_tokens=16, seed=7, num_return_sequences=2, chat=True)
    on = sft.generate("Tell me about the sea.", use_cache=True, **kwargs)
    off = sft.generate("Tell me about the sea.", use_cache=False, **kwargs)
    assert on.token_ids == off.token_ids and on.forward_tokens < off.forward_tokens


def test_stream_yields_the_generated_text(sft):
    settings = dict(chat=True, max_new_tokens=24, seed=2)
    stream = sft.stream("What does 'river' mean?", **settings)
    pieces = list(stream)
    r = sft.generate("What does 'river' mean?", **settings)
    assert "".join(pieces) == r.texts[0] and len(pieces) > 1
    assert stream.result.token_ids == r.token_ids


def test_leaving_a_stream_early_cancels_it(sft):
    stream = sft.stream(VERSE, max_new_tokens=200, ignore_eos=True)
    assert next(iter(stream))
    del stream  # joins the worker; the model is free again
    assert sft.generate(VERSE, max_new_tokens=2).forward_calls == 2


def test_quantized_weights_and_kv_dtype_equal_the_program():
    model = minigen.Model(SFT, weights="q8", kv_dtype="int8", threads=2)
    r = model.generate("What does 'river' mean?", chat=True, max_new_tokens=16, seed=9, num_return_sequences=2)
    cli = cli_generate_json("-m", SFT, "--weights", "q8", "--kv-dtype", "int8", "--chat", "What does 'river' mean?",
                            "-n", "16", "--seed", "9", "--num-return-sequences", "2")
    assert without_timings(r.summary) == without_timings({**cli, "sequences": r.summary["sequences"]})
    assert r.token_ids == [s["token_ids"] for s in cli["sequences"]]
    assert r.kv_cache_bytes == cli["kv_cache_bytes"] and r.weights == "q8"


def test_w8a8_activations_equal_the_program():
    # activations="int8" is --activations int8: q8 weights with int8 activation codes, the CLI's tokens and summary.
    model = minigen.Model(SFT, weights="q8", activations="int8", threads=2)
    assert model.activations == "int8" and model.config.activations == "int8"
    r = model.generate(VERSE, max_new_tokens=12, seed=4, temperature=0.9)
    cli = cli_generate_json("-m", SFT, "--weights", "q8", "--activations", "int8", "-p", VERSE, "-n", "12", "--seed", "4",
                            "--temperature", "0.9")
    assert r.token_ids == [s["token_ids"] for s in cli["sequences"]]
    assert r.summary["activations"] == cli["activations"] == "int8"
    assert minigen.Model(SFT, weights="q8", threads=1).activations == "int16"
    assert minigen.Model(SFT, threads=1).activations is None
    with pytest.raises(minigen.Error, match="unknown activation codes 'int4' \\(expected int8 or int16\\)"):
        minigen.Model(SFT, weights="q8", activations="int4")
    with pytest.raises(minigen.Error, match="needs --weights q8 or q4"):
        minigen.Model(SFT, activations="int8")


def test_threads_share_a_model_safely(sft):
    """The GIL is released while computing; the model runs one call at a time, so threads get their own answers."""
    import concurrent.futures

    seeds = range(6)
    alone = [sft.generate(VERSE, max_new_tokens=8, seed=seed).token_ids for seed in seeds]
    with concurrent.futures.ThreadPoolExecutor(3) as pool:
        together = list(pool.map(lambda seed: sft.generate(VERSE, max_new_tokens=8, seed=seed).token_ids, seeds))
    assert together == alone


def test_seed_minus_one_draws_a_seed_that_the_summary_reports(base):
    # seed=-1 is a random seed, as --seed -1 and the API's "seed": -1 are; the summary names the one drawn.
    kwargs = dict(max_new_tokens=12, temperature=1.0, ignore_eos=True)
    first = base.generate(VERSE, seed=-1, **kwargs)
    second = base.generate(VERSE, seed=-1, **kwargs)
    assert first.settings["seed"] != second.settings["seed"]
    again = base.generate(VERSE, seed=first.settings["seed"], **kwargs)
    assert again.token_ids == first.token_ids
    assert base.generate(VERSE, seed=2**64 - 1, max_new_tokens=2).settings["seed"] == 2**64 - 1
    for bad in (-2, 2**64, 1.5, "7", True):
        with pytest.raises(minigen.Error, match=r"seed must be an integer in \[0, 2\*\*64 - 1\], or -1 for a random seed"):
            base.generate(VERSE, seed=bad, max_new_tokens=2)
