"""A MiniMind .pth state dict (heads= and tokenizer= as the CLI's --heads and --tokenizer); needs Debian's
python3-torch to write one (tools/reference/to_minimind_pth.py, fp16 as MiniMind's trainer saves)."""
import subprocess
import sys

import pytest

import minigen
from conftest import ROOT, SFT, cli_error, cli_generate_json


@pytest.fixture(scope="module")
def pth(tmp_path_factory):
    pytest.importorskip("torch")
    out = tmp_path_factory.mktemp("pth") / "sft_768.pth"
    subprocess.run([sys.executable, str(ROOT / "tools" / "reference" / "to_minimind_pth.py"), SFT, str(out)],
                   check=True, capture_output=True)
    return str(out)


def test_pth_generates_as_the_program(pth):
    model = minigen.Model(pth, heads=8, tokenizer=SFT, threads=2)
    r = model.generate("What does 'river' mean?", chat=True, max_new_tokens=16, seed=4, num_return_sequences=2)
    cli = cli_generate_json("-m", pth, "--heads", "8", "--tokenizer", SFT, "--chat", "What does 'river' mean?",
                            "-n", "16", "--seed", "4", "--num-return-sequences", "2")
    assert r.token_ids == [s["token_ids"] for s in cli["sequences"]]
    assert r.model == cli["model"] and r.weights == cli["weights"]


def test_pth_without_a_tokenizer_has_the_programs_message(pth):
    with pytest.raises(minigen.Error) as raised:
        minigen.Model(pth)
    assert str(raised.value) == cli_error("generate", "-m", pth, "-p", "x")
