#!/usr/bin/env python3
"""Writes a minigen/HF model directory as the checkpoint MiniMind's trainer saves: a torch.save'd state dict in fp16
(`pretrain_768.pth`-style), with `lm_head.weight` sharing the embedding's storage as MiniMind's tied model has it.

For trying `minigen lab` / `generate` on a MiniMind-layout checkpoint without a MiniMind training run:
    /usr/bin/python3 tools/reference/to_minimind_pth.py MODEL_DIR OUT.pth
(Debian's torch lives under /usr/bin/python3.)
"""
import collections
import pathlib
import sys

import torch

from safetensors_io import read_safetensors


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: to_minimind_pth.py MODEL_DIR OUT.pth")
    model_dir, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    tensors, _ = read_safetensors(model_dir / "model.safetensors")
    state = collections.OrderedDict()
    for name, array in tensors.items():
        state[name] = torch.from_numpy(array).to(torch.float16)
    if "lm_head.weight" not in state:
        state["lm_head.weight"] = state["model.embed_tokens.weight"]  # tied: one storage, two names
    partial = out.with_name(out.name + ".partial")
    torch.save(state, partial)
    partial.rename(out)
    print(f"wrote {len(state)} tensors (fp16) to {out}")


if __name__ == "__main__":
    main()
