// The context-menu entry "Save selection to devlens": the selected text, the page's title and
// URL, tagged "selection", saved to the extension's knowledge base (and synced to the paired
// server, if any). The service worker wires it; the outcome shows on the toolbar icon.

export const MENU_ID = 'devlens-save-selection';

/** The solution a context-menu click saves; throws when nothing is selected. */
export function saveSelection(info, tab) {
  const text = String(info.selectionText || '').trim();
  if (!text) throw new Error('Select some text first, then right-click it.');
  const url = info.pageUrl || (tab && tab.url) || undefined;
  const title = (tab && tab.title && tab.title.trim()) || url || 'Selection';
  return { title, url, text, tags: ['selection'] };
}

/** Shows the outcome on the toolbar icon of `tab`: ✓ when saved, ! with the reason otherwise. */
export async function showOutcome(tab, error) {
  const tabId = tab && tab.id;
  if (tabId === undefined) return;
  await chrome.action.setBadgeBackgroundColor({ tabId, color: error ? '#b3261e' : '#116329' });
  await chrome.action.setBadgeText({ tabId, text: error ? '!' : '✓' });
  await chrome.action.setTitle({
    tabId,
    title: error ? `devlens could not save the selection: ${error.message}` : 'devlens saved the selection',
  });
}
