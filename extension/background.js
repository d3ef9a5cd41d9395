// The service worker: the context-menu entry. Everything else happens in the popup, the options
// page and the DevTools panel.

import { MENU_ID, saveSelection, showOutcome } from './menu.js';

chrome.runtime.onInstalled.addListener(() => {
  chrome.contextMenus.create({
    id: MENU_ID,
    title: 'Save selection to devlens',
    contexts: ['selection'],
  });
});

chrome.contextMenus.onClicked.addListener(async (info, tab) => {
  if (info.menuItemId !== MENU_ID) return;
  try {
    await saveSelection(info, tab);
    await showOutcome(tab, null);
  } catch (error) {
    await showOutcome(tab, error);
  }
});
