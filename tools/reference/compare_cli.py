#!/usr/bin/python3
"""Compares `minigen generate --greedy` with the reference on the same weights and prompt ids.

    /usr/bin/python3 tools/reference/compare_cli.py                       # tiny, seed 1
    /usr/bin/python3 tools/reference/compare_cli.py --family minimind3-moe --layers 2 -n 32 --repetition-penalty 3

Makes a random model with `minigen init-random` (or takes --model DIR), asks `minigen tokenize --bos` for the
prompt ids, runs `minigen generate -p TEXT --greedy --ignore-eos -n N --json` with and without the KV cache, and
runs the reference's generate (MiniMind's defaults, argmax) on those ids. On a mismatch it prints the first
differing step, both tokens, and the reference's logits for them at that step.
"""
import argparse
import json
import pathlib
import subprocess
import sys
import tempfile

import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import minimind_reference as ref  # noqa: E402

torch.set_num_threads(1)


def run(command):
    result = subprocess.run([str(part) for part in command], capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(str(part) for part in command)} exited with {result.returncode}: "
                           f"{result.stderr.strip()}")
    return result.stdout


def compare(minigen, model_dir, text, new_tokens, repetition_penalty):
    prompt = [int(token) for token in run([minigen, "tokenize", "-m", model_dir, "--bos", text]).split()]
    model = ref.load_model(model_dir)
    reference = ref.generate(model, torch.tensor([prompt]), do_sample=False, eos_token_id=None,
                             max_new_tokens=new_tokens, repetition_penalty=repetition_penalty)[0, len(prompt):].tolist()
    print(f"prompt ids ({len(prompt)}): {prompt}")
    print(f"reference          : {reference}")
    all_equal = True
    for cache_flag in ([], ["--no-cache"]):
        output = json.loads(run([minigen, "generate", "-m", model_dir, "-p", text, "--greedy", "--ignore-eos",
                                 "-n", new_tokens, "--repetition-penalty", repetition_penalty, "--json",
                                 *cache_flag]))
        engine = output["sequences"][0]["token_ids"]
        label = "minigen" + (" --no-cache" if cache_flag else "")
        print(f"{label:19s}: {engine}")
        if engine == reference:
            print(f"  {label}: identical ({len(engine)} tokens)")
            continue
        all_equal = False
        step = next((i for i, (a, b) in enumerate(zip(engine, reference)) if a != b), min(len(engine), len(reference)))
        print(f"  {label}: MISMATCH at step {step} of {len(reference)}")
        if step < min(len(engine), len(reference)):
            history = prompt + reference[:step]
            logits = model.forward(torch.tensor([history]))[0, -1:] / 0.85  # generate's default temperature
            if repetition_penalty != 1.0:
                logits = ref.apply_repetition_penalty(logits, [history], repetition_penalty)
            logits = logits[0]
            top = torch.topk(logits, 2)
            print(f"  reference logits (÷ temperature, penalized) at that step: reference token {reference[step]} → "
                  f"{float(logits[reference[step]]):.6f}, minigen token {engine[step]} → "
                  f"{float(logits[engine[step]]):.6f}, gap {float(logits[reference[step]] - logits[engine[step]]):.6g}; "
                  f"reference top-2 margin {float(top.values[0] - top.values[1]):.6g}")
    return all_equal


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--minigen", default="build/minigen")
    parser.add_argument("--model", help="an existing model directory instead of a random one")
    parser.add_argument("--family", default="tiny")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--layers", type=int)
    parser.add_argument("--text", default="The quick brown fox jumps over the lazy dog.")
    parser.add_argument("-n", "--new-tokens", type=int, default=16)
    parser.add_argument("--repetition-penalty", type=float, default=1.0,
                        help="random models mostly repeat the last token; 3 gives varied greedy continuations")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="minigen_compare_") as temporary:
        model_dir = args.model
        if model_dir is None:
            model_dir = pathlib.Path(temporary) / args.family
            command = [args.minigen, "init-random", "--family", args.family, "--seed", args.seed, "--out", model_dir]
            if args.layers:
                command += ["--layers", args.layers]
            run(command)
        print(f"model: {args.model or f'init-random --family {args.family} --seed {args.seed}'}")
        sys.exit(0 if compare(args.minigen, model_dir, args.text, args.new_tokens, args.repetition_penalty) else 1)


if __name__ == "__main__":
    main()
