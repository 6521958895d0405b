"""Shipped models by name from any folder, and temperature 0 as greedy decoding (issue 27)."""
import pathlib

import pytest

import minigen
from conftest import SFT, cli_generate_json

QUESTION = "What does 'river' mean?"


def test_a_shipped_model_loads_by_name_from_any_folder(monkeypatch):
    monkeypatch.chdir("/")
    model = minigen.Model("minigen-tiny-sft", threads=2)
    assert pathlib.Path(model.path).resolve() == pathlib.Path(SFT).resolve()
    assert model.vocab_size == 6400


def test_the_docs_path_of_a_shipped_model_loads_from_any_folder(monkeypatch):
    monkeypatch.chdir("/")  # docs/python.md writes Model("models/minigen-tiny-sft"), the path in the checkout
    model = minigen.Model("models/minigen-tiny-sft", threads=2)
    assert pathlib.Path(model.path).resolve() == pathlib.Path(SFT).resolve()


def test_a_mistyped_name_suggests_the_shipped_model(monkeypatch):
    monkeypatch.chdir("/")
    with pytest.raises(minigen.Error, match=r"^model not found: minigen-tiny-sfft \(did you mean the shipped model "
                                            r"'minigen-tiny-sft'\?\)$"):
        minigen.Model("minigen-tiny-sfft")


def test_temperature_zero_is_greedy_in_python_and_the_program(sft):
    zero = sft.generate(QUESTION, chat=True, max_new_tokens=24, temperature=0)
    greedy = sft.generate(QUESTION, chat=True, max_new_tokens=24, greedy=True)
    sampled = sft.generate(QUESTION, chat=True, max_new_tokens=24, seed=0)
    assert zero.token_ids == greedy.token_ids
    assert zero.token_ids != sampled.token_ids  # the default settings sample: a different reply
    assert zero.settings["greedy"] is True
    cli_zero = cli_generate_json("-m", SFT, "--chat", QUESTION, "-n", "24", "--temperature", "0", "--threads", "2")
    cli_greedy = cli_generate_json("-m", SFT, "--chat", QUESTION, "-n", "24", "--greedy", "--threads", "2")
    assert [s["token_ids"] for s in cli_zero["sequences"]] == zero.token_ids
    assert [s["token_ids"] for s in cli_greedy["sequences"]] == zero.token_ids
