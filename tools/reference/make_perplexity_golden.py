#!/usr/bin/env python3
"""Writes tests/data/perplexity/expected.json: the shipped base model's held-out loss on the test subset, computed by
the training recipe's evaluation (tools/train/eval.py, PyTorch float32), for minigen's `perplexity --jsonl` test.

Run from the repository root with Debian's Python:  /usr/bin/python3 tools/reference/make_perplexity_golden.py
(eval.py sets OPENBLAS_CORETYPE=SkylakeX; on a CPU without AVX-512 set MINIGEN_OPENBLAS_CORETYPE=Haswell.)
"""
import json
import pathlib
import subprocess
import sys

SUBSET = pathlib.Path("tests/data/perplexity/heldout-400.jsonl")  # the first 400 documents of examples/heldout.jsonl
MODEL = pathlib.Path("models/minigen-tiny-base")
OUT = pathlib.Path("tests/data/perplexity/expected.json")


def main():
    result = subprocess.run([sys.executable, "tools/train/eval.py", "--model", str(MODEL), "--split", "pretrain",
                             "--data", str(SUBSET), "--json"], check=True, capture_output=True, text=True)
    measured = json.loads(result.stdout.strip().splitlines()[-1])
    expected = {"model": str(MODEL), "data": str(SUBSET), "computed_by": "tools/train/eval.py (PyTorch, float32)",
                "targets": measured["targets"], "loss": measured["loss"], "perplexity": measured["perplexity"],
                "bits_per_byte": measured["bits_per_byte"]}
    OUT.write_text(json.dumps(expected, indent=2) + "\n")
    print(f"wrote {OUT}: {expected['targets']} targets, loss {expected['loss']:.6f}")


if __name__ == "__main__":
    main()
