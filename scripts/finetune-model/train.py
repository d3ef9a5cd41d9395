#!/usr/bin/env python3
"""Fine-tunes all-MiniLM-L6-v2 on the pairs build_pairs.py wrote, with in-batch negatives
(sentence-transformers' MultipleNegativesRankingLoss: each anchor against every positive of its
batch, cross-entropy on scaled cosines), on the CPU.

    train.py BASE_MODEL_DIR PAIRS.jsonl OUT_DIR [--epochs 1] [--batch 32] [--lr 2e-5] ...

Batches are made of one source at a time (one spec's endpoints, one package's docs), so the
negatives are the neighbours a search inside one spec has to tell apart; sources smaller than a
batch are packed together. A small share of sources is held out (--holdout) and scored before and
after (accuracy@1 of anchor -> positive among the held-out source's positives), as a sanity check
only: the real evaluation is devlens's own, on the blind golden sets.

Writes OUT_DIR as a Hugging Face / sentence-transformers folder (config.json, tokenizer.json,
model.safetensors, modules.json, 1_Pooling/, ...) like the base, and OUT_DIR/training.json with
the settings and figures.
"""
import argparse
import json
import math
import os
import random
import shutil
import sys
import time
from collections import defaultdict

import numpy as np
import torch
from sentence_transformers import SentenceTransformer, losses


def batches_by_source(pairs, batch, rng):
    by_source = defaultdict(list)
    for p in pairs:
        by_source[p["source"]].append(p)
    out, leftovers = [], []
    for src in sorted(by_source):
        items = by_source[src]
        rng.shuffle(items)
        full = len(items) // batch * batch
        for i in range(0, full, batch):
            out.append(items[i : i + batch])
        rest = items[full:]
        if len(rest) >= batch // 2:
            out.append(rest)
        else:
            leftovers.append(rest)
    # Small sources together, each kept whole where it fits.
    rng.shuffle(leftovers)
    current = []
    for rest in leftovers:
        if len(current) + len(rest) > batch:
            out.append(current)
            current = []
        current += rest
    if len(current) >= 2:
        out.append(current)
    # The same anchor or positive twice in a batch would be a false negative.
    clean = []
    for b in out:
        seen_a, seen_p, keep = set(), set(), []
        for p in b:
            a, q = p["anchor"].lower(), p["positive"]
            if a in seen_a or q in seen_p:
                continue
            seen_a.add(a)
            seen_p.add(q)
            keep.append(p)
        if len(keep) >= 2:
            clean.append(keep)
    rng.shuffle(clean)
    return clean


@torch.no_grad()
def holdout_accuracy(model, groups):
    """Mean accuracy@1 and MRR of anchor -> positive within each held-out source."""
    hits, rr, n = 0, 0.0, 0
    for items in groups:
        a = model.encode([p["anchor"] for p in items], batch_size=64, normalize_embeddings=True, convert_to_tensor=True)
        q = model.encode([p["positive"] for p in items], batch_size=64, normalize_embeddings=True, convert_to_tensor=True)
        scores = a @ q.T
        for i in range(len(items)):
            rank = int((scores[i] > scores[i, i]).sum()) + 1
            hits += rank == 1
            rr += 1.0 / rank
            n += 1
    return {"acc1": round(hits / n, 4), "mrr": round(rr / n, 4), "n": n}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("base")
    ap.add_argument("pairs")
    ap.add_argument("out")
    ap.add_argument("--seed", type=int, default=39)
    ap.add_argument("--epochs", type=float, default=1.0)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--lr", type=float, default=2e-5)
    ap.add_argument("--warmup", type=float, default=0.1)
    ap.add_argument("--scale", type=float, default=20.0, help="MultipleNegativesRankingLoss scale")
    ap.add_argument("--max-seq-length", type=int, default=128)
    ap.add_argument("--max-pairs", type=int, default=0, help="train on at most this many pairs (0: all)")
    ap.add_argument("--holdout", type=float, default=0.02, help="share of sources held out")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--train-embeddings", action="store_true",
                    help="also train the token embeddings (frozen by default: a third of the weights, "
                    "the slowest update on a CPU, and the part a small data set would shift least usefully)")
    ap.add_argument("--time-budget", type=float, default=0, help="stop after this many minutes (0: none)")
    ap.add_argument("--max-steps", type=int, default=0,
                    help="stop after this many steps, the schedule still planned for all (0: none); "
                    "replays a run that --time-budget stopped, whatever the machine's speed")
    args = ap.parse_args()

    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    rng = random.Random(args.seed)

    pairs = [json.loads(line) for line in open(args.pairs, encoding="utf-8")]
    sources = sorted({p["source"] for p in pairs})
    rng.shuffle(sources)
    held = set(s for s in sources[: int(len(sources) * args.holdout)] if s.startswith("api:"))
    train_pairs = [p for p in pairs if p["source"] not in held]
    held_groups = defaultdict(list)
    for p in pairs:
        if p["source"] in held:
            held_groups[p["source"]].append(p)
    held_groups = [g for _, g in sorted(held_groups.items()) if len(g) >= 8]
    if args.max_pairs and len(train_pairs) > args.max_pairs:
        rng.shuffle(train_pairs)
        train_pairs = train_pairs[: args.max_pairs]

    model = SentenceTransformer(args.base, device="cpu")
    base_max_seq_length = model.max_seq_length  # what devlens reads (sentence_bert_config.json)
    model.max_seq_length = args.max_seq_length
    loss_fn = losses.MultipleNegativesRankingLoss(model, scale=args.scale)

    epoch_batches = []
    whole = math.ceil(args.epochs)
    for e in range(whole):
        b = batches_by_source(train_pairs, args.batch, rng)
        if e == whole - 1 and args.epochs < whole:
            b = b[: int(len(b) * (args.epochs - (whole - 1)))]
        epoch_batches += b
    steps = len(epoch_batches)
    print(f"{len(train_pairs)} training pairs, {steps} steps of <= {args.batch}; "
          f"{len(held_groups)} held-out sources ({sum(map(len, held_groups))} pairs)", flush=True)

    model.eval()
    before = holdout_accuracy(model, held_groups)
    print(f"held-out before: {before}", flush=True)

    if not args.train_embeddings:
        for name, p in model.named_parameters():
            if ".embeddings." in name or name.startswith("embeddings."):
                p.requires_grad = False
    trainable = [p for p in model.parameters() if p.requires_grad]
    print(f"{sum(p.numel() for p in trainable)} of {sum(p.numel() for p in model.parameters())} weights trained", flush=True)
    optimizer = torch.optim.AdamW(trainable, lr=args.lr, weight_decay=0.01)
    warmup = max(1, int(steps * args.warmup))
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min((s + 1) / warmup, max(0.0, (steps - s) / max(1, steps - warmup)))
    )
    model.train()
    started = time.time()
    running, done = 0.0, 0
    for step, batch in enumerate(epoch_batches):
        tokenize = getattr(model, "preprocess", None) or model.tokenize
        features = [tokenize([p["anchor"] for p in batch]), tokenize([p["positive"] for p in batch])]
        loss = loss_fn(features, labels=None)
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(trainable, 1.0)
        optimizer.step()
        scheduler.step()
        running += loss.item()
        done = step + 1
        if done % 20 == 0 or done == steps:
            elapsed = time.time() - started
            print(f"step {done}/{steps} loss {running / (20 if done % 20 == 0 else done % 20):.4f} {elapsed / 60:.1f} min "
                  f"(eta {elapsed / done * (steps - done) / 60:.1f} min)", flush=True)
            running = 0.0
        if args.max_steps and done >= args.max_steps:
            print(f"stopped after {done} of {steps} steps (--max-steps)", flush=True)
            break
        if args.time_budget and time.time() - started > args.time_budget * 60:
            print(f"time budget reached after {done} of {steps} steps", flush=True)
            break
    minutes = (time.time() - started) / 60

    model.eval()
    after = holdout_accuracy(model, held_groups)
    print(f"held-out after: {after}", flush=True)
    # Trained on shorter texts, read as long as the base reads them (256 tokens for MiniLM).
    model.max_seq_length = base_max_seq_length
    model.save(args.out)
    # Only the weights changed (the tokenizer and the pooling are the base's): the folder keeps the
    # base's configuration files, in the format devlens reads (sentence-transformers 6 writes
    # 1_Pooling/config.json and sentence_bert_config.json in a newer one, without max_seq_length).
    for name in ("config.json", "config_sentence_transformers.json", "modules.json", "sentence_bert_config.json",
                 "special_tokens_map.json", "tokenizer.json", "tokenizer_config.json", "vocab.txt",
                 os.path.join("1_Pooling", "config.json")):
        if os.path.exists(os.path.join(args.base, name)):
            shutil.copyfile(os.path.join(args.base, name), os.path.join(args.out, name))
    if not os.path.exists(os.path.join(args.base, "2_Normalize")):
        shutil.rmtree(os.path.join(args.out, "2_Normalize"), ignore_errors=True)
    info = {
        "base": os.path.basename(os.path.normpath(args.base)),
        "pairs_file_sha": __import__("hashlib").sha256(open(args.pairs, "rb").read()).hexdigest()[:16],
        "train_pairs": len(train_pairs),
        "train_pairs_by_kind": dict(sorted(__import__("collections").Counter(p["kind"] for p in train_pairs).items())),
        "held_out_sources": sorted(held),
        "steps_planned": steps,
        "steps_done": done,
        "train_minutes": round(minutes, 1),
        "holdout_before": before,
        "holdout_after": after,
        "settings": {k: v for k, v in vars(args).items() if k not in ("base", "pairs", "out")},
        "versions": {"torch": torch.__version__, "sentence_transformers": __import__("sentence_transformers").__version__},
    }
    with open(os.path.join(args.out, "training.json"), "w") as f:
        json.dump(info, f, indent=2)
    print(json.dumps(info, indent=2))


if __name__ == "__main__":
    sys.exit(main())
