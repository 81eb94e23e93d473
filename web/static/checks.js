// What the page says about an input before it is translated, with the app's own limits and words (config.json's
// "limits", written by web/limits.py from runtime/text.py and runtime/coverage.py).

// Python's str.isspace set: an input of these only is empty, as runtime.text.check_texts has it
const PY_SPACE = /^[\t\n\v\f\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*$/u;

export function isEmpty(text) {
  return PY_SPACE.test(text);
}

function inRanges(ranges, cp) {
  let lo = 0;
  let hi = ranges.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (cp < ranges[mid][0]) hi = mid - 1;
    else if (cp > ranges[mid][1]) lo = mid + 1;
    else return true;
  }
  return false;
}

// Python's f"{share:.0%}": the percentage rounded half to even
function percent(share) {
  const v = share * 100;
  const floor = Math.floor(v);
  const rest = v - floor;
  const rounded = rest > 0.5 || (rest === 0.5 && floor % 2 === 1) ? floor + 1 : floor;
  return `${rounded}%`;
}

// runtime.coverage.coverage + warning: the text's letters (Python's isalpha) and the share outside Latin script,
// the share of <unk> among its tokens; the app's warning, or null
export function coverageWarning(text, tokens, limits) {
  let letters = 0;
  let nonLatin = 0;
  for (const ch of text) {
    const cp = ch.codePointAt(0);
    if (inRanges(limits.letters, cp)) {
      letters += 1;
      if (!inRanges(limits.latin_letters, cp)) nonLatin += 1;
    }
  }
  const unknown = tokens.length ? tokens.filter((t) => t === "<unk>").length / tokens.length : 0;
  const words = limits.words;
  if (letters === 0) return words.no_letters;
  if (nonLatin / letters > limits.non_latin_limit) return words.script.replace("{percent}", percent(nonLatin / letters));
  if (unknown > limits.unknown_limit) return words.unknown.replace("{percent}", percent(unknown));
  return null;
}

// [<2tgt>] + the text's ids + [</s>], cut to the model's source limit (TextTranslator.source_ids), the warnings
export function prepare(text, tgt, tokenizer, config) {
  const limits = config.limits;
  const body = tokenizer.encode(text);
  const kept = body.slice(0, limits.source_room);
  const truncated = body.length > limits.source_room;
  const srcIds = [config.tags[tgt], ...kept, config.specials["</s>"]];
  const warnings = [truncated ? limits.words.truncated : null, coverageWarning(text, tokenizer.tokens(kept), limits)];
  return { srcIds, truncated, warnings: warnings.filter(Boolean) };
}
