// The extension's own knowledge base on disk: IndexedDB database "devlens" in the extension's
// origin (it stays when the extension is reloaded or updated; removing the extension removes it).
//
// Stores:
//   solutions   one record per solution, as the server's export writes it (id, title, url, text,
//               summary, tags, createdAt, updatedAt) plus `sync`: { base, dirty } — the
//               updatedAt both sides agreed on at the last sync, and whether it changed since
//   vectors     one record per chunk: [id, chunk] → { model, byteStart, byteEnd, contentKey,
//               vector: ArrayBuffer of float32 }
//   tombstones  solutions deleted here and not yet synced: { id, deletedAt, base }
//   meta        { key, value }: the sync state
//
// Schema changes are migrations keyed by version (MIGRATIONS below): a browser holding an older
// database runs the missing steps in order when it opens it.

const NAME = 'devlens';

/** Step N turns a database of version N-1 into version N. */
const MIGRATIONS = [
  null,
  (db) => {
    const solutions = db.createObjectStore('solutions', { keyPath: 'id' });
    solutions.createIndex('updatedAt', 'updatedAt');
    const vectors = db.createObjectStore('vectors', { keyPath: ['id', 'chunk'] });
    vectors.createIndex('id', 'id');
    db.createObjectStore('tombstones', { keyPath: 'id' });
    db.createObjectStore('meta', { keyPath: 'key' });
  },
];

export const SCHEMA_VERSION = MIGRATIONS.length - 1;

function promised(request) {
  return new Promise((resolve, reject) => {
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
}

function done(tx) {
  return new Promise((resolve, reject) => {
    tx.oncomplete = () => resolve();
    tx.onerror = () => reject(tx.error);
    tx.onabort = () => reject(tx.error || new Error('the IndexedDB transaction was aborted'));
  });
}

/** A key for what a solution's vectors are computed from: title, tags and text. */
export function contentKey(solution) {
  const text = `${solution.title}\u0000${(solution.tags || []).join(',')}\u0000${solution.text}`;
  // FNV-1a, 2 × 32 bits: staleness detection, not security.
  let a = 0x811c9dc5;
  let b = 0x01000193;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193) >>> 0;
    b = Math.imul(b ^ c, 0x5bd1e995) >>> 0;
  }
  return `${text.length.toString(36)}-${a.toString(36)}-${b.toString(36)}`;
}

export class LocalDb {
  constructor(db) {
    this.db = db;
  }

  static async open(name = NAME) {
    const request = indexedDB.open(name, SCHEMA_VERSION);
    request.onupgradeneeded = (event) => {
      for (let v = event.oldVersion + 1; v <= SCHEMA_VERSION; v++) MIGRATIONS[v](request.result, request.transaction);
    };
    request.onblocked = () => console.warn('devlens: another tab holds an older version of the database open');
    return new LocalDb(await promised(request));
  }

  tx(stores, mode = 'readonly') {
    return this.db.transaction(stores, mode);
  }

  async all() {
    return promised(this.tx('solutions').objectStore('solutions').getAll());
  }

  async get(id) {
    return promised(this.tx('solutions').objectStore('solutions').get(id));
  }

  async count() {
    return promised(this.tx('solutions').objectStore('solutions').count());
  }

  /**
   * Writes solutions (replacing those with the same id) and, per solution, its chunk vectors when
   * given (`vectors[id]`: [{ byteStart, byteEnd, vector: Float32Array }], with `model`), dropping
   * vectors of earlier content. All in one transaction: all or nothing.
   */
  async put(solutions, vectors = {}, model = null) {
    const tx = this.tx(['solutions', 'vectors', 'tombstones'], 'readwrite');
    const store = tx.objectStore('solutions');
    const vectorStore = tx.objectStore('vectors');
    for (const solution of solutions) {
      store.put(solution);
      tx.objectStore('tombstones').delete(solution.id);
      const chunks = vectors[solution.id];
      if (chunks) {
        vectorStore.delete(IDBKeyRange.bound([solution.id, 0], [solution.id, Infinity]));
        const key = contentKey(solution);
        chunks.forEach((c, chunk) =>
          vectorStore.put({
            id: solution.id,
            chunk,
            model,
            byteStart: c.byteStart,
            byteEnd: c.byteEnd,
            contentKey: key,
            vector: c.vector.buffer.slice(c.vector.byteOffset, c.vector.byteOffset + c.vector.byteLength),
          }),
        );
      }
    }
    await done(tx);
  }

  /** Deletes solutions with their vectors; `tombstone` records the deletion for the next sync. */
  async delete(ids, tombstone = null) {
    const tx = this.tx(['solutions', 'vectors', 'tombstones'], 'readwrite');
    for (const id of ids) {
      const existing = await promised(tx.objectStore('solutions').get(id));
      tx.objectStore('solutions').delete(id);
      tx.objectStore('vectors').delete(IDBKeyRange.bound([id, 0], [id, Infinity]));
      if (tombstone && existing && existing.sync && existing.sync.base) {
        tx.objectStore('tombstones').put({ id, deletedAt: tombstone, base: existing.sync.base });
      } else {
        tx.objectStore('tombstones').delete(id);
      }
    }
    await done(tx);
  }

  async tombstones() {
    return promised(this.tx('tombstones').objectStore('tombstones').getAll());
  }

  /** Records that a deleted solution's deletion is of the version `base` (if it was deleted). */
  async rebaseTombstone(id, base) {
    const tx = this.tx('tombstones', 'readwrite');
    const store = tx.objectStore('tombstones');
    const tombstone = await promised(store.get(id));
    if (tombstone) store.put({ ...tombstone, base });
    await done(tx);
  }

  async clearTombstones(ids) {
    const tx = this.tx('tombstones', 'readwrite');
    for (const id of ids) tx.objectStore('tombstones').delete(id);
    await done(tx);
  }

  /** Every chunk vector record (vector as ArrayBuffer). */
  async vectors() {
    return promised(this.tx('vectors').objectStore('vectors').getAll());
  }

  async vectorsOf(id) {
    return promised(this.tx('vectors').objectStore('vectors').index('id').getAll(id));
  }

  async meta(key) {
    const record = await promised(this.tx('meta').objectStore('meta').get(key));
    return record ? record.value : undefined;
  }

  async setMeta(key, value) {
    const tx = this.tx('meta', 'readwrite');
    tx.objectStore('meta').put({ key, value });
    await done(tx);
  }
}
