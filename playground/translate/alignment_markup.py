"""The Translate page's word alignment as HTML and inline SVG (shown through st.markdown), drawn by the browser itself
instead of Vega-Lite: the chart is redrawn on every Translate click, and Vega's drawing was a large part of a click
(`python -m bench clicks`, docs/performance.md).

The picture: the source words on a top row, the target words on a bottom row, each row's words spread evenly over
the same width, and a line from every target word to the source word it aligns to, as opaque as the word-level
attention on that link. The words are HTML text at the page's own size; the lines are an SVG stretched between the
two rows (its strokes keep their width whatever the stretch). A sentence too long for its column scrolls sideways
inside its own box (a phone). Each line's hover names its pair and weight. Every word is HTML-escaped: text, never
markup.
"""
from __future__ import annotations

from runtime.alignment import WordAlignment

from ..heatmap_markup import text

CLASS = "tx-align"  # the chart (the browser tests and the AppTests find it by this)
BOX_CLASS = "tx-align-box"  # the box that scrolls when the words need more room than the column has
SOURCE_COLOUR, TARGET_COLOUR = "#4c78a8", "#f58518"  # told apart in light and dark mode alike
LINE_COLOUR = SOURCE_COLOUR
MIN_WORD_PX = 72  # the least room a word gets on its row (about 9 characters): less, and the box scrolls
LINES_PX = 110  # the height of the lines' band between the two rows


def spread(i: int, n: int) -> float:
    """Word i of n's centre, as a share of the row's width (0..1): n words spread evenly over the same width."""
    return (i + 0.5) / max(n, 1)


def word_row(words: list[str], side: str, colour: str) -> str:
    """One row of words, each centred on its `spread` position and at most its share of the row wide (a longer word
    ends in "…"; its hover has it whole), so no word runs into the next or past the row's ends."""
    share = 100 / max(len(words), 1)
    spans = "".join(
        f'<span data-side="{side}" data-index="{i}" title="{text(w)}" style="position:absolute;'
        f'left:{100 * spread(i, len(words)):.3f}%;transform:translateX(-50%);max-width:{share:.3f}%;'
        f'overflow:hidden;text-overflow:ellipsis;white-space:nowrap;color:{colour}">{text(w)}</span>'
        for i, w in enumerate(words))
    return f'<div style="position:relative;height:1.5em">{spans}</div>'


def alignment_html(alignment: WordAlignment, source_language: str, target_language: str) -> str:
    """One block of markup (no blank line: markdown passes it through whole): a legend, the source row, the lines,
    the target row. Each line carries data-link ("target-source" word indices) and data-weight, and a hover."""
    src, tgt = alignment.source_words, alignment.target_words
    links = []
    for j, linked in enumerate(alignment.links):
        for i in linked:
            weight = float(alignment.weights[j][i])
            x1, x2 = spread(i, len(src)), spread(j, len(tgt))
            hover = f"{tgt[j]} → {src[i]}: {weight:.0%} of the word's attention"
            # A wide transparent stroke beside the drawn one: a 2 px line is hard to hover.
            links.append(
                f'<g class="tx-align-link" data-link="{j}-{i}" data-weight="{weight!r}"><title>{text(hover)}</title>'
                f'<line x1="{x1:.5f}" y1="0" x2="{x2:.5f}" y2="1" stroke="{LINE_COLOUR}" stroke-width="2" '
                f'stroke-opacity="{min(1.0, max(0.0, weight)):.3f}" vector-effect="non-scaling-stroke"/>'
                f'<line x1="{x1:.5f}" y1="0" x2="{x2:.5f}" y2="1" stroke="transparent" stroke-width="10" '
                f'vector-effect="non-scaling-stroke"/></g>')
    room = MIN_WORD_PX * max(len(src), len(tgt), 1)
    dot = '<span style="display:inline-block;width:0.7em;height:0.7em;border-radius:50%;background:{}"></span>'
    legend = (f'<p style="font-size:0.8em;opacity:0.8;margin:0 0 0.3em 0">{dot.format(SOURCE_COLOUR)} source '
              f'({text(source_language)}), top &nbsp; {dot.format(TARGET_COLOUR)} target ({text(target_language)}), '
              'bottom &nbsp; a line: the source word a target word attended to most, as opaque as that attention</p>')
    return (f'<div class="{CLASS}" role="figure" aria-label="Word alignment: {len(tgt)} target words linked to '
            f'{len(src)} source words" style="margin-bottom:0.6em">{legend}'
            f'<div class="{BOX_CLASS}" style="overflow-x:auto;overflow-y:hidden">'
            f'<div style="min-width:{room}px;padding:0 0.5em">'
            + word_row(src, "source", SOURCE_COLOUR)
            + f'<svg viewBox="0 0 1 1" preserveAspectRatio="none" width="100%" height="{LINES_PX}" '
            f'style="display:block;overflow:visible" aria-hidden="true">{"".join(links)}</svg>'
            + word_row(tgt, "target", TARGET_COLOUR)
            + '</div></div></div>')
