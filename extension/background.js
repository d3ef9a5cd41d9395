// The service worker: the context-menu entry, the engine's keeper (it starts the offscreen
// document that holds the local knowledge base and forwards requests to it) and the sync with the
// paired server (after every change, every few minutes, and on request).

import { call, loadSettings } from './devlens.js';
import { MENU_ID, saveSelection, showOutcome } from './menu.js';

const OFFSCREEN = 'offscreen.html';
const SYNC_ALARM = 'devlens-sync';
/** Operations that change the knowledge base: a sync follows them. */
const CHANGES = new Set(['save', 'update', 'remove', 'import']);

let creating = null;

/** Starts the engine (the offscreen document) unless it runs. */
async function ensureEngine() {
  try {
    await startEngine();
  } catch (e) {
    throw new Error(`the devlens engine could not start: ${e.message}`);
  }
}

async function startEngine() {
  const url = chrome.runtime.getURL(OFFSCREEN);
  const running = await chrome.runtime.getContexts({ contextTypes: ['OFFSCREEN_DOCUMENT'], documentUrls: [url] });
  if (running.length) return;
  if (!creating) {
    creating = chrome.offscreen
      .createDocument({
        url: OFFSCREEN,
        reasons: ['WORKERS'],
        justification: 'Runs the embedding model and holds the local knowledge base.',
      })
      .finally(() => {
        creating = null;
      });
  }
  await creating;
}

/** Runs `op` in the engine: its answer, { ok, value } or { ok: false, error }. */
export async function forward(op, args = {}) {
  try {
    await ensureEngine();
  } catch (e) {
    return { ok: false, error: e.message };
  }
  let why = 'it did not answer';
  // The document may exist before its script has registered its listener: retry for 5 s.
  for (let attempt = 0; attempt < 50; attempt++) {
    try {
      const answer = await chrome.runtime.sendMessage({ kind: 'engine-forward', op, args });
      if (answer) return answer;
    } catch (e) {
      why = e.message;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { ok: false, error: `the devlens engine did not start (${why}): reload the extension in chrome://extensions` };
}

async function value(op, args) {
  const answer = await forward(op, args);
  if (!answer.ok) throw new Error(answer.error);
  return answer.value;
}

let syncing = null;

/**
 * Syncs with the paired server: the engine's changes go up, the server's come down. Unpaired,
 * nothing happens; a server that does not answer leaves the changes queued.
 */
function syncNow() {
  if (!syncing) {
    syncing = (async () => {
      const settings = await loadSettings();
      if (!settings.paired) return { ...(await value('status')).sync, unpaired: true };
      const request = await value('syncRequest', { server: settings.serverUrl });
      let response;
      try {
        // `server`, `fresh` and `staleTombstones` are the engine's bookkeeping, not the protocol's.
        const { server: _server, fresh: _fresh, staleTombstones: _stale, ...body } = request;
        response = await call('/api/kb/sync', body, settings.serverUrl);
      } catch (e) {
        return value('syncFailed', { error: e.message });
      }
      const applied = await forward('syncApply', { request, response });
      if (!applied.ok) return value('syncFailed', { error: applied.error });
      return applied.value;
    })().finally(() => {
      syncing = null;
      // A change made while this sync ran goes up now, not at the next alarm.
      if (syncAgain) {
        syncAgain = false;
        scheduleSync();
      }
    });
  } else {
    syncAgain = true;
  }
  return syncing;
}

let syncAgain = false;

let syncSoon = null;

function scheduleSync() {
  clearTimeout(syncSoon);
  syncSoon = setTimeout(() => syncNow().catch((e) => console.warn('devlens sync:', e)), 500);
}

chrome.runtime.onMessage.addListener((message, _sender, respond) => {
  if (!message) return false;
  if (message.kind === 'engine') {
    forward(message.op, message.args).then((answer) => {
      respond(answer);
      if (answer.ok && CHANGES.has(message.op)) scheduleSync();
    });
    return true;
  }
  if (message.kind === 'sync-now') {
    syncNow().then(
      (state) => respond({ ok: true, value: state }),
      (e) => respond({ ok: false, error: e.message }),
    );
    return true;
  }
  return false;
});

chrome.runtime.onInstalled.addListener(() => {
  chrome.contextMenus.create({
    id: MENU_ID,
    title: 'Save selection to devlens',
    contexts: ['selection'],
  });
});

// Every few minutes, and when the browser starts: changes made offline go up once the server is
// back, and the server's come down.
// Created once: creating it again on every service-worker start would restart its period.
chrome.alarms.get(SYNC_ALARM).then((alarm) => {
  if (!alarm) chrome.alarms.create(SYNC_ALARM, { periodInMinutes: 5 });
});
chrome.alarms.onAlarm.addListener((alarm) => {
  if (alarm.name === SYNC_ALARM) syncNow().catch((e) => console.warn('devlens sync:', e));
});
chrome.runtime.onStartup.addListener(() => scheduleSync());

chrome.contextMenus.onClicked.addListener(async (info, tab) => {
  if (info.menuItemId !== MENU_ID) return;
  try {
    const answer = await forward('save', saveSelection(info, tab));
    if (!answer.ok) throw new Error(answer.error);
    scheduleSync();
    await showOutcome(tab, null);
  } catch (error) {
    await showOutcome(tab, error);
  }
});
