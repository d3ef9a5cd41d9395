// The devlens panel: plain ES module, no build step. Every call goes to the same REST API the
// CLI and MCP tools use; every value from the server is put on the page as text, never as HTML.

const $ = (selector) => document.querySelector(selector);

async function api(path, options = {}) {
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

function element(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (className) node.className = className;
  return node;
}

function table(caption, headers, rows) {
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
    for (const [text, className] of row) tr.append(element('td', text, className));
  }
  return t;
}

const KIND = {
  'undocumented-status': 'undocumented status',
  'undocumented-content-type': 'undocumented content type',
  'missing-required': 'missing required',
  'wrong-type': 'wrong type',
  'enum-value': 'value not in enum',
  'extra-field': 'extra field',
  'unknown-parameter': 'unknown parameter',
  constraint: 'constraint',
  'invalid-json': 'invalid JSON',
};

function plural(n, word) {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

function renderTraffic(report) {
  $('#traffic-summary').textContent =
    `Checked ${plural(report.checked, 'call')} against ${report.api}: ` +
    `${plural(report.findings, 'finding')}, ${plural(report.undocumented.length, 'undocumented endpoint')}`;
  $('#traffic-summary').classList.toggle('clean', report.findings === 0 && report.undocumented.length === 0);
  $('#traffic-bases').textContent = `API base: ${report.bases.join(', ')}`;
  const operations = $('#traffic-operations');
  operations.replaceChildren();
  for (const op of report.operations) {
    const statuses = op.statuses.length ? op.statuses.join(', ') : 'no answer';
    const title = `${op.operationId ?? '(no operationId)'} ${op.method} ${op.path}`;
    operations.append(element('h3', title));
    operations.append(element('p', `${plural(op.calls, 'call')} (${statuses})` + (op.findings.length ? '' : ': as documented'), 'hint'));
    if (op.findings.length) {
      operations.append(
        table(
          `Findings of ${title}`,
          ['Side', 'Where', 'Problem', 'Expected', 'Seen', 'Calls'],
          op.findings.map((f) => [
            [f.side === 'response' && f.status ? `response ${f.status}` : f.side],
            [f.parameter ?? (f.pointer === '' ? '(body)' : f.pointer ?? ''), 'where'],
            [KIND[f.kind] ?? f.kind, 'kind'],
            [f.expected],
            [f.seen ?? '', 'where'],
            [f.count],
          ]),
        ),
      );
    }
  }
  const undocumented = $('#traffic-undocumented');
  undocumented.replaceChildren();
  if (report.undocumented.length) {
    undocumented.append(element('h3', 'Undocumented'));
    undocumented.append(
      table(
        'Calls no operation describes',
        ['Method', 'Path', 'Calls', 'Statuses', 'Note'],
        report.undocumented.map((u) => [
          [u.method],
          [u.path, 'where'],
          [u.calls],
          [u.statuses.join(', ')],
          [u.documentedMethods?.length ? `the path is documented for ${u.documentedMethods.join(', ')} only` : 'no operation has this path'],
        ]),
      ),
    );
  }
  const tail = [];
  if (report.otherRequests) tail.push(`${plural(report.otherRequests, 'other request')} (not this API) left out`);
  if (report.unanswered) tail.push(`${plural(report.unanswered, 'call')} without an answer`);
  if (report.uncheckedBodies) tail.push(`${report.uncheckedBodies} too large to check`);
  $('#traffic-tail').textContent = tail.join('; ');
  $('#traffic-result').hidden = false;
}

async function checkTraffic(event) {
  event.preventDefault();
  const button = $('#check');
  const error = $('#traffic-error');
  const baseUrl = $('#base-url').value.trim();
  error.hidden = true;
  if (baseUrl && !/^https?:\/\//.test(baseUrl)) {
    error.textContent = 'The API base URL must start with http:// or https:// (e.g. http://127.0.0.1:8080/api), or be left empty.';
    error.hidden = false;
    $('#base-url').setAttribute('aria-invalid', 'true');
    $('#base-url').focus();
    return;
  }
  $('#base-url').removeAttribute('aria-invalid');
  button.disabled = true;
  $('#traffic-status').textContent = 'Checking…';
  try {
    const body = { project: $('#project').value || undefined };
    if (baseUrl) body.baseUrl = baseUrl;
    const har = $('#har').value.trim();
    if (har) body.har = har;
    const report = await api('/api/check-traffic', { method: 'POST', body: JSON.stringify(body) });
    renderTraffic(report);
    $('#traffic-status').textContent = 'Done.';
  } catch (e) {
    error.textContent = e.message;
    error.hidden = false;
    $('#traffic-status').textContent = '';
  } finally {
    button.disabled = false;
  }
}

async function loadProjects() {
  const select = $('#project');
  try {
    const { projects, active } = await api('/api/projects');
    select.replaceChildren();
    if (!projects.length) {
      select.append(element('option', 'No projects: add one with devlens project add NAME SPEC'));
      select.disabled = true;
      return;
    }
    for (const p of projects) {
      const option = element('option', p.name);
      option.value = p.name;
      option.selected = p.name === active;
      select.append(option);
    }
  } catch (e) {
    $('#traffic-error').textContent = `Cannot list the projects: ${e.message}`;
    $('#traffic-error').hidden = false;
  }
}

$('#traffic-form').addEventListener('submit', checkTraffic);
loadProjects();
