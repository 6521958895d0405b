"""Bad input raises minigen.Error, with the program's message where the program has the same input."""
import pytest

import minigen
from conftest import SFT, cli_error


def test_missing_model_has_the_programs_message():
    with pytest.raises(minigen.Error) as raised:
        minigen.Model("no/such/model")
    assert str(raised.value) == cli_error("generate", "-m", "no/such/model", "-p", "x")


def test_bad_model_arguments():
    with pytest.raises(minigen.Error, match="unknown weight type 'q9'"):
        minigen.Model(SFT, weights="q9")
    with pytest.raises(minigen.Error, match="threads"):
        minigen.Model(SFT, threads=-1)


def test_token_outside_the_vocabulary(sft):
    with pytest.raises(minigen.Error, match=f"token id {sft.vocab_size} "):
        sft.forward([1, sft.vocab_size])


def test_bad_forward_and_generate_arguments(sft, base):
    with pytest.raises(minigen.Error):
        sft.forward([])
    with pytest.raises(minigen.Error, match=r"top_p must be in \(0, 1\], got 1.5"):
        sft.generate("x", top_p=1.5)
    with pytest.raises(minigen.Error, match="temperature"):
        sft.generate("x", temperature=-1)  # 0 is greedy decoding (test_model_by_name.py)
    # 1e-320 and the subnormal 4.9e-324 are not 0 (greedy): refused with the field's range (issue 46 item 5)
    for tiny, written in ((1e-320, "1e-320"), (4.9e-324, "5e-324")):
        with pytest.raises(minigen.Error, match=rf"temperature must be at least 0.01 .*, got {written}"):
            sft.generate("x", temperature=tiny)
        with pytest.raises(minigen.Error, match=rf"min_p must be 0 or at least 1.1754944e-38 .*, got {written}"):
            sft.generate("x", min_p=tiny)
        with pytest.raises(minigen.Error, match="presence_penalty must be 0 or at least"):
            sft.generate("x", presence_penalty=-tiny)
        with pytest.raises(minigen.Error, match="logit_bias must be 0 or at least"):
            sft.generate("x", logit_bias={5: tiny})
    with pytest.raises(minigen.Error, match="max_new_tokens"):
        sft.generate("x", max_new_tokens=0)
    with pytest.raises(minigen.Error, match="num_return_sequences"):
        sft.generate("x", num_return_sequences=0)
    with pytest.raises(minigen.Error):
        sft.generate("")
    with pytest.raises(minigen.Error, match="top_k"):
        sft.stream("x", top_k=-1)
    with pytest.raises(minigen.Error, match=r"capacity must be in \[1, 32768\] \(the model's context\)"):
        sft.new_cache(capacity=2**24)
    with pytest.raises(minigen.Error, match="capacity"):
        sft.new_cache(capacity=0)
    with pytest.raises(minigen.Error, match="another model"):
        sft.forward([1, 2], cache=base.new_cache())
    with pytest.raises(minigen.Error, match="role"):
        sft.chat_prompt([{"content": "hi"}])
    with pytest.raises(TypeError):
        sft.forward("not ids")


def test_chat_prompt_equals_tokenize_chat(sft):
    ids = sft.chat_prompt([{"role": "user", "content": "What does 'river' mean?"}])
    assert ids == sft.tokenize("What does 'river' mean?", chat=True)
    assert sft.detokenize(ids).startswith("<|im_start|>user\nWhat does 'river' mean?<|im_end|>")


def test_forward_past_the_context_is_refused_before_the_cache_is_sized(sft):
    # 10**6 ids used to zero-fill a 2 GB cache for them before the context check refused them.
    import resource
    ids = [1] * 10**6
    peak_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(minigen.Error, match="the sequence would reach 1000000 tokens, beyond the model's context of 32768"):
        sft.forward(ids)
    cache = sft.new_cache()
    sft.forward([1, 2], cache=cache)
    with pytest.raises(minigen.Error, match="would reach 1000002 tokens"):
        sft.forward(ids, cache=cache)
    assert cache.length == 2
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak_before
    assert grown_kib < 200 * 1024


def test_version_is_the_programs():
    import subprocess

    from conftest import minigen_binary
    done = subprocess.run([minigen_binary(), "--version"], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "minigen " + minigen.__version__
    assert minigen.__version__.count(".") == 2
