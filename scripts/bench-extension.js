// The measuring half of scripts/bench-extension (which see): loads the extension folder into
// headless Chromium and times, inside an extension page, what the extension's engine does.
//
//   node scripts/bench-extension.js CHROMIUM INSTALLED_JSON RUNS PROFILE_DIR
const { chromium } = require('playwright-core');

const [chrome, installedPath, runsText, profile] = process.argv.slice(2);
const installed = JSON.parse(require('fs').readFileSync(installedPath, 'utf8'));
const runs = Number(runsText) || 15;

(async () => {
  const dir = installed.dir;
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: chrome,
    headless: false,
    args: [
      '--headless=new', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run',
      `--load-extension=${dir}`, `--disable-extensions-except=${dir}`,
    ],
  });
  const worker = context.serviceWorkers()[0] || (await context.waitForEvent('serviceworker'));
  const id = new URL(worker.url()).host;
  const page = await context.newPage();
  page.on('pageerror', (e) => console.error('page error:', e.message));
  await page.goto(`chrome-extension://${id}/options.html`);
  const report = await page.evaluate(async (runs) => {
    const median = (xs) => {
      const s = [...xs].sort((a, b) => a - b);
      return s[Math.floor(s.length / 2)];
    };
    const time = async (f) => {
      const t = performance.now();
      await f();
      return performance.now() - t;
    };
    const { Embedder } = await import('./embedder.js');
    const { LocalKb } = await import('./localkb.js');
    const { engine } = await import('./engine.js');
    const out = {};

    let embedder;
    out.modelLoadMs = await time(async () => {
      embedder = await Embedder.load(chrome.runtime.getURL('/'));
    });
    out.threads = embedder.threads;

    // A 2,000-character write-up, as the popup saves it (different text each run: no cache).
    const paragraph = (i) =>
      `Step ${i}: the resize handler runs expensive layout work on every event, so the page stutters while the window edge is dragged. ` +
      `Schedule the measuring with requestAnimationFrame, read every size first and write styles after, and prefer a ResizeObserver when one element matters. `;
    const solution = (i) => {
      let text = '';
      for (let p = 0; text.length < 2000; p++) text += paragraph(i * 10 + p) + (p % 2 ? '\n\n' : '');
      return { title: `Smooth resizing without jank ${i}`, text: text.slice(0, 2000), tags: ['performance'] };
    };
    const kb = new LocalKb(null);
    kb.embedder = embedder;
    await kb.embedSolution(solution(0)); // warm-up
    const embedTimes = [];
    for (let i = 1; i <= runs; i++) embedTimes.push(await time(() => kb.embedSolution(solution(i))));
    out.embed2000Ms = median(embedTimes);
    out.chunks2000 = (await kb.embedSolution(solution(0))).length;

    // The whole save through the engine (messages, embedding, IndexedDB), as the popup does it.
    await engine('status');
    const saveTimes = [];
    const saved = [];
    for (let i = 0; i <= runs; i++) {
      let answer;
      const ms = await time(async () => {
        answer = await engine('save', solution(100 + i));
      });
      if (i > 0) saveTimes.push(ms);
      saved.push(answer.solution.id);
    }
    out.saveThroughEngineMs = median(saveTimes);
    for (const savedId of saved) await engine('remove', { id: savedId });

    // 1,000 solutions in a knowledge base of its own (its vectors random: search costs the same).
    indexedDB.deleteDatabase('devlens-bench');
    const bench = await LocalKb.open('devlens-bench');
    bench.embedder = embedder;
    bench.vectorIndex = new Map();
    const words = 'layout render effect state hook router fetch cache query mutation css grid flex animation worker stream token auth cookie cors header'.split(' ');
    const records = [];
    const vectors = {};
    for (let i = 0; i < 1000; i++) {
      const text = Array.from({ length: 60 + (i % 200) }, (_, k) => words[(i * 7 + k * 13) % words.length]).join(' ');
      const s = { id: `b${i}`, title: `Solution ${i} about ${words[i % words.length]}`, url: null, text, summary: null, tags: [words[(i * 3) % words.length]], createdAt: '2026-11-29T00:00:00Z', updatedAt: '2026-11-29T00:00:00Z', sync: { base: null, dirty: true } };
      records.push(s);
      vectors[s.id] = Array.from({ length: 1 + (i % 3) }, () => {
        const v = new Float32Array(384).map(() => Math.random() - 0.5);
        const norm = Math.hypot(...v);
        return { byteStart: 0, byteEnd: 10, vector: v.map((x) => x / norm) };
      });
    }
    await bench.write(records, vectors, embedder.info.id);
    const queries = ['why does the page stutter while resizing', 'share state between components', 'retry a failed fetch', 'cookie not sent cross origin', 'animate a grid layout'];
    await bench.search(queries[0]);
    const semantic = [];
    const keyword = [];
    for (let i = 0; i < runs; i++) {
      semantic.push(await time(() => bench.search(queries[i % queries.length])));
      keyword.push(await time(() => bench.search(queries[i % queries.length], { mode: 'keyword' })));
    }
    out.search1000SemanticMs = median(semantic);
    out.search1000KeywordMs = median(keyword);
    out.rowsSearched = [...bench.vectorIndex.values()].reduce((n, c) => n + c.length, 0);
    bench.db.db.close();
    indexedDB.deleteDatabase('devlens-bench');
    return out;
  }, runs);
  await context.close();

  const mb = (b) => `${(b / 1e6).toFixed(1)} MB`;
  const row = (what, value, budget) => console.log(`${what.padEnd(58)} ${value.padStart(10)}   ${budget}`);
  console.log(`devlens extension budgets — headless Chromium, ${report.threads} WebAssembly thread(s), medians of ${runs} runs`);
  row('model load (runtime + int8 model + tokenizer)', `${report.modelLoadMs.toFixed(0)} ms`, '');
  row(`embed a 2,000-character solution (${report.chunks2000} chunks)`, `${report.embed2000Ms.toFixed(1)} ms`, '< 150 ms');
  row('save it through the engine (embedding + IndexedDB)', `${report.saveThroughEngineMs.toFixed(1)} ms`, '');
  row(`search 1,000 solutions by meaning (${report.rowsSearched} chunk vectors)`, `${report.search1000SemanticMs.toFixed(1)} ms`, '< 50 ms');
  row('search 1,000 solutions by keywords', `${report.search1000KeywordMs.toFixed(1)} ms`, '< 50 ms');
  row('extension folder', mb(installed.bytes), '< 40 MB');
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
