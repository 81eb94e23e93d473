// The translator's tokenizer in JavaScript: what HF tokenizers does with our tokenizer.json (runtime/tokenizer.py),
// id for id (tests/web/test_web_tokenizer.py checks 1,000 corpus sentences and the edge cases):
//   1. added tokens (<pad> <s> </s> <unk> <2en> <2de>) typed in the text are matched first, on the raw text;
//   2. each piece between them is normalised: NFKC, control characters dropped, whitespace runs -> " ", stripped;
//   3. Metaspace: " " -> "▁", a "▁" prepended, a word starts at every "▁";
//   4. BPE per word: characters, then the lowest-ranked adjacent merge first (leftmost among equals); a character
//      the vocabulary lacks is one <unk> (no byte fallback, unknowns not fused).

const META = "\u2581";
// runtime/tokenizer.py CONTROL_CHARS, as the normalizer's Replace has it
const CONTROL = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\u200b-\u200f\u2028-\u202f\ufeff]/gu;
// The Unicode White_Space set: what the normalizer's "\s+" (Oniguruma) and Strip (Rust's is_whitespace) match.
// (JavaScript's \s differs: it lacks U+0085 and has U+FEFF.)
const SPACE_CHARS = "\\t\\n\\v\\f\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
const SPACES = new RegExp(`[${SPACE_CHARS}]+`, "gu");
const EDGES = new RegExp(`^[${SPACE_CHARS}]+|[${SPACE_CHARS}]+$`, "gu");

export class Tokenizer {
  // json: the parsed tokenizer.json. Anything but the pipeline above is refused, so a retrained tokenizer with
  // other settings fails loudly instead of giving other ids.
  constructor(json) {
    const model = json.model;
    if (model.type !== "BPE" || model.byte_fallback || model.fuse_unk || model.continuing_subword_prefix ||
        model.end_of_word_suffix || json.pre_tokenizer?.type !== "Metaspace" ||
        json.pre_tokenizer.prepend_scheme !== "always") {
      throw new Error("tokenizer.json is not the BPE + Metaspace tokenizer this page implements");
    }
    this.vocab = new Map(Object.entries(model.vocab));
    this.idToToken = [];
    for (const [token, id] of this.vocab) this.idToToken[id] = token;
    this.ranks = new Map();
    model.merges.forEach((merge, rank) => {
      const [a, b] = Array.isArray(merge) ? merge : merge.split(" ");
      this.ranks.set(a + "\u0000" + b, rank);
    });
    this.unkId = this.vocab.get(model.unk_token);
    // longest first: where two added tokens start at one place, the longer wins (as HF's leftmost-longest match)
    this.added = json.added_tokens.map((t) => ({ content: t.content, id: t.id, special: t.special }))
      .sort((x, y) => y.content.length - x.content.length);
    this.specialIds = new Set(json.added_tokens.filter((t) => t.special).map((t) => t.id));
    for (const t of json.added_tokens) this.idToToken[t.id] = t.content;
  }

  static normalize(text) {
    return text.normalize("NFKC").replace(CONTROL, "").replace(SPACES, " ").replace(EDGES, "");
  }

  // text -> ids, no specials added (the caller adds <2xx> and </s>), as Tokenizer.encode in Python
  encode(text) {
    const ids = [];
    for (const piece of this.splitAdded(text)) {
      if (typeof piece === "number") ids.push(piece);
      else for (const word of Tokenizer.words(Tokenizer.normalize(piece))) ids.push(...this.bpe(word));
    }
    return ids;
  }

  // the raw text cut at every added token: strings between them, the tokens' ids in place
  splitAdded(text) {
    const pieces = [];
    let start = 0;
    let i = 0;
    while (i < text.length) {
      const hit = this.added.find((t) => text.startsWith(t.content, i));
      if (hit) {
        if (i > start) pieces.push(text.slice(start, i));
        pieces.push(hit.id);
        i += hit.content.length;
        start = i;
      } else {
        i += 1;
      }
    }
    if (start < text.length) pieces.push(text.slice(start));
    return pieces;
  }

  // Metaspace with prepend_scheme "always" and split: "a b" -> ["▁a", "▁b"]
  static words(normalized) {
    if (!normalized) return [];
    let s = normalized.replaceAll(" ", META);
    if (!s.startsWith(META)) s = META + s;
    const words = [];
    let current = "";
    for (const ch of s) {
      if (ch === META && current) {
        words.push(current);
        current = "";
      }
      current += ch;
    }
    if (current) words.push(current);
    return words;
  }

  bpe(word) {
    const symbols = Array.from(word).map((ch) => (this.vocab.has(ch) ? ch : null)); // null: <unk>
    for (;;) {
      let best = -1;
      let bestRank = Infinity;
      for (let i = 0; i + 1 < symbols.length; i++) {
        if (symbols[i] === null || symbols[i + 1] === null) continue;
        const rank = this.ranks.get(symbols[i] + "\u0000" + symbols[i + 1]);
        if (rank !== undefined && rank < bestRank) {
          bestRank = rank;
          best = i;
        }
      }
      if (best < 0) break;
      symbols.splice(best, 2, symbols[best] + symbols[best + 1]);
    }
    return symbols.map((s) => (s === null ? this.unkId : this.vocab.get(s)));
  }

  // ids -> text: specials (pads, tags, </s>, <unk>) left out, "▁" -> " ", stripped (Tokenizer.decode in Python)
  decode(ids) {
    return ids.filter((id) => !this.specialIds.has(id)).map((id) => this.idToToken[id] ?? "")
      .join("").replaceAll(META, " ").trim();
  }

  tokens(ids) {
    return ids.map((id) => this.idToToken[id] ?? "<unk>");
  }
}
