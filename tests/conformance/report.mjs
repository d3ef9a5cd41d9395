// Summarises one run of the MCP conformance suite (scripts/conformance) from the
// checks.json files the suite writes with `-o <dir>`, judged the way the suite
// judges a baseline: a scenario fails when any of its checks is FAILURE or
// WARNING; a failing scenario listed in the baseline is expected; a passing one
// listed there is stale.
//
// usage: node report.mjs <results-dir> <baseline.yml> <suite.log>
// The suite's log tells which scenarios it started (one without results crashed).
// Exits 1 on an unexpected failure or a stale baseline entry.
import { readFileSync, readdirSync, existsSync } from "node:fs";
import { join } from "node:path";

const [resultsDir, baselineFile, suiteLog] = process.argv.slice(2);

// Baseline: the `server:` list, with each entry's trailing comment as its reason.
const baseline = new Map();
let inServer = false;
for (const line of readFileSync(baselineFile, "utf8").split("\n")) {
  if (/^[^\s#-]/.test(line)) inServer = /^server:\s*(#.*)?$/.test(line);
  const m = inServer && line.match(/^\s*-\s+([\w./-]+)\s*(?:#\s*(.*))?$/);
  if (m) baseline.set(m[1], m[2] ?? "");
}

// Results: <dir>/server-<scenario>-<timestamp>/checks.json
const results = new Map();
for (const entry of existsSync(resultsDir) ? readdirSync(resultsDir) : []) {
  const m = entry.match(/^server-(.+)-\d{4}-\d\d-\d\dT[\d-]+Z$/);
  if (!m) continue;
  const file = join(resultsDir, entry, "checks.json");
  results.set(m[1], existsSync(file) ? JSON.parse(readFileSync(file, "utf8")) : null);
}
const started = [...readFileSync(suiteLog, "utf8").matchAll(/Running client scenario '([^']+)' against server/g)].map((m) => m[1]);
const scenarios = [...new Set([...started, ...results.keys()])];
if (scenarios.length === 0) {
  console.log("conformance: the suite ran no scenario (see suite.log)");
  process.exit(1);
}

const width = Math.max(...scenarios.map((s) => s.length));
let passed = 0, failed = 0, xfailed = 0;
const lines = [];
for (const scenario of scenarios) {
  const checks = results.get(scenario);
  const bad = checks ? checks.filter((c) => c.status === "FAILURE" || c.status === "WARNING") : [];
  const fails = checks === undefined || checks === null || bad.length > 0;
  const listed = baseline.has(scenario);
  let label;
  if (fails && listed) { label = "xfail"; xfailed++; }
  else if (fails) { label = "FAIL"; failed++; }
  else if (listed) { label = "STALE"; failed++; }
  else { label = "ok"; passed++; }

  let note = "";
  if (label === "xfail") note = baseline.get(scenario);
  if (label === "STALE") note = "passes now: remove it from tests/conformance/baseline.yml";
  lines.push(`  ${label.padEnd(5)}  ${scenario.padEnd(width)}  ${note}`.trimEnd());
  if (label === "FAIL") {
    if (checks === undefined || checks === null) lines.push("         the scenario crashed before writing its checks (see suite.log)");
    for (const c of bad) {
      lines.push(`         ${c.status} ${c.id}: ${c.errorMessage ?? c.description}`);
      if (c.details) lines.push(`           details: ${JSON.stringify(c.details).slice(0, 600)}`);
    }
  }
}
console.log(lines.join("\n"));
if (xfailed > 0) console.log("  (xfail: fails, as tests/conformance/baseline.yml expects; counted as skipped)");
console.log(`conformance: ${passed} passed, ${failed} failed, ${xfailed} skipped`);
process.exit(failed > 0 ? 1 : 0);
