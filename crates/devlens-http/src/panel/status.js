// The Status page: GET /api/status (the model, its engine, the index sizes) and /metrics (the
// Prometheus text, parsed into a table of the devlens_* series).

import { $, api, element, plural, say, table } from './common.js';

function showModel(e) {
  const state = $('#model-state');
  if (e.loaded) {
    state.textContent = 'The model loads: semantic search is on.';
    state.className = 'clean';
  } else {
    state.textContent = `The model does not load: ${e.error || 'no reason given'}. Searches fall back to keywords.`;
    state.className = 'warn';
  }
  const facts = $('#model-facts');
  facts.replaceChildren();
  const add = (term, value) => {
    if (value !== undefined && value !== null && value !== '') facts.append(element('dt', term), element('dd', value));
  };
  add('Provider', e.provider);
  add('Model', e.model);
  add('Dimensions', e.dims);
  // `onnx (model_qint8.onnx)` reads as `ONNX Runtime (model_qint8.onnx)`.
  add('Engine', e.engine ? e.engine.replace(/^onnx\b/, 'ONNX Runtime') : undefined);
  add('Model folder', e.modelDir);
}

function showIndexes(status) {
  const apiHolder = $('#api-indexes');
  apiHolder.replaceChildren();
  if (status.api.error) apiHolder.append(element('p', status.api.error, 'warn'));
  else if (!status.api.projects.length) apiHolder.append(element('p', 'No projects yet: add one on the API page.', 'hint'));
  else {
    apiHolder.append(
      table(
        'API projects and their semantic indexes',
        ['Project', 'Index', 'Vectors', 'Notice'],
        status.api.projects.map((p) => [
          [`${p.name}${p.active ? ' (active)' : ''}`],
          [p.indexed ? (p.stale ? 'stale' : 'built') : 'not built', p.indexed && !p.stale ? 'clean' : 'warn'],
          [p.vectors],
          [p.notice ?? ''],
        ]),
      ),
    );
  }
  const docs = $('#docs-index');
  docs.replaceChildren();
  if (status.docs.error) docs.append(element('p', status.docs.error, 'warn'));
  else if (!status.docs.libraries.length) docs.append(element('p', 'No libraries yet: add one on the Docs page.', 'hint'));
  else {
    docs.append(
      element('p', `${plural(status.docs.libraries.length, 'library')}, ${plural(status.docs.chunks, 'chunk')} in all.`),
      table(
        'Docs libraries',
        ['Library', 'Name', 'Versions', 'Chunks'],
        status.docs.libraries.map((l) => [[l.id, 'where'], [l.name], [l.versions.join(', ')], [l.chunks]]),
      ),
    );
  }
  const kb = $('#kb-index');
  kb.replaceChildren();
  if (status.kb.error) kb.append(element('p', status.kb.error, 'warn'));
  else kb.append(element('p', `${plural(status.kb.solutions, 'solution')}, ${status.kb.embedded} with vectors of the current model.`));
}

/** Parses Prometheus text into series: {name, labels, value}, with HELP and TYPE by family. */
export function parseMetrics(text) {
  const help = {};
  const type = {};
  const series = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    const meta = line.match(/^# (HELP|TYPE) (\S+) (.*)$/);
    if (meta) {
      (meta[1] === 'HELP' ? help : type)[meta[2]] = meta[3];
      continue;
    }
    if (line.startsWith('#')) continue;
    const sample = line.match(/^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)/);
    if (sample) series.push({ name: sample[1], labels: sample[2] ? sample[2].slice(1, -1) : '', value: Number(sample[3]) });
  }
  return { help, type, series };
}

function number(n) {
  return Number.isInteger(n) ? n.toLocaleString() : n.toLocaleString(undefined, { maximumFractionDigits: 4 });
}

/** The rows to show: counters and gauges as they are; a histogram as count, sum and average. */
function metricRows({ help, type, series }) {
  const rows = [];
  const histograms = new Set(Object.keys(type).filter((name) => type[name] === 'histogram'));
  for (const name of histograms) {
    if (!name.startsWith('devlens_')) continue;
    const count = series.find((s) => s.name === `${name}_count`)?.value ?? 0;
    const sum = series.find((s) => s.name === `${name}_sum`)?.value ?? 0;
    const avg = count ? number(sum / count) : '—';
    rows.push([[name, 'metric'], [''], [`${number(count)} observed, sum ${number(sum)}, average ${avg}`], [help[name] ?? '']]);
  }
  for (const s of series) {
    if (!s.name.startsWith('devlens_')) continue;
    if ([...histograms].some((h) => s.name.startsWith(`${h}_`))) continue;
    rows.push([[s.name, 'metric'], [s.labels, 'metric'], [number(s.value)], [help[s.name] ?? '']]);
  }
  return rows;
}

async function showMetrics() {
  const holder = $('#metrics');
  say($('#metrics-error'), '');
  try {
    const response = await fetch('/metrics');
    const text = await response.text();
    if (!response.ok) {
      const body = JSON.parse(text || '{}');
      throw new Error(body.error || `the server answered HTTP ${response.status}`);
    }
    const rows = metricRows(parseMetrics(text));
    holder.replaceChildren(
      rows.length
        ? table('devlens metrics', ['Series', 'Labels', 'Value', 'What it counts'], rows)
        : element('p', 'No devlens_* series yet.', 'hint'),
    );
  } catch (e) {
    holder.replaceChildren();
    say($('#metrics-error'), `Cannot read /metrics: ${e.message}`);
  }
}

async function refresh() {
  const button = $('#refresh');
  button.disabled = true;
  say($('#status-error'), '');
  $('#refresh-status').textContent = 'Reading the status (the model loads if it has not yet)…';
  try {
    const status = await api('/api/status');
    showModel(status.embedding);
    showIndexes(status);
    await showMetrics();
    $('#refresh-status').textContent = `devlens ${status.version}, data in ${status.dataDir}. Read at ${new Date().toLocaleTimeString()}.`;
  } catch (e) {
    $('#refresh-status').textContent = '';
    say($('#status-error'), e.message);
  } finally {
    button.disabled = false;
  }
}

$('#refresh').addEventListener('click', refresh);
refresh();
