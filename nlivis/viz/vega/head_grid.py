"""A multi-head model's attention as Vega-Lite specs: one layer × head grid of thumbnails (bertviz's "model view")
and one head (or a summary over heads) drawn large.

The grid is one faceted spec: a thumbnail per head (rows: layers, columns: heads), each the chosen block of the
pair's words, on one shared colour scale with its bar; a click on any cell of a thumbnail selects its head
(`PICKED`: its `HEAD_FIELDS`), and the picked head is framed. The head drawn large is the full square of both
sentences' words, a line between the sentences and the thumbnails' block framed. The data is
`nlivis.viz.head_grid`'s; padding is cut and a block the trace lacks has no cells.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from nlivis.models.trace import Alignment
from nlivis.viz.head_grid import SIDES, HeadFamily, Thumbnails, full_square, shared_range, thumbnails
from nlivis.viz.vega.common import SCHEMA, message_spec, point_selection, records, token_axis, visible_tokens

PICKED = "picked_head"
"""The grid's click selection: the clicked thumbnail's layer and head."""
HEAD_FIELDS = ("layer", "head")
GRID_WIDTH_PX = 960
"""The thumbnails of a layer together at most: the app's wide layout at 1600 px."""
THUMBNAIL_PX = 72
"""Height of one layer's thumbnails at most."""
SQUARE_PX = 400
"""A head drawn large at most in height (Streamlit stretches its width to half the wide layout, ~400 px)."""
CELL_PX = (8, 28)
"""A word's row and column in the large square, in whole pixels, at least and at most."""
PICK_COLOUR = "#d62728"
"""The frame of the picked head and of the outlined block."""
HINT = "click"
"""The hover's last line: what a click on a thumbnail does."""
SEAMLESS = 1.1
"""A large square's cell in bands: a little over one, so neighbours overlap (Streamlit stretches the square to its
column, cells of fractional width showed the background between them as lines)."""


def colour(low: float, high: float, note: str | None, bar_px: int) -> dict[str, Any]:
    """Attention weights on viridis from `low` to `high` (larger ones clamped to its top colour), with its bar."""
    return {"field": "attention weight", "type": "quantitative",
            "scale": {"scheme": "viridis", "domain": [low, high], "clamp": True},
            "legend": {"title": ["attention", f"{low:.2f}–{high:.2f}"] if note else "attention",
                       "gradientLength": bar_px, "format": ".2f"}}


def grid_records(found: Thumbnails) -> list[dict[str, Any]]:
    """One data row per cell of every thumbnail (layers, heads, rows, columns in order): layer, head, row
    position and word, column position and word, attention weight."""
    rows, cols = visible_tokens(found.row_words), visible_tokens(found.col_words)
    columns: dict[str, list[Any]] = {name: [] for name in
                                      ("layer", "head", "row_position", "row word", "column_position", "column word",
                                       "attention weight")}
    for (layer, head), block in found.blocks.items():
        r, c = (index.ravel() for index in np.meshgrid(np.arange(block.shape[0]), np.arange(block.shape[1]),
                                                       indexing="ij"))
        columns["layer"] += [layer] * r.size
        columns["head"] += [head] * r.size
        columns["row_position"] += r.tolist()
        columns["row word"] += [rows[i] for i in r]
        columns["column_position"] += c.tolist()
        columns["column word"] += [cols[j] for j in c]
        columns["attention weight"] += block.ravel().tolist()
    return records(columns)


def head_grid(family: HeadFamily, index: int, premise_tokens: Sequence[str], hypothesis_tokens: Sequence[str],
              direction: str = "p→h", picked: str | None = None, label: str = "") -> dict[str, Any]:
    """The layer × head grid of one block of pair `index`: a thumbnail per head (rows: layers, columns: heads),
    one colour scale (`shared_range`) and its bar, the `picked` head ("layer.head") framed; a click on a
    thumbnail selects its layer and head (`PICKED`)."""
    if not family.entries or direction not in family.directions:
        return message_spec(f"no {direction} attention to show")
    found = thumbnails(family, direction, index, premise_tokens, hypothesis_tokens)
    layers, heads = family.layers, family.heads
    rows_of, cols_of = SIDES.get(direction[0], "row"), SIDES.get(direction[-1], "column")
    n_rows, n_cols = max(len(found.row_words), 1), max(len(found.col_words), 1)
    low, high, note = shared_range(found.values())
    step_x = max(2, (GRID_WIDTH_PX // max(len(heads), 1) - 8) // n_cols)
    step_y = max(2, THUMBNAIL_PX // n_rows)
    hover = [{"field": "layer", "type": "ordinal"}, {"field": "head", "type": "ordinal"},
             {"field": "row word", "type": "nominal", "title": f"{rows_of} word (row)"},
             {"field": "column word", "type": "nominal", "title": f"{cols_of} word (column)"},
             {"field": "attention weight", "type": "quantitative", "format": ".4f"},
             {"field": HINT, "type": "nominal", "title": " "}]
    cells = {"transform": [{"filter": "isValid(datum.row_position)"},
                           {"calculate": "'to draw this head large'", "as": HINT}],
             "params": [point_selection(PICKED, HEAD_FIELDS)], "mark": {"type": "rect", "cursor": "pointer"},
             "encoding": {"x": {"field": "column_position", "type": "ordinal", "axis": None,
                                "scale": {"domain": list(range(n_cols)), "paddingInner": 0, "paddingOuter": 0}},
                          "y": {"field": "row_position", "type": "ordinal", "axis": None,
                                "scale": {"domain": list(range(n_rows)), "paddingInner": 0, "paddingOuter": 0}},
                          "color": colour(low, high, note, min(200, THUMBNAIL_PX * len(layers))), "tooltip": hover}}
    frame = {"transform": [{"filter": "datum.picked === true"}],
             "mark": {"type": "rect", "filled": False, "stroke": PICK_COLOUR, "strokeWidth": 3},
             "encoding": {"x": {"value": 0}, "x2": {"value": "width"}, "y": {"value": 0}, "y2": {"value": "height"}}}
    data = grid_records(found)
    if picked in family.picks():
        layer, head = (int(part) for part in str(picked).split("."))
        data.append({"layer": layer, "head": head, "picked": True})
    title = " · ".join(part for part in (label, f"attention {direction} ({rows_of} rows over {cols_of} columns) of "
                                                f"{len(layers)} layers × {len(heads)} heads", "click a head") if part)
    header = {"title": None, "labelAngle": 0, "labelFontSize": 12}
    return {"$schema": SCHEMA, "title": {"text": title, **({"subtitle": note} if note else {})},
            "data": {"values": data},
            "facet": {"row": {"field": "layer", "type": "ordinal", "sort": layers,
                              "header": {**header, "labelExpr": "'layer ' + datum.value", "labelOrient": "left"}},
                      "column": {"field": "head", "type": "ordinal", "sort": heads,
                                 "header": {**header, "labelExpr": "'head ' + datum.value", "labelOrient": "top"}}},
            "spacing": {"row": 6, "column": 6},
            "spec": {"width": {"step": step_x}, "height": {"step": step_y}, "layer": [cells, frame]}}


def colour_domain(spec: Mapping[str, Any]) -> tuple[float, float] | None:
    """The ends of a grid spec's colour scale (the head drawn large is given them, to match its thumbnail); None for
    a message."""
    try:
        low, high = spec["spec"]["layer"][0]["encoding"]["color"]["scale"]["domain"]
    except (KeyError, IndexError, TypeError, ValueError):
        return None
    return float(low), float(high)


def edge(position: int, side: int, typed: bool = True) -> dict[str, Any]:
    """The leading (`side` 0) or trailing (1) edge of word `position`'s band on a square's axis."""
    return {"datum": position, **({"type": "ordinal"} if typed else {}), "bandPosition": side}


def square_records(values: np.ndarray, words: Sequence[str], premise_length: int) -> list[dict[str, Any]]:
    """One data row per drawn cell of the square (a missing block's blank cells have none): its block, row
    position and word, column position and word, attention weight."""
    r, c = np.nonzero(np.isfinite(values))
    shown = visible_tokens(words)
    side = lambda i: "p" if i < premise_length else "h"  # noqa: E731
    return records({"block": [f"{side(i)}→{side(j)}" for i, j in zip(r, c)], "row_position": r,
                    "row word": [shown[i] for i in r], "column_position": c, "column word": [shown[j] for j in c],
                    "attention weight": values[r, c]})


def square_heatmap(blocks: dict[str, Alignment], index: int, premise_tokens: Sequence[str],
                   hypothesis_tokens: Sequence[str], title: str, outlined: str = "p→h",
                   colour_range: tuple[float, float] | None = None) -> dict[str, Any]:
    """One head (or summary) large: the full square of both sentences' words (`full_square`), rows attending over
    columns, a line between the sentences and the `outlined` block framed. Each block's rows are normalised within
    the block (as the thumbnails are), which the subtitle says. `colour_range` matches the grid's scale; None fits
    its own (`shared_range`; a line of the subtitle states a range that is not 0–1: half the page's width is
    too narrow for it on the first)."""
    if not blocks:
        return message_spec("no attention to show")
    values, words, p = full_square(blocks, index, premise_tokens, hypothesis_tokens)
    n = len(words)
    low, high, note = (*colour_range, None) if colour_range else shared_range(values)
    step = int(np.clip(SQUARE_PX // max(n, 1), *CELL_PX))
    band = {"domain": list(range(n)), "paddingInner": 0, "paddingOuter": 0}
    axis_title = "premise words | hypothesis words"
    hover = [{"field": "block", "type": "nominal"}, {"field": "row word", "type": "nominal"},
             {"field": "column word", "type": "nominal"},
             {"field": "attention weight", "type": "quantitative", "format": ".4f"}]
    cells = {"mark": {"type": "rect", "width": {"band": SEAMLESS}, "height": {"band": SEAMLESS}},
             "encoding": {"x": {"field": "column_position", "type": "ordinal", "scale": band,
                                "axis": {**token_axis(words, "x", axis_title), "grid": False}},
                          "y": {"field": "row_position", "type": "ordinal", "scale": band,
                                "axis": {**token_axis(words, "y", axis_title), "grid": False}},
                          "color": colour(low, high, note, min(200, step * n)), "tooltip": hover}}
    spans = {"p": (0, p), "h": (p, n)}
    (r0, r1), (c0, c1) = spans.get(outlined[0], (0, 0)), spans.get(outlined[-1], (0, 0))
    one = {"values": [{}]}  # the lines and the frame are drawn once each, on the cells' scales (at band edges)
    line = {"type": "rule", "color": "white", "strokeWidth": 2}
    dividers = [{"data": one, "mark": line, "encoding": {letter: edge(p, 0)}} for letter in ("x", "y") if 0 < p < n]
    frame = {"data": one, "mark": {"type": "rect", "filled": False, "stroke": PICK_COLOUR, "strokeWidth": 3},
             "encoding": {"x": edge(c0, 0), "x2": edge(c1 - 1, 1, typed=False), "y": edge(r0, 0),
                          "y2": edge(r1 - 1, 1, typed=False)}} if r1 > r0 and c1 > c0 else None
    subtitle = f"{outlined} block outlined · rows normalised within each block"
    return {"$schema": SCHEMA, "title": {"text": title, "subtitle": [subtitle, note] if note else subtitle},
            "data": {"values": square_records(values, words, p)},
            "width": {"step": step}, "height": {"step": step}, "layer": [cells, *dividers, *([frame] if frame else [])]}
