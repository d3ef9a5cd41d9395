#!/usr/bin/env python3
"""Checks that a devlens server answers MCP's `initialize` as devlens of a given version.

    mcp-initialize.py http URL --pid PID --version V    POST initialize to URL (Streamable HTTP),
                                                        retrying until the server at PID is up
    mcp-initialize.py stdio --version V [--log FILE] -- CMD...
                                                        run CMD (e.g. `devlens serve`), its stderr
                                                        into FILE, send initialize on its stdin,
                                                        read the answer, then close stdin: CMD
                                                        must exit 0

Prints what answered; exits 1 with the reason otherwise. scripts/test-package uses it.
"""

import argparse
import json
import os
import select
import subprocess
import sys
import time
import urllib.error
import urllib.request

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "devlens-test-package", "version": "0"},
    },
}


LOG = None  # the stdio server's stderr, shown when it fails


def fail(message):
    print(f"error: {message}", file=sys.stderr)
    if LOG:
        with open(LOG, errors="replace") as f:
            sys.stderr.write("".join(f.readlines()[-20:]))
    sys.exit(1)


def check_answer(message, version):
    """The initialize result, judged: devlens, the expected version."""
    info = (message.get("result") or {}).get("serverInfo") or {}
    if message.get("id") != 1 or info.get("name") != "devlens" or info.get("version") != version:
        fail(f"initialize was answered with {json.dumps(message)[:400]}")
    return f"{info['name']} {info['version']}, protocol {message['result'].get('protocolVersion')}"


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie has exited: only its parent (the shell) has not reaped it yet.
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return True


def over_http(url, pid, version, timeout):
    request = urllib.request.Request(
        url,
        data=json.dumps(INITIALIZE).encode(),
        headers={"Content-Type": "application/json", "Accept": "application/json, text/event-stream"},
    )
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                body = response.read().decode()
                kind = response.headers.get("Content-Type", "")
            break
        except (urllib.error.URLError, ConnectionError) as e:
            if isinstance(e, urllib.error.HTTPError):
                fail(f"POST initialize to {url}: HTTP {e.code} {e.read().decode()[:400]}")
            if not alive(pid):
                fail(f"the server (pid {pid}) exited before answering on {url}")
            if time.monotonic() > deadline:
                fail(f"nothing answered on {url} within {timeout}s")
            time.sleep(0.2)
    # Streamable HTTP answers with JSON or with an event stream whose data lines carry it.
    if kind.startswith("text/event-stream"):
        messages = [line[5:].strip() for line in body.splitlines() if line.startswith("data:")]
        body = next((m for m in messages if m.startswith("{")), "")
    try:
        return check_answer(json.loads(body), version)
    except json.JSONDecodeError:
        fail(f"initialize was answered with {body[:400]!r}")


def over_stdio(command, version, timeout, log):
    global LOG
    LOG = log
    stderr = open(log, "ab") if log else None
    child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr)
    try:
        child.stdin.write((json.dumps(INITIALIZE) + "\n").encode())
        child.stdin.flush()
    except BrokenPipeError:
        fail(f"{command[0]} exited ({child.wait()}) before reading initialize")
    deadline = time.monotonic() + timeout
    answer = None
    while answer is None:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([child.stdout], [], [], left)[0]:
            child.kill()
            fail(f"{command[0]} did not answer initialize on stdout within {timeout}s")
        line = child.stdout.readline()
        if not line:
            fail(f"{command[0]} closed stdout (exit {child.wait()}) without answering initialize")
        try:
            message = json.loads(line)
        except json.JSONDecodeError:
            fail(f"stdout must carry only JSON-RPC messages, but it said {line[:200]!r}")
        if message.get("id") == 1:  # notifications may come first
            answer = check_answer(message, version)
    child.stdin.close()  # end of input: the server must stop by itself
    try:
        code = child.wait(timeout=30)
    except subprocess.TimeoutExpired:
        child.kill()
        fail(f"{command[0]} did not exit within 30s of its stdin closing")
    if code != 0:
        fail(f"{command[0]} exited {code} after its stdin closed")
    return answer + "; exited 0 at end of input"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="transport", required=True)
    http = sub.add_parser("http")
    http.add_argument("url")
    http.add_argument("--pid", type=int, required=True)
    stdio = sub.add_parser("stdio")
    stdio.add_argument("--log", help="where the server's stderr goes")
    stdio.add_argument("command", nargs="+")
    for p in (http, stdio):
        p.add_argument("--version", required=True)
        p.add_argument("--timeout", type=float, default=60)
    args = parser.parse_args()
    if args.transport == "http":
        print(over_http(args.url, args.pid, args.version, args.timeout))
    else:
        print(over_stdio(args.command, args.version, args.timeout, args.log))


if __name__ == "__main__":
    main()
