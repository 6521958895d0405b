"""Held-out loss and perplexity of an exported model.

    /usr/bin/python3 tools/train/eval.py --model DIR --split pretrain   # base: every token of pretrain_heldout
    /usr/bin/python3 tools/train/eval.py --model DIR --split sft        # SFT: assistant tokens of sft_heldout

Loss is the mean cross-entropy (nats) over the targets trained in that split (data.py: pretraining every token after
bos; SFT the assistant reply with its empty think block, <|im_end|> and the newline after it), computed in float32 on
whole documents (packed with document masks, which gives the same logits as one document at a time); perplexity is
exp(loss). Also per source, and bits per byte of the text for pretraining (comparable across tokenizers).
Uses the model directory's own tokenizer.
"""
import argparse
import json
import math
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import runtime  # noqa: E402

DATA_ROOT = pathlib.Path("/work/minigen-data")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", required=True, help="model directory (config.json, model.safetensors, tokenizer)")
    parser.add_argument("--split", choices=("pretrain", "sft"), required=True)
    parser.add_argument("--data", help="JSONL (default: corpus/<split>_heldout.jsonl)")
    parser.add_argument("--corpus", default=str(DATA_ROOT / "corpus"))
    parser.add_argument("--cache", default=str(DATA_ROOT / "cache"))
    parser.add_argument("--batch", type=int, default=4, help="rows per forward pass")
    parser.add_argument("--seq", type=int, default=256)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--json", action="store_true", help="print the result as one JSON line")
    args = parser.parse_args()
    runtime.prepare(args.threads)
    import numpy as np
    import torch
    import torch.nn.functional as F

    import data
    from bpe import ByteLevelBPE
    from model import MiniMindForTraining, TrainConfig
    from weights import load_weights

    runtime.check_blas(torch, args.threads, quiet=args.json)
    model_dir = pathlib.Path(args.model)
    config_json = json.loads((model_dir / "config.json").read_text())
    config = TrainConfig(vocab_size=config_json["vocab_size"], hidden_size=config_json["hidden_size"],
                         num_layers=config_json["num_hidden_layers"],
                         num_q_heads=config_json["num_attention_heads"],
                         num_kv_heads=config_json["num_key_value_heads"], head_dim=config_json["head_dim"],
                         intermediate_size=config_json["intermediate_size"],
                         rms_norm_eps=config_json["rms_norm_eps"], rope_theta=config_json["rope_theta"])
    model = MiniMindForTraining(config)
    model.load_tensors(load_weights(model_dir))
    model.eval()
    tokenizer = ByteLevelBPE.load(model_dir)
    path = pathlib.Path(args.data or pathlib.Path(args.corpus) / f"{args.split}_heldout.jsonl")
    corpus = data.encode_jsonl(path, args.split, tokenizer, model_dir, args.cache)
    rows = data.whole_rows(corpus, args.seq, cut_long=True)

    losses = np.zeros(len(corpus.source_names))
    counts = np.zeros(len(corpus.source_names), dtype=np.int64)
    row_sources = np.where(rows.origins >= 0, corpus.sources[np.maximum(rows.origins, 0)], -1)
    with torch.no_grad():
        for start in range(0, len(rows), args.batch):
            inputs, targets, documents, trained = data.batch_tensors(torch, rows, start, args.batch)
            logits = model(inputs, documents)
            token_losses = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1),
                                           reduction="none").view(targets.shape)
            sources = torch.from_numpy(row_sources[start:start + args.batch, 1:])
            for index in range(len(corpus.source_names)):
                selected = trained & (sources == index)
                losses[index] += token_losses[selected].sum().item()
                counts[index] += int(selected.sum())
    total_loss, total_count = losses.sum(), counts.sum()
    result = {"model": str(model_dir), "data": str(path), "split": args.split, "targets": int(total_count),
              "loss": total_loss / total_count, "perplexity": math.exp(total_loss / total_count),
              "per_source": {name: {"targets": int(counts[i]), "loss": losses[i] / max(1, counts[i]),
                                    "perplexity": math.exp(losses[i] / max(1, counts[i]))}
                             for i, name in enumerate(corpus.source_names)}}
    if args.split == "pretrain":
        text_bytes = sum(len(json.loads(line)["text"].encode("utf-8")) + 1  # + the eos target, as a byte
                         for line in open(path, encoding="utf-8"))
        result["bits_per_byte"] = total_loss / math.log(2) / text_bytes
    if args.json:
        print(json.dumps(result))
        return
    print(f"{args.split} held-out ({path.name}): {total_count:,} targets, loss {result['loss']:.4f} nats, "
          f"perplexity {result['perplexity']:.2f}" + (f", {result['bits_per_byte']:.3f} bits/byte"
                                                       if "bits_per_byte" in result else ""))
    for name, entry in result["per_source"].items():
        print(f"  {name:14s} {entry['targets']:9,d} targets  loss {entry['loss']:.4f}  ppl {entry['perplexity']:.2f}")


if __name__ == "__main__":
    main()
