// Adds the "devlens" panel to Chrome DevTools.
chrome.devtools.panels.create('devlens', '', 'panel.html');
