"""Reading trained weights and writing minigen/HF model directories (config.json + model.safetensors + tokenizer).

The safetensors reader/writer is tools/reference/safetensors_io.py.
"""
import json
import pathlib
import shutil
import sys

REFERENCE_DIR = pathlib.Path(__file__).resolve().parent.parent / "reference"
sys.path.insert(0, str(REFERENCE_DIR))
from safetensors_io import read_safetensors, write_safetensors  # noqa: E402

TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json")


def load_weights(path):
    """name → float32 tensor (MiniMind's names) from a model directory (model.safetensors), a .safetensors file,
    or a run directory / checkpoint.pt written by train.py."""
    import torch

    path = pathlib.Path(path)
    if path.is_dir():
        if (path / "model.safetensors").exists():
            path = path / "model.safetensors"
        elif (path / "checkpoint.pt").exists():
            path = path / "checkpoint.pt"
        else:
            raise SystemExit(f"{path} holds neither model.safetensors nor checkpoint.pt")
    if path.suffix == ".safetensors":
        arrays, _ = read_safetensors(path)
        return {name: torch.from_numpy(array) for name, array in arrays.items()}
    checkpoint = torch.load(path, map_location="cpu")
    return {name: tensor.float() for name, tensor in checkpoint["model"].items()}


def write_model_directory(out, tensors, config_json, tokenizer_dir, metadata=None):
    """out/: model.safetensors (F32, MiniMind's names), config.json, and the tokenizer files copied."""
    out = pathlib.Path(out)
    out.mkdir(parents=True, exist_ok=True)
    write_safetensors(out / "model.safetensors", tensors, metadata=metadata, dtype="F32")
    (out / "config.json").write_text(json.dumps(config_json, indent=2, sort_keys=True) + "\n")
    tokenizer_dir = pathlib.Path(tokenizer_dir)
    if tokenizer_dir.is_file():
        tokenizer_dir = tokenizer_dir.parent
    for name in TOKENIZER_FILES:
        if (tokenizer_dir / name).exists():
            shutil.copyfile(tokenizer_dir / name, out / name)
