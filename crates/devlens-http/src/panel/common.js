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
    if (response.status === 401) showSignIn(body.error);
    throw new Error(body.error || `the server answered HTTP ${response.status}`);
  }
  return body;
}

/** Reads a server-sent-event answer of a POST, calling `on(event, data)` for each event. */
export async function streamEvents(path, on) {
  const response = await fetch(path, { method: 'POST', headers: { Accept: 'text/event-stream' } });
  if (!response.ok || !response.body) {
    const body = await response.json().catch(() => ({}));
    if (response.status === 401) showSignIn(body.error);
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
  const listing = await api('/api/projects');
  showProjectOptions(select, listing);
  return listing;
}

/**
 * A refresh that fetches, then draws. Refreshes overlap (the page's first one may still be waiting
 * when an action starts another) and answers can arrive out of order: only the newest call draws,
 * so an older listing never replaces a newer one.
 */
export function newestOnly(fetch, draw) {
  let newest = 0;
  return async () => {
    const run = ++newest;
    const answer = await fetch();
    if (run === newest) draw(answer);
  };
}

/** Fills a project `<select>` from a `/api/projects` answer already in hand. */
export function showProjectOptions(select, { projects, active }) {
  select.replaceChildren();
  for (const p of projects) {
    const option = element('option', p.name);
    option.value = p.name;
    option.selected = p.name === active;
    select.append(option);
  }
  select.disabled = projects.length === 0;
  if (!projects.length) select.append(element('option', 'No projects yet'));
}

// ---- signing in, on a server that requires a token ----
// The panel's pages are public; its calls are not. Signing in sends the token once to
// POST /api/auth/session, which answers with an HttpOnly session cookie: every later call (and
// every event stream) carries the cookie, and the token is kept nowhere in the page.

/** Replaces the page with the sign-in form (`why`: the server's reason, when a call was refused). */
function showSignIn(why) {
  if ($('#sign-in-form')) return;
  const main = $('main');
  main.replaceChildren();
  main.append(element('h1', 'Sign in'));
  const lead = element('p', '', 'lead');
  lead.append(
    'This devlens server requires a token. Paste the one its owner gave you (made on the server with ',
    element('code', 'devlens token create --scope read'),
    ', or ',
    element('code', '--scope write'),
    ' to change things).',
  );
  main.append(lead);
  const form = element('form');
  form.id = 'sign-in-form';
  form.noValidate = true;
  const field = element('div', undefined, 'field');
  const label = element('label', 'Token');
  label.htmlFor = 'sign-in-token';
  const input = element('input');
  input.id = 'sign-in-token';
  input.type = 'password';
  input.autocomplete = 'off';
  input.spellcheck = false;
  input.setAttribute('aria-describedby', 'sign-in-error');
  field.append(label, input);
  const error = element('p', undefined, 'error');
  error.id = 'sign-in-error';
  error.setAttribute('role', 'alert');
  const actions = element('div', undefined, 'actions');
  const button = element('button', 'Sign in');
  button.type = 'submit';
  const status = element('span', '', 'status');
  status.setAttribute('role', 'status');
  status.setAttribute('aria-live', 'polite');
  actions.append(button, status);
  form.append(field, error, actions);
  main.append(form);
  say(error, why && !/requires a token/.test(why) ? why : '');
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const token = input.value.trim();
    if (!token) {
      say(error, 'Paste the token (it starts with dlt_).');
      input.focus();
      return;
    }
    button.disabled = true;
    status.textContent = 'Signing in…';
    say(error, '');
    try {
      const response = await fetch('/api/auth/session', {
        method: 'POST',
        headers: { Accept: 'application/json', 'Content-Type': 'application/json' },
        body: JSON.stringify({ token }),
      });
      const body = await response.json().catch(() => ({}));
      if (!response.ok) throw new Error(body.error || `the server answered HTTP ${response.status}`);
      input.value = '';
      status.textContent = 'Signed in.';
      // The page starts again, now with the session cookie.
      location.reload();
    } catch (e) {
      status.textContent = '';
      say(error, e.message);
      input.focus();
    } finally {
      button.disabled = false;
    }
  });
  input.focus();
}

/** A "Sign out" button in the header, naming the token the panel signed in with. */
function showSignOut(session) {
  const header = $('header.top');
  if (!header || $('#sign-out')) return;
  const who = element(
    'span',
    `Signed in: ${session.name || `token ${session.tokenId}`} (${session.scope})`,
    'status signed-in',
  );
  const button = element('button', 'Sign out', 'secondary');
  button.id = 'sign-out';
  button.type = 'button';
  button.addEventListener('click', async () => {
    await fetch('/api/auth/session', { method: 'DELETE' }).catch(() => {});
    location.reload();
  });
  header.append(who, button);
}

const session = await fetch('/api/auth/session', { headers: { Accept: 'application/json' } })
  .then((response) => (response.ok ? response.json() : {}))
  .catch(() => ({}));
if (session.required && !session.signedIn) {
  showSignIn();
  // The page's own module imports this one: it waits here, so it makes no call that would be
  // refused. Signing in reloads the page.
  await new Promise(() => {});
} else if (session.required) {
  showSignOut(session);
}
