"""Each experiment's Report (playground.experiments.report): the sentences and figures the page shows, in order,
built from runtime results. The page draws a Report and the HTML export writes the same one. Pure: no Streamlit."""
from __future__ import annotations

import numpy as np

from runtime.text import Translation

from . import compare, figures
from .report import Figure, Report


def compare_report(a: Translation, b: Translation, names: tuple[str, str], inputs: dict[str, str]) -> Report:
    """Two greedy translations side by side: their texts, the token diff in words, each token's log-prob in A and
    in B, both cross-attention maps (mean over layers and heads) and B − A over the tokens they share."""
    pieces = compare.token_diff(a.tokens, b.tokens)
    points = []
    # One x position per token of the diff: a shared token's holds both points; a token only one side has (replaced,
    # added or dropped) gets its own, labelled with that token and side. A replaced A token drawn at B's label ("A's
    # ‘man’ at ‘2 ▁woman’") disagreed with the caption (issue 44.5).
    n = 0  # x positions so far
    for _, row in compare.aligned_rows(a, b).iterrows():
        shared = row["diff"] == "equal"
        for side, name in (("a", names[0]), ("b", names[1])):
            if row[f"token_{side}"] == "":
                continue
            if not (shared and side == "b"):  # a new x position, but B's shared token joins A's
                where = f"{n} {row[f'token_{side}']}" + ("" if shared else f" ({side.upper()} only)")
                n += 1
            points.append({"x": where, "series": name, "token": row[f"token_{side}"],
                           "v": round(float(row[f"log_prob_{side}"]), 6)})
    change = compare.attention_change(a, b)
    line = compare.diff_line(pieces, compare.word_tokens(a), compare.word_tokens(b))
    report = Report(f"Edit and compare: {names[0]} vs {names[1]}", inputs,
                    [f"**{names[0]}**: {a.text or '(empty output)'}", f"**{names[1]}**: {b.text or '(empty output)'}",
                     compare.diff_words(pieces), f"Token diff ([-only in A-] {{+only in B+}}): `{line}`"])
    report.figures.append(Figure("compare_log_probs", figures.paired_points(
        points, "Each output token's log-prob when the model chose it (greedy)", "log-prob"),
        "Positions follow the token diff: a token both outputs share sits on one x position with two points; the "
        "gap is how much surer (up) or less sure (down) B is of it. A token only one side has (replaced, added or "
        "dropped) has an x position of its own, marked (A only) or (B only), with one point."))
    for key, name, t, grid in (("compare_attention_a", names[0], a, change.a), ("compare_attention_b", names[1], b,
                                                                                  change.b)):
        report.figures.append(Figure(key, figures.heatmap(
            grid, t.src_tokens, t.tokens, f"Cross-attention of {name} (mean over layers and heads)",
            "source token", "target token")))
    if compare.moved(change):
        report.figures.append(Figure("compare_attention_change", figures.heatmap(
            change.change, change.columns, change.rows, "Cross-attention: B − A over the tokens both share",
            "shared source token", "shared target token", value="B − A", diverging=True),
            compare.change_words(change)))
    else:
        report.sentences.append(compare.change_words(change))
    return report


# ---------------------------------------------------------------- the engine's experiments (runtime.experiments)

def position_label(pieces: list[str], t: int) -> str:
    return f"{t} {pieces[t]}"


def lens_report(lens, position: int, inputs: dict[str, str]) -> Report:
    """runtime.experiments.lens.LogitLens -> the chosen token's probability after every decoder layer at every
    position (with each layer's top candidate written in its cell), and at one position each layer's top
    candidates and the chosen token's rank."""
    pieces, layers = lens.sentence.output_pieces, lens.layers
    rows = [{"y": position_label(pieces, t), "x": f"after layer {layer + 1}",
             "v": round(float(lens.chosen_prob[layer, t]), 6), "rank": int(lens.chosen_rank[layer, t]),
             "top": lens.top_pieces[layer][t][0]}
            for t in range(len(pieces)) for layer in range(layers)]
    chosen = pieces[position]
    ranks = ", ".join(f"layer {layer + 1}: rank {int(lens.chosen_rank[layer, position])} "
                      f"(p = {float(lens.chosen_prob[layer, position]):.3f})" for layer in range(layers))
    top = [{"x": f"#{r + 1}", "y": f"after layer {layer + 1}",
            "v": round(float(lens.top_probs[layer, position, r]), 6), "piece": lens.top_pieces[layer][position][r]}
           for layer in range(layers) for r in range(lens.top_ids.shape[2])]
    report = Report("Logit lens", inputs, [
        f"**Normalisation:** {lens.normalisation}.",
        "The last layer's row is the served model's own distribution (the same numbers greedy chose from).",
        f"At position {position} the model finally chose “{chosen}”. {ranks}."])
    report.figures.append(Figure("lens_chosen", figures.grid(
        rows, "The finally chosen token's probability after each decoder layer (cell text: that layer's top "
        "candidate)", "p(chosen)", text="top"),
        "Read each row left to right: where the colour turns dark is the layer by which the model has settled on the "
        "token at the row's start; where a cell's text differs from it, that layer would have said something else."))
    report.figures.append(Figure("lens_position", figures.grid(
        top, f"Position {position} (“{chosen}”): each layer's top candidates", "probability", text="piece"),
        "Each row: the most probable next pieces if the decoder stopped after that layer."))
    return report


def knockout_report(result, inputs: dict[str, str]) -> Report:
    """runtime.experiments.heads.Knockout -> the new output beside the original, with per-token log-probs: the
    new output's own, and the original translation's tokens re-scored without the heads."""
    original = result.original
    heads = ", ".join(h.label() for h in result.heads) or "none"
    mode = "zeroed" if result.mode == "zero" else f"replaced by {result.reference}"
    pieces = compare.token_diff(original.output_pieces, result.output_pieces)
    sentences = [f"**Knocked out** ({mode}): {heads}.",
                 f"**Original:** {original.translation or '(empty output)'}",
                 f"**Without those heads:** {result.translation or '(empty output)'}",
                 compare.diff_words(pieces) if result.changed else "The output did not change."]
    drop = float(np.sum(original.token_log_probs) - np.sum(result.original_log_probs))
    sentences.append(f"The original translation's log-prob falls by {drop:.3f} nats without these heads "
                     f"(from {np.sum(original.token_log_probs):.3f} to {np.sum(result.original_log_probs):.3f}).")
    points = []
    for t in range(len(original.output_pieces)):
        where = position_label(original.output_pieces, t)
        points += [{"x": where, "series": "all heads", "v": round(float(original.token_log_probs[t]), 6)},
                   {"x": where, "series": "heads knocked out", "v": round(float(result.original_log_probs[t]), 6)}]
    new = [{"x": position_label(result.output_pieces, t), "series": "new output", "v": round(float(v), 6)}
           for t, v in enumerate(result.token_log_probs)]
    report = Report("Knock out heads", inputs, sentences)
    report.figures.append(Figure("knockout_original", figures.paired_points(
        points, "The original translation: each token's log-prob, all heads vs without the chosen",
        "log-prob"), "The gap at a token is how much that token depended on the knocked-out heads."))
    report.figures.append(Figure("knockout_new", figures.paired_points(
        new, "The new output (greedy without the heads): each token's log-prob when chosen", "log-prob")))
    return report


def importance_report(grid, inputs: dict[str, str], top: int = 5, what: str = "the original translation") -> Report:
    """runtime.experiments.heads.HeadImportance -> the drop per layer × head × kind, and the heads that matter."""
    from .link import KINDS

    rows = [{"kind": KINDS[kind], "x": str(h + 1), "y": f"layer {layer + 1}",
             "v": round(float(values[layer, h]), 6)}
            for kind, values in grid.drop.items() for layer in range(values.shape[0]) for h in range(values.shape[1])]
    ranked = grid.ranked()
    count = len(grid.sentences)
    over = "this sentence" if count == 1 else f"{count} sentences (the mean)"
    mode = "zeroed" if grid.mode == "zero" else f"replaced by {grid.reference}"
    said = "; ".join(f"{head.label()}: {value:+.3f}" for head, value in ranked[:top])
    report = Report("Head importance", inputs, [
        f"Each head alone {mode}: how much the log-prob of {what} drops, over {over} "
        f"(nats; > 0: the head helped). Computed in {grid.seconds:.2f} s.",
        f"The {top} heads that matter most: {said}.",
        f"Least: {ranked[-1][0].label()} ({ranked[-1][1]:+.3f})."])
    report.figures.append(Figure("importance_grid", figures.grid(
        rows, "Log-prob drop when one head alone is removed", "drop (nats)", facet="kind", diverging=True,
        x_title="head"),
        f"Red: {what} became less probable without the head (it helped); blue: more probable."))
    return report


def occlusion_report(occ, position: int, inputs: dict[str, str]) -> Report:
    """runtime.experiments.occlusion.Occlusion, row `position` -> the drop per occluded source piece beside the
    cross-attention on it, their rank correlation, and the pieces where the two disagree most."""
    row = occ.row(position)
    labels_ = [f"{i} {p}" for i, p in zip(occ.positions, row.pieces, strict=True)]
    drop_rows = [{"x": x, "series": "occlusion: log-prob drop (nats)", "v": round(float(v), 6)}
                 for x, v in zip(labels_, row.drop, strict=True)]
    attention_rows = [{"x": x, "series": "cross-attention (mean over layers and heads)", "v": round(float(v), 6)}
                      for x, v in zip(labels_, row.attention, strict=True)]
    report = Report("Which source words a target word needed", inputs,
                    [f"Target position {position}: “{row.token}”. {occlusion_words(occ.method)}",
                     agreement_words(row)])
    report.figures.append(Figure("occlusion_drop", figures.bars(
        drop_rows, f"Occlusion: how much less probable “{row.token}” becomes without each source piece",
        "log-prob drop (nats)", "occluded source piece"),
        "Tall bar: the model needed that piece to choose this token."))
    report.figures.append(Figure("occlusion_attention", figures.bars(
        attention_rows, f"Cross-attention from “{row.token}” to each source piece", "attention weight",
        "source piece"), "Tall bar: the decoder looked there. Looking is not needing: compare with the bars above."))
    return report


def occlusion_words(method: str) -> str:
    if method == "mask":
        return ("Each piece in turn is replaced by <pad> and masked out of every attention, as the model treats "
                "padding: the one token it was trained to ignore, so no meaning of its own leaks in, and every other "
                "piece keeps its position.")
    return "Each piece in turn is deleted (later pieces move up one position)."


def agreement_words(row, looker: str = "the decoder") -> str:
    """The rank correlation in words, and where attention and occlusion disagree most; `looker`: whose attention it
    is ("the decoder" of the translator, "the classifier")."""
    from .compare import rank_gap

    if np.isnan(row.spearman):
        return "The rank correlation is undefined here (fewer than two pieces, or one side is constant)."
    strength = ("strongly" if abs(row.spearman) >= 0.7 else "somewhat" if abs(row.spearman) >= 0.4
                else "hardly")
    sign = "agree" if row.spearman >= 0 else "disagree"
    words = (f"Spearman rank correlation of occlusion and attention: {row.spearman:+.2f}: they {strength} {sign} "
             "on which pieces matter.")
    top_a, top_d = int(np.argmax(row.attention)), int(np.argmax(row.drop))
    words += (f" Both put “{row.pieces[top_a]}” first." if top_a == top_d else
              f" Attention puts “{row.pieces[top_a]}” first, occlusion “{row.pieces[top_d]}”.")
    looked, needed = rank_gap(row.attention, row.drop)
    if looked is not None:
        words += (f" Most looked at but least needed: “{row.pieces[looked]}” (attention rank "
                  f"{rank_of(row.attention, looked)}, occlusion rank {rank_of(row.drop, looked)}).")
    if needed is not None:
        words += (f" Most needed but least looked at: “{row.pieces[needed]}” (occlusion rank "
                  f"{rank_of(row.drop, needed)}, attention rank {rank_of(row.attention, needed)}).")
    return words + f" Attention says where {looker} looked; occlusion says what it could not do without."


def rank_of(values: np.ndarray, i: int) -> int:
    """1 = the largest."""
    return int((np.asarray(values) > values[i]).sum()) + 1
