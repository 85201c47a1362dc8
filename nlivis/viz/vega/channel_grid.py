"""DIIN's interaction space as a grid of channel maps (in the spirit of the paper's Figure 2, viridis): one Vega-Lite
facet per channel, premise rows × hypothesis columns."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from nlivis.models.trace import FeatureMaps
from nlivis.viz.channel_grid import ChannelSelection, real_maps, select_channels
from nlivis.viz.common import SEQUENTIAL_SCALE
from nlivis.viz.vega.common import records, token_axis, visible_tokens

PANEL_WIDTH_PX = 230
"""A channel's panel at most: four side by side fill the app's wide layout at 1600 px, as the plotly grid's did."""

TICK_PX = 9
"""Token labels in a panel: smaller than an axis's usual, so a sentence's words fit under a quarter of the page."""


def panel_height(rows: int) -> int:
    """A panel's height in pixels for `rows` premise positions (taller for longer premises, up to 30 rows)."""
    return 130 + 12 * min(rows, 30)


def cell_steps(rows: int, cols: int) -> dict[str, dict[str, int]]:
    """A panel's width and height as whole pixels per cell (Vega-Lite's `step`), filling at most PANEL_WIDTH_PX by
    `panel_height`: cells of fractional size leave hairline seams between them on the canvas."""
    return {"width": {"step": max(2, PANEL_WIDTH_PX // max(cols, 1))},
            "height": {"step": max(2, panel_height(rows) // max(rows, 1))}}


def cells(maps: np.ndarray, chosen: Sequence[int], rows: Sequence[str], cols: Sequence[str], row_name: str,
          col_name: str) -> list[dict[str, Any]]:
    """One data row per drawn cell: its panel, row position and label, column position and label, activation
    (the columns of the figure's CSV)."""
    n_rows, n_cols = maps.shape[1], maps.shape[2]
    row_index, col_index = np.meshgrid(np.arange(n_rows), np.arange(n_cols), indexing="ij")
    row_index, col_index = row_index.ravel(), col_index.ravel()
    per_panel = n_rows * n_cols
    return records({
        "panel": [f"channel {channel}" for channel in chosen for _ in range(per_panel)],
        "row_position": np.tile(row_index, len(chosen)),
        row_name: [rows[i] for i in row_index] * len(chosen),
        "column_position": np.tile(col_index, len(chosen)),
        col_name: [cols[j] for j in col_index] * len(chosen),
        "activation": maps[list(chosen)].reshape(-1) if chosen else np.zeros(0),
    })


def position_axis(labels: Sequence[str] | None, letter: str, title: str | None) -> dict[str, Any]:
    """An axis over positions: labelled with the tokens while the maps index tokens (`labels`), else numbered."""
    if labels is None:
        return {"title": title, "labelFontSize": TICK_PX}
    return {**token_axis(labels, letter, title), "labelFontSize": TICK_PX}


def channel_grid(entry: FeatureMaps, index: int, premise_tokens: Sequence[str], hypothesis_tokens: Sequence[str],
                 channels: Sequence[int] | None = None, selection: ChannelSelection = "index", k: int = 8,
                 columns: int = 4, shared_scale: bool = False, label: str = "") -> dict[str, Any]:
    """A Vega-Lite spec of k channel maps of one pair (premise rows × hypothesis columns), viridis, a panel per
    channel in `columns` columns; hovering a cell names its premise and hypothesis tokens and its activation.

    With `shared_scale` every panel uses one colour range with its colour bar (compare channels); otherwise each
    panel has its own and none shows a bar (see each channel's pattern, as the paper's figure does).
    """
    maps = real_maps(entry, index, premise_tokens, hypothesis_tokens)
    chosen = select_channels(maps, selection, k, channels)
    if entry.token_axes:
        rows, cols = visible_tokens(list(premise_tokens)[: maps.shape[1]]), visible_tokens(list(hypothesis_tokens)[: maps.shape[2]])
        row_name, col_name = "premise", "hypothesis"
    else:
        rows, cols = [str(i) for i in range(maps.shape[1])], [str(j) for j in range(maps.shape[2])]
        row_name, col_name = "row", "column"
    labels = (list(premise_tokens)[: maps.shape[1]], list(hypothesis_tokens)[: maps.shape[2]]) if entry.token_axes \
        else (None, None)
    colour: dict[str, Any] = {"field": "activation", "type": "quantitative",
                              "scale": {"scheme": SEQUENTIAL_SCALE.lower()}, "legend": None}
    if shared_scale and chosen and maps[chosen].size:
        colour["scale"]["domain"] = [float(maps[chosen].min()), float(maps[chosen].max())]
        colour["legend"] = {"title": "activation", "gradientLength": panel_height(len(rows))}
    size_note = "" if entry.token_axes else \
        f" · {maps.shape[1]}×{maps.shape[2]} after pooling (axes are positions, not tokens)"
    by = f"{len(chosen)} of {maps.shape[0]} channels by {selection.replace('_', ' ')}"
    title = " · ".join(part for part in (label, entry.stage, by) if part) + size_note
    spec: dict[str, Any] = {
        "title": title,
        "data": {"values": cells(maps, chosen, rows, cols, row_name, col_name)},
        "facet": {"field": "panel", "type": "nominal", "sort": [f"channel {c}" for c in chosen], "title": None},
        "columns": max(1, min(columns, len(chosen) or 1)),
        "spec": {**cell_steps(len(rows), len(cols)), "mark": {"type": "rect"},
                 "encoding": {
                     "x": {"field": "column_position", "type": "ordinal", "axis": position_axis(labels[1], "x", "hypothesis")},
                     "y": {"field": "row_position", "type": "ordinal", "axis": position_axis(labels[0], "y", "premise")},
                     "color": colour,
                     "tooltip": [{"field": row_name, "type": "nominal"}, {"field": col_name, "type": "nominal"},
                                 {"field": "activation", "type": "quantitative", "format": ".4f"}]}},
    }
    if not shared_scale:
        spec["resolve"] = {"scale": {"color": "independent"}}
    return spec
