// The options page: the devlens server's URL, pairing with it, and the server token. The
// pairing token is sent once, from the extension's own origin, and not kept: the server
// remembers the origin instead. The server token (a server beyond loopback requires one) is kept
// in chrome.storage and sent with every call.

import { DEFAULT_SERVER, call, loadSettings, saveServerToken, saveSettings } from './devlens.js';

const $ = (selector) => document.querySelector(selector);

function say(node, message) {
  node.textContent = message || '';
  node.hidden = !message;
}

async function showState() {
  const { serverUrl, paired, serverToken } = await loadSettings();
  $('#server').value = serverUrl;
  $('#server-token').value = serverToken;
  const withToken = serverToken ? ' Calls carry the server token saved below.' : '';
  $('#state').textContent = paired
    ? `Paired with the devlens server at ${serverUrl}.${withToken}`
    : `Not paired yet. The default server is ${DEFAULT_SERVER}.${withToken}`;
}

/** The server URL typed, normalised to its origin and a slash; an Error saying what is wrong. */
function serverUrl(text) {
  let url;
  try {
    url = new URL(text.trim());
  } catch {
    throw new Error(`Enter the server's address, for example ${DEFAULT_SERVER}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new Error(`The server URL must start with http:// or https://, for example ${DEFAULT_SERVER}`);
  }
  return `${url.origin}/`;
}

/** Loopback servers are in the manifest; any other needs the user's permission (asked now). */
async function permitted(server) {
  const host = new URL(server).hostname;
  if (host === '127.0.0.1' || host === 'localhost') return true;
  return chrome.permissions.request({ origins: [`${new URL(server).origin}/*`] });
}

async function pair(event) {
  event.preventDefault();
  say($('#server-error'), '');
  say($('#token-error'), '');
  say($('#server-token-error'), '');
  const status = $('#pair-status');
  let server;
  try {
    server = serverUrl($('#server').value);
  } catch (e) {
    say($('#server-error'), e.message);
    $('#server').focus();
    return;
  }
  const token = $('#token').value.trim();
  if (!token) {
    say($('#token-error'), "Paste the pairing token from the devlens panel's Extension page (or `devlens extension token`).");
    $('#token').focus();
    return;
  }
  if (!(await permitted(server))) {
    say($('#server-error'), `The extension needs your permission to reach ${server}: press Pair again and allow it.`);
    return;
  }
  const serverToken = $('#server-token').value.trim();
  if (serverToken && !serverToken.startsWith('dlt_')) {
    say($('#server-token-error'), 'A devlens server token starts with dlt_: paste all of it, or leave the field empty for a server on this machine.');
    $('#server-token').focus();
    return;
  }
  // Saved first: the pairing call itself needs it on a server that requires tokens.
  await saveServerToken(serverToken);
  $('#pair').disabled = true;
  status.textContent = 'Pairing…';
  try {
    await call('/api/extension/pair', { token }, server);
    await saveSettings(server, true);
    $('#token').value = '';
    status.textContent = `Paired with ${server}.`;
  } catch (e) {
    status.textContent = '';
    await saveSettings(server, false);
    // A refused server token (401 naming it, 403) is that field's fault; a wrong pairing token
    // the pairing token's; anything else (no server, a refusal) the server's.
    const serverTokenRefused = e.status === 403 || (e.status === 401 && /requires a token|token sent/.test(e.message));
    const field = serverTokenRefused
      ? $('#server-token-error')
      : e.status === 401 || e.status === 400
        ? $('#token-error')
        : $('#server-error');
    say(field, e.message);
  } finally {
    $('#pair').disabled = false;
    await showState();
  }
}

$('#pair-form').addEventListener('submit', pair);
showState();
