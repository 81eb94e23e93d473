"""Each experiment's Report (playground.experiments.report): the sentences and figures the page shows, in order,
built from runtime results. The page draws a Report and the HTML export writes the same one. Pure: no Streamlit."""
from __future__ import annotations

from runtime.text import Translation

from . import compare, figures
from .report import Figure, Report


def compare_report(a: Translation, b: Translation, names: tuple[str, str], inputs: dict[str, str]) -> Report:
    """Two greedy translations side by side: their texts, the token diff in words, each token's log-prob in A and
    in B, both cross-attention maps (mean over layers and heads) and B − A over the tokens they share."""
    pieces = compare.token_diff(a.tokens, b.tokens)
    table = compare.aligned_rows(a, b)
    points = []
    for n, row in table.iterrows():
        where = f"{n} {row['token_b'] or row['token_a']}"
        for side, name in (("a", names[0]), ("b", names[1])):
            if row[f"log_prob_{side}"] is not None and row[f"token_{side}"] != "":
                points.append({"x": where, "series": name, "token": row[f"token_{side}"],
                               "v": round(float(row[f"log_prob_{side}"]), 6)})
    change = compare.attention_change(a, b)
    report = Report(f"Edit and compare: {names[0]} vs {names[1]}", inputs,
                    [f"**{names[0]}**: {a.text or '(empty output)'}", f"**{names[1]}**: {b.text or '(empty output)'}",
                     compare.diff_words(pieces)])
    report.figures.append(Figure("compare_log_probs", figures.paired_points(
        points, "Each output token's log-prob when the model chose it (greedy)", "log-prob"),
        "Rows follow the token diff: a token both outputs share sits on one x position with two points; the gap "
        "is how much surer (up) or less sure (down) B is of it. A token only one side has has one point."))
    for key, name, t, grid in (("compare_attention_a", names[0], a, change.a), ("compare_attention_b", names[1], b,
                                                                                  change.b)):
        report.figures.append(Figure(key, figures.heatmap(
            grid, t.src_tokens, t.tokens, f"Cross-attention of {name} (mean over layers and heads)",
            "source token", "target token")))
    if change.change.size:
        report.figures.append(Figure("compare_attention_change", figures.heatmap(
            change.change, change.columns, change.rows, "Cross-attention: B − A over the tokens both share",
            "shared source token", "shared target token", value="B − A", diverging=True),
            compare.change_words(change)))
    else:
        report.sentences.append(compare.change_words(change))
    return report
