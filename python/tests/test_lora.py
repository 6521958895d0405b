"""LoRA adapters from Python: Model(..., lora=...) runs as `minigen generate --lora` does, token for token."""
import pytest

import minigen
from conftest import ROOT, SFT, cli_error, cli_generate_json

# MiniMind's save_lora format for the tiny shape (tools/reference/make_lora_golden.py): q_proj and o_proj of the
# four layers, rank 4. The shipped models have the tiny family's shape, so it fits them.
ADAPTER = str(ROOT / "tests" / "data" / "lora" / "tiny_r4.pth")
QUESTION = "What does 'river' mean?"


def test_lora_generates_as_the_program(sft):
    adapted = minigen.Model(SFT, weights="f32", threads=2, lora=ADAPTER)
    r = adapted.generate(QUESTION, chat=True, max_new_tokens=24, temperature=0)
    cli = cli_generate_json("-m", SFT, "--lora", ADAPTER, "--chat", QUESTION, "-n", "24", "--greedy", "--threads", "2")
    assert r.token_ids == [s["token_ids"] for s in cli["sequences"]]
    assert r.summary["lora"] == cli["lora"]
    assert cli["lora"]["name"] == "tiny_r4" and cli["lora"]["rank"] == 4
    assert cli["lora"]["parameters"] == 4 * 2 * 4 * (256 + 256)
    plain = sft.generate(QUESTION, chat=True, max_new_tokens=24, temperature=0)
    assert plain.token_ids != r.token_ids  # the adapter changes the reply
    assert "lora" not in plain.summary


def test_a_bad_adapter_is_one_error_like_the_programs():
    with pytest.raises(minigen.Error) as error:
        minigen.Model(SFT, lora=str(ROOT / "no-such-adapter.pth"))
    assert str(error.value) == cli_error("generate", "-m", SFT, "--lora", str(ROOT / "no-such-adapter.pth"), "-p", "x")
