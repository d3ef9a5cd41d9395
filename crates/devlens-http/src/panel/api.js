// The API page: projects (add, remove, make active), each project's semantic index with its
// state and a live re-index, and endpoint search whose hits open into their details.

import { $, api, element, newestOnly, plural, say, showProjectOptions, streamEvents, table } from './common.js';

/** The badge of an index: its state in a word, and its class. */
function badge(status) {
  if (!status) return ['Unknown', 'badge'];
  if (!status.indexed) return ['Not built', 'badge badge-missing'];
  if (status.modelMismatch) return ['Model mismatch', 'badge badge-warn'];
  if (status.stale) return ['Stale', 'badge badge-warn'];
  return ['Indexed', 'badge badge-ok'];
}

const refreshProjects = newestOnly(() => api('/api/projects'), (listing) => {
  const holder = $('#project-table');
  const { projects, active } = listing;
  holder.replaceChildren();
  if (!projects.length) {
    holder.append(element('p', 'No projects yet: add one below.', 'hint'));
  } else {
    holder.append(
      table(
        'Projects',
        ['Name', 'Spec', 'Active', 'Actions'],
        projects.map((p) => {
          const actions = element('span', undefined, 'buttons');
          if (p.name !== active) {
            const use = element('button', 'Make active', 'secondary');
            use.type = 'button';
            use.setAttribute('aria-label', `Make ${p.name} the active project`);
            use.addEventListener('click', () => act(`/api/projects/${encodeURIComponent(p.name)}/activate`, 'POST'));
            actions.append(use);
          }
          const remove = element('button', 'Remove', 'secondary');
          remove.type = 'button';
          remove.setAttribute('aria-label', `Remove project ${p.name}`);
          remove.addEventListener('click', () => {
            if (confirm(`Remove project ${p.name}? Its spec file is not touched.`)) {
              act(`/api/projects/${encodeURIComponent(p.name)}`, 'DELETE');
            }
          });
          actions.append(remove);
          return [[p.name], [p.spec ?? '', 'where'], [p.name === active ? 'active' : ''], [actions]];
        }),
      ),
    );
  }
  showProjectOptions($('#search-project'), listing);
  refreshIndexes(projects);
});

async function act(path, method) {
  say($('#projects-error'), '');
  try {
    await api(path, { method });
    await refreshProjects();
  } catch (e) {
    say($('#projects-error'), e.message);
  }
}

function describe(body, status) {
  body.replaceChildren();
  if (!status.indexed) {
    body.append(element('p', status.notice || 'No semantic index yet: searches rank by keywords until it is built.'));
    return;
  }
  const facts = element('dl', undefined, 'facts');
  const add = (term, value) => {
    facts.append(element('dt', term), element('dd', value));
  };
  add('Last built', status.builtAt ? new Date(status.builtAt).toLocaleString() : 'unknown');
  add('Vectors', status.vectorCount);
  add('Model', `${status.model ?? '?'} (${status.provider ?? '?'}, ${status.dims ?? '?'} dims)`);
  add('swaggerHash', (status.swaggerHash ?? '').slice(0, 12));
  body.append(facts);
  if (status.stale) body.append(element('p', 'The spec changed since this index was built: re-index it.', 'warn'));
  if (status.modelMismatch) body.append(element('p', status.notice, 'warn'));
}

function refreshIndexes(projects) {
  const list = $('#index-list');
  list.replaceChildren();
  for (const p of projects) {
    const item = element('details', undefined, 'index');
    item.dataset.project = p.name;
    const summary = element('summary');
    const label = element('span', p.name, 'name');
    const state = element('span', 'Loading…', 'badge');
    summary.append(label, state);
    const body = element('div', undefined, 'index-body');
    const progress = element('progress');
    progress.hidden = true;
    progress.setAttribute('aria-label', `Re-index progress of ${p.name}`);
    const message = element('p', '', 'status');
    message.setAttribute('role', 'status');
    const button = element('button', 'Re-index');
    button.type = 'button';
    button.setAttribute('aria-label', `Re-index ${p.name}`);
    button.addEventListener('click', () => reindex(item));
    item.append(summary, body, progress, button, message);
    list.append(item);
    loadStatus(item);
  }
}

async function loadStatus(item) {
  const state = $('.badge', item);
  try {
    const status = await api(`/api/embed/status?project=${encodeURIComponent(item.dataset.project)}`);
    const [text, className] = badge(status);
    state.textContent = text;
    state.className = className;
    describe($('.index-body', item), status);
  } catch (e) {
    state.textContent = 'Error';
    state.className = 'badge badge-missing';
    $('.index-body', item).replaceChildren(element('p', e.message, 'error'));
  }
}

/** Puts an index item into its busy state; returns a function that takes the stream's events. */
function watchBuild(item) {
  const button = $('button', item);
  const progress = $('progress', item);
  const message = $('.status', item);
  const state = $('.badge', item);
  button.disabled = true;
  progress.hidden = false;
  progress.removeAttribute('value');
  state.textContent = 'Indexing…';
  state.className = 'badge badge-busy';
  message.textContent = 'Loading the model and the spec…';
  return {
    progress(data) {
      progress.max = data.total || 1;
      progress.value = data.done;
      message.textContent = `Embedded ${data.done} of ${data.total} endpoints`;
    },
    async finished(report, error) {
      message.textContent = report
        ? `Indexed ${plural(report.vectorCount, 'endpoint')} in ${report.seconds} s (${report.embedded} embedded, ${report.reused} reused).`
        : error;
      progress.hidden = true;
      button.disabled = false;
      await loadStatus(item);
    },
  };
}

async function reindex(item) {
  const build = watchBuild(item);
  let report = null;
  let error = 'The re-index stopped without an answer.';
  try {
    await streamEvents(`/api/embed/reindex/stream?project=${encodeURIComponent(item.dataset.project)}`, (event, data) => {
      if (event === 'progress') build.progress(data);
      else if (event === 'done') report = data;
      else if (event === 'error') error = data.error;
    });
  } catch (e) {
    error = e.message;
  }
  await build.finished(report, error);
}

/** Re-index All: one server-side run over every project, each item showing its own progress. */
async function reindexAll() {
  const button = $('#reindex-all');
  const status = $('#reindex-all-status');
  button.disabled = true;
  const item = (project) => document.querySelector(`#index-list details[data-project="${CSS.escape(project)}"]`);
  const builds = new Map();
  try {
    await streamEvents('/api/embed/reindex-all/stream', (event, data) => {
      if (event === 'started') {
        const node = item(data.project);
        if (node) {
          node.open = true;
          builds.set(data.project, watchBuild(node));
        }
        status.textContent = `Re-indexing ${data.project} (${data.index} of ${data.of})…`;
      } else if (event === 'progress') {
        builds.get(data.project)?.progress(data);
      } else if (event === 'finished') {
        builds.get(data.project)?.finished(data.report, data.error);
      } else if (event === 'done') {
        status.textContent = `Re-indexed ${data.built} of ${plural(data.projects.length, 'project')}.`;
      } else if (event === 'error') {
        status.textContent = data.error;
      }
    });
  } catch (e) {
    status.textContent = e.message;
  }
  button.disabled = false;
}

async function addProject(event) {
  event.preventDefault();
  const name = $('#new-name');
  const spec = $('#new-spec');
  say($('#new-name-error'), '');
  say($('#new-spec-error'), '');
  name.removeAttribute('aria-invalid');
  spec.removeAttribute('aria-invalid');
  const fieldError = (input, node, message) => {
    say(node, message);
    input.setAttribute('aria-invalid', 'true');
    input.focus();
  };
  if (!name.value.trim()) return fieldError(name, $('#new-name-error'), 'Give the project a name (letters, digits, ., _ or -).');
  if (!/^[A-Za-z0-9._-]+$/.test(name.value.trim())) return fieldError(name, $('#new-name-error'), 'A name may hold letters, digits, ., _ and - only.');
  if (!spec.value.trim()) return fieldError(spec, $('#new-spec-error'), 'Give the spec: a file path or an http(s) URL.');
  const button = $('#add');
  button.disabled = true;
  $('#add-status').textContent = 'Loading the spec…';
  try {
    await api('/api/projects', { method: 'POST', body: JSON.stringify({ name: name.value.trim(), spec: spec.value.trim() }) });
    $('#add-status').textContent = `Added ${name.value.trim()}.`;
    name.value = '';
    spec.value = '';
    await refreshProjects();
  } catch (e) {
    $('#add-status').textContent = '';
    fieldError(spec, $('#new-spec-error'), e.message);
  } finally {
    button.disabled = false;
  }
}

/** A block of JSON; focusable, since it may scroll. */
function jsonBlock(value, label) {
  const pre = element('pre', JSON.stringify(value, null, 2));
  pre.tabIndex = 0;
  pre.setAttribute('aria-label', label);
  return pre;
}

function renderDetails(holder, d) {
  holder.replaceChildren();
  if (d.description) holder.append(element('p', d.description));
  if (d.parameters.length) {
    holder.append(
      table(
        'Parameters',
        ['Name', 'In', 'Required', 'Schema'],
        d.parameters.map((p) => [[p.name, 'where'], [p.in], [p.required ? 'yes' : ''], [JSON.stringify(p.schema), 'where']]),
      ),
    );
  }
  if (d.requestBody) {
    holder.append(element('h3', `Request body (${d.requestBody.contentType}${d.requestBody.required ? ', required' : ''})`));
    holder.append(jsonBlock(d.requestBody.schema, 'Request body schema'));
  }
  for (const [code, r] of Object.entries(d.responses)) {
    holder.append(element('h3', `${code} ${r.description ?? ''}`));
    if (r.schema) holder.append(jsonBlock(r.schema, `Schema of the ${code} response`));
  }
}

async function search(event) {
  event.preventDefault();
  const query = $('#query').value.trim();
  const error = $('#search-error');
  say(error, '');
  if (!query) {
    say(error, 'Type a question, e.g. "create an order".');
    $('#query').focus();
    return;
  }
  const params = new URLSearchParams({ query, limit: '10', mode: document.querySelector('input[name=mode]:checked').value });
  if ($('#search-project').value) params.set('project', $('#search-project').value);
  if ($('#method').value) params.set('method', $('#method').value);
  $('#search-status').textContent = 'Searching…';
  try {
    const answer = await api(`/api/search?${params}`);
    $('#search-notice').textContent = answer.notice ?? '';
    const results = $('#results');
    results.replaceChildren();
    for (const hit of answer.results) {
      const li = element('li');
      const details = element('details');
      const summary = element('summary');
      summary.append(element('span', `${hit.method} ${hit.path}`, 'where'), element('span', ` ${hit.summary ?? ''}`));
      if (hit.operationId) summary.append(element('span', ` ${hit.operationId}`, 'hint'));
      const body = element('div', 'Loading…', 'hit-body');
      details.append(summary, body);
      details.addEventListener('toggle', async () => {
        if (!details.open || details.dataset.loaded) return;
        details.dataset.loaded = '1';
        const q = new URLSearchParams({ method: hit.method, path: hit.path });
        if ($('#search-project').value) q.set('project', $('#search-project').value);
        try {
          renderDetails(body, await api(`/api/endpoint?${q}`));
        } catch (e) {
          body.textContent = e.message;
        }
      });
      li.append(details);
      results.append(li);
    }
    $('#search-status').textContent = `${plural(answer.results.length, 'result')} (${answer.mode}).`;
  } catch (e) {
    $('#search-status').textContent = '';
    say(error, e.message);
  }
}

$('#add-project').addEventListener('submit', addProject);
$('#search-form').addEventListener('submit', search);
$('#reindex-all').addEventListener('click', reindexAll);
refreshProjects().catch((e) => say($('#projects-error'), `Cannot list the projects: ${e.message}`));
