// The Docs page: the libraries devlens has ingested (with their versions and chunk counts, and
// removing one), the project's own dependencies (read on their first question), adding docs from
// a folder or a URL with live progress, and asking a library a question within a token budget to
// see the context an agent would get.

import { $, api, element, newestOnly, plural, say, streamEvents, table } from './common.js';

// The same rule as the server's (devlens-docs `validate_id`), checked here so a typo is said
// before anything is read.
const ID_SEGMENT = /^[a-z0-9_-][a-z0-9._-]*$/;

function idProblem(id) {
  if (!id) return 'Give the library an id, e.g. react or /facebook/react.';
  const body = id.startsWith('/') ? id.slice(1) : id;
  if (body.length > 200) return 'An id is 200 characters at most.';
  if (!body || !body.split('/').every((segment) => ID_SEGMENT.test(segment))) {
    return 'Use lower-case letters, digits, ., _ and - in an id, with / between segments (e.g. /facebook/react); a segment may not start with a dot.';
  }
  return '';
}

/** Shows `message` beside `input` (or clears it), marking the input invalid. */
function fieldError(input, node, message) {
  say(node, message);
  if (message) input.setAttribute('aria-invalid', 'true');
  else input.removeAttribute('aria-invalid');
}

let libraries = [];
// The project's installed dependencies whose docs are not stored yet: askable all the same.
let pendingDeps = [];

const refreshDeps = newestOnly(() => api('/api/docs/deps'), (answer) => {
  const holder = $('#deps-table');
  holder.replaceChildren();
  const deps = answer.dependencies;
  if (!deps.length) {
    holder.append(element('p', 'No dependencies found: the project has no package.json with dependencies.', 'hint'));
  } else {
    holder.append(
      table(
        'Dependencies',
        ['Id', 'Package', 'Installed', 'Docs'],
        deps.map((dep) => {
          let state = 'read on the first question';
          if (!dep.installed) state = 'not installed: run the install';
          else if (dep.ingested) state = 'stored';
          return [[dep.id, 'where'], [dep.dev ? `${dep.name} (dev)` : dep.name], [dep.installed ?? '—'], [state]];
        }),
      ),
    );
  }
  const problems = $('#deps-problems');
  problems.replaceChildren(...(answer.problems ?? []).map((p) => element('li', `${p.file}: ${p.reason}`)));
  problems.hidden = !answer.problems?.length;
  pendingDeps = deps.filter((dep) => dep.installed && !dep.ingested && !libraries.some((l) => l.id === dep.id));
  fillLibraryChoice();
});

function showDeps() {
  refreshDeps().catch((e) => {
    $('#deps-table').replaceChildren(element('p', `No project dependencies to show: ${e.message}`, 'hint'));
  });
}

const refreshLibraries = newestOnly(() => api('/api/docs/libraries'), (answer) => {
  const holder = $('#library-table');
  ({ libraries } = answer);
  holder.replaceChildren();
  if (!libraries.length) {
    holder.append(element('p', 'No libraries yet: add docs below.', 'hint'));
  } else {
    holder.append(
      table(
        'Libraries',
        ['Id', 'Name', 'Versions (newest first)', 'Chunks (newest)', 'Actions'],
        libraries.map((library) => {
          const remove = element('button', 'Remove', 'secondary');
          remove.type = 'button';
          remove.setAttribute('aria-label', `Remove the docs of ${library.id}`);
          remove.addEventListener('click', () => removeLibrary(library));
          return [
            [library.id, 'where'],
            [library.name],
            [library.versions.join(', ')],
            [String(library.snippets)],
            [remove],
          ];
        }),
      ),
    );
  }
  fillLibraryChoice();
});

async function removeLibrary(library) {
  const versions = plural(library.versions.length, 'version');
  if (!confirm(`Remove the docs of ${library.id} (${versions})? Agents can no longer query them.`)) return;
  say($('#libraries-error'), '');
  $('#libraries-status').textContent = `Removing ${library.id}…`;
  try {
    await api(`/api/docs/libraries?${new URLSearchParams({ id: library.id })}`, { method: 'DELETE' });
    $('#libraries-status').textContent = `Removed ${library.id}.`;
  } catch (e) {
    $('#libraries-status').textContent = '';
    say($('#libraries-error'), e.message);
  }
  await refreshLibraries().catch((e) => say($('#libraries-error'), `Cannot list the libraries: ${e.message}`));
}

/** The library <select> of the question form, keeping the current choice when it is still there. */
function fillLibraryChoice(preferred) {
  const select = $('#ask-library');
  const wanted = preferred ?? select.value;
  select.replaceChildren();
  for (const library of libraries) {
    const option = element('option', library.name === library.id ? library.id : `${library.id} (${library.name})`);
    option.value = library.id;
    option.selected = library.id === wanted;
    select.append(option);
  }
  for (const dep of pendingDeps.filter((d) => !libraries.some((l) => l.id === d.id))) {
    const option = element('option', `${dep.id} (${dep.name} ${dep.installed}, read on the first question)`);
    option.value = dep.id;
    option.selected = dep.id === wanted;
    select.append(option);
  }
  const choices = select.options.length;
  if (!choices) select.append(element('option', 'none yet: add docs first'));
  select.disabled = choices === 0;
  fillVersionChoice();
}

function fillVersionChoice() {
  const select = $('#ask-version');
  const library = libraries.find((l) => l.id === $('#ask-library').value);
  select.replaceChildren();
  const versions = library ? library.versions : [];
  versions.forEach((version, i) => {
    const option = element('option', i === 0 ? `${version} (newest)` : version);
    option.value = i === 0 ? '' : version;
    select.append(option);
  });
  select.disabled = versions.length <= 1;
}

function stageLine(data) {
  if (data.stage === 'embedding') return `Embedding sections: ${data.done} of ${data.total}`;
  return `Reading pages: ${data.done} of ${data.total}`;
}

function addedLine(report) {
  const embedded = report.model ? `embedded with ${report.model}` : 'keyword search only';
  const failed = report.failed?.length ? `, ${plural(report.failed.length, 'page')} could not be fetched` : '';
  return `Added ${report.id} ${report.version}: ${plural(report.pages, 'page')}, ${plural(report.chunks, 'chunk')} (${embedded}${failed}) in ${report.seconds.toFixed(1)} s.`;
}

async function addDocs(event) {
  event.preventDefault();
  const id = $('#docs-id');
  const version = $('#docs-version');
  const source = $('#docs-source');
  const maxPages = $('#max-pages');
  const maxDepth = $('#max-depth');
  for (const [input, node] of [
    [id, '#docs-id-error'],
    [version, '#docs-version-error'],
    [source, '#docs-source-error'],
    [maxPages, '#crawl-error'],
    [maxDepth, '#crawl-error'],
  ]) {
    fieldError(input, $(node), '');
  }
  say($('#add-notice'), '');
  const fail = (input, node, message) => {
    fieldError(input, $(node), message);
    input.focus();
  };
  const idProblemText = idProblem(id.value.trim());
  if (idProblemText) return fail(id, '#docs-id-error', idProblemText);
  if (version.value.trim().length > 100) return fail(version, '#docs-version-error', 'A version is a short label such as 18.2 or latest (100 characters at most).');
  const where = source.value.trim();
  if (!where) return fail(source, '#docs-source-error', 'Give the source: a folder path on this machine or an http(s) URL of a docs site.');
  const isUrl = /^https?:\/\//i.test(where);
  const params = new URLSearchParams({ id: id.value.trim() });
  params.set(isUrl ? 'url' : 'path', where);
  if (version.value.trim()) params.set('version', version.value.trim());
  if ($('#docs-name').value.trim()) params.set('name', $('#docs-name').value.trim());
  const crawlOptions = [
    [maxPages, 'maxPages', 1],
    [maxDepth, 'maxDepth', 0],
  ];
  for (const [input, key, least] of crawlOptions) {
    const text = input.value.trim();
    if (!text) continue;
    if (!isUrl) {
      $('.crawl-options').open = true;
      return fail(input, '#crawl-error', 'Crawl options apply to a URL: clear them to add a folder.');
    }
    if (!/^\d+$/.test(text) || Number(text) < least) {
      $('.crawl-options').open = true;
      return fail(input, '#crawl-error', `Give a whole number of ${least} or more, or leave it empty for the default.`);
    }
    params.set(key, text);
  }
  if ($('#ignore-robots').checked) {
    if (!isUrl) {
      $('.crawl-options').open = true;
      return fail($('#ignore-robots'), '#crawl-error', 'Crawl options apply to a URL: clear them to add a folder.');
    }
    params.set('ignoreRobots', 'true');
  }

  const button = $('#add');
  const status = $('#add-status');
  const progress = $('#add-progress');
  button.disabled = true;
  progress.hidden = false;
  progress.removeAttribute('value');
  status.textContent = isUrl ? `Fetching ${where}…` : `Reading ${where}…`;
  let added = null;
  let failure = null;
  try {
    await streamEvents(`/api/docs/libraries/stream?${params}`, (name, data) => {
      if (name === 'progress') {
        progress.max = data.total || 1;
        progress.value = data.done;
        status.textContent = stageLine(data);
      } else if (name === 'done') {
        added = data;
      } else if (name === 'error') {
        failure = data.error;
      }
    });
    if (!added && !failure) failure = 'The server stopped answering before the docs were added: see its log, then try again.';
  } catch (e) {
    failure = e.message;
  }
  progress.hidden = true;
  button.disabled = false;
  if (failure) {
    status.textContent = 'Nothing was added; the stored docs are unchanged.';
    fail(source, '#docs-source-error', failure);
    return;
  }
  status.textContent = addedLine(added);
  say($('#add-notice'), added.notice ? `Note: ${added.notice}` : '');
  source.value = '';
  await refreshLibraries().catch((e) => say($('#libraries-error'), `Cannot list the libraries: ${e.message}`));
  fillLibraryChoice(added.id);
}

/** Code chunks are stored fenced (```lang … ```): the code itself and its language. */
function unfence(content) {
  const match = /^(`{3,}|~{3,})([^\n]*)\n([\s\S]*?)\n?\1\s*$/.exec(content);
  if (!match) return { code: content, language: '' };
  return { code: match[3], language: match[2].trim() };
}

function renderSection(result, index) {
  const li = element('li', undefined, 'doc-section');
  const { metadata } = result;
  const headingId = `answer-section-${index}`;
  const heading = element('h3', metadata.section || metadata.source, 'section-path');
  heading.id = headingId;
  const where = element('p', undefined, 'hint');
  where.append(
    element('span', metadata.type, `badge${metadata.type === 'text' ? '' : ' badge-busy'}`),
    element('span', ` ${metadata.url || metadata.source}`, 'where'),
    element('span', ` · relevance ${Number(metadata.relevance_score).toFixed(2)}`),
  );
  li.append(heading, where);
  if (metadata.type === 'text') {
    li.append(element('div', result.content, 'prose'));
  } else {
    const { code, language } = unfence(result.content);
    const pre = element('pre');
    pre.append(element('code', code));
    pre.tabIndex = 0;
    pre.setAttribute('aria-label', `${metadata.type === 'example' ? 'Example' : 'Code'}${language ? ` (${language})` : ''} from ${metadata.section}`);
    if (language) li.append(element('p', language, 'hint code-language'));
    li.append(pre);
  }
  return li;
}

async function ask(event) {
  event.preventDefault();
  const library = $('#ask-library');
  const query = $('#ask-query');
  const budget = $('#ask-budget');
  const results = $('#ask-results');
  for (const [input, node] of [
    [library, '#ask-library-error'],
    [query, '#ask-query-error'],
    [budget, '#ask-budget-error'],
    [results, '#ask-results-error'],
  ]) {
    fieldError(input, $(node), '');
  }
  const fail = (input, node, message) => {
    fieldError(input, $(node), message);
    input.focus();
  };
  if (!libraries.length && !pendingDeps.length) return fail(library, '#ask-library-error', 'Add a library first: there are no docs to ask yet.');
  if (!query.value.trim()) return fail(query, '#ask-query-error', 'Type a question, e.g. "how do I install it?".');
  const limit = Number(budget.value);
  if (!/^\d+$/.test(budget.value.trim()) || limit < 1000 || limit > 8000) {
    return fail(budget, '#ask-budget-error', 'The token budget is a whole number from 1000 to 8000.');
  }
  const count = Number(results.value);
  if (!/^\d+$/.test(results.value.trim()) || count < 1 || count > 20) {
    return fail(results, '#ask-results-error', 'Ask for 1 to 20 sections.');
  }
  const body = {
    library_id: library.value,
    query: query.value.trim(),
    context_limit: limit,
    max_results: count,
    include_code: $('#ask-code').checked,
  };
  if ($('#ask-version').value) body.version = $('#ask-version').value;
  const status = $('#ask-status');
  const button = $('#ask');
  button.disabled = true;
  status.textContent = 'Asking…';
  try {
    const answer = await api('/api/docs/query', { method: 'POST', body: JSON.stringify(body) });
    const list = $('#answer');
    list.replaceChildren(...answer.results.map(renderSection));
    say($('#ask-notice'), answer.notice ? `Note: ${answer.notice}` : '');
    $('#context').textContent = answer.context;
    $('#context-details').hidden = false;
    status.textContent = `${plural(answer.results.length, 'section')} from ${answer.library.id} ${answer.library.version}: ${answer.total_tokens} tokens of ${limit}${answer.truncated ? ' (some sections were left out or cut to fit)' : ''}.`;
    if (pendingDeps.some((dep) => dep.id === answer.library.id)) {
      // The first question stored its docs: the lists show it now.
      await refreshLibraries().catch(() => {});
      showDeps();
    }
  } catch (e) {
    status.textContent = '';
    $('#answer').replaceChildren();
    $('#context-details').hidden = true;
    say($('#ask-notice'), '');
    fail(query, '#ask-query-error', e.message);
  } finally {
    button.disabled = false;
  }
}

$('#add-docs').addEventListener('submit', addDocs);
$('#ask-form').addEventListener('submit', ask);
$('#ask-library').addEventListener('change', () => fillVersionChoice());
refreshLibraries()
  .catch((e) => {
    $('#library-table').replaceChildren();
    say($('#libraries-error'), `Cannot list the libraries: ${e.message}`);
  })
  .finally(showDeps);
