"""Edit and compare on hand-made translations (the diff, the aligned log-probs, the attention change), and the files
an experiment is kept in (CSV, SVG, PNG, one HTML file). Pure: no model, no Streamlit."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from playground.experiments import compare, figures, report, views
from runtime.text import Translation


def translation(tokens: list[str], src: list[str], probs: list[float], seed: int) -> Translation:
    rng = np.random.default_rng(seed)
    cross = []
    for _ in range(2):  # 2 layers × 2 heads, rows sum to 1
        w = rng.random((2, len(tokens), len(src)))
        cross.append(w / w.sum(-1, keepdims=True))
    return Translation("".join(tokens).replace("▁", " ").strip(), tokens, list(range(len(tokens))), -1.0, src, False,
                       attention={"encoder": None, "self": None, "cross": cross}, token_probs=probs)


A = translation(["▁the", "▁weather", "▁is", "▁nice", "</s>"], ["<2en>", "▁Das", "▁Wetter", "▁ist", "▁schön", "</s>"],
                [0.9, 0.5, 0.8, 0.4, 0.95], 0)
B = translation(["▁the", "▁weather", "▁is", "▁good", "▁today", "</s>"],
                ["<2en>", "▁Das", "▁Wetter", "▁ist", "▁heute", "▁gut", "</s>"], [0.8, 0.6, 0.7, 0.3, 0.2, 0.9], 1)


def test_the_token_diff_and_its_words():
    pieces = compare.token_diff(A.tokens, B.tokens)
    assert [(p.tag, p.a, p.b) for p in pieces] == [
        ("equal", ["▁the", "▁weather", "▁is"], ["▁the", "▁weather", "▁is"]),
        ("replace", ["▁nice"], ["▁good", "▁today"]), ("equal", ["</s>"], ["</s>"])]
    assert compare.diff_words(pieces) == "4 of B's 6 tokens are also in A, in the same order; 2 replaced."
    assert compare.diff_line(pieces) == "the weather is [-nice-]{+good today+}</s>"
    assert compare.diff_words(compare.token_diff(A.tokens, A.tokens)) == "The two outputs are the same 5 tokens."


def test_log_prob_changes_line_up_the_shared_tokens():
    rows = compare.aligned_rows(A, B)
    assert list(rows["diff"]) == ["equal"] * 3 + ["replace", "replace", "equal"]
    shared = rows[rows["diff"] == "equal"]
    np.testing.assert_allclose(shared["change"], np.log([0.8 / 0.9, 0.6 / 0.5, 0.7 / 0.8, 0.9 / 0.95]))
    assert rows.iloc[4]["token_a"] == "" and rows.iloc[4]["token_b"] == "▁today"  # only in B: A's side empty
    assert rows["change"].iloc[3] is None or np.isnan(rows["change"].iloc[3])


def test_the_attention_change_is_b_minus_a_over_the_shared_tokens():
    change = compare.attention_change(A, B)
    assert change.rows == ["▁the", "▁weather", "▁is", "</s>"]
    assert change.columns == ["<2en>", "▁Das", "▁Wetter", "▁ist", "</s>"]
    map_a = np.mean([w.mean(0) for w in A.attention["cross"]], axis=0)
    map_b = np.mean([w.mean(0) for w in B.attention["cross"]], axis=0)
    # "</s>" is target row 4 in A and 5 in B; source "</s>" is column 5 in A and 6 in B
    assert change.change[3, 4] == pytest.approx(map_b[5, 6] - map_a[4, 5])
    assert change.change[1, 2] == pytest.approx(map_b[1, 2] - map_a[1, 2])
    assert "largest move" in compare.change_words(change)


def test_the_compare_report_draws_the_computed_numbers():
    rep = views.compare_report(A, B, ("A: the sentence", "B: your edit"), {"text": "Das Wetter ist schön"})
    keys = [f.key for f in rep.figures]
    assert keys == ["compare_log_probs", "compare_attention_a", "compare_attention_b", "compare_attention_change"]
    points = figures.numbers(rep.figures[0].spec)
    assert [p["v"] for p in points if p["series"] == "B: your edit"] == pytest.approx(np.log(B.token_probs), abs=1e-6)
    change = figures.numbers(rep.figures[3].spec)
    assert [c["v"] for c in change] == pytest.approx(compare.attention_change(A, B).change.ravel(), abs=1e-6)


def test_the_files_of_an_experiment():
    rep = views.compare_report(A, B, ("A", "B"), {"text": "=cmd|' /C calc'!A0 <script>alert(1)</script>"})
    spec = rep.figures[0].spec
    table = report.csv(spec).decode()
    assert table.splitlines()[0] == "x,series,token,v" and len(table.splitlines()) == 1 + 11
    assert report.svg(spec).lstrip().startswith("<svg")
    assert report.png(spec)[:8] == b"\x89PNG\r\n\x1a\n"
    page = report.html_file(rep, "http://localhost:8501/Experiments?text=x")
    assert page.count("<svg") == len(rep.figures)
    assert "<script>" not in page and "&lt;script&gt;" in page  # the inputs are escaped; no script of its own
    assert "http" not in page.replace("http://localhost:8501/Experiments?text=x", "").replace(
        "http://www.w3.org", "")  # nothing fetched from elsewhere


def test_each_x_position_holds_the_tokens_its_label_names():
    """Issue 44.5: a replaced A token was drawn at B's label (A's ‘man’ at ‘2 ▁woman’), against the caption."""
    rep = views.compare_report(A, B, ("A", "B"), {})
    points = figures.numbers(rep.figures[0].spec)
    for point in points:
        assert point["x"].split(" ", 1)[1].startswith(point["token"]), point
    by_x = {}
    for point in points:
        by_x.setdefault(point["x"], []).append(point["series"])
    assert [x for x, series in by_x.items() if len(series) == 2] == ["0 ▁the", "1 ▁weather", "2 ▁is", "6 </s>"]
    assert by_x["3 ▁nice (A only)"] == ["A"]
    assert by_x["4 ▁good (B only)"] == by_x["5 ▁today (B only)"] == ["B"]


def test_a_word_level_models_tokens_are_joined_by_spaces():
    """Issue 44.5: against a trained toy model the diff read {+06860009+}: its tokens are whole words."""
    toy = Translation("0 6 8 6", ["0", "6", "8", "6", "</s>"], [0] * 5, -1.0, ["<2out>", "1", "</s>"], False)
    assert compare.word_tokens(toy) and not compare.word_tokens(A)
    pieces = compare.token_diff(A.tokens, toy.tokens)
    assert compare.diff_line(pieces, False, True) == "[-the weather is nice-]{+0 6 8 6+}</s>"
    drawn = dataclasses.replace(translation(toy.tokens, toy.src_tokens, [0.5] * 5, 2), text=toy.text)
    rep = views.compare_report(A, drawn, ("A", "B"), {})
    assert "{+0 6 8 6+}" in rep.sentences[3]


def test_identical_runs_say_nothing_moved_and_draw_no_change_map():
    rep = views.compare_report(A, A, ("A", "B"), {})
    assert "compare_attention_change" not in [f.key for f in rep.figures]
    assert any("nothing moved" in s for s in rep.sentences)
    assert not any("largest move" in s for s in rep.sentences)


def test_the_one_file_report_renders_its_markdown_and_wraps_long_text():
    """Issue 44.3: the file showed `**Knocked out** (zeroed)` and backticks, and its link widened the page."""
    rep = views.compare_report(A, B, ("A: the sentence", "B: <b>edit</b>"), {"text": "x"})
    page = report.html_file(rep, "http://localhost:8501/Experiments?text=" + "x" * 2000)
    assert "<strong>A: the sentence</strong>" in page and "<strong>B: &lt;b&gt;edit&lt;/b&gt;</strong>" in page
    assert "<code>the weather is [-nice-]{+good today+}&lt;/s&gt;</code>" in page
    assert "**" not in page and "`" not in page
    assert "overflow-wrap:anywhere" in page and "svg{max-width:100%" in page
    assert report.markdown_html("`**` and **`x`**") == "<code>**</code> and <strong><code>x</code></strong>"
