#!/usr/bin/env python3
"""Writes the lab's Chinese material (examples/zh/poems.txt and examples/zh/heldout.jsonl) from Debian's fortunes-zh:
the prompt text is the first Tang poems of tang300 (public domain, 618–907), the held-out set the Song poems of song100
(public domain, 960–1279), one {"text": …} per poem as MiniMind's pretraining data. ANSI colour codes are stripped
and the package's GPL packaging is not copied. examples/zh/questions.txt is hand-written and not made here.

    apt-get install fortunes-zh && python3 tools/lab_material/make_chinese_material.py
"""
import json
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "corpus"))
from readers import parse_poem, read_fortune_file  # noqa: E402

FORTUNES = pathlib.Path("/usr/share/games/fortunes")
OUT = pathlib.Path(__file__).resolve().parents[2] / "examples" / "zh"
PROMPT_CHARACTERS = 2400  # comfortably over the full run's longest prompt (512 tokens) with MiniMind's tokenizer


def poems(name):
    entries, _ = read_fortune_file(FORTUNES / name)
    for entry in entries:
        parsed = parse_poem(entry)
        if parsed:
            title, author, body = parsed
            yield f"{title}\n作者：{author}\n" + "\n".join(body)


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    chosen = []
    for poem in poems("tang300"):
        if sum(len(text) for text in chosen) >= PROMPT_CHARACTERS:
            break
        chosen.append(poem)
    (OUT / "poems.txt").write_text("\n\n".join(chosen) + "\n", encoding="utf-8")
    with open(OUT / "heldout.jsonl", "w", encoding="utf-8") as out:
        for poem in poems("song100"):
            out.write(json.dumps({"text": poem}, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
