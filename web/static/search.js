// Greedy and beam search for one sentence, written against a step interface (the worker's onnxruntime-web backend),
// rule for rule as runtime/decoding/paths.py and runtime/decoding/beam.py, so the ids equal Python's
// (tests/web/test_web_parity.py). Scores are float32 where Python's are: Math.fround rounds a sum of two float32
// values exactly as numpy's float32 add does.
//
// backend.encode(srcIds) -> state (one row); backend.step(tokens, state, attention) -> {logProbs: Float32Array
// (rows * V), state, cross: per row its (L, H, S) cross-attention as one Float32Array, or null};
// backend.reorder(state, rows) -> state whose row i is row rows[i].

const NEG_INF = -Infinity;

// GNMT's lp(Y) = ((5 + |Y|) / 6) ** alpha (runtime/decoding/hypothesis.py)
export function lengthPenalty(length, alpha) {
  return ((5.0 + length) / 6.0) ** alpha;
}

// The most target tokens a source of srcLen ids (tag and </s> included) may get: runtime.decoding.max_lengths
export function maxTargetLength(srcLen, limits) {
  return Math.min(srcLen + limits.extra_len, limits.max_target_len);
}

function argmax(values, start, length) {
  let best = 0;
  for (let j = 1; j < length; j++) if (values[start + j] > values[start + best]) best = j; // the first of equals
  return best;
}

// The most probable next token at every step (runtime.decoding.greedy); prefix: tokens taken first whatever
// their probability (CTranslate2's target_prefix), scored like the chosen ones.
// nextLogProbs: also return the last step's whole distribution (where alternatives are taken).
export async function greedy(backend, srcIds, { bos, eos, maxLen, vocab, attention = false, prefix = [],
  nextLogProbs = false }) {
  let state = await backend.encode(srcIds);
  let last = [bos];
  const tokens = [];
  const tokenLogProbs = [];
  const maps = [];
  let next = null;
  for (let t = 0; t < maxLen; t++) {
    const out = await backend.step(last, state, attention);
    state = out.state;
    if (nextLogProbs) next = out.logProbs.slice(0, vocab);
    const token = t < prefix.length ? prefix[t] : argmax(out.logProbs, 0, vocab);
    tokens.push(token);
    tokenLogProbs.push(out.logProbs[token]);
    if (attention) maps.push(out.cross[0]);
    if (token === eos) break;
    last = [token];
  }
  const logProb = tokenLogProbs.reduce((a, b) => a + b, 0);
  return { tokens, tokenLogProbs, logProb, score: logProb, finished: tokens.at(-1) === eos, attention: maps,
    ...(nextLogProbs ? { nextLogProbs: next } : {}) };
}

// Each of the k rows' one-token extensions, scored float32(score + log-prob); the `width` best, best first, ties
// to the lower row, then the lower token: one top-k over the k * V candidates, as beam.py's top_candidates.
function topCandidates(scores, logProbs, k, width, vocab) {
  const best = []; // [score, row, token], sorted
  for (let row = 0; row < k; row++) {
    const base = scores[row];
    const offset = row * vocab;
    for (let token = 0; token < vocab; token++) {
      const score = Math.fround(base + logProbs[offset + token]);
      if (best.length === width && !(score > best[width - 1][0])) continue;
      let place = best.length;
      while (place > 0 && score > best[place - 1][0]) place--;
      best.splice(place, 0, [score, row, token]);
      if (best.length > width) best.pop();
    }
  }
  return best;
}

// Ranks of the candidates that end with EOS within the top k, and of the (at most k, finite) live ones
function splitCandidates(candidates, k, eos) {
  const ended = [];
  const kept = [];
  for (let rank = 0; rank < candidates.length; rank++) {
    const [score, , token] = candidates[rank];
    if (score === NEG_INF || kept.length === k) break;
    if (token === eos) {
      if (rank < k) ended.push(rank);
    } else {
      kept.push(rank);
    }
  }
  return { ended, kept };
}

// Keep the hypothesis among the n best (ties keep the earlier first); beam.py's offer
function offer(best, n, tokens, pathScores, alpha, finished, maps) {
  const logProb = pathScores.at(-1);
  const score = logProb / lengthPenalty(tokens.length, alpha);
  let place = best.findIndex((h) => score > h.score);
  if (place < 0) place = best.length;
  if (place >= n) return;
  const tokenLogProbs = pathScores.map((s, i) => Math.fround(s - (i ? pathScores[i - 1] : 0)));
  best.splice(place, 0, { tokens, logProb, score, finished, tokenLogProbs, attention: maps });
  best.length = Math.min(best.length, n);
}

// Beam search with GNMT length normalisation and beam.py's exact stopping rule: a sentence stops when no live
// beam, divided by the largest penalty it can still reach, beats the best finished hypothesis, or at maxLen.
// prefix: forced first tokens (the one live beam takes each).
export async function beamSearch(backend, srcIds, { bos, eos, maxLen, vocab, beam = 4, alpha = 0.6,
  attention = false, prefix = [] }) {
  const k = beam;
  let state = backend.reorder(await backend.encode(srcIds), new Array(k).fill(0));
  let scores = [0.0, ...new Array(k - 1).fill(NEG_INF)]; // only beam 0 starts live
  let paths = Array.from({ length: k }, () => []);
  let pathScores = Array.from({ length: k }, () => []);
  let maps = Array.from({ length: k }, () => []);
  let last = new Array(k).fill(bos);
  const best = [];
  for (let t = 0; t < maxLen; t++) {
    const out = await backend.step(last, state, attention);
    state = out.state;
    let logProbs = out.logProbs;
    if (t < prefix.length) { // force the prefix token: every other candidate -inf
      logProbs = new Float32Array(logProbs.length).fill(NEG_INF);
      for (let row = 0; row < k; row++) logProbs[row * vocab + prefix[t]] = out.logProbs[row * vocab + prefix[t]];
    }
    const stepMaps = attention ? maps.map((m, row) => [...m, out.cross[row]]) : maps;
    const length = t + 1;
    const candidates = topCandidates(scores, logProbs, k, 2 * k, vocab);
    const { ended, kept } = splitCandidates(candidates, k, eos);
    for (const rank of ended) {
      const [score, row] = candidates[rank];
      offer(best, 1, [...paths[row], eos], [...pathScores[row], score], alpha, true, stepMaps[row]);
    }
    let live;
    if (length >= maxLen) {
      for (const rank of kept) {
        const [score, row, token] = candidates[rank];
        offer(best, 1, [...paths[row], token], [...pathScores[row], score], alpha, false, stepMaps[row]);
      }
      live = false;
    } else {
      const reachable = Math.max(lengthPenalty(length + 1, alpha), lengthPenalty(maxLen, alpha));
      live = kept.length > 0 && (best.length < 1 || candidates[kept[0]][0] / reachable > best.at(-1).score);
    }
    if (!live) break;
    const chosen = kept.map((rank) => candidates[rank]);
    while (chosen.length < k) chosen.push([NEG_INF, 0, eos]); // dead beams pad the block
    state = backend.reorder(state, chosen.map((c) => c[1]));
    scores = chosen.map((c) => c[0]);
    last = chosen.map((c) => c[2]);
    paths = chosen.map(([, row, token]) => [...paths[row], token]);
    pathScores = chosen.map(([score, row]) => [...pathScores[row], score]);
    maps = chosen.map((c) => stepMaps[c[1]]);
  }
  return best[0] ?? { tokens: [], logProb: NEG_INF, score: NEG_INF, finished: false, tokenLogProbs: [], attention: [] };
}
