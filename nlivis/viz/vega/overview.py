"""All loaded models at a glance for one pair as one Vega-Lite spec: a row per model (its name above it), its panels
(`nlivis.viz.overview.model_panels`: the premise's tokens across every one) side by side, one chart for the
whole grid.

Each kind of panel has one colour scale on every row (alignment weights, DIIN's interaction summary, AMN's memory
keys of each sentence), its bar beside the first row that uses it. Every panel is sized in whole pixels per token
(no hairline seams) and Vega lays the grid out around its labels, so no token label is clipped (plotly cut AMN's).
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from nlivis.viz.common import fitted_range
from nlivis.viz.overview import (ALIGNMENT, INTERACTION, MEMORY_HYPOTHESIS, MEMORY_PREMISE, ModelReading, Panel,
                                 model_panels)
from nlivis.viz.vega.common import SCHEMA, TICK_FONT_PX, field, message_spec, records, token_axis, visible_tokens

PANEL_WIDTH_PX = 380
"""A panel's cells' width at most: two side by side, with their token labels and a colour bar, fit the app's wide
layout at 1600 px (at 480 the second panel's bar was cut off at the page's edge)."""
COLUMN_PX = (8, 40)
"""A token column's width in whole pixels, at least and at most (a short premise does not stretch across)."""
ROW_PX = 22
"""Height of one token row of a panel."""
SLOT_PX = 12
"""Height of one memory-slot row (AMN has dozens of slots: token-height rows would make its panels tower)."""
SLOT_LABEL_PX = 9
"""Memory slots' labels: smaller, to fit their lower rows."""
ALIGNMENT_QUANTILE = 0.99
"""The alignment colour scale ends at this quantile of the weights shown (stated in the title)."""
SCALE_NAMES = {MEMORY_PREMISE: "premise memory keys: ", MEMORY_HYPOTHESIS: "hypothesis memory keys: "}
"""How a note about a scale's range begins (the alignment's says what it is about itself)."""


def scale_range(panels: Sequence[Panel], kind: str) -> tuple[float, float, str | None]:
    """(low, high, note) of the colour scale `kind` over the `panels` using it: symmetric about zero for DIIN's
    interaction; else 0–1, or the values' own range when they span a narrow one (`fitted_range`), or for alignment
    weights 0 to their `ALIGNMENT_QUANTILE`: a long sentence (MultiNLI) spreads them thin, and on the whole 0–1
    range every other cell was the same dark colour. The note states a range that is not 0–1."""
    values = np.concatenate([p.values.ravel() for p in panels]).astype(float) if panels else np.zeros(0)
    finite = values[np.isfinite(values)]
    if kind == INTERACTION:
        bound = float(np.abs(finite).max()) if finite.size else 1.0
        return -(bound or 1.0), bound or 1.0, None
    low, high, note = fitted_range(values)
    top = float(np.quantile(finite, ALIGNMENT_QUANTILE)) if finite.size else 1.0
    if kind == ALIGNMENT and note is None and 0.0 < top < 0.95:
        return 0.0, top, (f"alignment colour scale 0–{top:.2f} ({ALIGNMENT_QUANTILE:.0%} of the weights are below it; "
                          "larger ones take its top colour)")
    return low, high, note


def panel_name(label: str, panel: Panel) -> str:
    """The panel's name in the spec's data: the model's label and the panel's title."""
    return f"{label} · {panel.title}"


def panel_records(label: str, panel: Panel) -> list[dict[str, Any]]:
    """One data row per cell of the panel, rows then columns: model, panel, row position and token, column
    position and token, what the value is and the value (the columns of the figure's CSV)."""
    n_rows, n_cols = panel.values.shape
    row_index, col_index = (index.ravel() for index in np.meshgrid(np.arange(n_rows), np.arange(n_cols), indexing="ij"))
    rows, cols = visible_tokens(panel.rows), visible_tokens(panel.cols)
    return records({"model": [label] * row_index.size, "panel": [panel_name(label, panel)] * row_index.size,
                    "row_position": row_index, panel.row_name: [rows[i] for i in row_index],
                    "column_position": col_index, panel.col_name: [cols[j] for j in col_index],
                    "measure": [panel.value_name] * row_index.size, "value": np.asarray(panel.values).ravel()})


def colour(kind: str, low: float, high: float, note: str | None, legend: bool, height: int) -> dict[str, Any]:
    """The colour encoding of a panel on scale `kind` (viridis, or diverging blue-to-red about zero for DIIN's
    interaction), values past its ends clamped to them; with `legend`, its bar (about the row's height)."""
    scale: dict[str, Any] = {"domain": [low, high], "clamp": True}
    scale.update({"scheme": "redblue", "reverse": True} if kind == INTERACTION else {"scheme": "viridis"})
    bar = None
    if legend:
        title = [kind, f"{low:.3f}–{high:.3f}"] if note else kind
        bar = {"title": title, "gradientLength": int(min(200, max(60, height))),
               "format": ".2f" if high - low >= 0.1 else ".3f"}  # a narrow range's ticks told apart
    return {"field": "value", "type": "quantitative", "scale": scale, "legend": bar}


def panel_spec(label: str, panel: Panel, scale: tuple[float, float, str | None], legend: bool) -> dict[str, Any]:
    """One small multiple: its cells (whole pixels each), the tokens on both axes, its title; the hover names the
    row's and the column's token and the value."""
    n_rows, n_cols = panel.values.shape
    slots = panel.row_name == "memory slot"
    step_x = int(np.clip(PANEL_WIDTH_PX // max(n_cols, 1), *COLUMN_PX))
    step_y = SLOT_PX if slots else ROW_PX
    y_axis = {**token_axis(panel.rows, "y", panel.row_name), "grid": False}
    if slots:
        y_axis["labelFontSize"] = SLOT_LABEL_PX
    hover = [{"field": field(panel.row_name), "type": "nominal"}, {"field": field(panel.col_name), "type": "nominal"},
             {"field": "value", "type": "quantitative", "title": panel.value_name, "format": ".4f"}]
    return {"title": {"text": panel.title, "fontSize": TICK_FONT_PX + 1, "fontWeight": "normal"},
            "transform": [{"filter": {"field": "panel", "equal": panel_name(label, panel)}}],
            "width": {"step": step_x}, "height": {"step": step_y}, "mark": {"type": "rect"},
            "encoding": {"x": {"field": "column_position", "type": "ordinal", "scale": {"domain": list(range(n_cols))},
                               "axis": {**token_axis(panel.cols, "x", panel.col_name), "grid": False}},
                         "y": {"field": "row_position", "type": "ordinal", "scale": {"domain": list(range(n_rows))},
                               "axis": y_axis},
                         "color": colour(panel.colour, *scale, legend, step_y * n_rows),
                         "tooltip": hover}}


INDEPENDENT = {"scale": {"color": "independent"}, "legend": {"color": "independent"}}
"""Each panel keeps its own colour scale (set to its kind's range) and its bar beside it, if it shows one."""


def overview_grid(readings: Sequence[ModelReading], title: str = "all loaded models at a glance") -> dict[str, Any]:
    """One row per model in the given order (its label above), its panels side by side, every panel with the
    premise's (or a sentence's) tokens across; one colour scale per kind of panel over every row, fitted as
    `scale_range` says (a note in the title when it is not 0–1), its bar beside the last panel using it in the
    first row that does."""
    per_model = [(reading.label, model_panels(reading)) for reading in readings]
    per_model = [(label, panels) for label, panels in per_model if panels]
    if not per_model:
        return message_spec("no loaded model has alignments, interaction maps or memory keys to show")
    used: dict[str, list[Panel]] = {}
    for _, panels in per_model:
        for panel in panels:
            used.setdefault(panel.colour, []).append(panel)
    scales = {kind: scale_range(panels, kind) for kind, panels in used.items()}
    barred: set[str] = set()
    rows, data = [], []
    for label, panels in per_model:
        legends = {panel.colour: i for i, panel in enumerate(panels) if panel.colour not in barred}  # the last of each
        barred.update(legends)
        rows.append({"title": {"text": label, "fontSize": TICK_FONT_PX + 3},
                     "hconcat": [panel_spec(label, panel, scales[panel.colour], legends.get(panel.colour) == i)
                                 for i, panel in enumerate(panels)],
                     "spacing": 24, "resolve": INDEPENDENT})
        data += [row for panel in panels for row in panel_records(label, panel)]
    notes = [SCALE_NAMES.get(kind, "") + note for kind, (_, _, note) in sorted(scales.items()) if note]
    return {"$schema": SCHEMA, "title": {"text": title, **({"subtitle": notes} if notes else {})},
            "data": {"values": data}, "vconcat": rows, "spacing": 28, "resolve": INDEPENDENT}
