// Memory of a process and of its whole tree (the browser a server starts is its child), read
// from /proc. The sampler runs in a worker thread, so reading /proc never delays the client's
// own event loop, whose timings are what the benchmark measures.
import { readFileSync, readdirSync } from 'node:fs';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';

// VmRSS and VmHWM (peak RSS) of one process, in kB; null when it is gone.
export function readStatus(pid) {
  try {
    const s = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (k) => Number((s.match(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm')) || [])[1] || 0);
    return { rss: kb('VmRSS'), hwm: kb('VmHWM') };
  } catch {
    return null;
  }
}

// Proportional set size in kB: shared pages split between the processes that share them, so a
// tree's PSS sum does not count Chromium's shared libraries once per process as an RSS sum does.
function readPss(pid) {
  try {
    const s = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
    return Number((s.match(/^Pss:\s+(\d+) kB/m) || [])[1] || 0);
  } catch {
    return 0;
  }
}

// The process and all its descendants.
export function descendants(root) {
  const children = new Map();
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    let stat;
    try {
      stat = readFileSync(`/proc/${e}/stat`, 'utf8');
    } catch {
      continue;
    }
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (!children.has(ppid)) children.set(ppid, []);
    children.get(ppid).push(Number(e));
  }
  const out = [];
  const stack = [root];
  while (stack.length) {
    const p = stack.pop();
    out.push(p);
    for (const c of children.get(p) || []) stack.push(c);
  }
  return out;
}

// Samples the tree of `pid` every `everyMs`; `stop()` resolves to the peaks and every pid seen.
export class MemorySampler {
  constructor(pid, everyMs) {
    this.worker = new Worker(new URL(import.meta.url), { workerData: { pid, everyMs } });
    this.worker.unref();
    // Resolves once the worker has taken its first sample.
    this.ready = new Promise((ok, fail) => {
      this.worker.once('message', ok);
      this.worker.once('error', fail);
    });
  }
  stop() {
    return new Promise((ok, fail) => {
      this.worker.once('message', (m) => {
        this.worker.terminate();
        ok(m);
      });
      this.worker.once('error', fail);
      this.worker.postMessage('stop');
    });
  }
}

if (!isMainThread && workerData?.pid) {
  const { pid, everyMs } = workerData;
  const peaks = { treeRssKb: 0, treePssKb: 0, procs: 0, seen: new Set() };
  const sample = () => {
    const pids = descendants(pid);
    let rss = 0;
    let pss = 0;
    for (const p of pids) {
      const st = readStatus(p);
      if (!st) continue;
      peaks.seen.add(p);
      rss += st.rss;
      pss += readPss(p);
    }
    peaks.treeRssKb = Math.max(peaks.treeRssKb, rss);
    peaks.treePssKb = Math.max(peaks.treePssKb, pss);
    peaks.procs = Math.max(peaks.procs, pids.length);
  };
  sample();
  parentPort.postMessage('ready');
  const timer = setInterval(sample, everyMs);
  parentPort.on('message', () => {
    clearInterval(timer);
    sample();
    parentPort.postMessage({ ...peaks, seen: [...peaks.seen] });
  });
}
