// The page: settings, the worker that translates, the input checks, the result (view.js draws its details).
// window.txWeb is the same API for the tests and the benchmark (tests/web, bench/web.py).
import { fetchJson } from "./files.js";
import { isEmpty, prepare } from "./checks.js";
import { maxTargetLength } from "./search.js";
import { Tokenizer } from "./tokenizer.js";
import { showResult, threads } from "./view.js";

const $ = (id) => document.getElementById(id);
const MB = (bytes) => `${(bytes / 1e6).toFixed(1)} MB`;
const config = await fetchJson("config.json");
const LANGUAGES = { de: "German", en: "English" };

const graphBytes = (precision) => ["encoder", "decoder"]
  .reduce((sum, graph) => sum + config.files[`models/${graph}.${precision}.onnx.gz`].bytes, 0);
$("size").textContent = `The first load downloads ${MB(config.load_bytes.int8)} with int8 (onnxruntime-web, the ` +
  "encoder and decoder graphs, the tokenizer), once; after it the page works offline." +
  (config.load_bytes.fp32 ? ` Choosing fp32 downloads ${MB(graphBytes("fp32"))} of graphs more.` : "");
for (const [src, tgt] of config.directions) {
  $("direction").add(new Option(`${LANGUAGES[src] ?? src} → ${LANGUAGES[tgt] ?? tgt}`, `${src}-${tgt}`));
}
for (const precision of [...config.precisions].sort((a, b) => (b === "int8") - (a === "int8"))) { // int8 first
  $("precision").add(new Option(precision, precision));
}

let tokenizer = null;
let worker = null;
let loaded = null; // the precision the worker holds
let pending = new Map();
let nextId = 0;
let onReady = null;

async function serviceWorkerReady() {
  // Files fetched by a controlled page go through the service worker, which keeps them for offline use.
  if (!("serviceWorker" in navigator)) return;
  try {
    await navigator.serviceWorker.register("sw.js");
    await navigator.serviceWorker.ready;
    if (!navigator.serviceWorker.controller) {
      await new Promise((resolve) => {
        navigator.serviceWorker.addEventListener("controllerchange", resolve, { once: true });
        setTimeout(resolve, 3000);
      });
    }
  } catch (error) {
    console.warn("no offline copy:", error);
  }
}
const offlineReady = serviceWorkerReady();

function onMessage(event) {
  const m = event.data;
  if (m.type === "progress") {
    $("status").textContent = `Loading… ${MB(m.loaded)} of ${MB(m.total)}`;
  } else if (m.type === "ready") {
    loaded = `${m.precision}/${m.optimization}`;
    $("status").textContent = `Ready: ${m.precision}, onnxruntime-web on ${threads(m.threads)}` +
      (m.isolated ? " (cross-origin isolated)" : " (not cross-origin isolated: one thread)") +
      (m.ms ? `, loaded in ${(m.ms / 1000).toFixed(1)} s` : "");
    $("translate").disabled = false;
    document.body.dataset.threads = m.threads; // for the tests and the benchmark
    onReady?.resolve(m);
  } else if (m.type === "result" || m.type === "error") {
    const waiting = pending.get(m.id);
    if (m.type === "error" && m.id === undefined) onReady?.reject(new Error(m.message));
    if (!waiting) return;
    pending.delete(m.id);
    if (m.type === "error") waiting.reject(new Error(m.message));
    else waiting.resolve(m);
  }
}

// optimization: onnxruntime's graph optimization level ("all", as the Python runtime's sessions; "basic", ...)
async function load(precision = $("precision").value, optimization = "all") {
  $("precision").value = precision;
  await offlineReady;
  tokenizer ??= new Tokenizer(await fetchJson("tokenizer.json.gz"));
  if (!worker) {
    worker = new Worker("worker.js", { type: "module" });
    worker.onmessage = onMessage;
  }
  if (loaded === `${precision}/${optimization}`) return;
  $("translate").disabled = true;
  const ready = new Promise((resolve, reject) => { onReady = { resolve, reject }; });
  worker.postMessage({ type: "load", precision, optimization });
  await ready;
}

// srcIds -> the worker's hypothesis; options: method, beam, alpha, attention, prefix
function translateIds(srcIds, options = {}) {
  const id = nextId++;
  const message = { type: "translate", id, srcIds, method: options.method ?? "beam", beam: options.beam ?? 4,
    alpha: options.alpha ?? 0.6, attention: options.attention ?? false, prefix: options.prefix ?? [],
    maxLen: options.maxLen ?? maxTargetLength(srcIds.length, config.limits) };
  return new Promise((resolve, reject) => {
    pending.set(id, { resolve, reject });
    worker.postMessage(message);
  });
}

// srcIds -> the n likeliest tokens after options.prefix, each completed: {alternatives: [hypothesis, ...]}
function alternatives(srcIds, options) {
  const id = nextId++;
  const message = { type: "alternatives", id, srcIds, method: options.method, beam: 4, alpha: 0.6,
    prefix: options.prefix, n: options.n, maxLen: maxTargetLength(srcIds.length, config.limits) };
  return new Promise((resolve, reject) => {
    pending.set(id, { resolve, reject });
    worker.postMessage(message);
  }).then((m) => m.alternatives);
}

function say(text, kind = "warning") {
  $("message").textContent = text ?? "";
  $("message").className = text ? kind : "";
}

async function translateTyped() {
  const text = $("source").value;
  const [, tgt] = $("direction").value.split("-");
  if (isEmpty(text)) {
    say(config.limits.words.empty, "info");
    $("result").hidden = true;
    return null;
  }
  $("translate").disabled = true;
  try {
    await load();
    const input = prepare(text, tgt, tokenizer, config);
    say(input.warnings.join(" ") || null);
    const method = $("method").value;
    const hyp = await translateIds(input.srcIds, { method, attention: true });
    const context = { config, tokenizer, input, method, tgt, alternatives, precision: loaded.split("/")[0] };
    showResult(hyp, context);
    return hyp;
  } catch (error) {
    say(`Something went wrong: ${error.message}`);
    return null;
  } finally {
    $("translate").disabled = false;
  }
}

$("load").addEventListener("click", () => load().catch((error) => say(`The translator did not load: ${error.message}`)));
$("precision").addEventListener("change", () => { if (worker) load().catch((e) => say(e.message)); });
$("translate").addEventListener("click", translateTyped);
$("direction").addEventListener("change", () => {
  const [src, tgt] = $("direction").value.split("-");
  $("source").lang = src;
  $("output").lang = tgt;
});
// Translate is enabled before loading: the first click loads the translator, then translates
$("translate").disabled = false;

window.txWeb = { config, load, translateIds, alternatives, translateTyped,
  prepare: (text, tgt) => prepare(text, tgt, tokenizer, config),
  get tokenizer() { return tokenizer; }, Tokenizer };
document.body.dataset.ready = "1";
