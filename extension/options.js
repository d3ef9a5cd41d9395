// The options page: the devlens server's URL, pairing with it, and the server token. The
// pairing token is sent once, from the extension's own origin, and not kept: the server
// remembers the origin instead. The server token (a server beyond loopback requires one) is kept
// in chrome.storage and sent with every call.

import { DEFAULT_SERVER, call, loadSettings, parseTags, saveServerToken, saveSettings } from './devlens.js';
import { describeModel, engine, syncNow, watchEngine } from './engine.js';
import { describeSync } from './syncstate.js';

const $ = (selector) => document.querySelector(selector);

function say(node, message) {
  node.textContent = message || '';
  node.hidden = !message;
}

async function showState() {
  const { serverUrl, paired, serverToken } = await loadSettings();
  $('#server').value = serverUrl;
  $('#server-token').value = serverToken;
  const withToken = serverToken ? ' Calls carry the server token saved below.' : '';
  $('#state').textContent = paired
    ? `Paired with the devlens server at ${serverUrl}.${withToken}`
    : `Not paired yet. The default server is ${DEFAULT_SERVER}.${withToken}`;
}

/** The server URL typed, normalised to its origin and a slash; an Error saying what is wrong. */
function serverUrl(text) {
  let url;
  try {
    url = new URL(text.trim());
  } catch {
    throw new Error(`Enter the server's address, for example ${DEFAULT_SERVER}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new Error(`The server URL must start with http:// or https://, for example ${DEFAULT_SERVER}`);
  }
  return `${url.origin}/`;
}

/** Loopback servers are in the manifest; any other needs the user's permission (asked now). */
async function permitted(server) {
  const host = new URL(server).hostname;
  if (host === '127.0.0.1' || host === 'localhost') return true;
  return chrome.permissions.request({ origins: [`${new URL(server).origin}/*`] });
}

async function pair(event) {
  event.preventDefault();
  say($('#server-error'), '');
  say($('#token-error'), '');
  say($('#server-token-error'), '');
  const status = $('#pair-status');
  let server;
  try {
    server = serverUrl($('#server').value);
  } catch (e) {
    say($('#server-error'), e.message);
    $('#server').focus();
    return;
  }
  const token = $('#token').value.trim();
  if (!token) {
    say($('#token-error'), "Paste the pairing token from the devlens panel's Extension page (or `devlens extension token`).");
    $('#token').focus();
    return;
  }
  if (!(await permitted(server))) {
    say($('#server-error'), `The extension needs your permission to reach ${server}: press Pair again and allow it.`);
    return;
  }
  const serverToken = $('#server-token').value.trim();
  if (serverToken && !serverToken.startsWith('dlt_')) {
    say($('#server-token-error'), 'A devlens server token starts with dlt_: paste all of it, or leave the field empty for a server on this machine.');
    $('#server-token').focus();
    return;
  }
  // Saved first: the pairing call itself needs it on a server that requires tokens.
  await saveServerToken(serverToken);
  $('#pair').disabled = true;
  status.textContent = 'Pairing…';
  try {
    await call('/api/extension/pair', { token }, server);
    await saveSettings(server, true);
    // The server may be another one at the same address (a fresh data dir): the next sync sends
    // everything here as new instead of taking what that server lacks for deletions.
    await engine('resetSync');
    $('#token').value = '';
    status.textContent = `Paired with ${server}. Syncing…`;
    try {
      const state = await syncNow();
      status.textContent = `Paired with ${server}. ${describeSync(state, 0)}`;
    } catch (e) {
      status.textContent = `Paired with ${server}; the first sync failed: ${e.message}`;
    }
  } catch (e) {
    status.textContent = '';
    await saveSettings(server, false);
    // A refused server token (401 naming it, 403) is that field's fault; a wrong pairing token
    // the pairing token's; anything else (no server, a refusal) the server's.
    const serverTokenRefused = e.status === 403 || (e.status === 401 && /requires a token|token sent/.test(e.message));
    const field = serverTokenRefused
      ? $('#server-token-error')
      : e.status === 401 || e.status === 400
        ? $('#token-error')
        : $('#server-error');
    say(field, e.message);
  } finally {
    $('#pair').disabled = false;
    await showState();
    await showLocal();
  }
}

async function showLocal(given) {
  try {
    const status = given || (await engine('status'));
    $('#local-counts').textContent = `${status.solutions} solution${status.solutions === 1 ? '' : 's'} in this browser, ${status.embedded} searchable by meaning.`;
    $('#local-model').textContent = describeModel(status);
    const { paired } = await loadSettings();
    $('#local-sync').textContent = paired
      ? describeSync(status.sync, status.pending)
      : `Not paired: nothing leaves this browser.${status.pending ? ` ${status.pending} changes will sync once paired.` : ''}`;
    $('#sync').disabled = !paired;
    // Progress events (the model loading) leave the list alone; changes redraw it.
    const shape = `${status.solutions}/${status.pending}/${status.sync && status.sync.at}`;
    if (!given || shape !== shownShape) await showSolutions();
    shownShape = shape;
  } catch (e) {
    say($('#local-error'), e.message);
  }
}

let editing = null;
let shownShape = '';

/** The solutions in this browser, newest first, each with Edit and Delete. */
async function showSolutions() {
  const list = $('#solutions');
  const solutions = await engine('list');
  list.replaceChildren();
  for (const s of solutions) {
    const item = document.createElement('li');
    const title = document.createElement(s.url && /^https?:\/\//i.test(s.url) ? 'a' : 'span');
    title.textContent = s.title;
    if (s.url && /^https?:\/\//i.test(s.url)) {
      title.href = s.url;
      title.target = '_blank';
      title.rel = 'noopener';
    }
    const meta = document.createElement('span');
    meta.className = 'relevance';
    meta.textContent = `${s.tags.join(', ')}${s.tags.length ? ' · ' : ''}${new Date(s.updatedAt).toLocaleString()}${s.sync && s.sync.dirty ? ' · not synced' : ''}`;
    const edit = document.createElement('button');
    edit.type = 'button';
    edit.className = 'secondary';
    edit.textContent = 'Edit';
    edit.setAttribute('aria-label', `Edit ${s.title}`);
    edit.addEventListener('click', () => startEdit(s));
    const remove = document.createElement('button');
    remove.type = 'button';
    remove.className = 'secondary';
    remove.textContent = 'Delete';
    remove.setAttribute('aria-label', `Delete ${s.title}`);
    remove.addEventListener('click', async () => {
      if (!confirm(`Delete “${s.title}”? Paired, it is deleted on the server too.`)) return;
      await engine('remove', { id: s.id });
      $('#local-status').textContent = `Deleted “${s.title}”.`;
      await showLocal();
    });
    item.append(title, meta, edit, remove);
    list.append(item);
  }
}

function startEdit(s) {
  editing = s.id;
  $('#edit-title').value = s.title;
  $('#edit-tags').value = s.tags.join(', ');
  $('#edit-text').value = s.text;
  say($('#edit-error'), '');
  $('#edit-form').hidden = false;
  $('#edit-title').focus();
}

async function saveEdit(event) {
  event.preventDefault();
  try {
    const s = await engine('update', {
      id: editing,
      fields: { title: $('#edit-title').value, tags: parseTags($('#edit-tags').value), text: $('#edit-text').value },
    });
    $('#edit-form').hidden = true;
    $('#local-status').textContent = `Saved “${s.title}”.`;
    await showLocal();
  } catch (e) {
    say($('#edit-error'), e.message);
  }
}

async function exportAll() {
  say($('#local-error'), '');
  const file = await engine('export');
  const url = URL.createObjectURL(new Blob([JSON.stringify(file, null, 2)], { type: 'application/json' }));
  const a = document.createElement('a');
  a.href = url;
  a.download = `devlens-kb-${new Date().toISOString().slice(0, 10)}.json`;
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
  $('#local-status').textContent = `Exported ${file.solutions.length} solutions.`;
}

async function importFile() {
  say($('#local-error'), '');
  const input = $('#import-file');
  const [chosen] = input.files;
  if (!chosen) return;
  let file;
  try {
    file = JSON.parse(await chosen.text());
  } catch (e) {
    say($('#local-error'), `${chosen.name} is not JSON (${e.message}): choose a file "devlens kb export" or this page wrote.`);
    return;
  }
  try {
    const counts = await engine('import', { file });
    $('#local-status').textContent = `Imported ${chosen.name}: ${counts.created} new, ${counts.replaced} replaced, ${counts.unchanged} unchanged.`;
  } catch (e) {
    say($('#local-error'), e.message);
  } finally {
    input.value = '';
    await showLocal();
  }
}

$('#pair-form').addEventListener('submit', pair);
$('#edit-form').addEventListener('submit', saveEdit);
$('#edit-cancel').addEventListener('click', () => {
  $('#edit-form').hidden = true;
});
$('#export').addEventListener('click', () => exportAll().catch((e) => say($('#local-error'), e.message)));
$('#import-file').addEventListener('change', importFile);
$('#sync').addEventListener('click', async () => {
  $('#local-status').textContent = 'Syncing…';
  try {
    await syncNow();
    $('#local-status').textContent = '';
  } catch (e) {
    say($('#local-error'), e.message);
  }
  await showLocal();
});
watchEngine((status) => showLocal(status), (e) => say($('#local-error'), e.message));
showState();
