// The model's tokenizer, read from its tokenizer.json: BERT's normaliser, pre-tokeniser and
// WordPiece, as the Hugging Face `tokenizers` library the server uses runs them, so the token ids
// (and with them the vectors) the extension computes are the server's.
//
// Only what BERT-style tokenizer.json files use is implemented; anything else is refused with a
// clear error rather than tokenised differently.

/** Whether `cp` is a control character BERT drops (tab, newline and carriage return are spaces). */
function isControl(cp, ch) {
  if (cp === 0x09 || cp === 0x0a || cp === 0x0d) return false;
  return /\p{Cc}|\p{Cf}|\p{Co}|\p{Cn}/u.test(ch);
}

function isWhitespace(cp, ch) {
  return cp === 0x20 || cp === 0x09 || cp === 0x0a || cp === 0x0d || /\s/u.test(ch);
}

/** CJK ideographs, which BERT splits into single characters. */
function isChinese(cp) {
  return (
    (cp >= 0x4e00 && cp <= 0x9fff) ||
    (cp >= 0x3400 && cp <= 0x4dbf) ||
    (cp >= 0x20000 && cp <= 0x2a6df) ||
    (cp >= 0x2a700 && cp <= 0x2b73f) ||
    (cp >= 0x2b740 && cp <= 0x2b81f) ||
    (cp >= 0x2b920 && cp <= 0x2ceaf) || // sic: the tokenizers library's range
    (cp >= 0xf900 && cp <= 0xfaff) ||
    (cp >= 0x2f800 && cp <= 0x2fa1f)
  );
}

/** BERT's punctuation: ASCII symbols and Unicode punctuation. */
function isPunctuation(cp, ch) {
  if ((cp >= 33 && cp <= 47) || (cp >= 58 && cp <= 64) || (cp >= 91 && cp <= 96) || (cp >= 123 && cp <= 126)) {
    return true;
  }
  return /\p{P}/u.test(ch);
}

/** BertNormalizer: clean text, space around CJK characters, strip accents, lower-case. */
function normalize(text, options) {
  let out = '';
  for (const ch of text) {
    const cp = ch.codePointAt(0);
    if (options.clean_text) {
      if (cp === 0 || cp === 0xfffd || isControl(cp, ch)) continue;
      if (isWhitespace(cp, ch)) {
        out += ' ';
        continue;
      }
    }
    if (options.handle_chinese_chars && isChinese(cp)) out += ` ${ch} `;
    else out += ch;
  }
  // `strip_accents: null` follows `lowercase`, as in the tokenizers library.
  const stripAccents = options.strip_accents === null || options.strip_accents === undefined
    ? options.lowercase
    : options.strip_accents;
  if (stripAccents) out = out.normalize('NFD').replace(/\p{Mn}/gu, '');
  // Character by character, as the tokenizers library does (String#toLowerCase would apply the
  // final-sigma rule: "ΟΔΟΣ" → "οδος" ending in ς instead of σ).
  if (options.lowercase) out = Array.from(out, (ch) => ch.toLowerCase()).join('');
  return out;
}

/** BertPreTokenizer: split on whitespace, and every punctuation character is a word of its own. */
function preTokenize(text) {
  const words = [];
  let word = '';
  for (const ch of text) {
    const cp = ch.codePointAt(0);
    if (/\s/u.test(ch)) {
      if (word) words.push(word);
      word = '';
    } else if (isPunctuation(cp, ch)) {
      if (word) words.push(word);
      words.push(ch);
      word = '';
    } else {
      word += ch;
    }
  }
  if (word) words.push(word);
  return words;
}

export class WordPieceTokenizer {
  /** `json`: the parsed tokenizer.json. */
  constructor(json) {
    const model = json.model || {};
    if (model.type !== 'WordPiece') {
      throw new Error(`tokenizer.json has a ${model.type} model; the extension reads WordPiece (BERT) tokenizers only`);
    }
    if (!json.normalizer || json.normalizer.type !== 'BertNormalizer') {
      throw new Error('tokenizer.json has no BertNormalizer; the extension reads BERT tokenizers only');
    }
    this.vocab = new Map(Object.entries(model.vocab));
    this.unk = this.vocab.get(model.unk_token);
    this.prefix = model.continuing_subword_prefix ?? '##';
    this.maxChars = model.max_input_chars_per_word ?? 100;
    this.normalizer = json.normalizer;
    this.special = (json.added_tokens || []).filter((t) => t.special).map((t) => [t.content, t.id]);
    this.cls = this.vocab.get('[CLS]');
    this.sep = this.vocab.get('[SEP]');
    this.pad = json.padding?.pad_id ?? 0;
  }

  /** The WordPiece ids of one pre-tokenised word: longest match first, [UNK] when none fits. */
  wordIds(word, out) {
    const chars = [...word];
    if (chars.length > this.maxChars) {
      out.push(this.unk);
      return;
    }
    const pieces = [];
    let start = 0;
    while (start < chars.length) {
      let end = chars.length;
      let found;
      while (start < end) {
        let piece = chars.slice(start, end).join('');
        if (start > 0) piece = this.prefix + piece;
        found = this.vocab.get(piece);
        if (found !== undefined) break;
        end -= 1;
      }
      if (found === undefined) {
        out.push(this.unk);
        return;
      }
      pieces.push(found);
      start = end;
    }
    out.push(...pieces);
  }

  /**
   * Token ids of `text` with [CLS] … [SEP], truncated to `maxTokens` (special tokens included),
   * as the server's tokenizer produces them.
   */
  encode(text, maxTokens) {
    const ids = [];
    // Special tokens written in the text ("[SEP]") stay themselves, as added tokens do.
    let parts = [{ text }];
    for (const [content, id] of this.special) {
      parts = parts.flatMap((part) => {
        if (part.id !== undefined || !part.text.includes(content)) return [part];
        const pieces = part.text.split(content);
        return pieces.flatMap((p, i) => (i === 0 ? [{ text: p }] : [{ id }, { text: p }]));
      });
    }
    for (const part of parts) {
      if (part.id !== undefined) {
        ids.push(part.id);
        continue;
      }
      for (const word of preTokenize(normalize(part.text, this.normalizer))) this.wordIds(word, ids);
    }
    const room = Math.max(0, maxTokens - 2);
    return [this.cls, ...ids.slice(0, room), this.sep];
  }
}
