// The embedding model in the browser: all-MiniLM-L6-v2 — the server's model, from the same int8
// ONNX export — run with onnxruntime-web (WebAssembly, SIMD; threads where the page is
// cross-origin isolated), with the same tokenizer and mean pooling, so its vectors and the
// server's agree. `devlens extension path` writes the model into model/ and the runtime into ort/.

import { WordPieceTokenizer } from './tokenizer.js';

/**
 * Reads `url` as bytes, calling `progress(loaded, total)` as they arrive (total 0 when the size
 * is not known).
 */
async function fetchBytes(url, progress) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url} answered HTTP ${response.status}`);
  const total = Number(response.headers.get('Content-Length')) || 0;
  if (!response.body) return new Uint8Array(await response.arrayBuffer());
  const reader = response.body.getReader();
  const parts = [];
  let loaded = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    parts.push(value);
    loaded += value.length;
    progress(loaded, total);
  }
  const bytes = new Uint8Array(loaded);
  let at = 0;
  for (const part of parts) {
    bytes.set(part, at);
    at += part.length;
  }
  return bytes;
}

export class Embedder {
  constructor({ ort, session, tokenizer, info }) {
    this.ort = ort;
    this.session = session;
    this.tokenizer = tokenizer;
    /** `{ id, dims, maxTokens, file }` from model/model.json. */
    this.info = info;
    this.threads = ort.env.wasm.numThreads;
  }

  /**
   * Loads the runtime, the tokenizer and the model from `base` (the extension's root URL),
   * reporting `progress({ phase, loaded, total })`. Throws an Error saying what is missing.
   */
  static async load(base, progress = () => {}) {
    const infoResponse = await fetch(new URL('model/model.json', base)).catch(() => null);
    if (!infoResponse || !infoResponse.ok) {
      throw new Error(
        'the extension folder has no embedding model (model/model.json): run "devlens extension path" on a machine whose devlens has its local model installed ("devlens model install"), then reload the extension',
      );
    }
    const info = await infoResponse.json();
    progress({ phase: 'runtime', loaded: 0, total: 0 });
    const ort = await import(new URL('ort/ort.wasm.bundle.min.mjs', base).href);
    // Only the binary's URL: the bundle carries its JavaScript glue itself.
    ort.env.wasm.wasmPaths = { wasm: new URL('ort/ort-wasm-simd-threaded.wasm', base).href };
    // Threads need SharedArrayBuffer, which only a cross-origin isolated page has.
    ort.env.wasm.numThreads = globalThis.crossOriginIsolated
      ? Math.max(1, Math.min(4, navigator.hardwareConcurrency || 1))
      : 1;
    const tokenizerJson = await (await fetch(new URL('model/tokenizer.json', base))).json();
    const tokenizer = new WordPieceTokenizer(tokenizerJson);
    const bytes = await fetchBytes(new URL(`model/${info.file}`, base), (loaded, total) =>
      progress({ phase: 'model', loaded, total: total || info.bytes || 0 }),
    );
    progress({ phase: 'compile', loaded: 0, total: 0 });
    const session = await ort.InferenceSession.create(bytes, {
      executionProviders: ['wasm'],
      graphOptimizationLevel: 'all',
    });
    return new Embedder({ ort, session, tokenizer, info });
  }

  /** L2-normalised vectors of `texts` (Float32Array each), in order. */
  async embed(texts) {
    const encoded = texts.map((text, index) => ({ index, ids: this.tokenizer.encode(text, this.info.maxTokens) }));
    // One text per run: the activations are quantised per run (dynamic int8), so a text's
    // vector would otherwise depend on the texts batched with it; alone, it is the vector the
    // server computes for it alone. (Batching saves nothing here: WebAssembly gains little from
    // it, and padding costs.)
    const out = [];
    for (const e of encoded) out.push((await this.run([e.ids]))[0]);
    return out;
  }

  async run(batch) {
    const { ort } = this;
    const seq = Math.max(...batch.map((ids) => ids.length));
    const n = batch.length;
    const inputIds = new BigInt64Array(n * seq);
    const mask = new BigInt64Array(n * seq);
    const types = new BigInt64Array(n * seq);
    batch.forEach((ids, row) => {
      for (let j = 0; j < seq; j++) {
        inputIds[row * seq + j] = BigInt(j < ids.length ? ids[j] : this.tokenizer.pad);
        mask[row * seq + j] = j < ids.length ? 1n : 0n;
      }
    });
    const feeds = {
      input_ids: new ort.Tensor('int64', inputIds, [n, seq]),
      attention_mask: new ort.Tensor('int64', mask, [n, seq]),
    };
    if (this.session.inputNames.includes('token_type_ids')) {
      feeds.token_type_ids = new ort.Tensor('int64', types, [n, seq]);
    }
    const results = await this.session.run(feeds);
    const output = results.last_hidden_state || results[this.session.outputNames[0]];
    const hidden = output.dims[2];
    const data = output.data;
    const vectors = [];
    // Mean pooling over the real tokens, then L2 normalisation (sentence-transformers').
    batch.forEach((ids, row) => {
      const v = new Float32Array(hidden);
      for (let j = 0; j < ids.length; j++) {
        const at = (row * seq + j) * hidden;
        for (let d = 0; d < hidden; d++) v[d] += data[at + d];
      }
      let norm = 0;
      for (let d = 0; d < hidden; d++) {
        v[d] /= ids.length;
        norm += v[d] * v[d];
      }
      norm = Math.sqrt(norm) || 1;
      for (let d = 0; d < hidden; d++) v[d] /= norm;
      vectors.push(v);
    });
    output.dispose?.();
    return vectors;
  }
}
