#!/usr/bin/env node
// Side-by-side benchmark of browser MCP servers: devlens, @playwright/mcp and chrome-devtools-mcp,
// driven by one neutral client (the official MCP TypeScript SDK) over stdio, against the same
// fixture page served here on 127.0.0.1, with the same steps in the same order.
//
// Per server: time from spawn to the first tools/list answer; the first navigate (which includes
// starting the browser: lazily for the peers, devlens's explicit `chrome {action: launch}` is
// added to it and also shown alone); then ROUNDS rounds of navigate → page view → click → fill →
// console → network → screenshot, each step's median latency; the tokens (o200k_base) of each
// tool's text output (images counted as bytes); the server process's peak memory (VmHWM) and the
// sampled peak of the whole process tree, browser included (RSS sum and PSS sum).
// Then TABLE_ROUNDS rounds of navigate → page view on a big page: a generated table of
// TABLE_ROWS rows (default 3,000; --table-rounds 0 leaves it out).
//
// Run through scripts/bench-browser-mcp, which installs the pinned packages and builds devlens.
//   node bench.mjs --deps DIR --devlens BIN [--chromium /usr/bin/chromium] [--rounds 10]
//                  [--runs 1] [--servers devlens,playwright,chrome-devtools] [--out DIR]
//                  [--table-rows 3000] [--table-rounds 5]
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { MemorySampler, readStatus } from './memory.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));

// ---- options ------------------------------------------------------------------------------
function parseArgs(argv) {
  const opts = {
    deps: null,
    devlens: null,
    chromium: '/usr/bin/chromium',
    rounds: 10,
    runs: 1,
    servers: ['devlens', 'playwright', 'chrome-devtools'],
    out: null,
    sampleMs: 100,
    tableRows: 3000,
    tableRounds: 5,
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
      case '--runs': opts.runs = Number(next()); break;
      case '--servers': opts.servers = next().split(',').map((s) => s.trim()).filter(Boolean); break;
      case '--out': opts.out = resolve(next()); break;
      case '--sample-ms': opts.sampleMs = Number(next()); break;
      case '--table-rows': opts.tableRows = Number(next()); break;
      case '--table-rounds': opts.tableRounds = Number(next()); break;
      case '-h': case '--help':
        console.log('usage: node bench.mjs --deps DIR --devlens BIN [--chromium PATH] [--rounds N] [--runs N] [--servers a,b] [--out DIR] [--table-rows N] [--table-rounds N]');
        process.exit(0);
        break;
      default: throw new Error(`unknown option ${a}`);
    }
  }
  if (!opts.deps) throw new Error('--deps DIR (where the pinned packages are installed) is required');
  if (opts.servers.includes('devlens') && !opts.devlens) throw new Error('--devlens BIN is required');
  if (!(opts.rounds >= 1) || !(opts.runs >= 1)) throw new Error('--rounds and --runs must be at least 1');
  if (!(opts.tableRows >= 1) || !(opts.tableRounds >= 0)) throw new Error('--table-rows must be at least 1, --table-rounds at least 0');
  for (const s of opts.servers) {
    if (!SERVERS[s]) throw new Error(`unknown server ${s}; known: ${Object.keys(SERVERS).join(', ')}`);
  }
  return opts;
}

// Chromium on these machines needs these flags (sandboxed container, no GPU, no network).
const CHROME_FLAGS = [
  '--no-sandbox', '--disable-gpu', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--no-first-run',
];

// ---- the servers and how each step maps onto their tools -----------------------------------
// `ref(snapshotText, role, name)` finds an element's reference in each server's page view: the
// first line that names both the role and the accessible name.
function lineRef(text, role, name, pattern) {
  for (const line of text.split('\n')) {
    if (!line.includes(`"${name}"`) || !new RegExp(`\\b${role}\\b`).test(line)) continue;
    const m = line.match(pattern);
    if (m) return m[1];
  }
  throw new Error(`no reference for ${role} "${name}" in the snapshot:\n${text.slice(0, 3000)}`);
}

const SERVERS = {
  devlens: {
    label: 'devlens',
    spawn: (o, tmp) => ({
      command: o.devlens,
      args: ['serve'],
      // A throw-away data directory and config, so nothing of the user's is loaded.
      // The browser comes from CHROME_PATH: a tool call may not name an executable.
      env: { DEVLENS_DATA_DIR: join(tmp, 'data'), DEVLENS_CONFIG: join(tmp, 'none.toml'), RUST_LOG: 'warn', CHROME_PATH: o.chromium },
    }),
    browserTools: ['chrome', 'chrome_list_connections', 'chrome_disconnect', 'target', 'navigate',
      'query_elements', 'snapshot', 'click_element', 'fill_element', 'type_text', 'press_key', 'hover',
      'select_option', 'scroll', 'wait_for', 'handle_dialog', 'get_console_logs', 'list_network_requests',
      'get_network_request', 'screenshot', 'evaluate', 'inject_css', 'emulate'],
    launch: () => ({ name: 'chrome', arguments: { action: 'launch' } }),
    navigate: (url) => ({ name: 'navigate', arguments: { url } }),
    query: () => ({ name: 'query_elements', arguments: { selector: '#order-form input' } }),
    snapshot: () => ({ name: 'snapshot', arguments: {} }),
    ref: (text, role, name) => lineRef(text, role, name, /\[?\b(e\d+)\b\]?/),
    click: (ref) => ({ name: 'click_element', arguments: { element: ref } }),
    fill: (ref, value) => ({ name: 'fill_element', arguments: { element: ref, value } }),
    console: () => ({ name: 'get_console_logs', arguments: {} }),
    network: () => ({ name: 'list_network_requests', arguments: {} }),
    screenshot: () => ({ name: 'screenshot', arguments: {} }),
  },
  playwright: {
    label: 'playwright-mcp',
    pkg: '@playwright/mcp',
    spawn: (o, tmp, deps) => {
      const config = {
        browser: {
          browserName: 'chromium',
          isolated: true,
          launchOptions: { executablePath: o.chromium, headless: true, chromiumSandbox: false, args: CHROME_FLAGS },
        },
      };
      const configPath = join(tmp, 'playwright-mcp.json');
      writeFileSync(configPath, JSON.stringify(config, null, 2));
      return {
        command: process.execPath,
        args: [
          join(deps, 'node_modules/@playwright/mcp/cli.js'),
          '--config', configPath, '--browser', 'chromium', '--executable-path', o.chromium,
          '--headless', '--isolated', '--no-sandbox', '--output-dir', join(tmp, 'out'),
        ],
        env: { PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: '1' },
      };
    },
    navigate: (url) => ({ name: 'browser_navigate', arguments: { url } }),
    snapshot: () => ({ name: 'browser_snapshot', arguments: {} }),
    ref: (text, role, name) => lineRef(text, role, name, /\[ref=([^\]\s]+)\]/),
    // The arguments its schema requires, at the values it documents as defaults.
    click: (ref) => ({ name: 'browser_click', arguments: { element: 'Mark all read button', target: ref } }),
    fill: (ref, value) => ({ name: 'browser_type', arguments: { element: 'Customer name textbox', target: ref, text: value } }),
    console: () => ({ name: 'browser_console_messages', arguments: { level: 'info' } }),
    network: () => ({ name: 'browser_network_requests', arguments: { static: false } }),
    screenshot: () => ({ name: 'browser_take_screenshot', arguments: { scale: 'css' } }),
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
      env: { CHROME_DEVTOOLS_MCP_NO_USAGE_STATISTICS: '1' },
    }),
    // Its page tools require a pageId (--page-id-routing is on by default): the agent lists the
    // pages first, which is also what starts its browser, so it counts as its launch.
    launch: () => ({ name: 'list_pages', arguments: {} }),
    afterLaunch: (text, state) => {
      const m = text.match(/^\s*(\d+):/m);
      if (!m) throw new Error(`no page id in list_pages:\n${text}`);
      state.pageId = Number(m[1]);
    },
    navigate: (url, st) => ({ name: 'navigate_page', arguments: { pageId: st.pageId, type: 'url', url } }),
    snapshot: (st) => ({ name: 'take_snapshot', arguments: { pageId: st.pageId } }),
    ref: (text, role, name) => lineRef(text, role, name, /uid=(\S+)/),
    click: (ref, st) => ({ name: 'click', arguments: { pageId: st.pageId, uid: ref } }),
    fill: (ref, value, st) => ({ name: 'fill', arguments: { pageId: st.pageId, uid: ref, value } }),
    console: (st) => ({ name: 'list_console_messages', arguments: { pageId: st.pageId } }),
    network: (st) => ({ name: 'list_network_requests', arguments: { pageId: st.pageId } }),
    screenshot: (st) => ({ name: 'take_screenshot', arguments: { pageId: st.pageId } }),
  },
};

// ---- the fixture app ------------------------------------------------------------------------
// The big page: a heading, a search box and a table of `rows` orders, each row with four text
// cells and a link (an interactive element per row, as in a data grid).
function tablePage(rows) {
  const names = ['Ada Lovelace', 'Grace Hopper', 'Alan Turing', 'Edsger Dijkstra', 'Barbara Liskov', 'Donald Knuth', 'Frances Allen'];
  const statuses = ['paid', 'shipped', 'pending', 'refunded'];
  const body = [];
  for (let i = 0; i < rows; i++) {
    const id = 100001 + i;
    body.push(`<tr><td>${id}</td><td>${names[i % names.length]}</td><td>${statuses[i % statuses.length]}</td>` +
      `<td>${((i * 37) % 1000) + 0.99}</td><td><a href="/orders/${id}">Order ${id}</a></td></tr>`);
  }
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Orders (${rows})</title></head><body>
<main><h1>Orders</h1><label>Filter <input type="search" name="q"></label>
<table><caption>All orders</caption><thead><tr><th>Order</th><th>Customer</th><th>Status</th><th>Total</th><th>Details</th></tr></thead>
<tbody>
${body.join('\n')}
</tbody></table></main></body></html>`;
}

function startFixture(tableRows) {
  const table = tablePage(tableRows);
  const dir = join(HERE, 'fixture');
  const files = {
    '/': ['index.html', 'text/html; charset=utf-8'],
    '/app.js': ['app.js', 'text/javascript'],
    '/app.css': ['app.css', 'text/css'],
  };
  const orders = Array.from({ length: 30 }, (_, i) => ({ id: 1001 + i, total: i * 3 }));
  const server = createServer((req, res) => {
    const url = new URL(req.url, 'http://x');
    if (files[url.pathname]) {
      const [file, type] = files[url.pathname];
      res.writeHead(200, { 'content-type': type, 'cache-control': 'no-store' });
      res.end(readFileSync(join(dir, file)));
    } else if (url.pathname === '/table') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
      res.end(table);
    } else if (url.pathname === '/api/orders') {
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
      res.end(JSON.stringify(orders));
    } else if (url.pathname === '/api/recommendations') {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end('{"error":"recommendation service unavailable"}');
    } else if (url.pathname === '/favicon.ico') {
      res.writeHead(204);
      res.end();
    } else {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('not found');
    }
  });
  return new Promise((ok) => server.listen(0, '127.0.0.1', () => ok(server)));
}

const SDK = {};

// Interrupted (Ctrl-C, kill): close the servers still running, so each closes its browser.
const ACTIVE = new Set();
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, async () => {
    console.error(`\n${sig}: closing ${ACTIVE.size} server(s)`);
    await Promise.allSettled([...ACTIVE].map((c) => c.close()));
    process.exit(130);
  });
}

// ---- measuring one call -----------------------------------------------------------------------
function outputSize(result, countTokens) {
  let text = '';
  let imageBytes = 0;
  let images = 0;
  let imageSize = '';
  for (const block of result.content || []) {
    if (block.type === 'text') text += (text ? '\n' : '') + block.text;
    else if (block.type === 'image') {
      images++;
      const bytes = Buffer.from(block.data, 'base64');
      imageBytes += bytes.length;
      // Width × height from the PNG header (IHDR), or the JPEG/WebP type when not a PNG.
      imageSize = bytes.subarray(1, 4).toString() === 'PNG'
        ? `${bytes.readUInt32BE(16)}x${bytes.readUInt32BE(20)}`
        : block.mimeType;
    }
    else if (block.type === 'resource' && block.resource?.text) text += '\n' + block.resource.text;
  }
  const structured = result.structuredContent ? JSON.stringify(result.structuredContent) : '';
  return {
    text,
    tokens: countTokens(text),
    structuredTokens: structured ? countTokens(structured) : 0,
    images,
    imageBytes,
    imageSize,
    isError: !!result.isError,
  };
}

// Plain requests, not Client.listTools()/callTool(): those compile and check the servers' output
// schemas on the client, a cost that would land on the one server that publishes them (devlens)
// although it is the client's.
async function call(client, req, countTokens) {
  const t0 = performance.now();
  const result = await client.request({ method: 'tools/call', params: req }, SDK.CallToolResultSchema, { timeout: 120_000 });
  const ms = performance.now() - t0;
  const size = outputSize(result, countTokens);
  if (size.isError) throw new Error(`${req.name} ${JSON.stringify(req.arguments)} failed: ${size.text.slice(0, 2000)}`);
  return { ms, ...size };
}

const median = (xs) => {
  const v = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (!v.length) return NaN;
  const m = v.length >> 1;
  return v.length % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
};

// ---- one server, start to finish ------------------------------------------------------------
const STEPS = ['navigate', 'query', 'snapshot', 'click', 'fill', 'console', 'network', 'screenshot'];
// On the big table page, after the rounds above.
const TABLE_STEPS = ['tableNavigate', 'tableSnapshot'];
const ALL_STEPS = [...STEPS, ...TABLE_STEPS];

async function benchServer(key, opts, sdk, countTokens, pageUrl, saveDir) {
  const def = SERVERS[key];
  const tmp = mkdtempSync(join(tmpdir(), `bench-${key}-`));
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
  const client = new sdk.Client({ name: 'devlens-bench', version: '1.0.0' });
  ACTIVE.add(client);
  const r = { server: def.label, steps: {}, first: {}, errors: [] };
  let sampler = null;
  const save = (name, text) => { if (saveDir) writeFileSync(join(saveDir, `${key}.${name}.txt`), text); };

  const t0 = performance.now();
  try {
    await client.connect(transport);
    const pid = transport.pid;
    const listed = await client.request({ method: 'tools/list', params: {} }, SDK.ListToolsResultSchema);
    r.startupMs = performance.now() - t0;
    sampler = new MemorySampler(pid, opts.sampleMs);
    await sampler.ready;
    r.pid = pid;
    r.toolCount = listed.tools.length;
    const toolsText = JSON.stringify(listed.tools.map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema })));
    r.toolsTokens = countTokens(toolsText);
    // devlens also serves its API, docs and knowledge-base tools; its browser tools alone are
    // what compares with the peers.
    const browserTools = def.browserTools ? listed.tools.filter((t) => def.browserTools.includes(t.name)) : listed.tools;
    r.browserToolCount = browserTools.length;
    r.browserToolsTokens = countTokens(JSON.stringify(browserTools.map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema }))));
    save('tools-list', JSON.stringify(listed.tools, null, 2));

    // First navigate: the browser starts here (devlens: explicit launch, counted in).
    const st = {};
    if (def.launch) {
      const l = await call(client, def.launch(opts), countTokens);
      r.first.launch = l;
      def.afterLaunch?.(l.text, st);
      save('launch', l.text);
    }
    const nav0 = await call(client, def.navigate(pageUrl, st), countTokens);
    r.first.navigate = nav0;
    r.first.navigateWithLaunchMs = nav0.ms + (r.first.launch?.ms ?? 0);
    save('first-navigate', nav0.text);

    const samples = Object.fromEntries(ALL_STEPS.map((s) => [s, []]));
    for (let round = 0; round < opts.rounds; round++) {
      const one = {};
      one.navigate = await call(client, def.navigate(pageUrl, st), countTokens);
      if (def.query) one.query = await call(client, def.query(st), countTokens);
      one.snapshot = await call(client, def.snapshot(st), countTokens);
      const clickRef = def.ref(one.snapshot.text, 'button', 'Mark all read');
      const fillRef = def.ref(one.snapshot.text, 'textbox', 'Customer name');
      one.click = await call(client, def.click(clickRef, st), countTokens);
      one.fill = await call(client, def.fill(fillRef, 'Ada Lovelace', st), countTokens);
      one.console = await call(client, def.console(st), countTokens);
      one.network = await call(client, def.network(st), countTokens);
      one.screenshot = await call(client, def.screenshot(st), countTokens);
      for (const [s, v] of Object.entries(one)) samples[s].push(v);
      if (round === 0) for (const [s, v] of Object.entries(one)) save(s, v.text);
    }
    for (let round = 0; round < opts.tableRounds; round++) {
      const nav = await call(client, def.navigate(opts.tableUrl, st), countTokens);
      const snap = await call(client, def.snapshot(st), countTokens);
      samples.tableNavigate.push(nav);
      samples.tableSnapshot.push(snap);
      if (round === 0) { save('table-navigate', nav.text); save('table-snapshot', snap.text); }
    }
    for (const [s, vs] of Object.entries(samples)) {
      if (!vs.length) continue;
      r.steps[s] = {
        ms: median(vs.map((v) => v.ms)),
        tokens: median(vs.map((v) => v.tokens)),
        structuredTokens: median(vs.map((v) => v.structuredTokens)),
        imageBytes: median(vs.map((v) => v.imageBytes)),
        imageSize: vs[0].imageSize,
        n: vs.length,
        msPerRound: vs.map((v) => Math.round(v.ms * 10) / 10),
        tokensPerRound: vs.map((v) => v.tokens),
      };
    }
    const status = readStatus(pid);
    r.serverHwmKb = status?.hwm ?? NaN;
    r.serverRssKb = status?.rss ?? NaN;
  } catch (e) {
    r.errors.push(String(e?.stack || e));
    r.stderr = stderr.join('').slice(-4000);
  } finally {
    const peaks = sampler ? await sampler.stop() : null;
    if (peaks) {
      r.treePeakRssKb = peaks.treeRssKb;
      r.treePeakPssKb = peaks.treePssKb;
      r.treeProcs = peaks.procs;
    }
    await client.close().catch(() => {});
    ACTIVE.delete(client);
    // Whatever the server left behind of its own tree (it should close its browser itself).
    // Only processes seen in this server's tree are touched.
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
    rmSync(tmp, { recursive: true, force: true, maxRetries: 3 });
  }
  return r;
}

// ---- the report -----------------------------------------------------------------------------
const fmtMs = (ms) => (!Number.isFinite(ms) ? '—' : ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : ms >= 10 ? `${ms.toFixed(0)} ms` : `${ms.toFixed(1)} ms`);
const fmtMiB = (kb) => (Number.isFinite(kb) && kb > 0 ? `${(kb / 1024).toFixed(0)} MiB` : '—');
const fmtTok = (t) => (Number.isFinite(t) ? String(Math.round(t)) : '—');
const fmtKB = (b) => (Number.isFinite(b) && b > 0 ? `${(b / 1024).toFixed(0)} KB` : '—');
const ratio = (a, b) => (Number.isFinite(a) && Number.isFinite(b) && b > 0 ? `${(a / b).toFixed(2)}` : '—');

// Combine several runs: each figure is the median over runs of that run's figure.
function combine(runs, key) {
  const rs = runs.map((run) => run.find((x) => x.key === key)?.result).filter((x) => x && !x.errors.length);
  if (!rs.length) return null;
  const m = (f) => median(rs.map(f));
  const out = {
    server: rs[0].server,
    runs: rs.length,
    toolCount: rs[0].toolCount,
    startupMs: m((x) => x.startupMs),
    toolsTokens: m((x) => x.toolsTokens),
    browserToolCount: rs[0].browserToolCount,
    browserToolsTokens: m((x) => x.browserToolsTokens),
    launchMs: m((x) => x.first.launch?.ms ?? NaN),
    firstNavigateMs: m((x) => x.first.navigateWithLaunchMs),
    serverHwmKb: m((x) => x.serverHwmKb),
    treePeakRssKb: m((x) => x.treePeakRssKb),
    treePeakPssKb: m((x) => x.treePeakPssKb),
    steps: {},
  };
  for (const s of ALL_STEPS) {
    if (!rs[0].steps[s]) continue;
    out.steps[s] = {
      ms: m((x) => x.steps[s].ms),
      tokens: m((x) => x.steps[s].tokens),
      structuredTokens: m((x) => x.steps[s].structuredTokens),
      imageBytes: m((x) => x.steps[s].imageBytes),
      imageSize: rs[0].steps[s].imageSize,
    };
  }
  return out;
}

const STEP_LABEL = {
  navigate: 'navigate',
  query: 'query_elements',
  snapshot: 'page snapshot',
  click: 'click',
  fill: 'fill (type into an input)',
  console: 'console messages',
  network: 'network requests',
  screenshot: 'screenshot',
  tableNavigate: 'big table page: navigate',
  tableSnapshot: 'big table page: page snapshot',
};

function markdown(results, keys) {
  const cols = keys.map((k) => results[k]).filter(Boolean);
  const dl = results.devlens;
  const peers = cols.filter((c) => c !== dl);
  const head = ['', ...cols.map((c) => c.server), ...(dl ? peers.map((p) => `devlens / ${p.server}`) : [])];
  const lines = [`| ${head.join(' | ')} |`, `| ${head.map(() => '---').join(' | ')} |`];
  const row = (label, get, fmt) => {
    const vals = cols.map(get);
    const rat = dl ? peers.map((p) => ratio(get(dl), get(p))) : [];
    lines.push(`| ${label} | ${vals.map(fmt).join(' | ')} | ${rat.join(' | ')} |`.replace(/ \|  \|$/, ' |'));
  };
  row('spawn → first tools/list', (c) => c.startupMs, fmtMs);
  row('tools/list: browser tools (count)', (c) => c.browserToolCount, fmtTok);
  row('tools/list: browser tools, tokens (name + description + input schema)', (c) => c.browserToolsTokens, fmtTok);
  row('first navigate, browser start included', (c) => c.firstNavigateMs, fmtMs);
  row('… of which a separate start call (devlens `chrome launch`, chrome-devtools `list_pages`)', (c) => c.launchMs, fmtMs);
  for (const s of ALL_STEPS) {
    // query_elements has no counterpart: compare it with the peers' snapshot, what they would use.
    const get = (c) => (c.steps[s] ?? (s === 'query' ? c.steps.snapshot : undefined))?.ms;
    if (!cols.some((c) => c.steps[s])) continue;
    row(`${STEP_LABEL[s]}${s === 'query' ? ' (peers: their snapshot)' : ''}, median`, get, fmtMs);
  }
  for (const s of ALL_STEPS) {
    const get = (c) => (c.steps[s] ?? (s === 'query' ? c.steps.snapshot : undefined))?.tokens;
    if (!cols.some((c) => c.steps[s])) continue;
    row(`${STEP_LABEL[s]}${s === 'query' ? ' (peers: their snapshot)' : ''}, tokens`, get, fmtTok);
  }
  lines.push(`| screenshot, image size | ${cols.map((c) => c.steps.screenshot?.imageSize || '—').join(' | ')} |${dl ? peers.map(() => ' |').join('') : ''}`);
  row('screenshot, image bytes', (c) => c.steps.screenshot?.imageBytes, fmtKB);
  // A round as the peers can do it: every step but query_elements, which only devlens has.
  const ROUND = STEPS.filter((s) => s !== 'query');
  row('a whole round without query_elements, tokens', (c) => ROUND.reduce((a, s) => a + (c.steps[s]?.tokens ?? 0), 0), fmtTok);
  row('… and its structuredContent, tokens (not counted above)', (c) => ROUND.reduce((a, s) => a + (c.steps[s]?.structuredTokens ?? 0), 0), fmtTok);
  row('peak memory, server process (VmHWM)', (c) => c.serverHwmKb, fmtMiB);
  row('peak memory, process tree with browser (RSS sum)', (c) => c.treePeakRssKb, fmtMiB);
  row('peak memory, process tree with browser (PSS sum)', (c) => c.treePeakPssKb, fmtMiB);
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
  for (const p of ['@modelcontextprotocol/sdk', '@playwright/mcp', 'chrome-devtools-mcp', 'gpt-tokenizer']) {
    versions[p] = JSON.parse(readFileSync(join(opts.deps, 'node_modules', p, 'package.json'), 'utf8')).version;
  }

  const fixture = await startFixture(opts.tableRows);
  const pageUrl = `http://127.0.0.1:${fixture.address().port}/`;
  opts.tableUrl = `${pageUrl}table`;
  const outDir = opts.out;
  if (outDir) mkdirSync(outDir, { recursive: true });
  const loads = [];
  const runs = [];
  try {
    for (let run = 0; run < opts.runs; run++) {
      // Rotate the order each run so no server always goes first (or last) on a busy machine.
      const order = opts.servers.map((_, i) => opts.servers[(i + run) % opts.servers.length]);
      const thisRun = [];
      for (const key of order) {
        const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
        loads.push(load);
        console.error(`==> run ${run + 1}/${opts.runs}: ${SERVERS[key].label} (load average ${load})`);
        const saveDir = outDir ? join(outDir, `run${run + 1}`) : null;
        if (saveDir) mkdirSync(saveDir, { recursive: true });
        const result = await benchServer(key, opts, sdk, countTokens, pageUrl, saveDir);
        if (result.errors.length) console.error(`    failed: ${result.errors[0]}\n${result.stderr || ''}`);
        else console.error(`    tools/list ${fmtMs(result.startupMs)}, first navigate ${fmtMs(result.first.navigateWithLaunchMs)}, navigate ${fmtMs(result.steps.navigate.ms)}, snapshot ${fmtMs(result.steps.snapshot.ms)} / ${fmtTok(result.steps.snapshot.tokens)} tokens` +
          (result.steps.tableSnapshot ? `, big table snapshot ${fmtMs(result.steps.tableSnapshot.ms)} / ${fmtTok(result.steps.tableSnapshot.tokens)} tokens` : ''));
        thisRun.push({ key, result });
      }
      runs.push(thisRun);
    }
  } finally {
    fixture.close();
  }
  const loadEnd = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  loads.push(loadEnd);

  const combined = {};
  for (const key of opts.servers) combined[key] = combine(runs, key);
  const failed = opts.servers.filter((k) => !combined[k]);
  const table = markdown(combined, opts.servers);
  const summary = {
    date: new Date().toISOString(),
    node: process.version,
    chromium: opts.chromium,
    versions,
    rounds: opts.rounds,
    tableRows: opts.tableRows,
    tableRounds: opts.tableRounds,
    runs: opts.runs,
    loadAverages: loads,
    combined,
    runsRaw: runs,
  };
  if (outDir) {
    writeFileSync(join(outDir, 'results.json'), JSON.stringify(summary, null, 2));
    writeFileSync(join(outDir, 'table.md'), table + '\n');
  }
  const loadNums = loads.map((l) => Number(l.split(' ')[0]));
  console.log(`Node ${process.version}; ${Object.entries(versions).map(([k, v]) => `${k} ${v}`).join(', ')}; ` +
    `${opts.rounds} rounds (big table page: ${opts.tableRounds} rounds, ${opts.tableRows} rows), median of ${opts.runs} run(s); 1-min load average ${Math.min(...loadNums).toFixed(2)}–${Math.max(...loadNums).toFixed(2)}`);
  console.log();
  console.log(table);
  if (failed.length) {
    console.error(`error: these servers failed in every run: ${failed.join(', ')}`);
    process.exitCode = 1;
  }
}

main().catch((e) => {
  console.error(e?.stack || String(e));
  process.exit(1);
});
