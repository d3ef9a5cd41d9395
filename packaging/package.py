#!/usr/bin/env python3
"""Packages one built devlens binary for the registries MCP clients install servers from.

    package.py --bin STRIPPED_BINARY --out DIR --stage DIR

writes into --out the Python wheel (`pip install devlens-mcp`, `uvx --from devlens-mcp devlens`)
and into --stage two npm package folders, `devlens` (the launcher) and `@devlens/<platform>` (the
binary), for `npm pack`. scripts/package calls it; run that instead.

Why the wheel is written here and not by maturin: maturin's `bindings = "bin"` wheels are made by
maturin running `cargo build` itself — it has no way to package a binary that is already built.
devlens' release build takes a quarter of an hour on two cores and the tests package the debug
binary `cargo test` has just built, so the wheel is assembled directly, as PEP 427 (the wheel
format) and PEP 491 (`<name>-<version>.data/scripts/`) describe it: the binary is the wheel's
only script, which installers copy onto PATH as it is (a script that does not start with
`#!python` is not rewritten). The platform tag is what auditwheel would give it: manylinux_2_N
for the highest GLIBC_ symbol version the binary imports, musllinux_1_2 for a musl binary, and
the binary may link nothing outside the manylinux policy's libraries. Output is reproducible:
fixed timestamps and order, so the same binary gives byte-identical artefacts.

Kept here rather than `wheel pack` + auditwheel at packaging time, with a measured reason: both
agree with it (scripts/test-package runs them on every package), so they would add two PyPI
packages to a stdlib-only script and change nothing. `auditwheel show` names the same tag
(manylinux_2_34_x86_64 today), and `wheel unpack` + `wheel pack` gives back the same entries,
bytes and file name (only RECORD's file mode differs: wheel pack takes the umask's).
"""

import argparse
import base64
import hashlib
import json
import re
import shutil
import struct
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
NAME = "devlens"  # the command, and the npm package
# The PyPI distribution: "devlens" there is an unrelated project (a PR review assistant), so the
# wheel is devlens-mcp, which installs the command `devlens`.
PYPI_NAME = "devlens-mcp"
SUMMARY = "Browser, API, docs and knowledge tools for AI coding agents, over MCP, CLI and HTTP"
LICENSE = "MIT OR Apache-2.0"
REPOSITORY = "https://github.com/devlens/devlens"
NPM_SCOPE = "@devlens"
# 1980-01-01, the earliest time a zip entry can hold: reproducible wheels.
ZIP_TIME = (1980, 1, 1, 0, 0, 0)
# Shared libraries a manylinux wheel may rely on the system for (the PEP 600 policy's list, less
# those devlens never links); anything else would have to be bundled.
MANYLINUX_LIBS = {
    "libc.so.6",
    "libm.so.6",
    "libgcc_s.so.1",
    "libpthread.so.0",
    "libdl.so.2",
    "librt.so.1",
    "ld-linux-x86-64.so.2",
    "ld-linux-aarch64.so.1",
}
# ELF e_machine -> (wheel arch, Node's process.arch)
MACHINES = {0x3E: ("x86_64", "x64"), 0xB7: ("aarch64", "arm64")}


def die(message):
    print(f"error: {message}", file=sys.stderr)
    sys.exit(1)


class Binary:
    """What the packages need to know about a Linux ELF binary: its architecture, its C library
    and, for glibc, the newest symbol version it needs."""

    def __init__(self, path):
        self.path = path
        with open(path, "rb") as f:
            header = f.read(64)
            if header[:4] != b"\x7fELF" or header[4] != 2 or header[5] != 1:
                die(f"{path} is not a 64-bit little-endian ELF binary (only Linux builds are packaged)")
            (machine,) = struct.unpack_from("<H", header, 18)
            if machine not in MACHINES:
                die(f"{path}: unsupported ELF machine {machine:#x}")
            self.arch, self.node_arch = MACHINES[machine]
            self.interpreter = self._interpreter(f, header)
        dynamic = self._objdump("-p")
        needed = set(re.findall(r"^\s*NEEDED\s+(\S+)", dynamic, re.M))
        self.musl = "musl" in self.interpreter or not needed  # no NEEDED: a static (musl) build
        if self.musl:
            self.platform_tag = f"musllinux_1_2_{self.arch}"
            return
        outside = sorted(needed - MANYLINUX_LIBS)
        if outside:
            die(f"{path} links {', '.join(outside)}, which a manylinux wheel cannot assume")
        versions = re.findall(r"\bGLIBC_2\.(\d+)", self._objdump("-T"))
        self.glibc_minor = max(map(int, versions), default=17)
        self.platform_tag = f"manylinux_2_{self.glibc_minor}_{self.arch}"

    @staticmethod
    def _interpreter(f, header):
        """The PT_INTERP path ("" for a static binary)."""
        phoff, = struct.unpack_from("<Q", header, 32)
        phentsize, phnum = struct.unpack_from("<HH", header, 54)
        for i in range(phnum):
            f.seek(phoff + i * phentsize)
            p_type, _, p_offset, _, _, p_filesz = struct.unpack("<IIQQQQ", f.read(40))
            if p_type == 3:  # PT_INTERP
                f.seek(p_offset)
                return f.read(p_filesz).rstrip(b"\0").decode()
        return ""

    def _objdump(self, flag):
        try:
            return subprocess.run(
                ["objdump", flag, str(self.path)], check=True, capture_output=True, text=True
            ).stdout
        except (OSError, subprocess.CalledProcessError) as e:
            die(f"objdump {flag} {self.path} failed: {e}")

    @property
    def libc(self):
        return "musl" if self.musl else "glibc"

    @property
    def description(self):
        """Where it runs, for the packages' README: "Linux x86_64, glibc 2.34 or newer"."""
        libc = "musl" if self.musl else f"glibc 2.{self.glibc_minor} or newer"
        return f"Linux {self.arch}, {libc}"

    @property
    def npm_platform(self):
        """The platform package's name after the scope: linux-x64, linux-x64-musl, …"""
        return f"linux-{self.node_arch}" + ("-musl" if self.musl else "")


def workspace_version():
    with open(HERE.parent / "Cargo.toml", "rb") as f:
        return tomllib.load(f)["workspace"]["package"]["version"]


def record_hash(data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return f"sha256={digest.decode()}"


def write_wheel(binary, version, readme, out):
    tag = f"py3-none-{binary.platform_tag}"
    stem = f"{PYPI_NAME.replace('-', '_')}-{version}"  # the wheel's file name escapes "-"
    dist_info = f"{stem}.dist-info"
    metadata = "\n".join(
        [
            "Metadata-Version: 2.1",
            f"Name: {PYPI_NAME}",
            f"Version: {version}",
            f"Summary: {SUMMARY}",
            f"License: {LICENSE}",
            f"Project-URL: Repository, {REPOSITORY}",
            "Keywords: mcp,mcp-server,devtools,openapi,chrome",
            "Classifier: Environment :: Console",
            "Classifier: Operating System :: POSIX :: Linux",
            "Classifier: Programming Language :: Rust",
            "Description-Content-Type: text/markdown",
            "",
            readme,
        ]
    )
    wheel = "\n".join(
        [
            "Wheel-Version: 1.0",
            "Generator: devlens packaging/package.py",
            "Root-Is-Purelib: false",
            f"Tag: {tag}",
            "",
        ]
    )
    files = [
        (f"{stem}.data/scripts/{NAME}", binary.path.read_bytes(), 0o755),
        (f"{dist_info}/METADATA", metadata.encode(), 0o644),
        (f"{dist_info}/WHEEL", wheel.encode(), 0o644),
    ]
    record = "".join(f"{name},{record_hash(data)},{len(data)}\n" for name, data, _ in files)
    files.append((f"{dist_info}/RECORD", (record + f"{dist_info}/RECORD,,\n").encode(), 0o644))

    path = out / f"{stem}-{tag}.whl"
    tmp = path.with_suffix(".whl.part")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data, mode in files:
            info = zipfile.ZipInfo(name, ZIP_TIME)
            info.external_attr = (0o100000 | mode) << 16  # a regular file with its permissions
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data)
    tmp.replace(path)
    return path


def write_json(path, value):
    path.write_text(json.dumps(value, indent=2) + "\n")


def stage_npm(binary, version, readme, stage):
    """The esbuild/biome pattern: a launcher package with one optional dependency per platform,
    each platform package restricted by os/cpu/libc so npm installs only the matching one.
    Only the platform of this binary is built and listed; a release made from several binaries
    would list each."""
    common = {"version": version, "license": LICENSE, "repository": {"type": "git", "url": f"git+{REPOSITORY}.git"}}
    platform_name = f"{NPM_SCOPE}/{binary.npm_platform}"

    launcher = stage / "devlens"
    (launcher / "bin").mkdir(parents=True)
    shutil.copyfile(HERE / "npm" / "devlens.js", launcher / "bin" / "devlens.js")
    (launcher / "bin" / "devlens.js").chmod(0o755)
    (launcher / "README.md").write_text(readme)
    write_json(
        launcher / "package.json",
        {
            "name": NAME,
            **common,
            "description": SUMMARY,
            "keywords": ["mcp", "mcp-server", "devtools", "openapi", "chrome"],
            "bin": {NAME: "bin/devlens.js"},
            "engines": {"node": ">=18"},
            "optionalDependencies": {platform_name: version},
        },
    )

    platform = stage / binary.npm_platform
    (platform / "bin").mkdir(parents=True)
    shutil.copyfile(binary.path, platform / "bin" / NAME)
    (platform / "bin" / NAME).chmod(0o755)
    (platform / "README.md").write_text(
        f"# {platform_name}\n\nThe {binary.npm_platform} ({binary.libc}) binary of "
        f"[devlens]({REPOSITORY}). Install `devlens`, which picks this package; "
        "do not depend on it directly.\n"
    )
    write_json(
        platform / "package.json",
        {
            "name": platform_name,
            **common,
            "description": f"The {binary.npm_platform} binary of devlens",
            "os": ["linux"],
            "cpu": [binary.node_arch],
            "libc": [binary.libc],
            "preferUnplugged": True,
            "publishConfig": {"access": "public"},
        },
    )
    return launcher, platform


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin", type=Path, required=True, help="the (stripped) devlens binary")
    parser.add_argument("--out", type=Path, required=True, help="where the wheel goes")
    parser.add_argument("--stage", type=Path, required=True, help="where the npm folders go (emptied)")
    args = parser.parse_args()

    binary = Binary(args.bin)
    version = workspace_version()
    said = subprocess.run([str(args.bin), "--version"], capture_output=True, text=True).stdout.strip()
    if said != f"{NAME} {version}":
        die(f"{args.bin} --version says {said!r}, but Cargo.toml's version is {version}: rebuild it")
    readme = (HERE / "README.md").read_text().replace("{platform}", binary.description)
    args.out.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(args.stage, ignore_errors=True)
    args.stage.mkdir(parents=True)
    wheel = write_wheel(binary, version, readme, args.out)
    launcher, platform = stage_npm(binary, version, readme, args.stage)
    # What scripts/package reads: one "key=value" a line.
    print(f"version={version}\nwheel={wheel}\nnpm_launcher={launcher}\nnpm_platform={platform}\nplatform_tag={binary.platform_tag}")


if __name__ == "__main__":
    main()
