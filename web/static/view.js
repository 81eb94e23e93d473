// The result's details: the text, its timing, each token's probability. (Heatmap and alternatives: step 4.)
const $ = (id) => document.getElementById(id);

export function showResult(hyp, context) {
  const { tokenizer, method, precision } = context;
  $("result").hidden = false;
  $("output").textContent = tokenizer.decode(hyp.tokens);
  $("timing").textContent = `${method === "beam" ? "beam 4, α 0.6" : "greedy"} · ${precision} · ` +
    `${hyp.ms.toFixed(0)} ms in this browser`;
  const tokens = tokenizer.tokens(hyp.tokens);
  $("tokens").replaceChildren(...tokens.map((token, i) => {
    const chip = document.createElement("span");
    chip.className = "token";
    chip.textContent = token;
    const p = document.createElement("small");
    p.textContent = `${(Math.exp(hyp.tokenLogProbs[i]) * 100).toFixed(1)}%`;
    chip.append(p);
    return chip;
  }));
}
