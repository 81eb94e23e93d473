"""The Experiments page's "Patch activations" (runtime.experiments' activation patching): the corrupted input, the
metric's position and token B, the grid (drawn with a progress bar while it runs), and one cell re-translated
beside both outputs. The translator's and the classifier's. Keys start with "exp_"."""
from __future__ import annotations

import streamlit as st

from playground import model_paths, models
from runtime import experiments as engine
from runtime.experiments.classifier_patching import classify_grids
from runtime.experiments.patch_grids import GRIDS

from . import checks, link, patching_link, patching_views
from .classifier_widgets import _classifier_model
from .engine_widgets import experiment_model, sentence_of
from .report import Report
from .widgets import PREFIX, model_label, say_input_notes, translated

EXAMPLES = {("de", "en"): ("Der Hund schläft im Garten.", "Die Katze schläft im Garten."),
            ("en", "de"): ("The dog is sleeping in the garden.", "The cat is sleeping in the garden."),
            "sentiment": ("a warm and funny film", "a cold and funny film")}
AUTO = patching_link.AUTO


def corrupted_input(text: str, example: tuple[str, str]) -> str | None:
    """B, the corrupted input (a button fills in an example pair); None after saying what is wrong with it."""
    def use_example() -> None:
        st.session_state[PREFIX + "text"], st.session_state[PREFIX + "other"] = example
        st.session_state[PREFIX + "pcell"] = ""

    st.button(f"Try the example pair: “{example[0]}” / “{example[1]}”", key=PREFIX + "pexample",
              on_click=use_example)
    st.session_state.setdefault(PREFIX + "other", text)
    other = st.text_input("B: the corrupted input (A with a word changed; press Enter). A's activations are patched "
                          "into B's run.", key=PREFIX + "other")
    problem = checks.text_problem(other)
    if problem:
        st.info(f"B: {problem}")
        return None
    if other.strip() == text.strip():
        st.info("B is still the same as A: change a word (e.g. Hund → Katze) to see which activations carry the "
                "difference.")
        return None
    return other.strip()


def progress_bar(what: str):
    """A progress bar and the progress(done, total) callback that moves it."""
    bar = st.progress(0.0, text=f"Patching {what}…")
    return bar, lambda done, total: bar.progress(done / max(total, 1), text=f"Patching {what}: {done} of {total} "
                                                  "batches")


def pick(key: str, options: list, note: str) -> None:
    """A link's value that is not among `options` falls back to the first, and says so."""
    if st.session_state.get(PREFIX + key, options[0]) not in options:
        if note:
            st.warning(note)
        st.session_state[PREFIX + key] = options[0]


@st.cache_data(show_spinner=False, max_entries=8)
def _pair(_em, _clean, _corrupted, key: tuple, position, token_b):
    return engine.pair_from(_em, _clean, _corrupted, position, None, token_b)


MEMO = PREFIX + "pgrids"  # this session's computed grids: {(inputs, grid): PatchGrid}
MEMO_SIZE = 8


def memo_grid(key: tuple, what: str, compute):
    """A grid computed once per session and inputs, with a progress bar while it runs. Not st.cache_data: the bar
    is an element made outside the computation, and a cached function that moves it fails when replayed
    (CacheReplayClosureError)."""
    memo = st.session_state.setdefault(MEMO, {})
    if key not in memo:
        bar, progress = progress_bar(what)
        grid = compute(progress)
        bar.empty()
        while len(memo) >= MEMO_SIZE:
            memo.pop(next(iter(memo)))
        memo[key] = grid
    return memo[key]


@st.cache_data(show_spinner=False, max_entries=16)
def _retranslate(_em, _pair, key: tuple, cell: tuple):
    return engine.retranslate(_em, _pair, engine.Patch(*cell))


def metric_controls(clean, corrupted, tokenizer) -> tuple[int | None, int | None, tuple]:
    """The metric's position and token B, from the two outputs' tokens (auto: where they first differ); the
    sources' pieces are offered too (the vocabulary is shared: a name, or a word the outputs lack)."""
    positions = [AUTO, *range(len(clean.output_pieces))]
    pieces = list(dict.fromkeys([*clean.output_pieces, *corrupted.output_pieces, *clean.src_pieces[1:-1],
                                 *corrupted.src_pieces[1:-1]]))
    pick("pat", positions, "The link's metric position is past the clean translation: auto is used.")
    pick("pb", [AUTO, *pieces], "The link's token B is not in either translation: auto is used.")
    at_col, b_col = st.columns(2)
    at = at_col.selectbox("Metric at target position", positions, key=PREFIX + "pat",
                          format_func=lambda t: "auto: where the outputs first differ" if t == AUTO
                          else f"{t}: {clean.output_pieces[t]}")
    b = b_col.selectbox("Token B (A is the clean output's token there)", [AUTO, *pieces], key=PREFIX + "pb",
                        format_func=lambda p: "auto: the corrupted output's token" if p == AUTO else p)
    return (None if at == AUTO else at), (None if b == AUTO else tokenizer.token_to_id(b)), (at, b)


def grid_choice(grids: dict[str, str]) -> str:
    """Which grid; another grid drops the chosen cell (row.column means another patch there)."""
    pick("pgrid", list(grids), "")
    return st.radio("Grid", list(grids), key=PREFIX + "pgrid", format_func=grids.get,
                    on_change=lambda: st.session_state.update({PREFIX + "pcell": ""}))


def cell_choice(grid) -> tuple[int, int] | None:
    """The cell to re-run, from a select (largest effect first); a link's cell that is not in the grid is
    dropped."""
    options = ["", *patching_views.cell_options(grid)]
    pick("pcell", options, "The link's cell is not in this grid: no cell is re-run.")
    key = st.selectbox("Re-translate B with one cell's patch", options, key=PREFIX + "pcell",
                       format_func=lambda k: "(choose a cell)" if not k else patching_views.cell_label(grid, k))
    return patching_link.parse_cell(key) if key else None


def settings(state: link.Experiment, other: str) -> None:
    state.other = other
    state.patch = {key: st.session_state.get(PREFIX + key) for key in patching_link.KEYS.values()}


def experiment(model, base, direction: tuple[str, str], text: str, state: link.Experiment) -> Report | None:
    """The translator's patching: A (the page's text, already translated as `base`) is clean, B corrupted."""
    em = experiment_model()
    other = corrupted_input(text, EXAMPLES.get(direction, EXAMPLES[("de", "en")])) if em is not None else None
    if other is None:
        return None
    b = translated(model, direction, other)
    if b is None:
        return None
    say_input_notes(b, other)
    clean, corrupted = sentence_of(model, base, direction, text), sentence_of(model, b, direction, other)
    version = model_paths.stamp("translate")
    position, token_b, chosen = metric_controls(clean, corrupted, model.tokenizer)
    key = (text, other, direction, chosen, version)
    try:
        with st.spinner("Running both sources…"):
            pair = _pair(em, clean, corrupted, key, position, token_b)
        site = grid_choice(patching_link.TRANSLATOR_GRIDS)
        grid = memo_grid((key, site), patching_link.TRANSLATOR_GRIDS[site].lower(),
                         lambda progress: GRIDS[site](em, pair, progress))
    except Exception as e:  # ValueError: nothing aligns, the same outputs...; ModelLoadError: graphs missing
        models.show_error(e, "translate")
        return None
    settings(state, other)
    inputs = {"model": model_label(state.model), "clean (A)": text, "corrupted (B)": other,
              "metric": pair.metric.description, "grid": patching_link.TRANSLATOR_GRIDS[site]}
    sentences = patching_views.pair_sentences(text, other, pair.clean.translation, pair.corrupted.translation,
                                              pair.metric.description, pair.clean_value, pair.corrupted_value,
                                              pair.note)
    report = patching_views.grid_report(grid, patching_link.TRANSLATOR_GRIDS[site], sentences, inputs)
    cell = cell_choice(grid)
    state.patch["pcell"] = st.session_state.get(PREFIX + "pcell")
    if cell is not None:
        r, c = cell
        with st.spinner("Re-translating B with that patch…"):
            result = _retranslate(em, pair, key, tuple(grid.cells[r][c]))
        report.sentences += patching_views.retranslation_sentences(result)
        report.inputs["cell re-translated"] = result.label
    return report


@st.cache_data(show_spinner=False, max_entries=8)
def _review_pair(_cem, clean: str, corrupted: str, version: tuple):
    return engine.review_pair(_cem, clean, corrupted)


def classifier_experiment(text: str, state: link.Experiment) -> Report | None:
    """The classifier's patching: review A is clean, B corrupted; the metric is the logit difference of the
    classes."""
    other = corrupted_input(text, EXAMPLES["sentiment"])
    if other is None:
        return None
    try:
        cem = models.load(_classifier_model, "sentiment")
        version = model_paths.stamp("sentiment")
        pair = _review_pair(cem, text, other, version)
        site = grid_choice(patching_link.CLASSIFIER_GRIDS)
        grid = memo_grid(("sentiment", text, other, version, site), patching_link.CLASSIFIER_GRIDS[site].lower(),
                         lambda progress: classify_grids(cem, pair, [site], progress)[site])
    except Exception as e:
        models.show_error(e, "sentiment")
        return None
    settings(state, other)
    labels = pair.clean.labels
    inputs = {"model": "Sentiment classifier", "clean (A)": text, "corrupted (B)": other,
              "metric": pair.description, "grid": patching_link.CLASSIFIER_GRIDS[site]}
    sentences = patching_views.pair_sentences(text, other, labels[pair.clean.label_index],
                                              labels[pair.corrupted.label_index], pair.description,
                                              pair.clean_value, pair.corrupted_value, pair.note)
    return patching_views.grid_report(grid, patching_link.CLASSIFIER_GRIDS[site], sentences, inputs)
