// The engine: the offscreen document that holds the extension's knowledge base and runs the
// embedding model, so neither loads again each time the popup opens nor blocks it. The service
// worker creates it and forwards every request (engine.js); it answers { ok, value } or
// { ok: false, error, invalid }. Status changes (model loading, background embedding) are
// broadcast as { kind: 'engine-status', status }.

import { Embedder } from './embedder.js';
import { InvalidInput, LocalKb } from './localkb.js';
import { applyResponse, buildRequest, pending, recordFailure } from './sync.js';

const kbReady = LocalKb.open();

async function status(kb) {
  return { ...kb.status(), sync: (await kb.db.meta('sync')) || null, pending: await pending(kb) };
}

/** Every operation the popup, the options page and the service worker may ask for. */
const OPERATIONS = {
  status: (kb) => status(kb),
  save: (kb, args) => kb.save(args),
  update: (kb, { id, fields }) => kb.update(id, fields),
  remove: (kb, { id }) => kb.remove(id),
  get: (kb, { id }) => kb.solutions.get(id) || null,
  list: (kb) => [...kb.solutions.values()].sort((a, b) => (a.updatedAt < b.updatedAt ? 1 : -1)),
  search: (kb, { query, mode, limit }) => kb.search(query, { mode, limit }),
  askContext: (kb, { query, mode }) => kb.askContext(query, { mode }),
  export: (kb) => kb.export(),
  import: async (kb, { file }) => {
    const counts = await kb.import(file);
    kb.embedMissing();
    return counts;
  },
  syncRequest: (kb, { server }) => kb.exclusive(() => buildRequest(kb, server)),
  syncApply: (kb, { request, response }) => kb.exclusive(() => applyResponse(kb, request, response)),
  syncFailed: (kb, { error }) => recordFailure(kb, error),
  /** Pairing (again): the next sync treats the server as new, whatever its URL. */
  resetSync: (kb) => kb.db.setMeta('syncServer', null),
  /** Texts → vectors (as plain arrays), for the agreement check with the server. */
  embed: async (kb, { texts }) => {
    const embedder = await kb.loadModel(load);
    if (!embedder) throw new Error(`the embedding model did not load: ${kb.model.error}`);
    return (await embedder.embed(texts)).map((v) => Array.from(v));
  },
};

function load(progress) {
  return Embedder.load(chrome.runtime.getURL('/'), progress);
}

kbReady.then((kb) => {
  kb.onStatus(async () => {
    chrome.runtime.sendMessage({ kind: 'engine-status', status: await status(kb) }).catch(() => {});
  });
  // Load the model now, then embed whatever has no vectors yet (an import, a sync).
  kb.loadModel(load).then(() => kb.embedMissing());
});

chrome.runtime.onMessage.addListener((message, _sender, respond) => {
  if (!message || message.kind !== 'engine-forward') return false;
  const operation = OPERATIONS[message.op];
  if (!operation) {
    respond({ ok: false, error: `the engine has no operation "${message.op}"` });
    return false;
  }
  kbReady
    .then((kb) => operation(kb, message.args || {}))
    .then(
      (value) => respond({ ok: true, value: value === undefined ? null : value }),
      (error) => respond({ ok: false, error: error.message || String(error), invalid: error instanceof InvalidInput }),
    );
  return true;
});
