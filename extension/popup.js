// The popup: save the current page (its main text) or the selection to the knowledge base in
// this browser, search it by meaning (or by keywords) with relevance in percent, and ask it for
// a cited answer. Everything works with no server; paired, the engine syncs with the server.
// Values from the engine, the server and the page are always set as text.

import { MAX_TEXT, loadSettings, parseTags, readTab } from './devlens.js';
import { ask } from './ask.js';
import { describeModel, engine, syncNow, watchEngine } from './engine.js';
import { describeSync } from './syncstate.js';

const $ = (selector) => document.querySelector(selector);

function say(node, message) {
  node.textContent = message || '';
  node.hidden = !message;
}

function element(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (className) node.className = className;
  return node;
}

/** The tab the popup acts on: `?tab=<id>` (the popup opened in a tab of its own), else the active one. */
async function targetTab() {
  const id = Number(new URLSearchParams(location.search).get('tab'));
  if (id) return chrome.tabs.get(id);
  const [tab] = await chrome.tabs.query({ active: true, currentWindow: true });
  return tab;
}

let page = null;

async function showPairing() {
  const { serverUrl, paired } = await loadSettings();
  const note = $('#pairing');
  if (paired) {
    say(note, '');
    return;
  }
  note.replaceChildren(
    element('span', `Saved in this browser only. Pair with a devlens server (${serverUrl}) to sync. `),
  );
  const open = element('button', 'Open the options to pair', 'secondary');
  open.type = 'button';
  open.addEventListener('click', () => chrome.runtime.openOptionsPage());
  note.append(open);
  note.hidden = false;
}

async function loadPage() {
  const summary = $('#page-summary');
  try {
    const tab = await targetTab();
    if (!tab) throw new Error('There is no tab to read.');
    page = await readTab(tab.id);
  } catch (e) {
    page = null;
    say($('#save-error'), e.message);
    $('#save').disabled = true;
    return;
  }
  $('#title').value = page.title || page.url;
  $('#url').textContent = page.url;
  const selection = $('#what-selection');
  selection.disabled = !page.selection;
  if (page.selection) selection.checked = true;
  const words = (text) => (text.match(/\S+/g) || []).length;
  summary.textContent = page.selection
    ? `Selection: ${words(page.selection)} words. Main text: ${words(page.text)} words.`
    : `Main text: ${words(page.text)} words. Select text on the page to save only that.`;
}

async function save(event) {
  event.preventDefault();
  say($('#title-error'), '');
  say($('#save-error'), '');
  if (!page) return;
  const title = $('#title').value.trim();
  if (!title) {
    say($('#title-error'), 'Give the solution a title.');
    $('#title').focus();
    return;
  }
  const what = document.querySelector('input[name=what]:checked').value;
  let text = what === 'selection' ? page.selection : page.text;
  if (!text.trim()) {
    say($('#save-error'), 'The page has no readable text to save: select the part you want and save the selection.');
    return;
  }
  if (text.length > MAX_TEXT) text = text.slice(0, MAX_TEXT);
  const button = $('#save');
  const status = $('#save-status');
  button.disabled = true;
  status.textContent = 'Saving…';
  try {
    const saved = await engine('save', { title, url: page.url, text, tags: parseTags($('#tags').value) });
    const how = saved.embedded ? 'searchable by meaning' : 'searchable by keywords';
    status.textContent = `Saved “${saved.solution.title}” in this browser (${how}).`;
    if (saved.notice) say($('#save-error'), saved.notice);
  } catch (e) {
    status.textContent = '';
    say($('#save-error'), e.message);
  } finally {
    button.disabled = false;
  }
}

function percent(hit, mode) {
  return mode === 'semantic' ? `${hit.relevance}% relevant` : `keyword match, ${hit.relevance}%`;
}

function link(title, url) {
  if (!url || !/^https?:\/\//i.test(url)) return element('span', title);
  const a = element('a', title);
  a.href = url;
  a.target = '_blank';
  a.rel = 'noopener';
  return a;
}

async function search(event) {
  event.preventDefault();
  say($('#search-error'), '');
  const query = $('#query').value.trim();
  const list = $('#results');
  if (!query) {
    say($('#search-error'), 'Type what you are looking for.');
    $('#query').focus();
    return;
  }
  const status = $('#search-status');
  status.textContent = 'Searching…';
  try {
    const mode = document.querySelector('input[name=mode]:checked').value;
    const found = await engine('search', { query, mode });
    list.replaceChildren();
    for (const hit of found.results) {
      const item = element('li');
      item.append(link(hit.title, hit.url), element('span', percent(hit, found.mode), 'relevance'));
      if (hit.excerpt) item.append(element('p', hit.excerpt, 'excerpt'));
      list.append(item);
    }
    const by = found.mode === 'semantic' ? 'by meaning' : 'by keywords';
    status.textContent = found.results.length ? `${found.results.length} found ${by}.` : `Nothing found ${by}.`;
    say($('#search-notice'), found.notice || '');
  } catch (e) {
    status.textContent = '';
    say($('#search-error'), e.message);
  }
}

async function askQuestion(event) {
  event.preventDefault();
  say($('#ask-error'), '');
  const question = $('#question').value.trim();
  if (!question) {
    say($('#ask-error'), 'Type a question.');
    $('#question').focus();
    return;
  }
  const status = $('#ask-status');
  const holder = $('#answer');
  status.textContent = 'Asking…';
  try {
    const mode = document.querySelector('input[name=mode]:checked').value;
    const result = await ask(question, { mode });
    $('#produced-by').textContent = result.note;
    say($('#answer-text'), result.answer || '');
    const sources = $('#sources');
    sources.replaceChildren();
    for (const s of result.sources) {
      const item = element('li');
      item.value = s.n;
      item.append(link(s.title, s.url), element('span', `${s.relevance}% relevant`, 'relevance'));
      sources.append(item);
    }
    $('#context').textContent = result.context || '';
    $('#context-details').hidden = !result.context;
    $('#context-details').open = !result.answer && Boolean(result.context);
    holder.hidden = false;
    status.textContent = result.answer ? 'Answered.' : 'No generated answer: see the sources.';
  } catch (e) {
    status.textContent = '';
    holder.hidden = true;
    say($('#ask-error'), e.message);
  }
}

function showEngine(status) {
  $('#engine-status').textContent = describeModel(status);
  const bar = $('#model-progress');
  const m = status.model;
  bar.hidden = !(m.state === 'loading' && m.phase === 'model' && m.total);
  if (!bar.hidden) bar.value = Math.round((m.loaded / m.total) * 100);
  if (status.background && status.background.running) {
    $('#engine-status').textContent += ` Embedding saved solutions: ${status.background.done} of ${status.background.total}.`;
  }
}

async function showSync(state) {
  const { paired } = await loadSettings();
  const node = $('#sync-status');
  if (!paired) {
    node.hidden = true;
    return;
  }
  const status = state || (await engine('status'));
  node.replaceChildren(element('span', describeSync(status.sync, status.pending)));
  const button = element('button', 'Sync now', 'secondary sync-button');
  button.type = 'button';
  button.addEventListener('click', async () => {
    button.disabled = true;
    try {
      await syncNow();
    } catch (e) {
      say($('#search-error'), e.message);
    }
    await showSync();
  });
  node.append(button);
  node.hidden = false;
}

watchEngine(
  (status) => {
    showEngine(status);
    showSync(status);
  },
  (e) => say($('#engine-status'), e.message),
);

$('#save-form').addEventListener('submit', save);
$('#search-form').addEventListener('submit', search);
$('#ask-form').addEventListener('submit', askQuestion);
showPairing();
loadPage();
