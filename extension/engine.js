// Talking to the engine (offscreen.js, the local knowledge base) from the popup, the options
// page and the DevTools panel: every request goes through the service worker, which starts the
// engine when it is not running (background.js).

/** Runs `op` in the engine; answers its value or throws an Error with its message. */
export async function engine(op, args = {}) {
  const answer = await chrome.runtime.sendMessage({ kind: 'engine', op, args });
  if (!answer) throw new Error('The devlens engine did not answer: reload the extension in chrome://extensions.');
  if (!answer.ok) {
    const error = new Error(answer.error);
    error.invalid = Boolean(answer.invalid);
    throw error;
  }
  return answer.value;
}

/** Asks the service worker to sync with the paired server now; answers the sync state. */
export async function syncNow() {
  const answer = await chrome.runtime.sendMessage({ kind: 'sync-now' });
  if (!answer || !answer.ok) throw new Error((answer && answer.error) || 'The sync did not run.');
  return answer.value;
}

/**
 * Calls `listener(status)` with the engine's status now and whenever it changes (model loading,
 * embedding, saves, syncs), never with one older than the last (a broadcast can overtake the
 * answer to a request). While the model loads it also asks every second.
 */
export function watchEngine(listener, onError = () => {}) {
  let seq = -1;
  const take = (status) => {
    if (status.seq < seq) return;
    seq = status.seq;
    listener(status);
  };
  chrome.runtime.onMessage.addListener((message) => {
    if (message && message.kind === 'engine-status') take(message.status);
  });
  const ask = () =>
    engine('status').then((status) => {
      take(status);
      if (status.model.state === 'loading' || status.model.state === 'not loaded') setTimeout(ask, 1000);
    }, onError);
  ask();
}

/** One line on the model's state, for the popup and the options page. */
export function describeModel(status) {
  const m = status.model;
  if (m.state === 'ready') return `Search by meaning ready (${m.id}, in this browser).`;
  if (m.state === 'failed') return `The embedding model did not load, so search runs by keywords: ${m.error}`;
  if (m.state === 'loading') {
    if (m.phase === 'model' && m.total) return `Loading the embedding model… ${Math.round((m.loaded / m.total) * 100)}%`;
    if (m.phase === 'compile') return 'Loading the embedding model… preparing it';
    return 'Loading the embedding model…';
  }
  return 'The embedding model has not loaded yet.';
}
