"""The Train page's figure as a Vega-Lite spec: a run's loss, accuracy and speed against its step (or epoch), one
panel each side by side, from the lines of its metrics.jsonl as they are written.

Pure functions, records in, a JSON dict out (no altair: it is slow to import); the page's look is written in when
the spec is drawn (`nlivis.app.components.figures.show`). A series keeps its colour however many of the series
have been logged so far (train from the first logging interval, dev from the first evaluation): the page redraws the
chart every few seconds while the run lives, and a legend that swapped colours as dev appeared would misread."""
from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

from nlivis.viz.vega.common import SCHEMA, field, group_hues, message_spec, records

PANELS = {"loss": ".3f", "accuracy": ".1%", "pairs / s": ",.0f"}
"""The panels, left to right, each with the number format of its tooltip."""
AXIS_FORMATS = {"loss": ".3~f", "accuracy": ".1~%", "pairs / s": ",.4~r"}
"""Axis labels with as many decimals as the ticks need and no more: a run's first numbers lie close together, and a
lone first point has a single tick, which must read as its value (1.075, not 1)."""
PADDING_PX = 8
"""Room between the plot's edges and the first and last points, whose dots would otherwise be cut in half."""
X_FIELDS = ("step", "epoch")
"""What the curves can be drawn against: every drawn row carries both."""
SERIES = ("train", "dev", "best dev")
"""Every series a panel can hold, in the order of their colours (`group_hues`) and of the legend."""
DASHED = {"best dev": [5, 3]}
"""The best dev accuracy so far (the checkpoint kept) is drawn dashed beside the dev accuracy it follows."""
PANELS_WIDTH_PX = 800
"""The panels' plot areas together: three panels with their axes and the gaps between them (about 960 px) fit the
page's main column in a 1,600 px wide window (about 1,140 px, the screenshots') with room to spare. Vega-Lite cannot
stretch panels side by side to the column's width ("container" sizes a single view only)."""
PANEL_HEIGHT_PX = 220
FEW_POINTS = 40
"""Up to this many logged points per panel every point is drawn as a dot (a lone first point would otherwise draw
nothing, a line needing two); above, the lines alone, and the dot nearest the pointer with its tooltip."""


def metric_panel(column: str) -> str | None:
    """The panel of a metrics.jsonl column, or None for one not drawn (step, epoch, lr, time, …)."""
    if "loss" in column:
        return "loss"
    if "acc" in column:
        return "accuracy"
    if "per_s" in column:
        return "pairs / s"
    return None


def metric_series(column: str) -> str:
    """The series of a drawn column: best dev (`best_dev_acc`), dev (`dev_acc`, `dev_loss`), else train."""
    if column.startswith("best"):
        return "best dev"
    return "dev" if "dev" in column else "train"


def curve_records(lines: Sequence[Mapping[str, Any]], x: str = "step") -> list[dict[str, Any]]:
    """One row per logged number drawn: panel, series, the metrics.jsonl column it came from (`metric`), step,
    epoch and value, in the log's order; lines without `x`, and numbers that are not finite, are left out."""
    columns: dict[str, list[Any]] = {"panel": [], "series": [], "metric": [], "step": [], "epoch": [], "value": []}
    for line in lines:
        if not isinstance(line.get(x), (int, float)):
            continue
        for name, value in line.items():
            panel = metric_panel(str(name))
            if panel is None or isinstance(value, bool) or not isinstance(value, (int, float)) \
                    or not math.isfinite(value):
                continue
            for key, item in (("panel", panel), ("series", metric_series(str(name))), ("metric", str(name)),
                              ("step", line.get("step")), ("epoch", line.get("epoch")), ("value", float(value))):
                columns[key].append(item)
    return records(columns)


def panel_spec(panel: str, x: str, width: int, series: Sequence[str], points: bool, index: int) -> dict[str, Any]:
    """One panel: a line per series, dots (all of them when `points`, else only the one nearest the pointer) whose
    tooltip gives the series, step, epoch and value. Thousands of noisy train points are drawn thin, so that the
    few dev points' lines stay in sight over them."""
    number = PANELS[panel]
    hover = f"nearest_{index}"
    scale = {"zero": False, "padding": PADDING_PX}
    x_encoding = {"field": field(x), "type": "quantitative", "title": x, "scale": scale,
                  "axis": {"tickMinStep": 1} if x == "step" else {}}
    # labelFlush keeps the top tick's label inside the plot: one sticking out above pushed that panel's title up
    y_encoding = {"field": "value", "type": "quantitative", "title": None, "scale": scale,
                  "axis": {"format": AXIS_FORMATS[panel], "labelFlush": True}}
    colour = {"field": "series", "type": "nominal", "title": None,
              "legend": {"orient": "bottom", "symbolType": "stroke", "symbolStrokeWidth": 2},
              "scale": {"domain": list(series), "range": [group_hues(SERIES)[SERIES.index(s)] for s in series]}}
    dash = {"field": "series", "type": "nominal", "title": None,
            "scale": {"domain": list(series), "range": [DASHED.get(s, [1, 0]) for s in series]}}
    tooltip = [{"field": "series", "type": "nominal"}, {"field": "step", "type": "quantitative", "format": ","},
               {"field": "epoch", "type": "quantitative", "format": ".2f"},
               {"field": "value", "type": "quantitative", "title": panel, "format": number}]
    width_px = {"value": 2} if points else {"condition": {"test": "datum.series !== 'train'", "value": 2}, "value": 1.2}
    lines = {"mark": {"type": "line", "clip": True},
             "encoding": {"x": x_encoding, "y": y_encoding, "color": colour, "strokeDash": dash,
                          "strokeWidth": width_px}}
    dots = {"params": [{"name": hover, "select": {"type": "point", "on": "pointerover", "nearest": True,
                                                  "clear": "pointerout"}}],
            "mark": {"type": "circle", "size": 45, "clip": True},
            "encoding": {"x": x_encoding, "y": y_encoding, "color": colour, "tooltip": tooltip,
                         "opacity": {"condition": {"param": hover, "empty": False, "value": 1},
                                     "value": 1 if points else 0}}}
    return {"title": panel, "width": width, "height": PANEL_HEIGHT_PX,
            "transform": [{"filter": {"field": "panel", "equal": panel}}], "layer": [lines, dots]}


def training_curves(lines: Sequence[Mapping[str, Any]], x: str = "step") -> dict[str, Any]:
    """Loss, accuracy and pairs/s against `x` ("step" or "epoch") from metrics.jsonl lines, a panel for each that
    has been logged (left to right in `PANELS`' order), train and dev in their colours; a message while nothing
    drawable has been logged."""
    if x not in X_FIELDS:
        raise ValueError(f"curves are drawn against one of {X_FIELDS}, not {x!r}")
    rows = curve_records(lines, x)
    if not any(isinstance(line.get(x), (int, float)) for line in lines):
        return message_spec("no metrics logged yet", height=80)
    if not rows:
        return message_spec("metrics logged so far have no loss or accuracy", height=80)
    panels = [panel for panel in PANELS if any(row["panel"] == panel for row in rows)]
    series = [name for name in SERIES if any(row["series"] == name for row in rows)]
    most = max(sum(row["panel"] == panel for row in rows) for panel in panels)
    width = PANELS_WIDTH_PX // len(panels)
    return {"$schema": SCHEMA, "data": {"values": rows}, "spacing": 24,
            "hconcat": [panel_spec(panel, x, width, series, most <= FEW_POINTS, index)
                        for index, panel in enumerate(panels)],
            "resolve": {"scale": {"x": "shared", "y": "independent", "color": "shared", "strokeDash": "shared"}}}
