// The Browser page: the agent's browser, live. One EventSource on /api/browser/events brings
// the connections and tabs, the active tab's console and network, and the debugger's pause;
// the buttons call the same REST routes as the tools (launch, screenshot, resume, step).

import { $, api, element, plural, say, table } from './common.js';

/** Most console rows kept on the page (the oldest go first). */
const MAX_CONSOLE_ROWS = 500;

const NO_BROWSER =
  'No browser is connected. Start one with the `chrome` tool (action `launch`), `devlens browser launch`, or the button below.';

// ---- connections and tabs ----

function showBrowser(view) {
  const none = !view.connected;
  $('#no-browser').hidden = !none;
  if (none) $('#no-browser-message').textContent = view.message || NO_BROWSER;
  const connections = $('#connections');
  connections.replaceChildren();
  if (view.connections.length) {
    connections.append(
      table(
        'Browser connections',
        ['Connection', 'Browser', 'How', 'Endpoint', 'Tabs'],
        view.connections.map((c) => [
          [`${c.id}${c.active ? ' (active)' : ''}${c.alive ? '' : ' — gone'}`],
          [`${c.browser}${c.headless ? ', headless' : ''}`],
          [c.kind === 'launched' ? `launched${c.pid ? `, pid ${c.pid}` : ''}` : 'connected'],
          [c.endpoint, 'where'],
          [c.tabs],
        ]),
      ),
    );
  }
  const tabs = $('#tabs');
  tabs.replaceChildren();
  $('#tabs-heading').hidden = !view.tabs.length;
  if (view.tabs.length) {
    tabs.append(
      table(
        'Tabs of the active connection',
        ['#', 'Title', 'URL', 'Active'],
        view.tabs.map((t) => [[t.index], [t.title || '(untitled)'], [t.url, 'where'], [t.active ? 'active' : '']]),
      ),
    );
  }
  if (none) clearPage();
}

async function launch() {
  const button = $('#launch');
  say($('#launch-error'), '');
  button.disabled = true;
  $('#launch-status').textContent = 'Launching…';
  try {
    const c = await api('/api/browser/chrome', { method: 'POST', body: JSON.stringify({ action: 'launch' }) });
    $('#launch-status').textContent = `Launched ${c.id} (${c.browser}).`;
  } catch (e) {
    $('#launch-status').textContent = '';
    say($('#launch-error'), e.message);
  } finally {
    button.disabled = false;
  }
}

// ---- the page: console and network ----

let consoleCount = 0;

function clearPage() {
  $('#console').replaceChildren();
  consoleCount = 0;
  $('#console-summary').textContent = 'No console messages on this page yet.';
  $('#network tbody').replaceChildren();
  $('#network').hidden = true;
  $('#network-summary').textContent = 'No requests on this page yet.';
  $('#active-page').textContent = '';
  showRunning();
}

function showPage(page) {
  clearPage();
  $('#active-page').textContent = `Watching tab ${page.tab.slice(0, 8)} of ${page.connection}: ${page.url || 'about:blank'}`;
}

function consoleRow(entry) {
  const li = element('li', undefined, `entry level-${entry.level}`);
  li.dataset.key = `${entry.level}\u0000${entry.text}\u0000${entry.source ?? ''}`;
  li.append(element('span', entry.uncaught ? 'uncaught' : entry.level, 'level'));
  li.append(element('span', entry.text, 'text'));
  if (entry.count > 1) li.append(element('span', `×${entry.count}`, 'count'));
  if (entry.source) li.append(element('span', entry.source, 'where'));
  if (entry.stack && entry.stack.length > 1) {
    const stack = element('ol', undefined, 'stack');
    for (const frame of entry.stack) stack.append(element('li', `at ${frame}`));
    li.append(stack);
  }
  return li;
}

function addConsole(batch) {
  const list = $('#console');
  for (const entry of batch.entries) {
    const row = consoleRow(entry);
    // A repeat comes again with its count raised: it replaces the row it repeats.
    const last = list.lastElementChild;
    if (entry.count > 1 && last && last.dataset.key === row.dataset.key) {
      last.replaceWith(row);
    } else {
      list.append(row);
      consoleCount += 1;
    }
  }
  while (list.childElementCount > MAX_CONSOLE_ROWS) list.firstElementChild.remove();
  const earlier = batch.omitted ? ` (${batch.omitted} more arrived too fast to show)` : '';
  $('#console-summary').textContent = `${plural(consoleCount, 'message')} on this page${earlier}.`;
}

function bytes(n) {
  if (n === undefined || n === null) return '';
  return n < 1024 ? `${n} B` : `${(n / 1024).toFixed(1)} kB`;
}

function requestCells(r) {
  let status;
  let statusClass = '';
  if (r.failure) {
    status = `failed: ${r.failure}`;
    statusClass = 'bad';
  } else if (r.status) {
    status = String(r.status);
    if (r.status >= 400) statusClass = 'bad';
  } else {
    status = r.pending ? 'pending' : '';
  }
  return [
    [`#${r.id}`],
    [r.method],
    [status, statusClass],
    [r.resourceType],
    [r.url, 'where'],
    [r.durationMs !== undefined ? `${r.durationMs} ms` : ''],
    [`${bytes(r.size)}${r.fromCache ? ' (cache)' : ''}`],
  ];
}

function addNetwork(batch) {
  const body = $('#network tbody');
  for (const r of batch.requests) {
    const tr = document.createElement('tr');
    tr.dataset.id = String(r.id);
    for (const [text, className] of requestCells(r)) tr.append(element('td', text, className));
    const existing = body.querySelector(`tr[data-id="${r.id}"]`);
    if (existing) existing.replaceWith(tr);
    else body.append(tr);
  }
  $('#network').hidden = body.childElementCount === 0;
  const failed = body.querySelectorAll('td.bad').length;
  $('#network-summary').textContent =
    `${plural(body.childElementCount, 'request')} on this page` + (failed ? `, ${failed} failed.` : '.');
}

// ---- the debugger ----

function showRunning() {
  $('#pause').hidden = true;
  $('#pause-state').textContent = 'The page is running (not paused).';
}

function where(location) {
  return `${location.function} (${location.url}:${location.line}:${location.column})`;
}

function showPause(context) {
  $('#pause').hidden = false;
  $('#pause-state').textContent = `Paused (${context.reason}) at ${where(context.location)}`;
  const facts = $('#pause-facts');
  facts.replaceChildren();
  const add = (term, value) => facts.append(element('dt', term), element('dd', value));
  add('Reason', context.reason);
  add('Location', where(context.location));
  if (context.location.generated) {
    const g = context.location.generated;
    add('Generated', `${g.url}:${g.line}:${g.column}`);
  }
  if (context.hitBreakpoints && context.hitBreakpoints.length) add('Breakpoints', context.hitBreakpoints.join(', '));
  if (context.exception) add('Exception', context.exception);
  // The notes name the agent's next tools; the buttons below are this page's.
  for (const note of context.notes || []) if (!note.startsWith('next:')) add('Note', note);
  const width = Math.max(1, ...context.source.map((l) => String(l.line).length));
  $('#pause-source').textContent = context.source
    .map((l) => `${l.current ? '→' : ' '} ${String(l.line).padStart(width)} | ${l.text}`)
    .join('\n');
  $('#pause-source').hidden = !context.source.length;
  const stack = context.callStack.map((f) => [[`#${f.index}`], [f.function], [`${f.url}:${f.line}:${f.column}`, 'where']]);
  if (context.framesOmitted) stack.push([['…'], [`${context.framesOmitted} deeper frames`], ['']]);
  $('#pause-stack').replaceChildren(table('Call stack, innermost first', ['Frame', 'Function', 'Location'], stack));
  const locals = context.locals.map((v) => [[v.name, 'where'], [v.value, 'where']]);
  if (context.localsOmitted) locals.push([['…'], [`${context.localsOmitted} more not shown`]]);
  $('#pause-locals').replaceChildren(
    locals.length
      ? table('Scope variables of the top frame', ['Name', 'Value'], locals)
      : element('p', 'No local variables in this frame.', 'hint'),
  );
}

async function debuggerCall(path, body, doing) {
  say($('#debug-error'), '');
  $('#debug-status').textContent = doing;
  for (const b of document.querySelectorAll('#pause button')) b.disabled = true;
  try {
    await api(path, { method: 'POST', body: JSON.stringify(body) });
    $('#debug-status').textContent = '';
  } catch (e) {
    $('#debug-status').textContent = '';
    say($('#debug-error'), e.message);
  } finally {
    for (const b of document.querySelectorAll('#pause button')) b.disabled = false;
  }
}

// ---- screenshot ----

async function shoot() {
  const button = $('#shoot');
  say($('#shot-error'), '');
  button.disabled = true;
  $('#shot-status').textContent = 'Taking a screenshot…';
  try {
    const shot = await api('/api/browser/screenshot', { method: 'POST', body: JSON.stringify({}) });
    const img = $('#shot');
    img.src = `data:${shot.mimeType};base64,${shot.data}`;
    const at = new Date().toLocaleTimeString();
    img.alt = `The active tab's viewport at ${at}`;
    img.hidden = false;
    $('#shot-status').textContent = `Taken at ${at}: ${shot.width}×${shot.height}.`;
  } catch (e) {
    $('#shot-status').textContent = '';
    say($('#shot-error'), e.message);
  } finally {
    button.disabled = false;
  }
}

// ---- the live view ----

function listen() {
  const source = new EventSource('/api/browser/events');
  const on = (name, handler) => source.addEventListener(name, (event) => handler(JSON.parse(event.data)));
  source.addEventListener('open', () => {
    // A (re)connected stream sends everything again.
    clearPage();
    $('#live-status').textContent = 'Live: updates appear as they happen.';
  });
  source.addEventListener('error', () => {
    $('#live-status').textContent = 'The live view lost the server; reconnecting…';
  });
  on('browser', showBrowser);
  on('page', showPage);
  on('console', addConsole);
  on('network', addNetwork);
  on('paused', showPause);
  on('resumed', showRunning);
}

$('#launch').addEventListener('click', launch);
$('#shoot').addEventListener('click', shoot);
$('#resume').addEventListener('click', () =>
  debuggerCall('/api/debugger/execution', { action: 'resume' }, 'Resuming…'),
);
for (const button of document.querySelectorAll('[data-step]')) {
  button.addEventListener('click', () =>
    debuggerCall('/api/debugger/step', { direction: button.dataset.step, includeContext: false }, 'Stepping…'),
  );
}
listen();
