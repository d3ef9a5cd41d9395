#!/usr/bin/env python3
"""Side-by-side table of two eval.sh output folders (base, fine-tuned), as Markdown. "wins" means
better MRR with neither top-1 nor top-3 lower (API), or better MRR with hit@5 not lower (docs).

    compare.py BASE_DIR TUNED_DIR
"""
import json
import os
import sys

API = [("Stripe", "stripe"), ("Google Compute", "gcp-compute"), ("Slack", "slack")]
DOCS = [("Python", "python"), ("Node.js", "nodejs")]


def load(d, name):
    path = os.path.join(d, name + ".json")
    return json.load(open(path)) if os.path.exists(path) else None


def api_cell(r):
    return f"{r['top1']:.2f} / {r['top3']:.2f} / {r['mrr']:.2f}" if r else "—"


def docs_cell(r):
    return f"{r['hit_at_k']:.2f} / {r['mrr']:.2f}" if r else "—"


def beats_api(b, t):
    """Better MRR, and neither top-1 nor top-3 lower."""
    return bool(b and t and t["mrr"] > b["mrr"] and t["top1"] >= b["top1"] and t["top3"] >= b["top3"])


def main():
    base, tuned = sys.argv[1], sys.argv[2]
    rows = []
    print("| set | half | questions | base | fine-tuned | wins? |")
    print("| --- | --- | --- | --- | --- | --- |")
    for label, key in API:
        for half in ("dev", "test"):
            b, t = load(base, f"{key}.{half}"), load(tuned, f"{key}.{half}")
            win = beats_api(b, t)
            print(f"| {label} (top-1 / top-3 / MRR) | {half} | {(b or t or {}).get('n', '?')} | {api_cell(b)} | {api_cell(t)} | {'yes' if win else 'no'} |")
    b, t = load(base, "github"), load(tuned, "github")
    print(f"| GitHub (top-1 / top-3 / MRR) | tuned set | {(b or {}).get('n', '?')} | {api_cell(b)} | {api_cell(t)} | "
          f"{'yes' if beats_api(b, t) else 'no'} |")
    for label, key in DOCS:
        for half in ("dev", "test"):
            b, t = load(base, f"{key}.{half}"), load(tuned, f"{key}.{half}")
            win = b and t and t["hit_at_k"] >= b["hit_at_k"] and t["mrr"] > b["mrr"]
            print(f"| {label} docs (hit@5 / MRR) | {half} | {(b or t or {}).get('n', '?')} | {docs_cell(b)} | {docs_cell(t)} | {'yes' if win else 'no'} |")
    print()
    print("| query cost | base p50 / p95 ms | fine-tuned p50 / p95 ms |")
    print("| --- | --- | --- |")
    for label, key in [("GitHub `api bench --semantic` (200 queries)", "bench-github")]:
        b, t = load(base, key), load(tuned, key)
        cell = lambda r: f"{r['semantic']['queryMsP50']:.1f} / {r['semantic']['queryMsP95']:.1f}" if r else "—"
        print(f"| {label} | {cell(b)} | {cell(t)} |")
    for label, key in API + DOCS:
        b, t = load(base, f"{key}.test"), load(tuned, f"{key}.test")
        cell = lambda r: f"{r['p50_ms']:.1f} / {r['p95_ms']:.1f}" if r else "—"
        print(f"| {label} test half, eval latency | {cell(b)} | {cell(t)} |")


if __name__ == "__main__":
    main()
