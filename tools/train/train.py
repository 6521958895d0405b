"""Trains minigen's tiny MiniMind model: pretraining, then SFT, with MiniMind's recipe.

    /usr/bin/python3 tools/train/train.py pretrain --tokenizer DIR --run base [--tokens N | --epochs E]
    /usr/bin/python3 tools/train/train.py sft --tokenizer DIR --init MODEL_DIR --run sft [--epochs E]
    /usr/bin/python3 tools/train/train.py pretrain --run base --resume [--time-limit MIN]

Recipe (MiniMind's trainer/train_pretrain.py and train_full_sft.py): AdamW (torch defaults: betas 0.9/0.999,
weight decay 0.01, on every parameter), no warm-up, learning rate lr·(0.1 + 0.45·(1 + cos(π·step/total))) (cosine
from lr down to lr/10), gradient clipping at 1.0, bf16 autocast with fp32 master weights, loss = mean cross-entropy
over the trained targets of the batch. Pretraining lr 5e-4 as MiniMind; MiniMind's SFT uses 1e-5 over ~10⁵ steps,
our SFT is ~10³ steps, so its default here is 5e-5. Batch 16 rows × 256 tokens per optimizer step, computed as
micro-batches of 4 rows (faster on this CPU; same gradient). See data.py for how samples become rows (packing,
document masks, which tokens are trained).

A run lives in --run-dir (default /work/minigen-data/runs/<--run>): args.json, log.jsonl (one line per --log-every
steps: step, loss, lr, tokens, elapsed, tokens_per_second) and checkpoint.pt (model, optimizer, schedule position,
data position, RNG states), written atomically every --checkpoint-minutes and at the end. --resume continues from
it with the saved arguments; --time-limit MIN checkpoints and stops cleanly before MIN minutes have passed, as do
SIGINT and SIGTERM. --retarget-tokens N with --resume changes the schedule's length (for a run that would not
finish in the time there is). The bar on stderr shows step, loss, lr, tokens/s and the ETA.
"""
import argparse
import json
import math
import os
import pathlib
import random
import signal
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import runtime  # noqa: E402

DATA_ROOT = pathlib.Path("/work/minigen-data")
RUNTIME_FLAGS = ("time_limit", "checkpoint_minutes", "threads", "log_every", "resume", "run_dir", "run",
                 "stop_at_step", "retarget_tokens")


def parse_args():
    parser = argparse.ArgumentParser(description="Pretrain or fine-tune minigen's tiny MiniMind model.")
    parser.add_argument("mode", choices=("pretrain", "sft"))
    parser.add_argument("--tokenizer", default="/work/main/tokenizers/minigen-6400",
                        help="tokenizer directory (tokenizer.json)")
    parser.add_argument("--data", help="training JSONL (default: corpus/{pretrain,sft}_train.jsonl)")
    parser.add_argument("--heldout", help="held-out JSONL for --eval-every (default: the matching _heldout file)")
    parser.add_argument("--corpus", default=str(DATA_ROOT / "corpus"))
    parser.add_argument("--cache", default=str(DATA_ROOT / "cache"), help="where encoded corpora are cached")
    parser.add_argument("--run", help="run name: the run directory is /work/minigen-data/runs/NAME")
    parser.add_argument("--run-dir", help="run directory (overrides --run)")
    parser.add_argument("--init", help="start from these weights: a model directory (model.safetensors) or a run "
                                       "directory (checkpoint.pt); default for sft is required, pretrain starts new")
    parser.add_argument("--tokens", type=float, help="token budget (input positions); sets the schedule length")
    parser.add_argument("--epochs", type=float, help="budget in passes over the data (when --tokens is not given)")
    parser.add_argument("--lr", type=float, help="peak learning rate (default 5e-4 pretrain, 5e-5 sft)")
    parser.add_argument("--weight-decay", type=float, default=0.01, help="AdamW weight decay (torch's default)")
    parser.add_argument("--grad-clip", type=float, default=1.0)
    parser.add_argument("--batch", type=int, default=16, help="rows per optimizer step")
    parser.add_argument("--micro-batch", type=int, default=4,
                        help="rows per forward/backward pass (the step's gradient is the same; 4 keeps every tensor "
                             "small enough for the CPU caches and malloc, ~3× faster per token than 16 here)")
    parser.add_argument("--seq", type=int, default=256, help="tokens per row")
    parser.add_argument("--precision", choices=("bf16", "fp32"), default="bf16",
                        help="bf16: autocast matmuls to bfloat16 (MiniMind's default; oneDNN runs them ~2× faster "
                             "here, and batched attention ~10×), fp32 master weights")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--log-every", type=int, default=10, help="steps between log.jsonl lines")
    parser.add_argument("--eval-every", type=int, default=0, help="steps between held-out evaluations (0: never)")
    parser.add_argument("--eval-rows", type=int, default=256, help="held-out rows per evaluation")
    parser.add_argument("--checkpoint-minutes", type=float, default=5.0)
    parser.add_argument("--time-limit", type=float, help="minutes: checkpoint and stop cleanly before this")
    parser.add_argument("--resume", action="store_true", help="continue the run in --run-dir from checkpoint.pt")
    parser.add_argument("--retarget-tokens", type=int,
                        help="with --resume: end the schedule after this many tokens in all (the cosine is "
                             "recomputed for the new length from the current step on)")
    parser.add_argument("--stop-at-step", type=int, help="checkpoint and stop after this step (to test --resume)")
    args = parser.parse_args()
    if not args.run_dir:
        if not args.run:
            parser.error("give --run NAME or --run-dir DIR")
        args.run_dir = str(DATA_ROOT / "runs" / args.run)
    return args


def main():
    process_start = time.time()  # --time-limit counts from here (data encoding included)
    args = parse_args()
    runtime.prepare(args.threads)
    import numpy as np
    import torch
    import torch.nn.functional as F

    import data
    from bpe import ByteLevelBPE
    from model import TrainConfig, new_model, parameter_count
    from weights import load_weights

    runtime.check_blas(torch, args.threads)
    run_dir = pathlib.Path(args.run_dir)
    checkpoint_path = run_dir / "checkpoint.pt"
    checkpoint = None
    if args.resume:
        if not checkpoint_path.exists():
            raise SystemExit(f"--resume: no checkpoint at {checkpoint_path}")
        checkpoint = torch.load(checkpoint_path, map_location="cpu")
        saved = checkpoint["args"]
        for name, value in vars(args).items():
            if name not in RUNTIME_FLAGS:
                setattr(args, name, saved[name])
        print(f"resuming {run_dir} at step {checkpoint['state']['step']}/{checkpoint['total_steps']} with its saved "
              f"training arguments", file=sys.stderr)
    elif checkpoint_path.exists():
        raise SystemExit(f"{checkpoint_path} exists: add --resume to continue it, or choose another --run")
    if args.lr is None:
        args.lr = 5e-4 if args.mode == "pretrain" else 5e-5
    if args.mode == "sft" and not args.init and checkpoint is None:
        raise SystemExit("sft needs --init MODEL_DIR (the exported base model)")
    corpus_dir = pathlib.Path(args.corpus)
    args.data = args.data or str(corpus_dir / f"{args.mode}_train.jsonl")
    args.heldout = args.heldout or str(corpus_dir / f"{args.mode}_heldout.jsonl")

    # Data ----------------------------------------------------------------------------------------------------------
    tokenizer = ByteLevelBPE.load(args.tokenizer)
    corpus = data.encode_jsonl(args.data, args.mode, tokenizer, args.tokenizer, args.cache)
    print(f"data: {args.data}: {corpus.document_count:,} documents, {len(corpus.ids):,} tokens, "
          f"{int(corpus.flags.sum()):,} trained", file=sys.stderr)
    for source, tokens in corpus.tokens_per_source().items():
        print(f"  {source:14s} {tokens:12,d} tokens", file=sys.stderr)

    def make_rows(epoch):
        if args.mode == "pretrain":
            return data.stream_rows(corpus, args.seq, args.seed, epoch)
        return data.whole_rows(corpus, args.seq, args.seed, epoch)

    rows = make_rows(0)
    if args.batch % args.micro_batch:
        raise SystemExit("--batch must be a multiple of --micro-batch")
    rows_per_step = args.batch
    tokens_per_step = rows_per_step * args.seq
    steps_per_epoch = len(rows) // rows_per_step
    if args.tokens:
        total_steps = math.ceil(args.tokens / tokens_per_step)
    else:
        total_steps = max(1, round((args.epochs or 1.0) * steps_per_epoch))
    utilisation = rows.flags[:, 1:].sum() / rows.flags[:, 1:].size
    print(f"rows of {args.seq}: {len(rows):,} per epoch ({steps_per_epoch:,} steps of {rows_per_step} rows, "
          f"micro-batches of {args.micro_batch}); "
          f"trained targets fill {utilisation:.1%} of positions; schedule: {total_steps:,} steps, "
          f"{total_steps * tokens_per_step:,} tokens", file=sys.stderr)
    heldout_rows = None
    if args.eval_every:
        heldout = data.encode_jsonl(args.heldout, args.mode, tokenizer, args.tokenizer, args.cache)
        heldout_rows = data.whole_rows(heldout, args.seq, cut_long=True)

    # Model and optimizer -------------------------------------------------------------------------------------------
    config = TrainConfig(vocab_size=max(6400, tokenizer.vocab_size))
    model = new_model(config, args.seed)
    if args.init and checkpoint is None:
        model.load_tensors(load_weights(args.init))
        print(f"initialised from {args.init}", file=sys.stderr)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    print(f"model: {parameter_count(model):,} parameters; {args.precision}; {args.threads} threads", file=sys.stderr)

    state = {"step": 0, "epoch": 0, "row": 0, "tokens": 0, "trained_tokens": 0, "elapsed": 0.0}
    if checkpoint is not None:
        model.load_state_dict(checkpoint["model"])
        optimizer.load_state_dict(checkpoint["optimizer"])
        state = checkpoint["state"]
        total_steps = checkpoint["total_steps"]
        if args.retarget_tokens:
            retargeted = math.ceil(args.retarget_tokens / tokens_per_step)
            if retargeted <= state["step"]:
                raise SystemExit(f"--retarget-tokens {args.retarget_tokens:,}: the run is already at step "
                                 f"{state['step']} ({state['step'] * tokens_per_step:,} tokens)")
            print(f"schedule retargeted: {total_steps:,} -> {retargeted:,} steps", file=sys.stderr)
            total_steps = retargeted
        torch.set_rng_state(checkpoint["rng"]["torch"])
        np.random.set_state(checkpoint["rng"]["numpy"])
        random.setstate(checkpoint["rng"]["python"])
        if state["epoch"] != 0:
            rows = make_rows(state["epoch"])
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "args.json").write_text(json.dumps(vars(args), indent=2) + "\n")
    log_path = run_dir / "log.jsonl"
    if checkpoint is not None and log_path.exists():  # drop lines logged after the checkpoint
        kept = [line for line in log_path.read_text().splitlines() if json.loads(line)["step"] <= state["step"]]
        log_path.write_text("".join(line + "\n" for line in kept))
    elif checkpoint is None:
        log_path.write_text("")

    def learning_rate(step):
        return args.lr * (0.1 + 0.45 * (1.0 + math.cos(math.pi * step / total_steps)))

    def save_checkpoint():
        payload = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "state": dict(state),
                   "total_steps": total_steps, "args": vars(args), "config": config.config_json(),
                   "rng": {"torch": torch.get_rng_state(), "numpy": np.random.get_state(),
                           "python": random.getstate()}}
        temporary = run_dir / "checkpoint.pt.partial"
        torch.save(payload, temporary)
        os.replace(temporary, checkpoint_path)

    @torch.no_grad()
    def evaluate_heldout():
        model.eval()
        loss_sum, count = 0.0, 0
        for start in range(0, min(len(heldout_rows), args.eval_rows), args.micro_batch):
            inputs, targets, documents, trained = data.batch_tensors(torch, heldout_rows, start, args.micro_batch)
            with autocast():
                logits = model(inputs, documents, select=trained)
            loss_sum += F.cross_entropy(logits.float(), targets[trained], reduction="sum").item()
            count += int(trained.sum())
        model.train()
        return loss_sum / max(1, count)

    def autocast():
        return torch.autocast("cpu", dtype=torch.bfloat16, enabled=args.precision == "bf16")

    stop_reason = []

    def request_stop(signum, frame):
        stop_reason.append(signal.Signals(signum).name)

    signal.signal(signal.SIGINT, request_stop)
    signal.signal(signal.SIGTERM, request_stop)

    # Training loop -------------------------------------------------------------------------------------------------
    session_start = time.time()
    last_checkpoint = session_start
    last_draw = 0.0
    session_tokens = 0
    interval_losses = []
    smoothed_loss = None
    step_seconds = []
    model.train()
    print(f"{args.mode}: step {state['step']}/{total_steps}, run directory {run_dir}", file=sys.stderr)
    while state["step"] < total_steps:
        if state["row"] + rows_per_step > len(rows):
            state["epoch"] += 1
            state["row"] = 0
            rows = make_rows(state["epoch"])
            continue
        step_start = time.time()
        lr = learning_rate(state["step"])
        for group in optimizer.param_groups:
            group["lr"] = lr
        # The step's loss is the mean over all its trained targets, as one batch of --batch rows would give it.
        step_targets = max(1, int(data.batch_tensors(torch, rows, state["row"], args.batch)[3].sum()))
        step_loss = 0.0
        for _ in range(args.batch // args.micro_batch):
            inputs, targets, documents, trained = data.batch_tensors(torch, rows, state["row"], args.micro_batch)
            with autocast():
                logits = model(inputs, documents, select=trained)
            loss = F.cross_entropy(logits.float(), targets[trained], reduction="sum") / step_targets
            loss.backward()
            step_loss += loss.item()
            state["row"] += args.micro_batch
            state["trained_tokens"] += int(trained.sum())
        torch.nn.utils.clip_grad_norm_(model.parameters(), args.grad_clip)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        state["step"] += 1
        state["tokens"] += tokens_per_step
        session_tokens += tokens_per_step
        now = time.time()
        step_seconds.append(now - step_start)
        state["elapsed"] += now - step_start
        interval_losses.append(step_loss)
        smoothed_loss = step_loss if smoothed_loss is None else 0.95 * smoothed_loss + 0.05 * step_loss
        session_elapsed = now - session_start
        tokens_per_second = session_tokens / max(session_elapsed, 1e-9)

        if state["step"] % args.log_every == 0 or state["step"] == total_steps:
            record = {"step": state["step"], "loss": round(sum(interval_losses) / len(interval_losses), 5),
                      "lr": lr, "tokens": state["tokens"], "trained_tokens": state["trained_tokens"],
                      "elapsed": round(state["elapsed"], 2), "tokens_per_second": round(tokens_per_second, 1)}
            if heldout_rows is not None and (state["step"] % args.eval_every == 0 or state["step"] == total_steps):
                record["heldout_loss"] = round(evaluate_heldout(), 5)
            with open(log_path, "a") as log:
                log.write(json.dumps(record) + "\n")
            interval_losses = []
        if now - last_draw >= 0.5 or state["step"] == total_steps:
            last_draw = now
            remaining = (total_steps - state["step"]) * tokens_per_step / max(tokens_per_second, 1e-9)
            print(f"\r{args.mode} step {state['step']}/{total_steps} {100 * state['step'] / total_steps:5.1f}% "
                  f"loss {smoothed_loss:.4f} lr {lr:.2e} {tokens_per_second:,.0f} tok/s "
                  f"elapsed {clock(session_elapsed)} ETA {clock(remaining)} ", end="", file=sys.stderr, flush=True)

        average_step = sum(step_seconds[-20:]) / len(step_seconds[-20:])
        deadline_near = (args.time_limit is not None
                         and now - process_start + 2 * average_step + 10 >= args.time_limit * 60)
        if deadline_near:
            stop_reason.append(f"time limit {args.time_limit} min")
        if args.stop_at_step is not None and state["step"] >= args.stop_at_step and state["step"] < total_steps:
            stop_reason.append(f"--stop-at-step {args.stop_at_step}")
        if stop_reason or now - last_checkpoint >= args.checkpoint_minutes * 60:
            save_checkpoint()
            last_checkpoint = time.time()
        if stop_reason:
            print(f"\nstopped ({stop_reason[0]}) at step {state['step']}/{total_steps}; checkpoint saved. "
                  f"Continue with --resume.", file=sys.stderr)
            return
    save_checkpoint()
    print(f"\ndone: {state['step']} steps, {state['tokens']:,} tokens, {state['elapsed'] / 60:.1f} min of "
          f"training; checkpoint {checkpoint_path}", file=sys.stderr)


def clock(seconds):
    seconds = int(seconds)
    return f"{seconds // 3600:d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


if __name__ == "__main__":
    main()
