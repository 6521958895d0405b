"""The chat template minigen ships and exports: rendered by Python's jinja2 (as Hugging Face transformers and
MiniMind's scripts render it) it gives, for every test conversation, the very prompt tokens minigen builds itself;
inside an exported GGUF it is the same text, with add_bos_token set so that llama.cpp builds the same tokens; and it
keeps to the Jinja that llama.cpp's minja (llama-server --jinja) renders the same way (see the template's header).
"""
import json
import re
import struct
import subprocess
import sys

import pytest

from conftest import ROOT, SFT, minigen_binary

sys.path.insert(0, str(ROOT / "tools" / "chat_fixtures"))
import render_fixtures  # noqa: E402  (the fixtures' own renderer: transformers' jinja2 settings)

TEMPLATE = ROOT / "src" / "tokenizer" / "chat_template.jinja"
CASES = json.loads((ROOT / "tests" / "data" / "chat_template" / "minimind3_cases.json").read_text())["cases"]


def rendered(case, template_text):
    return render_fixtures.render(render_fixtures.environment().from_string(template_text), case)


@pytest.mark.parametrize("case", CASES, ids=[case["name"] for case in CASES])
def test_jinja2_renders_minigens_own_prompt(sft, case):
    text = rendered(case, TEMPLATE.read_text(encoding="utf-8"))
    assert text == case["expected"]
    own = sft.chat_prompt(case["messages"], tools=case["tools"], add_generation_prompt=case["add_generation_prompt"],
                          thinking=case["open_thinking"])
    if "<|" in json.dumps(case["messages"], ensure_ascii=False):
        # A message that types a special token's text: minigen encodes it as text (a user cannot forge a turn), a
        # tokenizer fed the whole rendered prompt matches it as the token. The text is what must agree.
        assert sft.detokenize(own) == text
    else:
        assert sft.tokenize(text, bos=False) == own


def test_the_shipped_tokenizer_configs_carry_this_template():
    template = TEMPLATE.read_text(encoding="utf-8")
    for folder in ("models/minigen-tiny-sft", "models/minigen-tiny-base", "tokenizers/minigen-6400"):
        config = json.loads((ROOT / folder / "tokenizer_config.json").read_text(encoding="utf-8"))
        assert config["chat_template"] == template, folder
        assert config["add_bos_token"] is False, folder  # Hugging Face tokenizers read it: MiniMind's value


# What llama.cpp's minja (build b4748) cannot render as jinja2 does; each rule names the construct.
MINJA_RULES = [
    (r"\.(strip|lstrip|rstrip|split|startswith|endswith|replace|find|join|format|upper|lower)\(",
     "a string method (minja has no split/lstrip/rstrip and strip takes no argument)"),
    (r"\bis\s+(not\s+)?(true|false|sameas)\b", "`is true` / `is false` (not a minja test)"),
    (r"'[^']*'\s+(not\s+)?in\s+(text|reply|reasoning|value|message\.content)\b",
     "`in` on a string (always false in minja)"),
    (r"\|\s*(replace|trim|upper|title|wordcount|truncate|center|format)\b", "a filter minja lacks or renders differently"),
]


def test_the_template_keeps_to_what_minja_renders():
    text = TEMPLATE.read_text(encoding="utf-8")
    # Comments may name what the code must not use: blank them out, keeping their newlines for the line numbers.
    code = re.sub(r"\{#.*?#\}", lambda comment: "\n" * comment.group(0).count("\n"), text, flags=re.S)
    lines = code.splitlines()
    assert len(lines) == len(text.splitlines())
    for number, line in enumerate(lines, 1):
        for pattern, what in MINJA_RULES:
            assert not re.search(pattern, line), f"line {number}: {what}: {line.strip()}"
    assert "for c in" in code  # the scans that replace split('</think>') are there


def gguf_metadata(path):
    """The key/value metadata of a GGUF v3 file (enough of the format to read it: no tensors)."""
    scalar = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
    with open(path, "rb") as file:
        data = file.read()
    assert data[:4] == b"GGUF"
    version, tensors, count = struct.unpack_from("<IQQ", data, 4)
    assert version == 3
    offset = 24

    def string():
        nonlocal offset
        (length,) = struct.unpack_from("<Q", data, offset)
        text = data[offset + 8:offset + 8 + length].decode("utf-8")
        offset += 8 + length
        return text

    def value(kind):
        nonlocal offset
        if kind == 8:
            return string()
        if kind == 9:
            (element, length) = struct.unpack_from("<IQ", data, offset)
            offset += 12
            return [value(element) for _ in range(length)]
        (result,) = struct.unpack_from(scalar[kind], data, offset)
        offset += struct.calcsize(scalar[kind])
        return result

    metadata = {}
    for _ in range(count):
        key = string()
        (kind,) = struct.unpack_from("<I", data, offset)
        offset += 4
        metadata[key] = value(kind)
    return metadata


def test_an_exported_gguf_carries_the_template_and_asks_llama_cpp_for_bos(tmp_path):
    out = tmp_path / "sft.gguf"
    subprocess.run([minigen_binary(), "export", "gguf", SFT, str(out)], check=True, capture_output=True)
    metadata = gguf_metadata(out)
    assert metadata["tokenizer.chat_template"] == TEMPLATE.read_text(encoding="utf-8")
    # llama-server --jinja strips the bos text a template starts with and adds the bos token when this is true.
    assert metadata["tokenizer.ggml.add_bos_token"] is True
    assert metadata["tokenizer.ggml.tokens"][metadata["tokenizer.ggml.bos_token_id"]] == "<|im_start|>"
