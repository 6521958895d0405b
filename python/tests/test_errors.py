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
        sft.generate("x", temperature=0)
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
