// What every part of the extension shares: its settings, calls to the devlens server, and
// reading a page's readable text.

export const DEFAULT_SERVER = 'http://127.0.0.1:7878/';

/**
 * The settings the options page saved: the server URL, whether pairing succeeded there, and the
 * server token (for a server that requires one; empty otherwise).
 */
export async function loadSettings() {
  const stored = await chrome.storage.local.get(['serverUrl', 'pairedWith', 'serverToken']);
  const serverUrl = stored.serverUrl || DEFAULT_SERVER;
  return {
    serverUrl,
    paired: Boolean(stored.pairedWith) && stored.pairedWith === serverUrl,
    serverToken: stored.serverToken || '',
  };
}

export async function saveSettings(serverUrl, paired) {
  await chrome.storage.local.set({ serverUrl, pairedWith: paired ? serverUrl : '' });
}

/** Keeps the server token every call sends (`Authorization: Bearer`); empty removes it. */
export async function saveServerToken(serverToken) {
  await chrome.storage.local.set({ serverToken: serverToken || '' });
}

/**
 * POSTs `body` as JSON to `path` on the devlens server and answers its JSON. Every call is a
 * POST: only then does Chrome name the extension's origin, which the server checks against the
 * paired ones. A failure throws an Error with the server's message (and `status`).
 */
export async function call(path, body, serverUrl) {
  const settings = await loadSettings();
  const server = serverUrl || settings.serverUrl;
  const headers = { 'Content-Type': 'application/json', Accept: 'application/json' };
  // A server beyond loopback requires a token on every call.
  if (settings.serverToken) headers.Authorization = `Bearer ${settings.serverToken}`;
  let response;
  try {
    response = await fetch(new URL(path, server), {
      method: 'POST',
      headers,
      body: JSON.stringify(body),
    });
  } catch {
    throw new Error(
      `No devlens server answers at ${server}. Start it with "devlens serve --http", or correct the server URL in the extension's options.`,
    );
  }
  const data = await response.json().catch(() => ({}));
  if (!response.ok) {
    const error = new Error(data.error || `The devlens server answered HTTP ${response.status}.`);
    error.status = response.status;
    throw error;
  }
  return data;
}

/** "css, performance , css" → ["css", "performance"]. */
export function parseTags(text) {
  const tags = [];
  for (const part of String(text || '').split(',')) {
    const tag = part.trim().toLowerCase();
    if (tag && !tags.includes(tag)) tags.push(tag);
  }
  return tags;
}

/** The most text the server takes for one solution, with room for JSON escaping. */
export const MAX_TEXT = 500000;

/**
 * Runs IN THE PAGE (chrome.scripting.executeScript), so it uses nothing from outside itself.
 * Answers the page's title, URL, selection and readable text: the main content block (main,
 * article, or whichever holds the most paragraph text) without navigation, banners, sidebars,
 * footers, forms and scripts, as plain text with Markdown-style headings, list items and code.
 */
export function readPage() {
  const selection = String(window.getSelection ? window.getSelection() : '').trim();
  const textIn = (el) =>
    [...el.querySelectorAll('p, li, pre, td, dd, blockquote, h1, h2, h3')].reduce(
      (n, p) => n + p.textContent.trim().length,
      0,
    );
  let root = document.body;
  let best = 0;
  for (const candidate of document.querySelectorAll(
    'main, article, [role="main"], #content, #main, .content, .post, .article, .markdown-body',
  )) {
    const n = textIn(candidate);
    // A nested candidate holding (nearly) as much text is the tighter choice.
    if (n > best * 1.05 || (n >= best * 0.9 && root.contains(candidate))) {
      best = Math.max(best, n);
      root = candidate;
    }
  }
  const clone = (root || document.documentElement).cloneNode(true);
  const boilerplate = [
    'nav', 'aside', 'footer', 'script', 'style', 'noscript', 'template', 'svg', 'canvas',
    'iframe', 'form', 'button', 'dialog', 'select', 'input', 'textarea', '[hidden]',
    '[aria-hidden="true"]', '[role="navigation"]', '[role="banner"]', '[role="contentinfo"]',
    '[role="complementary"]', '[role="search"]', '[role="dialog"]', '.nav', '.navbar', '.menu',
    '.sidebar', '.breadcrumb', '.breadcrumbs', '.cookie-banner', '.ads', '.advert', '.share',
    '.social', '.comments', '.skip-link',
  ];
  // The page's own banner is boilerplate; an article's header holds its title.
  if (root === document.body) boilerplate.push('header');
  for (const node of clone.querySelectorAll(boilerplate.join(','))) node.remove();
  const lines = [];
  const blocks = 'h1,h2,h3,h4,h5,h6,p,li,pre,blockquote,dt,dd,figcaption,td,th,tr,div,section,table';
  const walk = (node) => {
    for (const child of node.childNodes) {
      if (child.nodeType === Node.TEXT_NODE) {
        lines.push({ inline: child.textContent });
      } else if (child.nodeType === Node.ELEMENT_NODE) {
        const tag = child.tagName.toLowerCase();
        if (tag === 'br') {
          lines.push({ block: true });
        } else if (tag === 'pre') {
          lines.push({ block: true }, { raw: '```\n' + child.textContent.replace(/\n+$/, '') + '\n```' }, { block: true });
        } else if (child.matches(blocks)) {
          lines.push({ block: true });
          if (/^h[1-6]$/.test(tag)) lines.push({ inline: '#'.repeat(Number(tag[1])) + ' ' });
          if (tag === 'li') lines.push({ inline: '- ' });
          walk(child);
          lines.push({ block: true });
        } else {
          walk(child);
        }
      }
    }
  };
  walk(clone);
  let text = '';
  let line = '';
  const flush = () => {
    const trimmed = line.replace(/\s+/g, ' ').trim();
    if (trimmed && !/^(#+|-)$/.test(trimmed)) text += (text ? '\n\n' : '') + trimmed;
    line = '';
  };
  for (const part of lines) {
    if (part.block) flush();
    else if (part.raw !== undefined) {
      flush();
      text += (text ? '\n\n' : '') + part.raw;
    } else line += part.inline;
  }
  flush();
  return { title: document.title.trim(), url: location.href, selection, text };
}

/** Reads the tab's page through readPage; a page extensions may not read throws a clear Error. */
export async function readTab(tabId) {
  let results;
  try {
    results = await chrome.scripting.executeScript({ target: { tabId }, func: readPage });
  } catch (e) {
    throw new Error(
      `devlens cannot read this page (${e.message}). Browser pages (chrome://…), the Chrome Web Store and PDF viewers are closed to extensions.`,
    );
  }
  const page = results && results[0] && results[0].result;
  if (!page) throw new Error('The page did not answer: reload it and try again.');
  return page;
}
