// The knowledge base the extension keeps on its own: saving, editing, deleting, search by meaning
// (the local model) or by keywords, the numbered context an answer is written from, export and
// import in the server's format, and embedding in the background whatever has no current
// vectors. It lives in the offscreen document (offscreen.js), the one long-lived page, so the
// popup never loads the model or blocks on it.

import { chunkRanges, embeddingText } from './chunk.js';
import { LocalDb, contentKey } from './localdb.js';

/** The server's limits (devlens-kb solution.rs), so whatever is saved here also syncs. */
const MAX_TITLE_CHARS = 500;
const MAX_TEXT_BYTES = 1000000;
const MAX_TAGS = 32;
/** The server's export format version (devlens-kb EXPORT_VERSION). */
export const EXPORT_VERSION = 1;
/** all-MiniLM-L6-v2's calibrated similarity threshold (devlens-kb search.rs MINILM_THRESHOLD). */
export const THRESHOLD = 0.3;
/** About the context `devlens kb ask` assembles, in characters (≈ 4 per token). */
const CONTEXT_CHARS = 8000;

export class InvalidInput extends Error {}

function oneLine(text) {
  return String(text || '').split(/\s+/u).filter(Boolean).join(' ');
}

function utf8Length(text) {
  return new TextEncoder().encode(text).length;
}

/** Tags as the server keeps them: trimmed, lower-cased, `#` dropped, duplicates removed. */
export function cleanTags(tags) {
  const out = [];
  for (const raw of tags || []) {
    const tag = String(raw).trim().replace(/^#+/, '').trim().toLowerCase();
    if (!tag || out.includes(tag)) continue;
    if ([...tag].length > 64 || tag.includes(',')) {
      throw new InvalidInput(`"${tag}" is not a tag: tags are short words, separated by commas`);
    }
    out.push(tag);
  }
  if (out.length > MAX_TAGS) throw new InvalidInput(`${out.length} tags; at most ${MAX_TAGS} are kept per solution`);
  return out;
}

/** Checks and normalises a solution's fields as the server does; the error says what is wrong. */
export function cleanFields({ title, url, text, summary, tags }) {
  // A lone surrogate (a page's text cut inside an emoji) would make the sync's JSON invalid.
  const cleanTitle = oneLine(title).toWellFormed();
  if (!cleanTitle) throw new InvalidInput('Give the solution a title.');
  if ([...cleanTitle].length > MAX_TITLE_CHARS) {
    throw new InvalidInput(`The title is longer than ${MAX_TITLE_CHARS} characters: keep it to a line and put the rest in the text.`);
  }
  const body = String(text || '').toWellFormed().trimEnd();
  if (!body.trim()) throw new InvalidInput('The text is empty: there is nothing to save.');
  if (utf8Length(body) > MAX_TEXT_BYTES) {
    throw new InvalidInput(`The text is over ${MAX_TEXT_BYTES} bytes: save the part that solves the problem and link the rest.`);
  }
  const cleanUrl = url ? String(url).trim() : '';
  if (cleanUrl && (/\s/u.test(cleanUrl) || cleanUrl.length > 4096)) {
    throw new InvalidInput(`"${cleanUrl}" is not a URL.`);
  }
  const cleanSummary = oneLine(summary);
  return {
    title: cleanTitle,
    url: cleanUrl || null,
    text: body,
    summary: cleanSummary || null,
    tags: cleanTags(tags),
  };
}

/**
 * Whether `ts` is a timestamp the server takes (devlens-kb `valid_timestamp`: RFC 3339 with
 * seconds) and not more than a day ahead (the server refuses those: they would win every
 * conflict).
 */
export function validTimestamp(ts) {
  if (typeof ts !== 'string' || !/^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/.test(ts)) return false;
  const time = Date.parse(ts);
  return !Number.isNaN(time) && time <= Date.now() + 24 * 3600 * 1000;
}

/** A fresh id in the server's alphabet: 12 hex digits. */
function newId() {
  const bytes = crypto.getRandomValues(new Uint8Array(6));
  return [...bytes].map((b) => b.toString(16).padStart(2, '0')).join('');
}

/** Now, as the server writes timestamps (RFC 3339, UTC). */
export function now() {
  return new Date().toISOString();
}

/** Words for keyword search: lower-cased letters and digits. */
function terms(text) {
  return String(text || '').toLowerCase().match(/[\p{L}\p{N}_]+/gu) || [];
}

function frequencies(words) {
  const map = new Map();
  for (const w of words) map.set(w, (map.get(w) || 0) + 1);
  return map;
}

/** A record as the server's export writes it (no sync bookkeeping). */
export function exported(solution) {
  const { id, title, url, text, summary, tags, createdAt, updatedAt } = solution;
  return { id, title, url: url ?? null, text, summary: summary ?? null, tags, createdAt, updatedAt };
}

export class LocalKb {
  constructor(db) {
    this.db = db;
    /** id → solution, every solution (the popup's lists and search read this, not the disk). */
    this.solutions = null;
    /** id → [{ byteStart, byteEnd, vector }]: current vectors of the loaded model. */
    this.vectorIndex = null;
    /** id → keyword fields; built on the first keyword search. */
    this.keywordIndex = null;
    this.embedder = null;
    this.model = { state: 'not loaded', phase: '', loaded: 0, total: 0, error: '' };
    this.loading = null;
    this.background = { running: false, done: 0, total: 0 };
    this.listeners = new Set();
    this.seq = 0;
    this.queue = Promise.resolve();
    this.embedAgain = false;
  }

  /**
   * Runs `fn` after every change queued before it: saves, edits, deletes, imports, a sync's
   * answer and the background pass's writes never interleave, so none writes over another.
   */
  exclusive(fn) {
    const run = this.queue.then(fn, fn);
    this.queue = run.catch(() => {});
    return run;
  }

  static async open(name) {
    const kb = new LocalKb(await LocalDb.open(name));
    kb.solutions = new Map((await kb.db.all()).map((s) => [s.id, s]));
    return kb;
  }

  /** Calls `listener(status)` whenever the model's or the background work's state changes. */
  onStatus(listener) {
    this.listeners.add(listener);
  }

  notify() {
    this.seq += 1;
    const status = this.status();
    for (const listener of this.listeners) listener(status);
  }

  status() {
    let embedded = 0;
    if (this.vectorIndex) embedded = this.vectorIndex.size;
    return {
      // Pages keep the status with the highest seq: a broadcast may overtake an answer.
      seq: this.seq,
      solutions: this.solutions.size,
      embedded,
      model: { ...this.model, id: this.embedder ? this.embedder.info.id : null },
      background: { ...this.background },
    };
  }

  /**
   * Loads the model once (`load(progress)` answers an Embedder); later calls wait for the same
   * load. A failure is kept: keyword search goes on working and the status says why.
   */
  loadModel(load) {
    if (!this.loading) {
      this.model = { state: 'loading', phase: 'starting', loaded: 0, total: 0, error: '' };
      this.notify();
      let shown = '';
      this.loading = load((p) => {
        this.model = { ...this.model, ...p, state: 'loading' };
        // One event per percent, not per network chunk.
        const step = `${p.phase}:${p.total ? Math.floor((p.loaded / p.total) * 100) : 0}`;
        if (step !== shown) this.notify();
        shown = step;
      }).then(
        async (embedder) => {
          this.embedder = embedder;
          await this.loadVectors();
          this.model = { state: 'ready', phase: '', loaded: 0, total: 0, error: '' };
          this.notify();
          return embedder;
        },
        (error) => {
          this.model = { state: 'failed', phase: '', loaded: 0, total: 0, error: error.message || String(error) };
          this.notify();
          return null;
        },
      );
    }
    return this.loading;
  }

  /** The current vectors of the loaded model, from disk (stale ones are left out). */
  async loadVectors() {
    const index = new Map();
    const model = this.embedder.info.id;
    for (const record of await this.db.vectors()) {
      const solution = this.solutions.get(record.id);
      if (!solution || record.model !== model || record.contentKey !== contentKey(solution)) continue;
      if (!index.has(record.id)) index.set(record.id, []);
      index.get(record.id)[record.chunk] = {
        byteStart: record.byteStart,
        byteEnd: record.byteEnd,
        vector: new Float32Array(record.vector),
      };
    }
    this.vectorIndex = index;
  }

  /** The chunks of a solution and their vectors, as the server computes them. */
  async embedSolution(solution) {
    const chunks = chunkRanges(solution.text);
    const texts = chunks.map((c) => embeddingText(solution.title, solution.tags, solution.text.slice(c.start, c.end)));
    const vectors = await this.embedder.embed(texts);
    return chunks.map((c, i) => ({ byteStart: c.byteStart, byteEnd: c.byteEnd, vector: vectors[i] }));
  }

  /**
   * Writes `solutions`, embedding each when the model is ready (else the background pass does
   * it later), or storing `given` vectors (id → chunks) that `givenModel` computed elsewhere
   * (the server, in sync) when it is the model loaded here. With `embed` false, solutions
   * without vectors are left to the background pass.
   */
  async write(solutions, given = {}, givenModel = null, { embed = true } = {}) {
    const model = this.embedder ? this.embedder.info.id : null;
    const vectors = model && givenModel === model ? { ...given } : {};
    if (this.embedder && embed) {
      for (const s of solutions) {
        if (vectors[s.id]) continue;
        try {
          vectors[s.id] = await this.embedSolution(s);
        } catch (e) {
          console.warn('devlens: embedding failed', e);
        }
      }
    }
    await this.db.put(solutions, vectors, model);
    for (const s of solutions) {
      this.solutions.set(s.id, s);
      if (this.keywordIndex) this.keywordIndex.set(s.id, this.keywordEntry(s));
      if (this.vectorIndex) {
        if (vectors[s.id]) this.vectorIndex.set(s.id, vectors[s.id]);
        else this.vectorIndex.delete(s.id);
      }
    }
    this.notify();
    return solutions.map((s) => Boolean(vectors[s.id]));
  }

  /** Saves a new solution; answers `{ solution, embedded, notice }`. */
  save(fields) {
    return this.exclusive(() => this.saveNow(fields));
  }

  async saveNow(fields) {
    const clean = cleanFields(fields);
    const time = now();
    const solution = { id: newId(), ...clean, createdAt: time, updatedAt: time, sync: { base: null, dirty: true } };
    // A save right after the browser started waits the second or two the model takes to load,
    // so what was just saved is found by meaning at once.
    if (this.loading) await this.loading;
    const [embedded] = await this.write([solution]);
    return { solution, embedded, notice: embedded ? '' : this.whyKeywordsOnly() };
  }

  /** Changes a solution's fields (those given); answers it. */
  update(id, fields) {
    return this.exclusive(() => this.updateNow(id, fields));
  }

  async updateNow(id, fields) {
    const current = this.solutions.get(id);
    if (!current) throw new InvalidInput(`There is no solution ${id} here.`);
    const clean = cleanFields({ ...current, ...fields });
    const solution = { ...current, ...clean, updatedAt: now(), sync: { base: current.sync?.base ?? null, dirty: true } };
    await this.write([solution]);
    return solution;
  }

  /** Deletes a solution; the deletion syncs to the server. */
  remove(id) {
    return this.exclusive(() => this.removeNow(id));
  }

  async removeNow(id) {
    if (!this.solutions.has(id)) return false;
    await this.db.delete([id], now());
    this.forget(id);
    this.notify();
    return true;
  }

  forget(id) {
    this.solutions.delete(id);
    this.vectorIndex?.delete(id);
    this.keywordIndex?.delete(id);
  }

  whyKeywordsOnly() {
    if (this.model.state === 'failed') return `Searchable by keywords only: the embedding model did not load (${this.model.error}).`;
    return 'Searchable by keywords now; by meaning once the embedding model has loaded.';
  }

  keywordEntry(s) {
    const title = terms(s.title);
    const tags = terms(s.tags.join(' '));
    const text = terms(s.text);
    return { title: frequencies(title), tags: frequencies(tags), text: frequencies(text), length: title.length * 3 + tags.length * 2 + text.length };
  }

  /** BM25 over title (counting most), tags and text: [{ id, score }], best first. */
  keyword(query, limit) {
    if (!this.keywordIndex) {
      this.keywordIndex = new Map([...this.solutions.values()].map((s) => [s.id, this.keywordEntry(s)]));
    }
    const words = [...new Set(terms(query))];
    const n = this.keywordIndex.size;
    if (!words.length || !n) return [];
    let total = 0;
    for (const e of this.keywordIndex.values()) total += e.length;
    const avg = total / n || 1;
    const df = new Map(words.map((w) => [w, 0]));
    for (const e of this.keywordIndex.values()) {
      for (const w of words) if (e.title.has(w) || e.tags.has(w) || e.text.has(w)) df.set(w, df.get(w) + 1);
    }
    const k1 = 1.2;
    const b = 0.75;
    const hits = [];
    for (const [id, e] of this.keywordIndex) {
      let score = 0;
      for (const w of words) {
        const tf = 3 * (e.title.get(w) || 0) + 2 * (e.tags.get(w) || 0) + (e.text.get(w) || 0);
        if (!tf) continue;
        const idf = Math.log(1 + (n - df.get(w) + 0.5) / (df.get(w) + 0.5));
        score += (idf * tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * e.length) / avg));
      }
      if (score > 0) hits.push({ id, score });
    }
    hits.sort((x, y) => y.score - x.score);
    return hits.slice(0, limit);
  }

  /** Cosine similarity of `query` to every solution's best chunk: [{ id, similarity, chunk }]. */
  nearest(query, limit, threshold) {
    const hits = [];
    for (const [id, chunks] of this.vectorIndex) {
      let best = -1;
      let bestChunk = null;
      for (const c of chunks) {
        if (!c) continue;
        const v = c.vector;
        let dot = 0;
        for (let d = 0; d < v.length; d++) dot += v[d] * query[d];
        if (dot > best) {
          best = dot;
          bestChunk = c;
        }
      }
      if (best >= threshold) hits.push({ id, similarity: best, chunk: bestChunk });
    }
    hits.sort((x, y) => y.similarity - x.similarity);
    return hits.slice(0, limit);
  }

  excerpt(solution, chunk) {
    let text = solution.text;
    if (chunk) {
      const bytes = new TextEncoder().encode(solution.text);
      text = new TextDecoder().decode(bytes.slice(chunk.byteStart, chunk.byteEnd));
    }
    text = oneLine(text);
    return text.length > 240 ? `${text.slice(0, 240)}…` : text;
  }

  /**
   * Searches `query` by meaning (`mode` 'semantic', the default) or by keywords. Answers
   * `{ mode, results: [{ id, title, url, tags, similarity?, relevance, excerpt }], notice }`;
   * `mode` is what ran (keywords when the model is unavailable, and `notice` says why).
   */
  async search(query, { mode = 'semantic', limit = 10, threshold = THRESHOLD } = {}) {
    const q = String(query || '').trim();
    if (!q) throw new InvalidInput('Type what you are looking for.');
    let notice = '';
    if (mode === 'semantic') {
      if (this.loading) await this.loading;
      if (this.embedder) {
        const [vector] = await this.embedder.embed([q]);
        const hits = this.nearest(vector, limit, threshold);
        const missing = this.solutions.size - this.vectorIndex.size;
        if (missing > 0) {
          notice = `${missing} of ${this.solutions.size} solutions are not searchable by meaning yet: they are being embedded in the background.`;
        }
        const results = hits.map((h) => {
          const s = this.solutions.get(h.id);
          return {
            id: s.id,
            title: s.title,
            url: s.url,
            tags: s.tags,
            similarity: h.similarity,
            relevance: Math.round(h.similarity * 100),
            excerpt: this.excerpt(s, h.chunk),
            bestChunk: h.chunk ? [h.chunk.byteStart, h.chunk.byteEnd] : null,
          };
        });
        return { mode: 'semantic', results, notice };
      }
      notice = `Searched by keywords: ${this.whyKeywordsOnly().replace(/^Searchable by keywords only: /, '')}`;
    }
    const hits = this.keyword(q, limit);
    const top = hits.length ? hits[0].score : 1;
    const results = hits.map((h) => {
      const s = this.solutions.get(h.id);
      return { id: s.id, title: s.title, url: s.url, tags: s.tags, relevance: Math.round((h.score / top) * 100), excerpt: this.excerpt(s, null) };
    });
    return { mode: 'keyword', results, notice };
  }

  /**
   * The numbered sources an answer to `query` is written from (the top solutions), formatted as
   * `devlens kb ask` formats them: `{ query, mode, sources, context, notice }`.
   */
  async askContext(query, { limit = 5, mode = 'semantic' } = {}) {
    const found = await this.search(query, { mode, limit });
    const sources = [];
    const blocks = [];
    let used = 0;
    for (const hit of found.results) {
      const s = this.solutions.get(hit.id);
      const n = sources.length + 1;
      const origin = s.url || 'saved note, no URL';
      const head = `[${n}] ${s.title}\nSource: ${origin} · relevance ${hit.relevance}%\n`;
      const room = CONTEXT_CHARS - used - head.length;
      if (room < 80) break;
      let body = s.text.trim();
      if (body.length > room) {
        let from = 0;
        if (hit.bestChunk) from = new TextDecoder().decode(new TextEncoder().encode(s.text).slice(0, hit.bestChunk[0])).length;
        body = `${from > 0 ? '… ' : ''}${s.text.slice(from, from + room - 4).trimEnd()}…`;
      }
      blocks.push(head + body);
      used += head.length + body.length + 2;
      sources.push({ n, id: s.id, title: s.title, url: s.url, relevance: hit.relevance });
    }
    return { query: String(query).trim(), mode: found.mode, sources, context: blocks.join('\n\n'), notice: found.notice };
  }

  /** The whole knowledge base in the server's export format. */
  export() {
    const solutions = [...this.solutions.values()]
      .sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0))
      .map(exported);
    return { version: EXPORT_VERSION, solutions };
  }

  /**
   * Imports an export file (`devlens kb export` or this extension's): solutions with a known id
   * are replaced, new ones added, all in one transaction; answers `{ created, replaced,
   * unchanged }`. Nothing is written when any record is invalid.
   */
  import(file) {
    return this.exclusive(() => this.importNow(file));
  }

  async importNow(file) {
    if (!file || typeof file !== 'object' || !Array.isArray(file.solutions)) {
      throw new InvalidInput('This is not a devlens export: it has no "solutions" list. Export with "devlens kb export" or this extension.');
    }
    if (file.version !== EXPORT_VERSION) {
      throw new InvalidInput(`This export has version ${file.version}; this extension reads version ${EXPORT_VERSION}.`);
    }
    const counts = { created: 0, replaced: 0, unchanged: 0 };
    const records = [];
    file.solutions.forEach((s, i) => {
      const where = `solution ${i + 1}${s && s.id ? ` (${s.id})` : ''}`;
      if (!s || typeof s.id !== 'string' || !/^[A-Za-z0-9_-]{1,64}$/.test(s.id)) {
        throw new InvalidInput(`${where}: the id must be letters, digits, - or _ (at most 64).`);
      }
      let clean;
      try {
        clean = cleanFields(s);
      } catch (e) {
        throw new InvalidInput(`${where}: ${e.message}`);
      }
      for (const field of ['createdAt', 'updatedAt']) {
        if (s[field] !== undefined && !validTimestamp(s[field])) {
          throw new InvalidInput(`${where}: ${field} must be an RFC 3339 date and time, not in the future, like 2026-03-02T10:15:00Z.`);
        }
      }
      const time = now();
      const record = { id: s.id, ...clean, createdAt: s.createdAt || time, updatedAt: s.updatedAt || time };
      const existing = this.solutions.get(s.id);
      if (existing && JSON.stringify(exported(existing)) === JSON.stringify(exported(record))) {
        counts.unchanged += 1;
        return;
      }
      counts[existing ? 'replaced' : 'created'] += 1;
      records.push({ ...record, sync: { base: existing?.sync?.base ?? null, dirty: true } });
    });
    // Stored first (keyword-searchable at once), embedded by the background pass.
    await this.db.put(records);
    for (const s of records) {
      this.solutions.set(s.id, s);
      this.keywordIndex?.set(s.id, this.keywordEntry(s));
      this.vectorIndex?.delete(s.id);
    }
    this.notify();
    return counts;
  }

  /** Solutions without current vectors of the loaded model. */
  needingVectors() {
    if (!this.embedder || !this.vectorIndex) return [];
    return [...this.solutions.values()].filter((s) => !this.vectorIndex.has(s.id));
  }

  /**
   * Embeds, a few at a time, every solution without current vectors (imported, synced without
   * vectors, saved before the model loaded), reporting progress in the status.
   */
  async embedMissing() {
    if (!this.embedder) return;
    // Asked while running (an import, a sync): go round again when done.
    if (this.background.running) {
      this.embedAgain = true;
      return;
    }
    this.background = { running: true, done: 0, total: 0 };
    try {
      do {
        this.embedAgain = false;
        const todo = this.needingVectors();
        this.background = { running: true, done: 0, total: todo.length };
        this.notify();
        for (const s of todo) {
          const current = this.solutions.get(s.id);
          if (current && !this.vectorIndex.has(s.id)) {
            const vectors = await this.embedSolution(current);
            // Kept only if nothing changed the solution meanwhile (checked in the queue).
            await this.exclusive(async () => {
              if (this.solutions.get(s.id) !== current) return;
              await this.db.put([current], { [s.id]: vectors }, this.embedder.info.id);
              this.vectorIndex.set(s.id, vectors);
            });
          }
          this.background = { ...this.background, done: this.background.done + 1 };
          this.notify();
          // Let searches and saves in between.
          await new Promise((resolve) => setTimeout(resolve, 0));
        }
      } while (this.embedAgain);
    } finally {
      this.background = { ...this.background, running: false };
      this.notify();
    }
  }

}
