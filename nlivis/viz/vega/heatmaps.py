"""The Pair explorer's token × token and token × slot heatmaps as Vega-Lite specs: a pair's alignment (attention),
AMN's memory keys, and an edit's difference of alignments (the changed tokens bold and outlined).

Cells sit on token *positions*, labelled with the tokens (`common.token_axis`), so that "the … the" stay two rows;
premise rows run top to bottom as read. The hover and the CSV give each cell's tokens and value.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from nlivis.models.trace import Alignment, MemoryKeys
from nlivis.viz.common import SEQUENTIAL_SCALE, fitted_range
from nlivis.viz.heatmaps import alignment_matrix, alignment_title, memory_keys_matrix
from nlivis.viz.vega.common import SCHEMA, field, records, token_axis, visible_tokens

ROW_PIXELS = 22
"""A token row's height (the plotly heatmaps' too): a label of the axis's font fits, a 30-token premise ~660 px."""
LEAST_PIXELS = 170
"""The least height of the cells: the colour bar beside them (`LEGEND_PIXELS`) and its labels fit, and a
three-word sentence's rows are not slivers."""
LEGEND_PIXELS = 150
OUTLINE = "#222"
"""The outline of a changed token's row and column (over the cells' colours, in either theme)."""
DIVERGING_SCHEME = "redblue"
"""Vega's red-to-blue scheme: negatives red, as plotly's RdBu drew similarities; reversed for differences."""


def axis_names(row_name: str, col_name: str) -> tuple[str, str]:
    """The data fields of a cell's row and column tokens: the sentences' names, told apart when both are one
    sentence (an intra-sentence alignment, p→p)."""
    return (f"{row_name} (row)", f"{col_name} (column)") if row_name == col_name else (row_name, col_name)


def cells(values: np.ndarray, rows: Sequence[str], cols: Sequence[str], row_name: str, col_name: str,
          value_name: str) -> list[dict[str, Any]]:
    """One data row per cell, row by row: its row position and token, column position and token, and value (the
    columns of the figure's CSV)."""
    values = np.asarray(values, dtype=float).reshape(len(rows), len(cols))
    row_index, col_index = (index.ravel() for index in np.meshgrid(np.arange(len(rows)), np.arange(len(cols)),
                                                                     indexing="ij"))
    row_tokens, col_tokens = visible_tokens(rows), visible_tokens(cols)
    return records({"row_position": row_index, row_name: [row_tokens[i] for i in row_index],
                    "column_position": col_index, col_name: [col_tokens[j] for j in col_index],
                    value_name: values.ravel()})


def colour(value_name: str, domain: Sequence[float], scheme: str, reverse: bool = False) -> dict[str, Any]:
    """The colour encoding of a cell's value over `domain`, with its colour bar beside the cells."""
    scale: dict[str, Any] = {"scheme": scheme, "domain": [float(d) for d in domain], "clamp": True}
    if reverse:
        scale["reverse"] = True
    return {"field": field(value_name), "type": "quantitative", "scale": scale, "title": value_name,
            "legend": {"gradientLength": LEGEND_PIXELS, "direction": "vertical"}}


def token_heatmap(values: np.ndarray, rows: Sequence[str], cols: Sequence[str], value_name: str,
                  axes: tuple[str, str], titles: tuple[str, str], title: str, fill: dict[str, Any],
                  subtitle: str | None = None) -> dict[str, Any]:
    """Rows × columns of `values` as cells, `rows` labelling the y axis top to bottom and `cols` the x axis, the
    `axes` names (the row's and the column's token fields) and the `titles` of the axes; `fill` is the colour.
    A `subtitle` (the colour range's note) goes on a line of its own: after the title, a half-page chart cut it."""
    row_name, col_name = axes  # bands of whole pixels ("round"): fractional ones leave hairline seams between cells
    x = {"field": "column_position", "type": "ordinal", "scale": {"domain": list(range(len(cols))), "round": True},
         "axis": {**token_axis(cols, "x", titles[1]), "grid": False}}
    y = {"field": "row_position", "type": "ordinal", "scale": {"domain": list(range(len(rows))), "round": True},
         "axis": {**token_axis(rows, "y", titles[0]), "grid": False}}
    tooltip = [{"field": field(row_name), "type": "nominal"}, {"field": field(col_name), "type": "nominal"},
               {"field": field(value_name), "type": "quantitative", "format": ".4f"}]
    return {"$schema": SCHEMA, "title": {"text": title, "subtitle": subtitle} if subtitle else title,
            "data": {"values": cells(values, rows, cols, row_name, col_name, value_name)},
            "width": "container", "height": {"step": max(ROW_PIXELS, -(-LEAST_PIXELS // max(len(rows), 1)))},
            "layer": [{"mark": {"type": "rect"}, "encoding": {"x": x, "y": y, "color": fill, "tooltip": tooltip}}]}


def alignment_heatmap(entry: Alignment, index: int, premise_tokens: Sequence[str], hypothesis_tokens: Sequence[str],
                      label: str = "") -> dict[str, Any]:
    """One pair's alignment weights: rows and columns labelled by their sentence's tokens, padding cut.

    Normalised kinds (softmax, sparsemax) share the fixed range [0, 1] so two figures compare by eye, unless
    the weights span less than a tenth of it (near-uniform attention): then they get their own range, stated
    under the title; raw similarities use a diverging scale centred on zero.
    """
    values, rows, cols = alignment_matrix(entry, index, premise_tokens, hypothesis_tokens)
    note = None
    if entry.kind == "similarity":
        value_name = "similarity"
        bound = float(np.abs(values).max()) if values.size else 0.0
        fill = colour(value_name, [-(bound or 1.0), bound or 1.0], DIVERGING_SCHEME)
    else:
        value_name = f"{entry.kind} weight"
        low, high, note = fitted_range(values)
        fill = colour(value_name, [low, high], SEQUENTIAL_SCALE.lower())
    return token_heatmap(values, rows, cols, value_name, axis_names(entry.rows, entry.cols),
                         (f"{entry.rows} tokens", f"{entry.cols} tokens"), alignment_title(entry, label), fill, note)


def memory_keys_heatmap(entry: MemoryKeys, index: int, tokens: Sequence[str], label: str = "") -> dict[str, Any]:
    """AMN's memory addressing: for each real token a distribution over the memory slots. Near-uniform
    addressing (e.g. 0.098–0.102 over ten slots) gets its own colour range; the range is stated under the title."""
    values, rows, slots = memory_keys_matrix(entry, index, tokens)
    low, high, note = fitted_range(values)
    spread = note or (f"weights {values.min():.3f}–{values.max():.3f}" if values.size else "")
    title = " · ".join(part for part in (label, f"memory keys · {entry.tokens} · layer {entry.layer}") if part)
    value_name = "address weight"
    return token_heatmap(values, rows, slots, value_name, (f"{entry.tokens} token", "memory slot"),
                         (f"{entry.tokens} tokens", "memory slot"), title,
                         colour(value_name, [low, high], SEQUENTIAL_SCALE.lower()), spread or None)


def marked_positions(changed: Sequence[bool]) -> list[int]:
    return [position for position, flag in enumerate(changed) if flag]


def outlines(rows: list[int], cols: list[int], n_rows: int, n_cols: int) -> list[dict[str, Any]]:
    """Layers that outline the changed rows (across the whole width) and columns (down the whole height) of an
    `n_rows` × `n_cols` heatmap."""
    stroke = {"type": "rect", "filled": False, "color": OUTLINE, "strokeWidth": 2}
    return [{"data": {"values": [{name: p} for p in positions]}, "mark": stroke,
             "encoding": {letter: {"field": name, "type": "ordinal", "scale": {"domain": list(range(n))}}}}
            for positions, name, letter, n in ((rows, "row_position", "y", n_rows),
                                               (cols, "column_position", "x", n_cols)) if positions]


def bold_where(positions: list[int]) -> dict[str, Any]:
    """An axis's label weight: bold at `positions`, normal elsewhere."""
    return {"condition": {"test": f"indexof({positions}, datum.value) >= 0", "value": "bold"}, "value": "normal"}


def difference_heatmap(values: np.ndarray, row_labels: Sequence[str], col_labels: Sequence[str],
                       changed_rows: Sequence[bool], changed_cols: Sequence[bool], row_name: str, col_name: str,
                       title: str) -> dict[str, Any]:
    """Edited minus original weights on the tokens two alignments share, on a diverging scale centred on zero
    (red: the edited pair attends more). Changed tokens (labelled `old→new`) are bold on the axes and their row
    and column are outlined, so one sees whether the attention moved to or from the word that changed."""
    values = np.asarray(values, dtype=float)
    bound = float(np.abs(values).max()) if values.size else 0.0
    value_name = "edited − original"
    spec = token_heatmap(values, row_labels, col_labels, value_name, axis_names(row_name, col_name),
                         (f"{row_name} tokens (shared)", f"{col_name} tokens (shared)"),
                         f"{title} · largest change {bound:.3f}" if values.size else f"{title} · no shared tokens",
                         colour(value_name, [-(bound or 1.0), bound or 1.0], DIVERGING_SCHEME, reverse=True))
    rows, cols = marked_positions(changed_rows), marked_positions(changed_cols)
    heat = spec["layer"][0]["encoding"]
    heat["x"]["axis"]["labelFontWeight"] = bold_where(cols)
    heat["y"]["axis"]["labelFontWeight"] = bold_where(rows)
    spec["layer"] += outlines(rows, cols, len(row_labels), len(col_labels))
    return spec
