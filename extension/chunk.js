// Cutting a solution into the pieces that get embedded, exactly as the server does
// (crates/devlens-kb/src/chunk.rs): paragraphs packed into chunks of about 700 UTF-8 bytes, a
// fenced code block kept whole, an over-long line cut at a sentence or a space; each chunk is
// embedded with the title (and tags) in front. Same cuts, same texts, so the extension's vectors
// and the server's are interchangeable and sync sends them along instead of re-embedding.
//
// Ranges are UTF-8 byte offsets, as the server stores them.

/** The server's chunk size (devlens-kb chunk::TARGET_CHARS, in bytes). */
export const TARGET_BYTES = 700;

const SPACE = /[\s\u0085]/u;

function isSpace(ch) {
  return ch !== '\ufeff' && SPACE.test(ch);
}

/** UTF-8 byte offset of every UTF-16 index of `text` (length + 1 entries). */
function byteOffsets(text) {
  const offsets = new Uint32Array(text.length + 1);
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    offsets[i] = bytes;
    const unit = text.charCodeAt(i);
    if (unit < 0x80) bytes += 1;
    else if (unit < 0x800) bytes += 2;
    else if (unit >= 0xd800 && unit <= 0xdbff) {
      bytes += 4;
      i++;
      if (i < text.length) offsets[i] = bytes; // the low surrogate is no boundary
    } else if (unit >= 0xdc00 && unit <= 0xdfff) bytes += 3; // a lone surrogate, written as U+FFFD
    else bytes += 3;
  }
  offsets[text.length] = bytes;
  return offsets;
}

function isBoundary(text, i) {
  if (i <= 0 || i >= text.length) return true;
  const unit = text.charCodeAt(i);
  const before = text.charCodeAt(i - 1);
  return !(unit >= 0xdc00 && unit <= 0xdfff && before >= 0xd800 && before <= 0xdbff);
}

function trimStartLength(s) {
  let i = 0;
  for (const ch of s) {
    if (!isSpace(ch)) break;
    i += ch.length;
  }
  return s.length - i;
}

function trimEndLength(s) {
  let end = s.length;
  while (end > 0) {
    let start = end - 1;
    if (start > 0 && !isBoundary(s, start)) start -= 1;
    if (!isSpace(s.slice(start, end))) break;
    end = start;
  }
  return end;
}

/**
 * The chunks of `text`: `{ start, end }` as UTF-16 indexes (for slicing) and `{ byteStart,
 * byteEnd }` as UTF-8 offsets (what the server stores), in order.
 */
export function chunkRanges(text, target = TARGET_BYTES) {
  target = Math.max(target, 64);
  const offsets = byteOffsets(text);
  const bytes = (a, b) => offsets[b] - offsets[a];
  // The largest char boundary at or before byte `b`.
  const atByte = (b) => {
    let lo = 0;
    let hi = text.length;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (offsets[mid] <= b) lo = mid;
      else hi = mid - 1;
    }
    while (lo > 0 && !isBoundary(text, lo)) lo -= 1;
    return lo;
  };

  // Paragraphs (separated by blank lines), with a fenced code block kept whole.
  const blocks = [];
  let start = null;
  let end = 0;
  let inFence = false;
  let lineStart = 0;
  while (lineStart < text.length) {
    const newline = text.indexOf('\n', lineStart);
    const lineEnd = newline === -1 ? text.length : newline + 1;
    const line = text.slice(lineStart, lineEnd);
    const trimmed = line.slice(line.length - trimStartLength(line), trimEndLength(line));
    if (trimmed.startsWith('```') || trimmed.startsWith('~~~')) inFence = !inFence;
    if (trimmed.length === 0 && !inFence) {
      if (start !== null) blocks.push([start, end]);
      start = null;
    } else {
      if (start === null) start = lineStart + (line.length - trimStartLength(line));
      end = lineStart + trimEndLength(line);
    }
    lineStart = lineEnd;
  }
  if (start !== null) blocks.push([start, end]);

  const units = [];
  for (const [blockStart, blockEnd] of blocks) {
    if (bytes(blockStart, blockEnd) <= target) {
      units.push([blockStart, blockEnd]);
      continue;
    }
    // Cut an over-long block at line ends, then sentence ends, then spaces.
    let from = blockStart;
    while (bytes(from, blockEnd) > target) {
      const windowEnd = atByte(offsets[from] + target);
      const window = text.slice(from, windowEnd);
      const third = Math.floor(target / 3);
      const at = (index) => (index < 0 ? -1 : bytes(from, from + index));
      let cut;
      const newline = at(window.lastIndexOf('\n'));
      const sentence = at(window.lastIndexOf('. '));
      const space = at(window.lastIndexOf(' '));
      if (newline > third) cut = newline + 1;
      else if (sentence > third) cut = sentence + 2;
      else if (space > third) cut = space + 1;
      else cut = bytes(from, windowEnd);
      cut = Math.max(cut, 1);
      let to = atByte(offsets[from] + cut);
      const next = from + (isBoundary(text, from + 1) ? 1 : 2);
      to = Math.max(to, Math.min(next, text.length));
      const pieceEnd = from + trimEndLength(text.slice(from, to));
      if (pieceEnd > from) units.push([from, pieceEnd]);
      from = to;
      while (from < text.length) {
        const width = isBoundary(text, from + 1) ? 1 : 2;
        if (!isSpace(text.slice(from, from + width))) break;
        from += width;
      }
    }
    if (from < blockEnd) units.push([from, blockEnd]);
  }

  const chunks = [];
  for (const unit of units) {
    const last = chunks[chunks.length - 1];
    if (last && bytes(last[0], unit[1]) <= target) last[1] = unit[1];
    else chunks.push([unit[0], unit[1]]);
  }
  return chunks.map(([s, e]) => ({ start: s, end: e, byteStart: offsets[s], byteEnd: offsets[e] }));
}

/** The text embedded for one chunk: the title (and tags) give every chunk its context. */
export function embeddingText(title, tags, chunk) {
  return tags && tags.length ? `${title} (${tags.join(', ')})\n${chunk}` : `${title}\n${chunk}`;
}
