// The API traffic page: the active tab's API calls (or a HAR file) checked against a project's
// spec, the findings per operation.

import { $, api, element, plural, table, fillProjects, say } from './common.js';

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
  try {
    await fillProjects($('#project'));
  } catch (e) {
    say($('#traffic-error'), `Cannot list the projects: ${e.message}`);
  }
}

$('#traffic-form').addEventListener('submit', checkTraffic);
loadProjects();
