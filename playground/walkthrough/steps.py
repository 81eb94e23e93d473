"""The Walkthrough page's steps (what each shows, its formula and paper section, which view draws it), the models it
walks through, and its shareable URL."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..links import Correction

MODEL_CHOICES = ("translate:de-en", "translate:en-de", "sentiment")  # what the page's model radio offers


@dataclass(frozen=True)
class Step:
    key: str  # the URL's name for it
    title: str
    section: str  # where the paper explains it
    formula: str  # LaTeX
    look: str  # one or two sentences: what to look at
    kind: str  # which view it needs: "tokens", "embedding", "attention", "scores", "heads", "norm", "ffn", "output"
    stack: str = "enc"  # "enc" or "dec"; for attention steps in the decoder: "dec_self" / "dec_cross"


ENCODER_STEPS = [
    Step("tokens", "Tokens: BPE pieces and ids", "§3.4, §5.1",
         r"\text{text} \rightarrow (t_1, \dots, t_S), \; t_i \in \{0, \dots, V-1\}",
         "The tokenizer cuts the text into subword pieces (▁ starts a word) and numbers them. The translator's "
         "source starts with a tag saying which language to write and ends with </s>.", "tokens"),
    Step("embedding", "Embeddings, scaled by √d_model", "§3.4",
         r"x_i = E[t_i] \cdot \sqrt{d_\text{model}}",
         "Each id picks one row of the embedding matrix E, multiplied by √d_model. The usual reason: the "
         "positional encoding added next is √(d_model/2) long at every position, and rows much shorter than that "
         "would be drowned in the sum. The bars compare the three lengths for this model, and the sentence under "
         "them says which one wins.", "embedding"),
    Step("positions", "Positional encoding, added", "§3.5",
         r"PE_{(pos, 2i)} = \sin\!\left(pos / 10000^{2i/d_\text{model}}\right), \;"
         r"PE_{(pos, 2i+1)} = \cos\!\left(pos / 10000^{2i/d_\text{model}}\right)",
         "Attention itself ignores order, so each position gets a fixed pattern of sines and cosines added: fast "
         "waves in the first dimensions, slow ones in the last. The sum is what enters layer 1.", "positions"),
    Step("qkv", "Self-attention: queries, keys, values", "§3.2.2",
         r"Q = X W^Q_h,\; K = X W^K_h,\; V = X W^V_h \quad (d_k = d_\text{model} / h)",
         "Three projections of the same input, split into heads of d_k dimensions. A query asks, a key is "
         "matched against queries, a value is what is passed on.", "attention"),
    Step("scores", "Scores: QKᵀ, ÷ √d_k, mask, softmax", "§3.2.1",
         r"\mathrm{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}} + M\right), \; M_{ij} \in \{0, -\infty\}",
         "Every query is compared with every key by a dot product; dividing by √d_k keeps the softmax out of its "
         "flat regions when d_k is large. Masked cells (padding; the future, in the decoder) become −∞, so they "
         "get weight 0. Each row of weights sums to 1.", "scores"),
    Step("heads", "Weights × V, heads concatenated, W_O", "§3.2.2",
         r"\mathrm{head}_h = A_h V_h, \quad \mathrm{MultiHead}(X) = \mathrm{Concat}(\mathrm{head}_1, \dots, "
         r"\mathrm{head}_H)\, W^O",
         "Each head's output is a weighted average of its values. The heads are laid side by side again "
         "(d_model wide) and mixed by W^O: the only place the heads talk to each other.", "heads"),
    Step("norm", "Residual connection and LayerNorm", "§3.1, §5.4",
         r"\text{post-LN: } \mathrm{LayerNorm}(x + \mathrm{Sublayer}(x)); \quad "
         r"\text{pre-LN: } x + \mathrm{Sublayer}(\mathrm{LayerNorm}(x))",
         "The sublayer's output is added to its input (the residual stream), then normalised per position to mean "
         "0 and standard deviation 1 (times a learned gain, plus a bias).", "norm"),
    Step("ffn", "Position-wise feed-forward network", "§3.3",
         r"\mathrm{FFN}(x) = \max(0,\; x W_1 + b_1)\, W_2 + b_2",
         "The same two-layer network on every position separately: d_model → d_ff → d_model. The ReLU zeroes "
         "many hidden units; which ones fire is where much of the model's knowledge sits. Then residual + norm "
         "again, and the next layer starts.", "ffn"),
]

DECODER_STEPS = [
    Step("dec_input", "Decoder input: <s> + the translation so far", "§3, §3.4",
         r"y_0 = \langle s\rangle, \; x_t = E[y_t] \sqrt{d_\text{model}} + PE_t",
         "The decoder reads its own output shifted right: at position t it has seen <s> and the first t output "
         "tokens, and predicts token t+1. Same embedding matrix as the source (shared vocabulary).", "embedding",
         "dec"),
    Step("dec_self", "Decoder masked self-attention", "§3.2.3",
         r"\mathrm{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}} + M\right), \; M_{ij} = -\infty \text{ for } j > i",
         "The same arithmetic as the encoder's, but the causal mask hides every later position: a position may "
         "only look back, as it will when generating.", "scores", "dec_self"),
    Step("dec_cross", "Cross-attention: target queries, source keys and values", "§3.2.3",
         r"\mathrm{softmax}\!\left(\frac{Q_\text{target} K_\text{memory}^\top}{\sqrt{d_k}}\right) "
         r"V_\text{memory}",
         "Queries come from the decoder, keys and values from the encoder's output (the memory): here the "
         "translation looks at the source. Often one head lines up the words like a dictionary.", "scores",
         "dec_cross"),
    Step("dec_ffn", "Decoder feed-forward", "§3.3", r"\mathrm{FFN}(x) = \max(0,\; x W_1 + b_1)\, W_2 + b_2",
         "As in the encoder, per position, then residual + norm.", "ffn", "dec"),
    Step("output", "Output layer: tied embeddings, softmax, the next token", "§3.4",
         r"P(y_{t+1}) = \mathrm{softmax}\!\left(h_t E^\top\right)",
         "The last hidden state is compared with every row of the same embedding matrix (weights tied): the "
         "most similar rows become the likeliest next tokens. Greedy decoding takes the top one.", "output", "dec"),
]

CLASSIFIER_STEPS = [
    Step("pool", "Pooling: one vector for the whole text", "(BERT-style classifier, not in the paper)",
         r"p_d = \max_i h_{i,d} \;\text{(max pooling)} \quad\text{or}\quad p = \tfrac{1}{S}\textstyle\sum_i h_i",
         "The encoder gives one vector per token; the classifier needs one per text, so it pools over the "
         "tokens (padding excluded). With max pooling each dimension comes from the token where it is largest.",
         "pool"),
    Step("head", "Classifier head and calibrated probabilities", "(temperature scaling: Guo et al., 2017)",
         r"z = p W + b, \quad P(c) = \mathrm{softmax}(z / T)_c",
         "A linear layer turns the pooled vector into one score per label. Dividing by the temperature T (fitted "
         "on held-out reviews) makes the probabilities mean what they say; it never changes the label.", "head"),
]


def steps_for(choice: str) -> list[Step]:
    return ENCODER_STEPS + (CLASSIFIER_STEPS if choice == "sentiment" else DECODER_STEPS)


def direction_of(choice: str) -> tuple[str, str]:
    """"translate:de-en" -> ("de", "en")."""
    src, tgt = choice.split(":")[1].split("-")
    return src, tgt


def offered(directions: list[tuple[str, str]]) -> list[str]:
    """The model choices the shipped models can take: the classifier, and the translator's own directions."""
    return [c for c in MODEL_CHOICES if c == "sentiment" or direction_of(c) in directions]


# ---------------------------------------------------------------- the page's URL

URL_KEYS = ("model", "text", "step", "layer", "head", "query", "position")


TEXT_CHARS = 2000  # the most of a link's text the page takes
NUMBERS = {"layer": (1, "layer 1"), "head": (1, "head 1"), "query": (0, "row 0"), "position": (0, "position 0")}


def parse_url(params: dict[str, str], choices: tuple[str, ...] | list[str] = MODEL_CHOICES) -> tuple[
        dict[str, Any], list[Correction]]:
    """The page state a shared link holds, and what had to be corrected on the way: a value that is unknown or not
    a number gives way to the page's default. As on the page, layers and heads count from 1, query rows and decoder
    positions from 0; their upper ends depend on the model and the text, so the page checks those (view_controls).
    """
    state: dict[str, Any] = {}
    corrections: list[Correction] = []
    if "model" in params:
        if params["model"] in choices:
            state["model"] = params["model"]
        else:
            corrections.append(Correction("model", params["model"], choices[0],
                                          f"is not a model this page walks through ({', '.join(choices)})"))
    text = params.get("text")
    if isinstance(text, str) and text.strip():
        state["text"] = text[:TEXT_CHARS]
        if len(text) > TEXT_CHARS:
            corrections.append(Correction("text", text, f"its first {TEXT_CHARS} characters",
                                          f"is {len(text)} characters long"))
    if "step" in params:
        if params["step"] in {s.key for s in ENCODER_STEPS + DECODER_STEPS + CLASSIFIER_STEPS}:
            state["step"] = params["step"]
        else:
            corrections.append(Correction("step", params["step"], "the first step", "is not a step of this page"))
    for name, (lowest, default) in NUMBERS.items():
        if name not in params:
            continue
        value = params[name]
        if value.isdigit() and lowest <= int(value):
            state[name] = int(value)
        else:
            why = "is not a whole number" if not value.lstrip("-").isdigit() else f"is below the first ({lowest})"
            corrections.append(Correction(name, value, default, why))
    return state, corrections


def url_of(state: dict[str, Any]) -> dict[str, str]:
    return {k: str(state[k]) for k in URL_KEYS if state.get(k) not in (None, "")}
