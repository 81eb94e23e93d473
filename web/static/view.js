// The result's details, as the Translate page shows them: the text and the page's own timing, each token's
// probability, a clicked word's alternatives (each completed by the same method), and the cross-attention heatmap
// (one layer's mean over heads, or one head).
const $ = (id) => document.getElementById(id);
const ALTERNATIVES = 5; // the likeliest next tokens shown for a clicked word

function element(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  if (className) node.className = className;
  return node;
}

const percent = (logProb) => `${(Math.exp(logProb) * 100).toFixed(1)}%`;
export const threads = (n) => `${n} thread${n > 1 ? "s" : ""}`; // what onnxruntime-web runs on

export function showResult(hyp, context) {
  const { tokenizer, method, precision } = context;
  $("result").hidden = false;
  $("output").textContent = tokenizer.decode(hyp.tokens) || "(empty output)";
  $("timing").textContent = `${method === "beam" ? "beam 4, α 0.6" : "greedy"} · ${precision} · ` +
    `${hyp.ms.toFixed(0)} ms in this browser on ${threads(hyp.threads)} · confidence ${percent(mean(hyp.tokenLogProbs))}`;
  const tokens = tokenizer.tokens(hyp.tokens);
  $("alternatives").replaceChildren();
  $("tokens").replaceChildren(...tokens.map((token, i) => {
    const chip = element("button", token, "token");
    chip.type = "button";
    chip.title = `alternatives to "${token}"`;
    chip.append(element("small", percent(hyp.tokenLogProbs[i])));
    chip.addEventListener("click", () => showAlternatives(hyp, i, context));
    return chip;
  }));
  heatmap(hyp, context);
}

function mean(values) {
  return values.length ? values.reduce((a, b) => a + b, 0) / values.length : -Infinity;
}

// The ALTERNATIVES likeliest tokens at position i after the output's first i tokens, each completed by the method
// (runtime.text's return_alternatives, CTranslate2's name), most likely first.
async function showAlternatives(hyp, i, context) {
  const { tokenizer, input, method } = context;
  const box = $("alternatives");
  const prefix = hyp.tokens.slice(0, i);
  box.replaceChildren(element("p", `Alternatives after “${tokenizer.decode(prefix)}”…`, "note"));
  const found = await context.alternatives(input.srcIds, { method, prefix, n: ALTERNATIVES });
  const list = element("ol");
  for (const alt of found) {
    const item = element("li");
    item.append(element("strong", `${tokenizer.tokens([alt.tokens[i]])[0]} (${percent(alt.tokenLogProbs[i])})`),
      ` → ${tokenizer.decode(alt.tokens) || "(empty output)"}`);
    list.append(item);
  }
  box.replaceChildren(element("p", `At “${tokenizer.tokens([hyp.tokens[i]])[0]}” the model also considered:`,
    "note"), list);
}

// hyp.attention: per output token, its (L, H, S) cross-attention as the search recorded it
function heatmap(hyp, context) {
  const { config, tokenizer, input } = context;
  const layers = config.n_decoder_layers;
  const heads = config.n_heads;
  const source = tokenizer.tokens(input.srcIds);
  const S = source.length;
  const layerSelect = element("select");
  for (let l = layers; l >= 1; l--) layerSelect.add(new Option(`layer ${l}`, String(l - 1)));
  const headSelect = element("select");
  headSelect.add(new Option("mean of the heads", "mean"));
  for (let h = 1; h <= heads; h++) headSelect.add(new Option(`head ${h}`, String(h - 1)));
  const table = element("table");
  const draw = () => {
    const l = Number(layerSelect.value);
    const head = headSelect.value;
    const head_row = element("tr");
    head_row.append(element("th"), ...source.map((t) => element("th", t)));
    const body = hyp.attention.map((map, t) => {
      const row = element("tr");
      row.append(element("th", tokenizer.tokens([hyp.tokens[t]])[0]));
      for (let s = 0; s < S; s++) {
        let w = 0;
        if (head === "mean") for (let h = 0; h < heads; h++) w += map[(l * heads + h) * S + s] / heads;
        else w = map[(l * heads + Number(head)) * S + s];
        const cell = element("td");
        cell.style.background = `rgba(255, 75, 75, ${w.toFixed(3)})`;
        cell.title = `${tokenizer.tokens([hyp.tokens[t]])[0]} → ${source[s]}: ${w.toFixed(3)}`;
        row.append(cell);
      }
      return row;
    });
    table.replaceChildren(element("thead"), element("tbody"));
    table.tHead.append(head_row);
    table.tBodies[0].append(...body);
  };
  layerSelect.addEventListener("change", draw);
  headSelect.addEventListener("change", draw);
  draw();
  const controls = element("div", undefined, "controls");
  controls.append(layerSelect, headSelect);
  $("heatmap").replaceChildren(controls, table);
}
