"""A multi-head model's attention as one layer × head grid (bertviz's "model view"), and one head drawn large.

A model whose `Alignment` entries carry a `head` (MiniLM: 6 layers × 12 heads × four word blocks) is a *head
family*: drawing each entry as its own heatmap made hundreds of figures for one pair. Here the whole family is one
figure: a mosaic of small thumbnails (one block, premise → hypothesis by default, for every layer and head) in one
heatmap trace on one shared colour scale, with one invisible clickable marker per thumbnail (plotly cannot select
heatmap cells: a click on a cell selects its marker). The head picked there is drawn large over the
full square of both sentences' words, the thumbnails' block outlined; the family's head-less entries (attention
rollout) are summaries, drawn the same way. Everything is decided from the entries' types and fields alone.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import plotly.graph_objects as go

from nlivis.models.trace import Alignment, Trace
from nlivis.viz.common import SEQUENTIAL_SCALE, empty_figure, fitted_range, labelled_heatmap, real_length, token_ticks
from nlivis.viz.heatmaps import alignment_matrix

DIRECTIONS = ("p→h", "h→p", "p→p", "h→h")
"""The blocks a thumbnail can show, cross-sentence first."""
SIDES = {"p": "premise", "h": "hypothesis"}
GRID_QUANTILE = 0.99
"""The grid's shared colour scale ends at this quantile of its weights when that is below 0.95 (stated on its bar):
many thin weights would otherwise all be the darkest colour."""
THUMBNAIL_PIXELS = 78
"""Height of one layer's row of thumbnails."""
OUTLINE = {"type": "rect", "fillcolor": "rgba(0,0,0,0)", "layer": "above"}


@dataclass(frozen=True)
class HeadFamily:
    """The multi-head alignments of one trace: (layer, head, direction) → entry."""

    entries: dict[tuple[int, int, str], Alignment]

    @property
    def layers(self) -> list[int]:
        return sorted({layer for layer, _, _ in self.entries})

    @property
    def heads(self) -> list[int]:
        return sorted({head for _, head, _ in self.entries})

    @property
    def directions(self) -> list[str]:
        found = {direction for _, _, direction in self.entries}
        return [d for d in DIRECTIONS if d in found] + sorted(found - set(DIRECTIONS))

    def picks(self) -> list[str]:
        """Every head as `layer.head` ("3.7"), the spelling a pick has in the URL."""
        return [f"{layer}.{head}" for layer in self.layers for head in self.heads]

    def default_pick(self) -> str:
        """The last layer's first head: what a model's classifier reads last."""
        return f"{self.layers[-1]}.{self.heads[0]}"

    def blocks(self, pick: str) -> dict[str, Alignment]:
        """The picked head's entries, direction → entry."""
        layer, head = (int(part) for part in pick.split("."))
        return {d: e for (l, h, d), e in self.entries.items() if (l, h) == (layer, head)}


def head_family(trace: Trace) -> HeadFamily | None:
    """The trace's alignments that name a head, or None when it has none (one alignment per layer and direction)."""
    entries = {(e.layer, e.head, e.direction): e for e in trace.of_type(Alignment).values() if e.head is not None}
    return HeadFamily(entries) if entries else None


def summaries(trace: Trace) -> dict[str, dict[str, Alignment]]:
    """In a trace with a head family, its head-less alignments (summaries over heads, such as attention rollout),
    grouped by their names' stem ("rollout.p→h" → "rollout"), each group direction → entry."""
    if head_family(trace) is None:
        return {}
    groups: dict[str, dict[str, Alignment]] = defaultdict(dict)
    for name, entry in trace.of_type(Alignment).items():
        if entry.head is None:
            stem = name[:-len(entry.direction) - 1] if name.endswith(f".{entry.direction}") else name
            groups[stem][entry.direction] = entry
    return dict(groups)


def _shared_range(values: np.ndarray) -> tuple[float, float, str | None]:
    """0 to 1 (or a narrow range's own, `fitted_range`), or 0 to the `GRID_QUANTILE` of the weights when that is
    below 0.95, with a note saying so."""
    low, high, note = fitted_range(values)
    finite = values[np.isfinite(values)]
    top = float(np.quantile(finite, GRID_QUANTILE)) if finite.size else 1.0
    if note is None and 0.0 < top < 0.95:
        return 0.0, top, f"colour scale 0–{top:.2f}: {GRID_QUANTILE:.0%} of the weights are below it"
    return low, high, note


@dataclass
class Mosaic:
    """The thumbnails laid out in one matrix, a blank row and column between neighbours."""

    values: np.ndarray
    rows: list[str]
    cols: list[str]
    size: tuple[int, int]
    """(rows, columns) of one thumbnail."""

    def origin(self, row: int, column: int) -> tuple[int, int]:
        """The matrix position of the top-left cell of the thumbnail at grid row `row`, grid column `column`."""
        return row * (self.size[0] + 1), column * (self.size[1] + 1)


def mosaic(family: HeadFamily, direction: str, index: int, premise_tokens: Sequence[str],
           hypothesis_tokens: Sequence[str]) -> Mosaic:
    """Every layer's (grid rows) and head's (grid columns) `direction` block of pair `index` as one matrix."""
    layers, heads = family.layers, family.heads
    some = next(e for (_, _, d), e in family.entries.items() if d == direction)
    _, row_tokens, col_tokens = alignment_matrix(some, index, premise_tokens, hypothesis_tokens)
    r, c = len(row_tokens), len(col_tokens)
    values = np.full((len(layers) * (r + 1) - 1, len(heads) * (c + 1) - 1), np.nan)
    rows, cols = ["—"] * values.shape[0], ["—"] * values.shape[1]
    grid = Mosaic(values, rows, cols, (r, c))
    for i, layer in enumerate(layers):
        top, _ = grid.origin(i, 0)
        rows[top:top + r] = [f"layer {layer} · {t}" for t in row_tokens]
        for j, head in enumerate(heads):
            _, left = grid.origin(0, j)
            cols[left:left + c] = [f"head {head} · {t}" for t in col_tokens] if i == 0 else cols[left:left + c]
            entry = family.entries.get((layer, head, direction))
            if entry is not None:
                values[top:top + r, left:left + c] = alignment_matrix(entry, index, premise_tokens, hypothesis_tokens)[0]
    return grid


def head_grid(family: HeadFamily, index: int, premise_tokens: Sequence[str], hypothesis_tokens: Sequence[str],
              direction: str = "p→h", picked: str | None = None, label: str = "") -> go.Figure:
    """The layer × head grid of one block of pair `index`: a thumbnail per head (rows: layers, columns: heads),
    one colour scale and its bar, the picked head outlined; a click on a thumbnail selects its marker, whose
    customdata is [layer, head]."""
    if not family.entries or direction not in family.directions:
        return empty_figure(f"no {direction} attention to show")
    grid = mosaic(family, direction, index, premise_tokens, hypothesis_tokens)
    layers, heads = family.layers, family.heads
    (r, c), rows_of, cols_of = grid.size, SIDES[direction[0]], SIDES[direction[-1]]
    low, high, note = _shared_range(grid.values)
    trace = labelled_heatmap(grid.values, grid.rows, grid.cols, "attention weight", f"layer · {rows_of} word",
                             f"head · {cols_of} word", coloraxis="coloraxis", name=f"{label} {direction}".strip())
    # the markers carry the hover (layer, head): per-cell hover text made the figure's JSON megabytes
    trace.update(customdata=None, hoverinfo="skip", hovertemplate=None, meta={**trace.meta, "skip_gaps": True})
    centres = [(grid.origin(i, j), layer, head) for i, layer in enumerate(layers) for j, head in enumerate(heads)]
    markers = go.Scatter(
        x=[left + (c - 1) / 2 for (_, left), _, _ in centres], y=[top + (r - 1) / 2 for (top, _), _, _ in centres],
        mode="markers", showlegend=False, name="heads", customdata=[[layer, head] for _, layer, head in centres],
        marker={"size": THUMBNAIL_PIXELS - 14, "symbol": "square", "color": "rgba(0,0,0,0)"},
        hovertemplate="layer %{customdata[0]} · head %{customdata[1]}<br>click to draw it large<extra></extra>",
        meta={"kind": "overlay"})
    figure = go.Figure([trace, markers])
    x_centres = [grid.origin(0, j)[1] + (c - 1) / 2 for j in range(len(heads))]
    y_centres = [grid.origin(i, 0)[0] + (r - 1) / 2 for i in range(len(layers))]
    figure.update_layout(
        title=" · ".join(p for p in (label, f"attention {direction} ({rows_of} rows over {cols_of} columns) of "
                                            f"{len(layers)} layers × {len(heads)} heads", "click a head") if p),
        xaxis={"tickmode": "array", "tickvals": x_centres, "ticktext": [f"head {h}" for h in heads], "side": "top",
               "showgrid": False, "zeroline": False, "range": [-0.5, grid.values.shape[1] - 0.5]},
        yaxis={"tickmode": "array", "tickvals": y_centres, "ticktext": [f"layer {l}" for l in layers],
               "autorange": "reversed", "showgrid": False, "zeroline": False},
        coloraxis={"colorscale": SEQUENTIAL_SCALE, "cmin": low, "cmax": high,
                   "colorbar": {"title": {"text": "attention" + (f"<br>{low:.2f}–{high:.2f}" if note else "")},
                                "thickness": 12}},
        shapes=_pick_outline(grid, family, picked), plot_bgcolor="white", clickmode="event+select",
        hovermode="closest", height=THUMBNAIL_PIXELS * len(layers) + 90 + (20 if note else 0),
        margin={"l": 10, "r": 10, "t": 90 + (20 if note else 0), "b": 10})
    if note:
        figure.update_layout(title={"text": f"{figure.layout.title.text}<br><sup>{note}</sup>"})
    return figure


def _pick_outline(grid: Mosaic, family: HeadFamily, picked: str | None) -> list[dict]:
    if picked not in family.picks():
        return []
    layer, head = (int(part) for part in picked.split("."))
    top, left = grid.origin(family.layers.index(layer), family.heads.index(head))
    r, c = grid.size
    return [{**OUTLINE, "line": {"color": "#d62728", "width": 3},
             "x0": left - 0.5, "x1": left + c - 0.5, "y0": top - 0.5, "y1": top + r - 0.5}]


def full_square(blocks: dict[str, Alignment], index: int, premise_tokens: Sequence[str],
                hypothesis_tokens: Sequence[str]) -> tuple[np.ndarray, list[str], int]:
    """Pair `index`'s word blocks (direction → entry) as one square over the premise's then the hypothesis'
    words (a missing block stays blank): (values, the words along both axes, the premise's length)."""
    tokens = {"premise": premise_tokens, "hypothesis": hypothesis_tokens}
    lengths = {sentence: len(words) for sentence, words in tokens.items()}
    for entry in blocks.values():
        for sentence, size in ((entry.rows, entry.weights.shape[1]), (entry.cols, entry.weights.shape[2])):
            lengths[sentence] = real_length(tokens[sentence][:lengths[sentence]], size)
    p, h = lengths["premise"], lengths["hypothesis"]
    values = np.full((p + h, p + h), np.nan)
    spans = {"premise": slice(0, p), "hypothesis": slice(p, p + h)}
    for entry in blocks.values():
        block = alignment_matrix(entry, index, premise_tokens, hypothesis_tokens)[0]
        rows, cols = spans[entry.rows], spans[entry.cols]
        values[rows, cols] = block[:rows.stop - rows.start, :cols.stop - cols.start]
    return values, [*premise_tokens[:p], *hypothesis_tokens[:h]], p


def square_heatmap(blocks: dict[str, Alignment], index: int, premise_tokens: Sequence[str],
                   hypothesis_tokens: Sequence[str], title: str, outlined: str = "p→h",
                   colour_range: tuple[float, float] | None = None) -> go.Figure:
    """One head (or summary) large: the full square of both sentences' words, rows attending over columns, a thin
    line between the sentences and the `outlined` block framed. Each block's rows are normalised within the block
    (as the thumbnails are), which the title says. `colour_range` matches the grid's scale; None fits its own."""
    if not blocks:
        return empty_figure("no attention to show")
    values, words, p = full_square(blocks, index, premise_tokens, hypothesis_tokens)
    low, high, note = (*colour_range, None) if colour_range else _shared_range(values)
    trace = labelled_heatmap(values, words, words, "attention weight", "row word", "column word", SEQUENTIAL_SCALE,
                             zmin=low, zmax=high, name=title)
    trace.update(hoverongaps=False, meta={**trace.meta, "skip_gaps": True},
                 colorbar={"title": {"text": "attention"}, "thickness": 12})
    n = len(words)
    spans = {"p": (0, p), "h": (p, n)}
    (r0, r1), (c0, c1) = spans[outlined[0]], spans[outlined[-1]]
    divider = {"type": "line", "line": {"color": "white", "width": 2}, "layer": "above"}
    shapes = [{**divider, "x0": p - 0.5, "x1": p - 0.5, "y0": -0.5, "y1": n - 0.5},
              {**divider, "x0": -0.5, "x1": n - 0.5, "y0": p - 0.5, "y1": p - 0.5},
              {**OUTLINE, "line": {"color": "#d62728", "width": 3},
               "x0": c0 - 0.5, "x1": c1 - 0.5, "y0": r0 - 0.5, "y1": r1 - 0.5}]
    figure = go.Figure(trace)
    subtitle = f"{outlined} block outlined · rows normalised within each block" + (f" · {note}" if note else "")
    figure.update_layout(
        title={"text": f"{title}<br><sup>{subtitle}</sup>"}, shapes=shapes,
        xaxis={**token_ticks(words), "title": "premise words | hypothesis words", "side": "bottom"},
        yaxis={**token_ticks(words, axis="y"), "title": "premise words | hypothesis words", "autorange": "reversed"},
        height=max(320, 120 + 20 * n + (40 if n > 16 else 0)), margin={"l": 10, "r": 10, "t": 70, "b": 10})
    return figure
