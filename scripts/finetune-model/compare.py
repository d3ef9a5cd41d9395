#!/usr/bin/env python3
"""Side-by-side table of eval.sh output folders, the base model's first, as Markdown.

    compare.py BASE_DIR OTHER_DIR...

API cells are top-1 / top-3 / MRR (hybrid), docs cells hit@5 / MRR. A model "beats" the base on a
set when its MRR is higher and neither top-1 nor top-3 is lower (API), or its MRR is higher and
hit@5 not lower (docs); "beats" lists, per set, the columns that do.
"""
import json
import os
import sys

API = [("Stripe", "stripe"), ("Google Compute", "gcp-compute"), ("Slack", "slack")]
DOCS = [("Python", "python"), ("Node.js", "nodejs")]


def load(d, name):
    path = os.path.join(d, name + ".json")
    try:
        return json.load(open(path)) if os.path.getsize(path) else None
    except (OSError, ValueError):
        return None


def api_cell(r):
    return f"{r['top1']:.2f} / {r['top3']:.2f} / {r['mrr']:.2f}" if r else "—"


def docs_cell(r):
    return f"{r['hit_at_k']:.2f} / {r['mrr']:.2f}" if r else "—"


def beats_api(b, t):
    return bool(b and t and t["mrr"] > b["mrr"] and t["top1"] >= b["top1"] and t["top3"] >= b["top3"])


def beats_docs(b, t):
    return bool(b and t and t["mrr"] > b["mrr"] and t["hit_at_k"] >= b["hit_at_k"])


def main():
    dirs = sys.argv[1:]
    if len(dirs) < 2:
        sys.exit(__doc__)
    names = [os.path.basename(os.path.normpath(d)) for d in dirs]
    print("| set | half | n | " + " | ".join(names) + " | beats the base |")
    print("| --- | --- | --- | " + " | ".join("---" for _ in names) + " | --- |")

    def row(label, half, key, cell, beats):
        rs = [load(d, key) for d in dirs]
        n = next((r["n"] for r in rs if r), "?")
        wins = [names[i] for i in range(1, len(dirs)) if beats(rs[0], rs[i])]
        print(f"| {label} | {half} | {n} | " + " | ".join(cell(r) for r in rs) + f" | {', '.join(wins) or '—'} |")

    for label, key in API:
        for half in ("dev", "test"):
            row(label, half, f"{key}.{half}", api_cell, beats_api)
    row("GitHub", "(tuned set)", "github", api_cell, beats_api)
    for label, key in DOCS:
        for half in ("dev", "test"):
            row(f"{label} docs", half, f"{key}.{half}", docs_cell, beats_docs)


if __name__ == "__main__":
    main()
