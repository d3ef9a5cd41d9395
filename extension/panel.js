// The DevTools panel: the devlens server's own dev panel in a frame. The server lets paired
// extensions frame it (its Content-Security-Policy frame-ancestors names them).
import { loadSettings } from './devlens.js';

const { serverUrl, paired } = await loadSettings();
if (paired) {
  const frame = document.getElementById('devlens');
  // Extension pages are cross-origin isolated (manifest: the engine's WebAssembly threads need
  // it), so a frame of a server that sends no COEP header loads as a credentialless frame.
  frame.credentialless = true;
  frame.src = serverUrl;
  frame.hidden = false;
} else {
  document.getElementById('unpaired-text').textContent =
    `Pair the extension with your devlens server (${serverUrl}) first: the server shows its panel only to paired extensions.`;
  document.getElementById('open-options').addEventListener('click', () => chrome.runtime.openOptionsPage());
  document.getElementById('unpaired').hidden = false;
}
