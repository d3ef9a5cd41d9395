// Sync between the extension's knowledge base and the paired server's (POST /api/kb/sync), the
// engine's half: what to send and how to take in the answer. The service worker does the
// network call in between (engine.js), since it holds the settings and the offscreen document
// may only message.
//
// Every solution carries `sync: { base, dirty }`: the updatedAt both sides agreed on at the last
// sync, and whether it changed here since. A sync sends the changed ones (with their vectors, so
// the server does not embed them again when its model is this one), the deletions made here, and
// the updatedAt of every other solution; the server applies them (last writer wins per solution,
// conflicts noted) and answers what changed on its side, with its vectors.

import { exported, now } from './localkb.js';

function encodeVector(vector) {
  const bytes = new Uint8Array(vector.buffer, vector.byteOffset, vector.byteLength);
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

function decodeVector(text) {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return new Float32Array(bytes.buffer);
}

/**
 * The request body of a sync with `server`: the changes made here and what is known unchanged.
 * With a server this knowledge base has not synced with before (the first pairing, or pairing
 * with another server), every solution is sent as new: "known unchanged" only means something
 * to the server it was agreed with, which would take the rest for deletions.
 */
export async function buildRequest(kb, server) {
  const model = kb.embedder ? kb.embedder.info : null;
  const fresh = (await kb.db.meta('syncServer')) !== server;
  const changes = [];
  const known = {};
  for (const s of kb.solutions.values()) {
    if (fresh || !s.sync || s.sync.dirty) {
      const change = { ...exported(s), base: fresh ? null : (s.sync?.base ?? null) };
      const chunks = kb.vectorIndex && kb.vectorIndex.get(s.id);
      if (model && chunks) {
        change.vectors = {
          chunks: chunks.map((c) => ({ start: c.byteStart, end: c.byteEnd, vector: encodeVector(c.vector) })),
        };
      }
      changes.push(change);
    } else {
      known[s.id] = s.updatedAt;
    }
  }
  // Deletions of solutions another server had mean nothing to this one.
  const tombstones = await kb.db.tombstones();
  if (!fresh) {
    for (const t of tombstones) {
      changes.push({ id: t.id, deleted: true, updatedAt: t.deletedAt, base: t.base ?? null });
    }
  }
  return {
    server,
    fresh,
    // Those dropped unsent by a fresh sync: only these are cleared after it (not ones made
    // while it ran).
    staleTombstones: fresh ? tombstones.map((t) => t.id) : [],
    model: model ? model.id : null,
    dims: model ? model.dims : null,
    changes,
    known,
    wantVectors: Boolean(model),
  };
}

/**
 * Takes in the server's answer to `request`: the changes sent are marked synced (unless the
 * solution changed again meanwhile, or the server rejected them), the server's changes are
 * applied (a solution edited here during the sync wins until the next one), and the outcome is
 * kept as the sync state the popup shows.
 */
export async function applyResponse(kb, request, response) {
  if (!response || !Array.isArray(response.changes) || typeof response.serverTime !== 'string') {
    throw new Error(`the server at ${request.server} did not answer like a devlens server (no sync answer): is the server URL right?`);
  }
  const rejected = new Map((response.rejected || []).map((r) => [r.id, r.why]));
  const fromServer = new Map((response.changes || []).map((c) => [c.id, c]));
  const sent = new Map(request.changes.map((c) => [c.id, c]));

  // What we sent and the server took: synced now.
  const synced = [];
  const tombstonesDone = [];
  for (const change of request.changes) {
    if (rejected.has(change.id) || fromServer.has(change.id)) continue;
    if (change.deleted) {
      tombstonesDone.push(change.id);
      continue;
    }
    const current = kb.solutions.get(change.id);
    if (current && current.updatedAt === change.updatedAt) {
      synced.push({ ...current, sync: { base: current.updatedAt, dirty: false } });
    } else if (current) {
      // Edited again while the sync ran: still to send, but from the version the server has now.
      synced.push({ ...current, sync: { base: change.updatedAt, dirty: true } });
    } else {
      // Deleted while the sync ran: the deletion is of the version the server has now.
      await kb.db.rebaseTombstone(change.id, change.updatedAt);
    }
  }
  if (synced.length) await kb.db.put(synced);
  for (const s of synced) kb.solutions.set(s.id, s);

  // What changed on the server.
  const incoming = [];
  const vectors = {};
  const deleted = [];
  for (const change of fromServer.values()) {
    const current = kb.solutions.get(change.id);
    const sentChange = sent.get(change.id);
    // Changed here while the sync ran: keep ours; the next sync settles it.
    if (current && current.sync?.dirty && (!sentChange || sentChange.updatedAt !== current.updatedAt)) continue;
    if (change.deleted) {
      deleted.push(change.id);
      continue;
    }
    const { vectors: v, deleted: _d, base: _b, ...fields } = change;
    incoming.push({ ...exported(fields), sync: { base: change.updatedAt, dirty: false } });
    if (v && v.chunks && v.chunks.length) {
      vectors[change.id] = v.chunks.map((c) => ({ byteStart: c.start, byteEnd: c.end, vector: decodeVector(c.vector) }));
    }
  }
  if (incoming.length) await kb.write(incoming, vectors, response.model, { embed: false });
  if (deleted.length) {
    await kb.db.delete(deleted, null);
    for (const id of deleted) kb.forget(id);
  }
  // (A deletion the server overruled was cleared when its solution came back above.)
  tombstonesDone.push(...(request.staleTombstones || []));
  await kb.db.clearTombstones(tombstonesDone);
  await kb.db.setMeta('syncServer', request.server);

  // Conflicts stay listed for a week (the last ten): a sync that follows at once must not hide
  // them before anyone looked.
  const at = now();
  const previous = (await kb.db.meta('sync')) || {};
  const weekAgo = new Date(Date.now() - 7 * 24 * 3600 * 1000).toISOString();
  const conflicts = [
    ...(response.conflicts || []).map((c) => ({ ...c, at })),
    ...(previous.conflicts || []).filter((c) => c.at && c.at > weekAgo),
  ].slice(0, 10);
  const state = {
    at,
    ok: true,
    error: '',
    sent: request.changes.length,
    received: fromServer.size,
    applied: response.applied || null,
    conflicts,
    rejected: response.rejected || [],
    serverModel: response.model || null,
  };
  await kb.db.setMeta('sync', state);
  kb.notify();
  kb.embedMissing();
  return state;
}

/** Keeps a failed sync's reason; the changes stay queued for the next one. */
export async function recordFailure(kb, error) {
  const previous = (await kb.db.meta('sync')) || {};
  const state = { ...previous, ok: false, error, failedAt: now() };
  await kb.db.setMeta('sync', state);
  kb.notify();
  return state;
}

/** How many local changes wait for the next sync. */
export async function pending(kb) {
  let n = (await kb.db.tombstones()).length;
  for (const s of kb.solutions.values()) if (!s.sync || s.sync.dirty) n += 1;
  return n;
}
