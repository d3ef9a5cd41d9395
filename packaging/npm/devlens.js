#!/usr/bin/env node
// The `devlens` command of the npm package: finds the devlens binary in the platform package npm
// installed beside this one (an optional dependency restricted by os/cpu/libc: @devlens/linux-x64,
// …) and runs it with this process's arguments, stdin, stdout and stderr, so `npx -y devlens serve`
// is devlens speaking MCP over stdio. Signals sent to this process go to devlens; its exit code (or
// the signal that ended it) becomes ours.
"use strict";

const { spawn } = require("node:child_process");
const { constants } = require("node:os");
const path = require("node:path");

const SCOPE = "@devlens";

function isMusl() {
  if (process.platform !== "linux") return false;
  // Node built against glibc reports the runtime's version; on musl the field is absent.
  const header = process.report && process.report.getReport().header;
  return !(header && header.glibcVersionRuntime);
}

function findBinary() {
  const musl = isMusl();
  const name = `${SCOPE}/${process.platform}-${process.arch}${musl ? "-musl" : ""}`;
  try {
    return path.join(path.dirname(require.resolve(`${name}/package.json`)), "bin", "devlens");
  } catch {
    const own = require("../package.json");
    const built = Object.keys(own.optionalDependencies || {}).map((p) => p.replace(`${SCOPE}/`, ""));
    const libc = process.platform === "linux" ? (musl ? " (musl)" : " (glibc)") : "";
    process.stderr.write(
      `devlens: no devlens binary for this platform, ${process.platform}-${process.arch}${libc}: ` +
        `the package ${name} is not installed.\n` +
        `devlens ${own.version} ships binaries for: ${built.join(", ") || "none"}.\n` +
        "If yours is listed, npm skipped the optional dependency (--omit=optional, --no-optional " +
        "or a lockfile made on another platform): install again without that.\n" +
        "Otherwise build devlens from source: cargo install --path crates/devlens " +
        "(https://github.com/devlens/devlens).\n",
    );
    process.exit(1);
  }
}

const binary = findBinary();
const child = spawn(binary, process.argv.slice(2), { stdio: "inherit" });

const forwarded = ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"];
const forward = (signal) => {
  if (child.exitCode === null && child.signalCode === null) child.kill(signal);
};
for (const signal of forwarded) process.on(signal, forward);

// npx (npm exec) runs this under `sh -c`, and a SIGTERM to npx reaches only that shell, which dies
// without passing it on: devlens would go on running with nobody to stop it. So under npm exec a
// new parent means whoever started us is gone, and devlens is stopped as if it had been signalled.
if (process.env.npm_command === "exec") {
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) forward("SIGTERM");
  }, 250).unref();
}

child.on("error", (err) => {
  process.stderr.write(`devlens: cannot run ${binary}: ${err.message}\n`);
  process.exit(1);
});
child.on("exit", (code, signal) => {
  if (signal) {
    // Die of the same signal, so our parent sees what devlens saw.
    for (const s of forwarded) process.removeListener(s, forward);
    process.kill(process.pid, signal);
    // Should the signal not end us (its default action ignores it), exit as a shell would report it.
    setTimeout(() => process.exit(128 + (constants.signals[signal] || 0)), 1000);
    return;
  }
  process.exit(code ?? 1);
});
