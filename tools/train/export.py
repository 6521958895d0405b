"""Exports a training run as a model directory minigen (and HF transformers, as Qwen3ForCausalLM) can load.

    /usr/bin/python3 tools/train/export.py --run base --out /work/minigen-data/models/minigen-tiny-base

Writes OUT/model.safetensors (F32, MiniMind's tensor names; the tied lm_head.weight is left out, as HF's
save_pretrained does with tie_word_embeddings, so the file holds each weight once: 19.4 MB), OUT/config.json (the fields
`minigen init-random --family tiny` writes) and the tokenizer files from the run's --tokenizer. Then, unless
--no-check, loads it with `minigen info` and greedily generates 20 tokens from "In the beginning" (or from a
--chat message).
"""
import argparse
import json
import pathlib
import subprocess
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import runtime  # noqa: E402

DATA_ROOT = pathlib.Path("/work/minigen-data")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--run", help="run name (/work/minigen-data/runs/NAME)")
    parser.add_argument("--run-dir", help="run directory or checkpoint.pt (overrides --run)")
    parser.add_argument("--out", required=True)
    parser.add_argument("--tokenizer", help="tokenizer directory (default: the run's)")
    parser.add_argument("--minigen", default="/work/main/build/minigen")
    parser.add_argument("--prompt", default="In the beginning", help="raw prompt of the check (base models)")
    parser.add_argument("--chat", help="check with this user message instead (SFT models)")
    parser.add_argument("--no-check", action="store_true")
    args = parser.parse_args()
    runtime.prepare(1)
    import torch

    from weights import write_model_directory

    source = pathlib.Path(args.run_dir) if args.run_dir else DATA_ROOT / "runs" / (args.run or "")
    checkpoint_path = source if source.is_file() else source / "checkpoint.pt"
    checkpoint = torch.load(checkpoint_path, map_location="cpu")
    tensors = {name: tensor.float() for name, tensor in checkpoint["model"].items()}
    if not torch.equal(tensors["lm_head.weight"], tensors["model.embed_tokens.weight"]):
        raise SystemExit("lm_head.weight and model.embed_tokens.weight differ: the model is not tied")
    del tensors["lm_head.weight"]  # tie_word_embeddings: the loader takes the output projection from the embedding
    run_args, state = checkpoint["args"], checkpoint["state"]
    tokenizer = args.tokenizer or run_args["tokenizer"]
    metadata = {"format": "pt", "producer": "minigen tools/train/export.py", "mode": run_args["mode"],
                "step": str(state["step"]), "total_steps": str(checkpoint["total_steps"]),
                "tokens": str(state["tokens"]), "data": str(run_args["data"]), "lr": str(run_args["lr"])}
    write_model_directory(args.out, tensors, checkpoint["config"], tokenizer, metadata)
    print(f"wrote {args.out} from {checkpoint_path} (step {state['step']}/{checkpoint['total_steps']}, "
          f"{state['tokens']:,} tokens)")
    if args.no_check:
        return
    if not pathlib.Path(args.minigen).exists():
        print(f"check skipped: {args.minigen} not built")
        return
    for command in ([args.minigen, "info", args.out],
                    [args.minigen, "generate", "-m", args.out, "--greedy", "-n", "20"]
                    + (["--chat", args.chat] if args.chat else ["-p", args.prompt])):
        print("$ " + " ".join(json.dumps(part) if " " in part else part for part in command))
        result = subprocess.run(command, capture_output=True, text=True)
        print(result.stdout.rstrip())
        if result.returncode != 0:
            print(result.stderr.rstrip())
            raise SystemExit(f"minigen could not use the export (exit {result.returncode})")


if __name__ == "__main__":
    main()
