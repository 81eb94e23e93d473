// The Web Worker that runs the translator, so the page never freezes: onnxruntime-web's wasm build (threads only
// when the page is cross-origin isolated), the encoder and KV-cache decoder graphs, and search.js's searches.
// Messages in: {type: "load", precision} and {type: "translate", id, srcIds, method, beam, alpha, maxLen,
// attention, prefix, alternatives}. Out: {type: "progress", loaded, total}, {type: "ready", ...}, {type: "result",
// id, ...}, {type: "error", id, message}.
import * as ort from "./ort.wasm.min.mjs";
import { fetchBytes } from "./files.js";
import { beamSearch, greedy } from "./search.js";

let config = null;
let sessions = null; // {precision, encoder, decoder}
let runtimeReady = null;

function threadCount() {
  // SharedArrayBuffer (and so wasm threads) exists only in a cross-origin isolated page
  return self.crossOriginIsolated ? Math.max(1, Math.min(4, navigator.hardwareConcurrency || 1)) : 1;
}

async function load(precision, optimization = "all") {
  const started = performance.now();
  config ??= await (await fetch("config.json")).json();
  const names = ["models/encoder." + precision + ".onnx.gz", "models/decoder." + precision + ".onnx.gz"];
  const wasmName = "ort-wasm-simd-threaded.wasm.gz";
  const wanted = runtimeReady ? names : [wasmName, ...names];
  const total = wanted.reduce((sum, name) => sum + config.files[name].bytes, 0);
  let loaded = 0;
  const onBytes = (n) => {
    loaded += n;
    self.postMessage({ type: "progress", loaded, total });
  };
  const [wasm, encoderBytes, decoderBytes] = await Promise.all([
    runtimeReady ? null : fetchBytes(wasmName, onBytes), ...names.map((name) => fetchBytes(name, onBytes))]);
  if (!runtimeReady) {
    ort.env.wasm.wasmBinary = wasm; // no second fetch of the binary: the .mjs loader comes from this folder
    ort.env.wasm.wasmPaths = new URL("./", self.location.href).href;
    ort.env.wasm.numThreads = threadCount();
    runtimeReady = true;
  }
  const options = { executionProviders: ["wasm"], graphOptimizationLevel: optimization };
  const encoder = await ort.InferenceSession.create(encoderBytes, options);
  const decoder = await ort.InferenceSession.create(decoderBytes, options);
  sessions = { precision, optimization, encoder, decoder };
  return { precision, optimization, threads: ort.env.wasm.numThreads, isolated: self.crossOriginIsolated,
    ms: performance.now() - started, version: ort.env.versions?.web ?? "" };
}

// rows of a (B, ...) tensor, in the order `rows` names
function gatherRows(tensor, rows) {
  const [batch, ...rest] = tensor.dims;
  const size = tensor.data.length / batch;
  if (rows.length === batch && rows.every((r, i) => r === i)) return tensor;
  const data = new tensor.data.constructor(rows.length * size);
  rows.forEach((r, i) => data.set(tensor.data.subarray(r * size, (r + 1) * size), i * size));
  return new ort.Tensor(tensor.type, data, [rows.length, ...rest]);
}

// The step interface of search.js over the two sessions (runtime/onnx_backend.py's OnnxBackend, in JavaScript).
const backend = {
  async encode(srcIds) {
    const n = srcIds.length;
    const ids = new ort.Tensor("int64", BigInt64Array.from(srcIds, BigInt), [1, n]);
    const mask = new ort.Tensor("bool", new Uint8Array(n).fill(1), [1, n]);
    const out = await sessions.encoder.run({ src_ids: ids, src_mask: mask }, config.cross_names);
    const empty = new ort.Tensor("float32", new Float32Array(0), [1, config.n_heads, 0, config.head_dim]);
    return { mask, cross: config.cross_names.map((name) => out[name]), past: config.past_names.map(() => empty) };
  },
  async step(tokens, state, attention) {
    const rows = tokens.length;
    const feeds = { tokens: new ort.Tensor("int64", BigInt64Array.from(tokens, BigInt), [rows, 1]),
      src_mask: state.mask };
    config.past_names.forEach((name, i) => { feeds[name] = state.past[i]; });
    config.cross_names.forEach((name, i) => { feeds[name] = state.cross[i]; });
    const fetches = ["log_probs", ...config.present_names, ...(attention ? config.step_attention_names : [])];
    const out = await sessions.decoder.run(feeds, fetches);
    let cross = null;
    if (attention) { // per row: (L, H, S) from L x (B, H, 1, S)
      const layers = config.step_attention_names.map((name) => out[name].data);
      const perRow = layers[0].length / rows;
      cross = Array.from({ length: rows }, (_, r) => {
        const row = new Float32Array(layers.length * perRow);
        layers.forEach((data, l) => row.set(data.subarray(r * perRow, (r + 1) * perRow), l * perRow));
        return row;
      });
    }
    return { logProbs: out.log_probs.data, cross,
      state: { mask: state.mask, cross: state.cross, past: config.present_names.map((name) => out[name]) } };
  },
  reorder(state, rows) {
    return { mask: gatherRows(state.mask, rows), cross: state.cross.map((t) => gatherRows(t, rows)),
      past: state.past.map((t) => gatherRows(t, rows)) };
  },
};

async function translate(m) {
  const started = performance.now();
  const common = { bos: config.specials["<s>"], eos: config.specials["</s>"], maxLen: m.maxLen,
    vocab: config.vocab_size, attention: Boolean(m.attention), prefix: m.prefix ?? [] };
  const search = m.method === "beam" ? beamSearch : greedy;
  const hyp = await search(backend, m.srcIds, { ...common, beam: m.beam, alpha: m.alpha });
  // threads: what onnxruntime-web runs on after its start (it falls back to 1 where the page is not isolated)
  return { ...hyp, ms: performance.now() - started, precision: sessions.precision, threads: ort.env.wasm.numThreads };
}

// The n likeliest next tokens after a prefix (ties: the lower id first), each completed by the method; most
// likely first (runtime.text.TextTranslator.alternatives).
async function alternatives(m) {
  const started = performance.now();
  const forced = await greedy(backend, m.srcIds, { bos: config.specials["<s>"], eos: config.specials["</s>"],
    maxLen: m.prefix.length + 1, vocab: config.vocab_size, prefix: m.prefix, nextLogProbs: true });
  const next = forced.nextLogProbs;
  const order = Array.from(next.keys()).sort((a, b) => next[b] - next[a] || a - b).slice(0, m.n);
  const found = [];
  for (const token of order) found.push(await translate({ ...m, prefix: [...m.prefix, token], attention: false }));
  return { alternatives: found, ms: performance.now() - started };
}

self.onmessage = async (event) => {
  const m = event.data;
  try {
    if (m.type === "load") {
      const same = sessions?.precision === m.precision && sessions?.optimization === m.optimization;
      if (!same) self.postMessage({ type: "ready", ...(await load(m.precision, m.optimization)) });
      else self.postMessage({ ...m, type: "ready", threads: ort.env.wasm.numThreads, isolated: self.crossOriginIsolated,
        ms: 0 });
    } else if (m.type === "translate") {
      self.postMessage({ type: "result", id: m.id, ...(await translate(m)) });
    } else if (m.type === "alternatives") {
      self.postMessage({ type: "result", id: m.id, ...(await alternatives(m)) });
    }
  } catch (error) {
    self.postMessage({ type: "error", id: m.id, message: String(error?.message ?? error) });
  }
};
