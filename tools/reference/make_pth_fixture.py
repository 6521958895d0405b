#!/usr/bin/env python3
"""Writes small torch.save fixtures for minigen's .pth reader tests, with the values torch itself reads back.

Run from the repository root with a Python that has torch:  python3 tools/reference/make_pth_fixture.py
Outputs (all small, deterministic):
  tests/data/pth/state_dict.pth          OrderedDict state dict, torch's default pickle protocol (2)
  tests/data/pth/nested_protocol4.pth    {"model": state_dict, "epoch": 3, "note": "..."} with pickle protocol 4
  tests/data/pth/expected.json           {"torch_version": ..., "tensors": {name: {"dtype", "shape", "values"}}}
The state dict covers fp16, bf16 and fp32, a transposed (non-contiguous) tensor, two tensors that share one storage
at different offsets, a 0-dim tensor, an empty tensor and the `_metadata` attribute real state dicts carry; values are exact in every dtype, so the JSON (which holds
them as fp32 numbers) is an exact reference.
"""
import collections
import json
import pathlib

import torch

OUT_DIR = pathlib.Path("tests/data/pth")


def make_state_dict():
    generator = torch.Generator().manual_seed(1234)
    state = collections.OrderedDict()
    # Random values rounded to what each dtype can hold, so that reading them as fp32 is exact.
    state["model.embed_tokens.weight"] = torch.randn(6, 4, generator=generator).to(torch.float16)
    state["model.norm.weight"] = torch.randn(4, generator=generator).to(torch.bfloat16)
    state["model.layers.0.self_attn.q_proj.weight"] = torch.randn(4, 4, generator=generator)
    state["model.layers.0.self_attn.q_norm.weight"] = torch.tensor([1.0, -2.5, 65504.0, 2.0**-24],
                                                                   dtype=torch.float16)
    state["model.layers.0.mlp.up_proj.weight"] = torch.randn(3, 4, generator=generator).to(torch.bfloat16)
    # Transposed view: shape [5, 3], strides (1, 5) into a storage of 15 elements.
    state["model.layers.0.mlp.down_proj.weight"] = torch.randn(3, 5, generator=generator).to(torch.float16).t()
    # Two views of one fp32 storage of 20 elements: rows 0-1 and rows 2-4 (storage offset 8).
    shared = torch.arange(20, dtype=torch.float32).reshape(5, 4) * 0.25 - 1.0
    state["shared.first"] = shared[:2]
    state["shared.second"] = shared[2:]
    # A strided slice of a bf16 storage: every other column, offset 1.
    wide = torch.randn(3, 6, generator=generator).to(torch.bfloat16)
    state["strided.bf16"] = wide[:, 1::2]
    state["scalar.f32"] = torch.tensor(3.5)
    state["empty.f16"] = torch.zeros(0, 4, dtype=torch.float16)
    # nn.Module.state_dict() attaches this attribute; pickle stores it with BUILD, which the reader must accept.
    state._metadata = collections.OrderedDict([("", {"version": 1}), ("model", {"version": 2})])
    return state


def describe(tensor):
    return {
        "dtype": str(tensor.dtype).replace("torch.", ""),
        "shape": list(tensor.shape),
        "values": [float(v) for v in tensor.float().reshape(-1).tolist()],
    }


def main():
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    state = make_state_dict()
    torch.save(state, OUT_DIR / "state_dict.pth")
    torch.save({"model": state, "epoch": 3, "note": "nested"}, OUT_DIR / "nested_protocol4.pth", pickle_protocol=4)

    # What torch itself reads back is the reference, not what we meant to write.
    loaded = torch.load(OUT_DIR / "state_dict.pth")
    expected = {
        "torch_version": torch.__version__,
        "tensors": {name: describe(tensor) for name, tensor in loaded.items()},
    }
    with open(OUT_DIR / "expected.json", "w") as out:
        json.dump(expected, out, indent=1)
        out.write("\n")
    nested = torch.load(OUT_DIR / "nested_protocol4.pth")
    assert all(torch.equal(nested["model"][k], v) for k, v in loaded.items())
    for path in sorted(OUT_DIR.iterdir()):
        print(f"{path}: {path.stat().st_size} bytes")


if __name__ == "__main__":
    main()
