"""Checks that the training code computes what minigen runs. Run once after changing model.py, bpe.py or data.py:

    /usr/bin/python3 tools/train/check_model.py [--tokenizer DIR] [--corpus DIR] [--minigen BUILD/minigen]

1. model.py's logits equal tools/reference/minimind_reference.py's on the same random weights (max |Δ| ≤ 1e-5), and
   two documents packed in one row with document ids give the same logits as each alone;
2. bpe.py's ids equal `minigen tokenize --json` on texts from the corpus (skipped without the binary);
3. an SFT conversation encoded piece by piece (as data.py does, to flag the trained tokens) equals the whole ChatML
   string encoded at once.
"""
import argparse
import json
import pathlib
import subprocess
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import runtime  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tokenizer", default="/work/main/tokenizers/minigen-6400")
    parser.add_argument("--corpus", default="/work/minigen-data/corpus")
    parser.add_argument("--minigen", default="/work/main/build/minigen")
    parser.add_argument("--texts", type=int, default=300, help="corpus texts to compare with minigen tokenize")
    args = parser.parse_args()
    runtime.prepare()
    import torch

    import data
    from bpe import ByteLevelBPE
    from model import TrainConfig, new_model
    from weights import write_model_directory

    runtime.check_blas(torch)
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "reference"))
    from minimind_reference import load_model

    failures = []

    # 1. Logits against the reference -------------------------------------------------------------------------------
    config = TrainConfig()
    model = new_model(config, seed=7)
    with torch.no_grad():  # move every weight off its initial value, norms included
        generator = torch.Generator().manual_seed(8)
        for parameter in model.parameters():
            parameter.add_(0.05 * torch.randn(parameter.shape, generator=generator))
    model.eval()
    with tempfile.TemporaryDirectory() as directory:
        write_model_directory(directory, model.export_tensors(), config.config_json(), args.tokenizer)
        reference = load_model(directory)
    ids = torch.randint(0, config.vocab_size, (2, 37), generator=torch.Generator().manual_seed(9))
    with torch.no_grad():
        ours = model(ids)
        theirs = reference.forward(ids)
        difference = (ours - theirs).abs().max().item()
        print(f"logits vs reference: max |Δ| {difference:.2e} (scale {theirs.abs().max().item():.1f})")
        if not difference <= 1e-5:
            failures.append(f"logits differ from the reference by {difference}")
        first, second = ids[0, :20], ids[1, :17]
        packed = torch.cat([first, second])[None]
        documents = torch.tensor([[0] * 20 + [1] * 17])
        packed_logits = model(packed, documents)[0]
        alone = torch.cat([model(first[None])[0], model(second[None])[0]])
        difference = (packed_logits - alone).abs().max().item()
        print(f"packed with document ids vs alone: max |Δ| {difference:.2e}")
        if not difference <= 1e-4:
            failures.append(f"packed documents differ from separate ones by {difference}")

    # 2. Tokenizer against minigen ----------------------------------------------------------------------------------
    tokenizer = ByteLevelBPE.load(args.tokenizer)
    texts = ["In the beginning God created the heaven and the earth.", "Hello <|im_start|>user\nworld's 123  中文<think>x",
             "  leading spaces\n\n\ttabs and trailing   ", "《静夜思》\n作者：李白\n床前明月光，疑是地上霜。", "don't I'll we're",
             "emoji 🙂 and ‘quotes’ — dashes…", "<|im_end|><|im_end|>\n"]
    corpus_dir = pathlib.Path(args.corpus)
    for name, key in (("pretrain_heldout.jsonl", "text"), ("sft_heldout.jsonl", "conversations")):
        path = corpus_dir / name
        if path.exists():
            with open(path, encoding="utf-8") as stream:
                for number, line in enumerate(stream):
                    if number >= args.texts // 2:
                        break
                    sample = json.loads(line)
                    texts.append(sample["text"] if key == "text" else
                                 "".join(text for text, _ in data.render_chat(sample["conversations"])))
    if pathlib.Path(args.minigen).exists():
        mismatches = 0
        for text in texts:
            result = subprocess.run([args.minigen, "tokenize", "--json", "--tokenizer", args.tokenizer, text],
                                    capture_output=True, text=True, check=True)
            expected = json.loads(result.stdout)["ids"]
            if tokenizer.encode(text) != expected:
                mismatches += 1
                if mismatches <= 3:
                    print(f"  mismatch on {text[:60]!r}: ours {tokenizer.encode(text)[:12]} minigen {expected[:12]}")
        print(f"tokenizer vs minigen tokenize: {len(texts) - mismatches}/{len(texts)} texts give the same ids")
        if mismatches:
            failures.append(f"{mismatches} texts tokenize differently from minigen")
    else:
        print(f"tokenizer vs minigen: skipped ({args.minigen} not built)")
    round_trips = sum(tokenizer.decode(tokenizer.encode(text)) == text for text in texts)
    print(f"decode(encode(text)) == text: {round_trips}/{len(texts)}")
    if round_trips != len(texts):
        failures.append("decode(encode(text)) differs from text")

    # 3. SFT pieces against the whole string ------------------------------------------------------------------------
    conversation = [{"role": "user", "content": "What does ‘serendipity’ mean?"},
                    {"role": "assistant", "content": "Good luck in making unexpected and fortunate discoveries."}]
    pieces = data.render_chat(conversation)
    by_piece = [token for text, _ in pieces for token in tokenizer.encode(text)]
    whole = tokenizer.encode("".join(text for text, _ in pieces))
    trained = [token for text, flag in pieces if flag for token in tokenizer.encode(text)]
    print(f"SFT: pieces == whole string: {by_piece == whole}; trained tokens decode to "
          f"{tokenizer.decode(trained)!r}")
    if by_piece != whole:
        failures.append("SFT pieces encode differently from the whole string")

    if failures:
        raise SystemExit("FAILED: " + "; ".join(failures))
    print("all checks passed")


if __name__ == "__main__":
    main()
