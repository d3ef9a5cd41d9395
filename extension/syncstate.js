// The sync state in words, for the popup and the options page.

function when(iso) {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString();
}

/** One line: when the last sync ran, what it did, what waits, what went wrong. */
export function describeSync(sync, pending) {
  const waiting = pending ? ` ${pending} change${pending === 1 ? '' : 's'} waiting to sync.` : '';
  if (!sync) return `Not synced with the server yet.${waiting}`;
  if (!sync.ok) {
    return `The last sync failed (${sync.error}); changes stay in this browser and go up when the server answers.${waiting}`;
  }
  let line = `Synced ${when(sync.at)}: sent ${sync.sent}, received ${sync.received}.`;
  if (sync.conflicts && sync.conflicts.length) {
    const n = sync.conflicts.length;
    line += ` ${n} conflict${n === 1 ? '' : 's'} settled this week: ${sync.conflicts.map((c) => `“${c.title}”: ${c.why}`).join(' ')}`;
  }
  if (sync.rejected && sync.rejected.length) {
    line += ` The server refused ${sync.rejected.map((r) => `${r.id} (${r.why})`).join(', ')}.`;
  }
  return line + waiting;
}
