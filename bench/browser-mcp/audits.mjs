#!/usr/bin/env node
// Side-by-side benchmark of the browser audit tools: devlens's audit_accessibility and
// audit_performance {measure: trace} against chrome-devtools-mcp's lighthouse_audit and
// performance_start_trace {reload, autoStop}, driven by the same neutral client as bench.mjs
// (the official MCP TypeScript SDK) over stdio, on one fixture page with known failures
// (fixture/audit.html: an image without alt, an input without a label, a low-contrast paragraph,
// a render-blocking stylesheet the fixture server answers late, a 100 ms busy loop on load).
//
// Per server: spawn, tools/list (the audit tools' schemas are saved), start the browser, then
// ROUNDS rounds of navigate → accessibility audit (chrome-devtools-mcp: lighthouse_audit in its
// default navigation mode, then in snapshot mode) → a trace of a reload (chrome-devtools-mcp: then
// performance_analyze_insight RenderBlocking, which its summary leaves to a second call). Each
// step's median wall time, the tokens (o200k_base) of its text content and of its
// structuredContent, and whether the answer names each known failure (rule and element).
//
// Run through scripts/bench-browser-mcp --audits, which installs the pinned packages and builds
// devlens.
//   node audits.mjs --deps DIR --devlens BIN [--chromium /usr/bin/chromium] [--rounds 5]
//                   [--servers devlens,chrome-devtools] [--out DIR]
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { MemorySampler, readStatus } from './memory.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
// How late the fixture server answers the stylesheet, so that it visibly blocks rendering.
const CSS_DELAY_MS = 300;
// A call may take long (Lighthouse, trace parsing); far longer than this is a failure.
const CALL_TIMEOUT_MS = 180_000;

// ---- options ------------------------------------------------------------------------------
function parseArgs(argv) {
  const opts = {
    deps: null,
    devlens: null,
    chromium: '/usr/bin/chromium',
    rounds: 5,
    servers: ['devlens', 'chrome-devtools'],
    out: null,
    sampleMs: 100,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = () => {
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
      return argv[++i];
    };
    switch (a) {
      case '--deps': opts.deps = resolve(next()); break;
      case '--devlens': opts.devlens = resolve(next()); break;
      case '--chromium': opts.chromium = next(); break;
      case '--rounds': opts.rounds = Number(next()); break;
      case '--servers': opts.servers = next().split(',').map((s) => s.trim()).filter(Boolean); break;
      case '--out': opts.out = resolve(next()); break;
      case '-h': case '--help':
        console.log('usage: node audits.mjs --deps DIR --devlens BIN [--chromium PATH] [--rounds N] [--servers devlens,chrome-devtools] [--out DIR]');
        process.exit(0);
        break;
      default: throw new Error(`unknown option ${a}`);
    }
  }
  if (!opts.deps) throw new Error('--deps DIR (where the pinned packages are installed) is required');
  if (opts.servers.includes('devlens') && !opts.devlens) throw new Error('--devlens BIN is required');
  if (!(opts.rounds >= 1)) throw new Error('--rounds must be at least 1');
  for (const s of opts.servers) {
    if (!SERVERS[s]) throw new Error(`unknown server ${s}; known: ${Object.keys(SERVERS).join(', ')}`);
  }
  return opts;
}

// The same Chromium flags and the same spawn commands as bench.mjs.
const CHROME_FLAGS = [
  '--no-sandbox', '--disable-gpu', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--no-first-run',
];

// ---- the servers and how each step maps onto their tools -----------------------------------
// A step's `calls` is the list of tool calls it takes (a trace that does not stop by itself
// takes a second call); its wall time is their sum, its answer their text joined.
const SERVERS = {
  devlens: {
    label: 'devlens',
    spawn: (o, tmp) => ({
      command: o.devlens,
      args: ['serve'],
      env: { DEVLENS_DATA_DIR: join(tmp, 'data'), DEVLENS_CONFIG: join(tmp, 'none.toml'), RUST_LOG: 'warn', CHROME_PATH: o.chromium },
    }),
    auditTools: ['audit_accessibility', 'audit_performance'],
    launch: () => ({ name: 'chrome', arguments: { action: 'launch' } }),
    navigate: (url) => ({ name: 'navigate', arguments: { url } }),
    steps: {
      a11y: () => [{ name: 'audit_accessibility', arguments: {} }],
      trace: () => [{ name: 'audit_performance', arguments: { measure: 'trace' } }],
    },
  },
  'chrome-devtools': {
    label: 'chrome-devtools-mcp',
    pkg: 'chrome-devtools-mcp',
    spawn: (o, tmp, deps) => ({
      command: process.execPath,
      args: [
        join(deps, 'node_modules/chrome-devtools-mcp/build/src/bin/chrome-devtools-mcp.js'),
        '--executablePath', o.chromium, '--headless', '--isolated',
        '--no-usage-statistics', '--no-performance-crux',
        ...CHROME_FLAGS.map((f) => `--chromeArg=${f}`),
      ],
      // Its Lighthouse reports go to temporary files: keep them in the throw-away directory.
      env: { CHROME_DEVTOOLS_MCP_NO_USAGE_STATISTICS: '1', TMPDIR: tmp },
    }),
    auditTools: ['lighthouse_audit', 'performance_start_trace', 'performance_stop_trace', 'performance_analyze_insight'],
    launch: () => ({ name: 'list_pages', arguments: {} }),
    afterLaunch: (text, state) => {
      const m = text.match(/^\s*(\d+):/m);
      if (!m) throw new Error(`no page id in list_pages:\n${text}`);
      state.pageId = Number(m[1]);
    },
    navigate: (url, st) => ({ name: 'navigate_page', arguments: { pageId: st.pageId, type: 'url', url } }),
    steps: {
      // Its default mode: "navigation" reloads the page and audits the load.
      a11y: (st) => [{ name: 'lighthouse_audit', arguments: { pageId: st.pageId } }],
      // "snapshot" audits the page as it is, as devlens's audit_accessibility does.
      a11ySnapshot: (st) => [{ name: 'lighthouse_audit', arguments: { pageId: st.pageId, mode: 'snapshot' } }],
      trace: (st) => [
        { name: 'performance_start_trace', arguments: { pageId: st.pageId, reload: true, autoStop: true } },
        // Only when the start call says the trace is still recording.
        { name: 'performance_stop_trace', arguments: { pageId: st.pageId }, unless: (prev) => !/is being recorded/i.test(prev) },
      ],
      // Its trace summary names insights only; which requests block rendering takes this call.
      traceInsight: (st) => [{ name: 'performance_analyze_insight', arguments: { pageId: st.pageId, insightSetId: st.insightSetId, insightName: 'RenderBlocking' } }],
    },
    after: {
      trace: (text, st) => {
        const m = text.match(/insight set id: (\S+)/);
        if (!m) throw new Error(`no insight set id in the trace summary:\n${text.slice(0, 2000)}`);
        st.insightSetId = m[1];
      },
    },
  },
};

const STEPS = ['navigate', 'a11y', 'a11ySnapshot', 'trace', 'traceInsight'];

// ---- what each answer should find -----------------------------------------------------------
// A rule counts as found when the answer names it (axe's rule id, which Lighthouse's audit ids
// reuse) and names the failing element (its selector or its HTML).
const CHECKS = {
  a11y: [
    { id: 'image-alt', rule: /image-alt/, element: /chart\.png|<img\b|\bimg\b/ },
    // `label` as a rule id, not Lighthouse's `label="…"` of a node nor the word in a title.
    { id: 'label', rule: /(^|[^\w-])label(?![\w=-])/m, element: /#search|id=\\?"search\\?"/ },
    { id: 'color-contrast', rule: /color-contrast/, element: /\.faint|class="faint"/ },
  ],
  trace: [
    { id: 'render-blocking audit.css', rule: /render[- ]?blocking/i, element: /audit\.css/ },
    // The long task's function: busyWork by name, or the load listener that calls it (audit.js).
    { id: 'long task → audit.js', rule: /long[- ]?task/i, element: /busyWork|audit\.js:\d+/ },
  ],
};
CHECKS.a11ySnapshot = CHECKS.a11y;
CHECKS.traceInsight = CHECKS.trace;
CHECKS.traceWithInsight = CHECKS.trace;

function findings(step, text) {
  const out = {};
  for (const c of CHECKS[step] || []) {
    out[c.id] = { rule: c.rule.test(text), element: c.element.test(text) };
  }
  return out;
}

// ---- the fixture page -----------------------------------------------------------------------
// A 1×1 grey PNG: the image the audit page shows without alt text.
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAAAAAA6fptVAAAACklEQVR4nGNoAAAAggCBd81ytgAAAABJRU5ErkJggg==', 'base64');

function startFixture() {
  const dir = join(HERE, 'fixture');
  const files = {
    '/': ['audit.html', 'text/html; charset=utf-8', 0],
    '/audit.css': ['audit.css', 'text/css', CSS_DELAY_MS],
    '/audit.js': ['audit.js', 'text/javascript', 0],
  };
  const server = createServer((req, res) => {
    const url = new URL(req.url, 'http://x');
    if (files[url.pathname]) {
      const [file, type, delay] = files[url.pathname];
      setTimeout(() => {
        res.writeHead(200, { 'content-type': type, 'cache-control': 'no-store' });
        res.end(readFileSync(join(dir, file)));
      }, delay);
    } else if (url.pathname === '/chart.png') {
      res.writeHead(200, { 'content-type': 'image/png', 'cache-control': 'no-store' });
      res.end(PNG);
    } else if (url.pathname === '/favicon.ico') {
      res.writeHead(204);
      res.end();
    } else {
      // robots.txt and the like (Lighthouse's SEO audits ask for it).
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('not found');
    }
  });
  return new Promise((ok) => server.listen(0, '127.0.0.1', () => ok(server)));
}

const SDK = {};

const ACTIVE = new Set();
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, async () => {
    console.error(`\n${sig}: closing ${ACTIVE.size} server(s)`);
    await Promise.allSettled([...ACTIVE].map((c) => c.close()));
    process.exit(130);
  });
}

// ---- measuring one call -----------------------------------------------------------------------
function outputText(result) {
  let text = '';
  for (const block of result.content || []) {
    if (block.type === 'text') text += (text ? '\n' : '') + block.text;
    else if (block.type === 'resource' && block.resource?.text) text += '\n' + block.resource.text;
  }
  return text;
}

// Plain requests, not Client.callTool(), as in bench.mjs: no client-side output-schema checks.
async function callOnce(client, req, countTokens) {
  const t0 = performance.now();
  const result = await client.request({ method: 'tools/call', params: { name: req.name, arguments: req.arguments } },
    SDK.CallToolResultSchema, { timeout: CALL_TIMEOUT_MS });
  const ms = performance.now() - t0;
  const text = outputText(result);
  const structured = result.structuredContent ? JSON.stringify(result.structuredContent) : '';
  if (result.isError) {
    const e = new Error(`${req.name} ${JSON.stringify(req.arguments)} failed: ${text.slice(0, 4000)}`);
    e.toolText = text;
    throw e;
  }
  return { ms, text, structured, tokens: countTokens(text), structuredTokens: structured ? countTokens(structured) : 0 };
}

// A step: its calls in order (a call with `unless(previousText)` true is skipped).
async function step(client, calls, countTokens) {
  const parts = [];
  for (const c of calls) {
    if (c.unless && parts.length && c.unless(parts.at(-1).text)) continue;
    parts.push({ name: c.name, ...(await callOnce(client, c, countTokens)) });
  }
  const text = parts.map((p) => p.text).join('\n');
  const structured = parts.map((p) => p.structured).filter(Boolean).join('\n');
  return {
    ms: parts.reduce((a, p) => a + p.ms, 0),
    calls: parts.map((p) => ({ name: p.name, ms: Math.round(p.ms * 10) / 10, tokens: p.tokens })),
    text,
    structured,
    tokens: parts.reduce((a, p) => a + p.tokens, 0),
    structuredTokens: parts.reduce((a, p) => a + p.structuredTokens, 0),
  };
}

const median = (xs) => {
  const v = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (!v.length) return NaN;
  const m = v.length >> 1;
  return v.length % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
};

const loadAverage = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

// ---- one server, start to finish ------------------------------------------------------------
async function benchServer(key, opts, sdk, countTokens, pageUrl, saveDir) {
  const def = SERVERS[key];
  const tmp = mkdtempSync(join(tmpdir(), `bench-audits-${key}-`));
  writeFileSync(join(tmp, 'none.toml'), '');
  const params = def.spawn(opts, tmp, opts.deps);
  const stderr = [];
  const transport = new sdk.StdioClientTransport({
    command: params.command,
    args: params.args,
    env: { ...sdk.getDefaultEnvironment(), ...params.env },
    cwd: tmp,
    stderr: 'pipe',
  });
  transport.stderr?.on('data', (d) => { stderr.push(String(d)); if (stderr.length > 200) stderr.shift(); });
  const client = new sdk.Client({ name: 'devlens-bench-audits', version: '1.0.0' });
  ACTIVE.add(client);
  const r = { server: def.label, loadAtStart: loadAverage(), steps: {}, errors: [], stepErrors: {} };
  let sampler = null;
  const save = (name, text) => { if (saveDir) writeFileSync(join(saveDir, `${key}.${name}`), text); };

  try {
    const t0 = performance.now();
    await client.connect(transport);
    const pid = transport.pid;
    const listed = await client.request({ method: 'tools/list', params: {} }, SDK.ListToolsResultSchema);
    r.startupMs = performance.now() - t0;
    sampler = new MemorySampler(pid, opts.sampleMs);
    await sampler.ready;
    const audit = listed.tools.filter((t) => def.auditTools.includes(t.name));
    r.auditTools = audit.map((t) => t.name);
    r.auditToolsTokens = countTokens(JSON.stringify(audit.map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema }))));
    save('audit-tools.json', JSON.stringify(audit, null, 2));

    const st = {};
    const l = await callOnce(client, def.launch(opts), countTokens);
    def.afterLaunch?.(l.text, st);
    r.launchMs = l.ms;
    const nav0 = await callOnce(client, def.navigate(pageUrl, st), countTokens);
    r.firstNavigateMs = nav0.ms;

    const samples = Object.fromEntries(STEPS.map((s) => [s, []]));
    for (let round = 0; round < opts.rounds; round++) {
      // Every round audits a freshly loaded page.
      const nav = await callOnce(client, def.navigate(pageUrl, st), countTokens);
      samples.navigate.push({ ...nav, found: {} });
      for (const s of STEPS.slice(1)) {
        if (!def.steps[s]) continue;
        let res;
        try {
          res = await step(client, def.steps[s](st), countTokens);
        } catch (e) {
          // A step that fails (e.g. Lighthouse cannot run here) is recorded with its exact
          // error; the other steps still run.
          const msg = String(e?.message || e);
          (r.stepErrors[s] ||= []).push(msg);
          console.error(`    ${def.label} ${s} round ${round + 1} failed: ${msg.slice(0, 600)}`);
          if (round === 0) save(`${s}.error.txt`, `${msg}\n\n${e?.stack || ''}`);
          continue;
        }
        def.after?.[s]?.(res.text, st);
        res.found = findings(s, res.text);
        res.foundInStructured = findings(s, res.structured);
        samples[s].push(res);
        if (round === 0) {
          save(`${s}.txt`, res.text);
          if (res.structured) save(`${s}.structured.json`, res.structured);
        }
        const f = Object.entries(res.found).map(([id, v]) => `${id} ${v.rule && v.element ? '✓' : v.rule ? '(rule only)' : '✗'}`).join(', ');
        console.error(`    round ${round + 1} ${s}: ${fmtMs(res.ms)}, ${res.tokens} tokens${f ? `; ${f}` : ''}`);
      }
    }
    // The peer's trace and its insight call, round by round: what it takes to name the
    // render-blocking stylesheet.
    if (samples.traceInsight.length && samples.traceInsight.length === samples.trace.length) {
      samples.traceWithInsight = samples.trace.map((t, i) => {
        const d = samples.traceInsight[i];
        const text = `${t.text}\n${d.text}`;
        return { ms: t.ms + d.ms, tokens: t.tokens + d.tokens, structuredTokens: t.structuredTokens + d.structuredTokens,
          calls: [...t.calls, ...d.calls], found: findings('trace', text), foundInStructured: {} };
      });
    }
    for (const [s, vs] of Object.entries(samples)) {
      if (!vs.length) continue;
      const ids = Object.keys(vs[0].found);
      r.steps[s] = {
        ms: median(vs.map((v) => v.ms)),
        tokens: median(vs.map((v) => v.tokens)),
        structuredTokens: median(vs.map((v) => v.structuredTokens)),
        n: vs.length,
        msPerRound: vs.map((v) => Math.round(v.ms * 10) / 10),
        tokensPerRound: vs.map((v) => v.tokens),
        callsFirstRound: vs[0].calls,
        // Found in every round: the rule and the element named in the text answer.
        found: Object.fromEntries(ids.map((id) => [id, {
          rule: vs.every((v) => v.found[id].rule),
          element: vs.every((v) => v.found[id].element),
          ruleInStructured: vs.every((v) => v.foundInStructured?.[id]?.rule),
          elementInStructured: vs.every((v) => v.foundInStructured?.[id]?.element),
        }])),
      };
    }
    const status = readStatus(pid);
    r.serverHwmKb = status?.hwm ?? NaN;
  } catch (e) {
    r.errors.push(String(e?.stack || e));
    r.stderr = stderr.join('').slice(-4000);
  } finally {
    const peaks = sampler ? await sampler.stop() : null;
    if (peaks) r.treePeakRssKb = peaks.treeRssKb;
    await client.close().catch(() => {});
    ACTIVE.delete(client);
    // Whatever the server left behind of its own tree; only processes seen in it are touched.
    if (peaks) {
      await new Promise((ok) => setTimeout(ok, 2000));
      for (const p of peaks.seen) {
        try {
          if (readStatus(p)) {
            process.kill(p, 'SIGKILL');
            r.leftovers = (r.leftovers || 0) + 1;
          }
        } catch { /* gone meanwhile */ }
      }
    }
    r.loadAtEnd = loadAverage();
    rmSync(tmp, { recursive: true, force: true, maxRetries: 3 });
  }
  return r;
}

// ---- the report -----------------------------------------------------------------------------
const fmtMs = (ms) => (!Number.isFinite(ms) ? '—' : ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : ms >= 10 ? `${ms.toFixed(0)} ms` : `${ms.toFixed(1)} ms`);
const fmtTok = (t) => (Number.isFinite(t) ? String(Math.round(t)) : '—');
const fmtMiB = (kb) => (Number.isFinite(kb) && kb > 0 ? `${(kb / 1024).toFixed(0)} MiB` : '—');
const ratio = (a, b) => (Number.isFinite(a) && Number.isFinite(b) && b > 0 ? `${(a / b).toFixed(2)}` : '—');
const fmtFound = (f) => {
  if (!f) return '—';
  return Object.entries(f).map(([id, v]) => `${id} ${v.rule && v.element ? '✓' : v.rule ? '(rule, no element)' : v.ruleInStructured ? '(structured only)' : '✗'}`).join('<br>');
};

// Rows: [label, devlens step, peer step]. devlens has one accessibility audit; it is compared
// with both of Lighthouse's modes.
const ROWS = [
  ['navigate (before each round)', 'navigate', 'navigate'],
  ['accessibility audit — peer: `lighthouse_audit` default (navigation: reloads, then audits)', 'a11y', 'a11y'],
  ['accessibility audit — peer: `lighthouse_audit {mode: snapshot}` (the page as it is)', 'a11y', 'a11ySnapshot'],
  ['trace of a reload — devlens `audit_performance {measure: trace}`, peer: `performance_start_trace {reload, autoStop}`', 'trace', 'trace'],
  ['trace of a reload — peer: the same + `performance_analyze_insight RenderBlocking` (names the stylesheet)', 'trace', 'traceWithInsight'],
];

function markdown(results, keys) {
  const dl = results.devlens;
  const peers = keys.filter((k) => k !== 'devlens').map((k) => results[k]).filter(Boolean);
  const cols = [dl, ...peers].filter(Boolean);
  const head = ['step', 'figure', ...cols.map((c) => c.server), ...(dl ? peers.map((p) => `devlens / ${p.server}`) : [])];
  const lines = [`| ${head.join(' | ')} |`, `| ${head.map(() => '---').join(' | ')} |`];
  const push = (label, what, vals, rats) => lines.push(`| ${label} | ${what} | ${[...vals, ...rats].join(' | ')} |`);
  for (const [label, dlStep, peerStep] of ROWS) {
    const stepOf = (c) => (c === dl ? c.steps[dlStep] : c.steps[peerStep]);
    const errOf = (c) => (c === dl ? c.stepErrors?.[dlStep] : c.stepErrors?.[peerStep]);
    if (!cols.some((c) => stepOf(c) || errOf(c))) continue;
    const cell = (c, f, fmt) => (stepOf(c) ? fmt(f(stepOf(c))) : errOf(c) ? 'failed' : '—');
    const rat = (f) => (dl ? peers.map((p) => (stepOf(dl) && stepOf(p) ? ratio(f(stepOf(dl)), f(stepOf(p))) : '—')) : []);
    push(label, 'median wall time', cols.map((c) => cell(c, (s) => s.ms, fmtMs)), rat((s) => s.ms));
    push('', 'answer tokens (text content)', cols.map((c) => cell(c, (s) => s.tokens, fmtTok)), rat((s) => s.tokens));
    if (dlStep !== 'navigate') {
      push('', '+ structuredContent tokens (not counted above)', cols.map((c) => cell(c, (s) => s.structuredTokens, fmtTok)), rat((s) => s.structuredTokens));
      push('', 'known failures named (rule and element, every round)', cols.map((c) => (stepOf(c) ? fmtFound(stepOf(c).found) : errOf(c) ? 'failed' : '—')), dl ? peers.map(() => '') : []);
    }
  }
  push('audit tools in tools/list', 'tokens (name + description + input schema)', cols.map((c) => `${fmtTok(c.auditToolsTokens)} (${c.auditTools.join(', ')})`), dl ? peers.map((p) => ratio(dl.auditToolsTokens, p.auditToolsTokens)) : []);
  push('peak memory', 'process tree with browser (RSS sum)', cols.map((c) => fmtMiB(c.treePeakRssKb)), dl ? peers.map((p) => ratio(dl.treePeakRssKb, p.treePeakRssKb)) : []);
  return lines.join('\n');
}

// ---- main -----------------------------------------------------------------------------------
async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const require = createRequire(join(opts.deps, 'package.json'));
  const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
  const { StdioClientTransport, getDefaultEnvironment } = require('@modelcontextprotocol/sdk/client/stdio.js');
  const { CallToolResultSchema, ListToolsResultSchema } = require('@modelcontextprotocol/sdk/types.js');
  Object.assign(SDK, { CallToolResultSchema, ListToolsResultSchema });
  const { encode } = require('gpt-tokenizer/encoding/o200k_base');
  const countTokens = (s) => (s ? encode(s).length : 0);
  const sdk = { Client, StdioClientTransport, getDefaultEnvironment };
  const versions = {};
  for (const p of ['@modelcontextprotocol/sdk', 'chrome-devtools-mcp', 'gpt-tokenizer']) {
    versions[p] = JSON.parse(readFileSync(join(opts.deps, 'node_modules', p, 'package.json'), 'utf8')).version;
  }

  const fixture = await startFixture();
  const pageUrl = `http://127.0.0.1:${fixture.address().port}/`;
  const outDir = opts.out;
  const saveDir = outDir ? join(outDir, 'audits') : null;
  if (saveDir) mkdirSync(saveDir, { recursive: true });
  const loads = [loadAverage()];
  const results = {};
  try {
    for (const key of opts.servers) {
      console.error(`==> audits: ${SERVERS[key].label} (load average ${loadAverage()})`);
      const r = await benchServer(key, opts, sdk, countTokens, pageUrl, saveDir);
      loads.push(r.loadAtStart, r.loadAtEnd);
      if (r.errors.length) console.error(`    failed: ${r.errors[0]}\n${r.stderr || ''}`);
      results[key] = r;
    }
  } finally {
    fixture.close();
  }
  loads.push(loadAverage());

  const ok = Object.fromEntries(Object.entries(results).filter(([, r]) => !r.errors.length));
  const table = markdown(ok, opts.servers.filter((k) => ok[k]));
  const loadNums = loads.map((l) => Number(l.split(' ')[0]));
  const header = `Node ${process.version}; ${Object.entries(versions).map(([k, v]) => `${k} ${v}`).join(', ')}; ` +
    `${opts.chromium}; fixture/audit.html; ${opts.rounds} rounds, medians; ` +
    `1-min load average ${Math.min(...loadNums).toFixed(2)}–${Math.max(...loadNums).toFixed(2)}`;
  const stepErrors = Object.entries(results).flatMap(([k, r]) => Object.entries(r.stepErrors || {})
    .map(([s, errs]) => `- ${SERVERS[k].label} ${s}: failed in ${errs.length} of ${opts.rounds} rounds: ${errs[0].split('\n')[0].slice(0, 800)}`));
  const md = [header, '', table, ...(stepErrors.length ? ['', 'Errors:', ...stepErrors] : [])].join('\n');
  if (outDir) {
    const summary = {
      date: new Date().toISOString(),
      node: process.version,
      chromium: opts.chromium,
      versions,
      rounds: opts.rounds,
      pageUrl,
      cssDelayMs: CSS_DELAY_MS,
      loadAverages: loads,
      results,
    };
    writeFileSync(join(outDir, 'audits.json'), JSON.stringify(summary, null, 2));
    writeFileSync(join(outDir, 'audits.md'), md + '\n');
  }
  console.log(md);
  const failed = opts.servers.filter((k) => !ok[k]);
  if (failed.length) {
    console.error(`error: these servers failed: ${failed.join(', ')}`);
    process.exitCode = 1;
  }
}

main().catch((e) => {
  console.error(e?.stack || String(e));
  process.exit(1);
});
