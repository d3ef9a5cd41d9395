// The Chrome extension page: how to load the extension, the pairing token to paste into its
// options (copy, replace), and the paired extensions with a Revoke button each.

import { $, api, element, say, table } from './common.js';

async function refresh() {
  const { token, origins } = await api('/api/extension');
  $('#token').textContent = token;
  const holder = $('#paired');
  holder.replaceChildren();
  if (!origins.length) {
    holder.append(element('p', 'No extension is paired yet.', 'hint'));
    return;
  }
  holder.append(
    table(
      'Paired extensions',
      ['Origin', 'Paired since', 'Actions'],
      origins.map((o) => {
        const revoke = element('button', 'Revoke', 'secondary');
        revoke.type = 'button';
        revoke.setAttribute('aria-label', `Revoke ${o.origin}`);
        revoke.addEventListener('click', () => unpair(o.origin));
        return [[o.origin, 'where'], [new Date(o.pairedAt).toLocaleString()], [revoke]];
      }),
    ),
  );
}

async function unpair(origin) {
  say($('#paired-error'), '');
  try {
    await api('/api/extension/revoke', { method: 'POST', body: JSON.stringify({ origin }) });
    await refresh();
    $('#paired-status').textContent = `Revoked ${origin}: it can no longer call devlens.`;
  } catch (e) {
    say($('#paired-error'), e.message);
  }
}

async function copyToken() {
  say($('#token-error'), '');
  try {
    await navigator.clipboard.writeText($('#token').textContent);
    $('#token-status').textContent = 'Copied. Paste it into the extension’s options.';
  } catch (e) {
    say($('#token-error'), `The browser did not allow copying (${e.message}): select the token and copy it yourself.`);
  }
}

async function replaceToken() {
  say($('#token-error'), '');
  if (!confirm('Make a new pairing token? Extensions not paired yet will need the new one.')) return;
  try {
    const { token } = await api('/api/extension/token', { method: 'POST' });
    $('#token').textContent = token;
    $('#token-status').textContent = 'New token made; the old one no longer pairs.';
  } catch (e) {
    say($('#token-error'), e.message);
  }
}

$('#copy').addEventListener('click', copyToken);
$('#new-token').addEventListener('click', replaceToken);
refresh().catch((e) => say($('#token-error'), e.message));
