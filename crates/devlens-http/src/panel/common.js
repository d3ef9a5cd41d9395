// What every panel page shares: calls to the REST API and building the page from text (values
// from the server are always set as text, never parsed as HTML).

export const $ = (selector, root = document) => root.querySelector(selector);

/** Calls the REST API; a failure throws an Error with the server's message. */
export async function api(path, options = {}) {
  const response = await fetch(path, {
    ...options,
    headers: { Accept: 'application/json', 'Content-Type': 'application/json' },
  });
  const body = await response.json().catch(() => ({}));
  if (!response.ok) {
    throw new Error(body.error || `the server answered HTTP ${response.status}`);
  }
  return body;
}

/** Reads a server-sent-event answer of a POST, calling `on(event, data)` for each event. */
export async function streamEvents(path, on) {
  const response = await fetch(path, { method: 'POST', headers: { Accept: 'text/event-stream' } });
  if (!response.ok || !response.body) {
    const body = await response.json().catch(() => ({}));
    throw new Error(body.error || `the server answered HTTP ${response.status}`);
  }
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    let end;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let event = 'message';
      const data = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('event:')) event = line.slice(6).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
      }
      if (data.length) on(event, JSON.parse(data.join('\n')));
    }
  }
}

export function element(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (className) node.className = className;
  return node;
}

export function table(caption, headers, rows) {
  const t = element('table');
  t.append(element('caption', caption, 'visually-hidden'));
  const head = t.createTHead().insertRow();
  for (const h of headers) {
    const th = element('th', h);
    th.scope = 'col';
    head.append(th);
  }
  const body = t.createTBody();
  for (const row of rows) {
    const tr = body.insertRow();
    for (const [content, className] of row) {
      const td = element('td', content instanceof Node ? undefined : content, className);
      if (content instanceof Node) td.append(content);
      tr.append(td);
    }
  }
  return t;
}

export function plural(n, word) {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** Shows `message` in the alert `node` (or hides it when empty). */
export function say(node, message) {
  node.textContent = message || '';
  node.hidden = !message;
}

/** Fills a <select> with the projects, the active one selected. */
export async function fillProjects(select) {
  const { projects, active } = await api('/api/projects');
  select.replaceChildren();
  for (const p of projects) {
    const option = element('option', p.name);
    option.value = p.name;
    option.selected = p.name === active;
    select.append(option);
  }
  select.disabled = projects.length === 0;
  if (!projects.length) select.append(element('option', 'No projects yet'));
  return { projects, active };
}
