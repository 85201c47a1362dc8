"""Margins wide enough for a figure's axis labels before the browser draws it, so that plotly draws it once.

Streamlit's plotly theme turns `automargin` on for every axis. Plotly then draws the whole figure, measures its
tick labels and axis titles, and where they need more room than the layout's margins give, draws the whole figure
a second time with wider margins: in the app, every chart of every page (bench/chart_draw.py: the Gates page's
strips, the confusion matrices, the probability bars, the Data map — two full plots per draw, and about twice the
browser's CPU time per chart). `fit_margins` widens the layout's margins beforehand to what the labels need,
estimated from their text in the theme's font sizes, so that plotly's measurement finds them wide enough. The
automatic margins stay on: a label the estimate misjudges still gets its room (at the cost of that second pass),
it is never clipped.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go

TICK_FONT_PX = 12
"""Tick label size of Streamlit's plotly theme (what an axis without its own `tickfont.size` shows)."""

TITLE_FONT_PX = 14
"""Axis title size of Streamlit's plotly theme."""

TITLE_STANDOFF_PX = {"x": 20, "y": 24}
"""Streamlit's theme: gap between an axis's tick labels and its title."""

EDGE_PX = {True: 20, False: 28}
"""What plotly's automatic margin adds beside an axis's labels and title (Streamlit's `margin.pad` of 8 and
plotly's own offsets), for an axis with a title (True) and without: measured in Chromium under Streamlit's theme
on the app's figures (the confusion matrices, the Gates strips, the accuracy bars, the overview grid), against
label widths measured there."""

THEME_MARGINS = {"l": 0, "r": 0, "t": 100, "b": 80}
"""A side's margin when the layout gives none: Streamlit's theme sets left and right to 0, plotly's defaults the
others."""

SLACK_PX = 4
"""Added to every estimate (whose text widths already err 5–20% wide): a little more room than the labels need
costs a few pixels, too little a second plot."""

NARROW, WIDE = set("iljtfr.,:;'!|() "), set("mwMW@%")


def text_width(text: str, size: float) -> float:
    """The width in pixels of `text` at font size `size`, estimated per character for a sans-serif font (Source
    Sans, the theme's), erring on the wide side."""
    em = 0.0
    for char in text:
        em += (0.32 if char in NARROW else 0.88 if char in WIDE else 0.68 if char.isupper()
               else 0.58 if char.isdigit() else 0.56)
    return em * size


def label_extent(labels: Sequence[str], size: float, angle: float, letter: str) -> float:
    """How far tick labels reach out from their axis (pixels): a y axis's labels sideways, an x axis's downwards
    (or upwards), rotated by `angle` degrees."""
    if not labels:
        return 0.0
    width = max(text_width(label, size) for label in labels)
    height = 1.3 * size
    turn = math.radians(angle)
    along, across = (abs(math.sin(turn)), abs(math.cos(turn))) if letter == "x" else (abs(math.cos(turn)),
                                                                                     abs(math.sin(turn)))
    return width * along + height * across


def number_labels(low: float, high: float, tickformat: str | None) -> list[str]:
    """Labels an automatic numeric axis over [low, high] may show: its ends and middle, as plotly writes them
    (at most two decimals on a short span, a percentage with `tickformat` `%`)."""
    values = (low, (low + high) / 2, high)
    if tickformat and tickformat.endswith("%"):
        return [f"{value * 100:.0f}%" for value in values]
    span = abs(high - low)
    decimals = 2 if span < 2 else 1 if span < 20 else 0
    return [f"{value:.{decimals}f}".rstrip("0").rstrip(".") if decimals else f"{value:,.0f}" for value in values]


def axis_values(figure: go.Figure, name: str) -> list[Any]:
    """Every value the figure's traces put on axis `name` (`xaxis`, `yaxis2`, …)."""
    letter, suffix = name[0], name[5:]
    reference = letter + suffix
    values: list[Any] = []
    for trace in figure.data:
        if (getattr(trace, f"{letter}axis", None) or letter) != reference:
            continue
        data = getattr(trace, letter, None)
        if data is not None:
            values.extend(np.asarray(data, dtype=object).ravel().tolist())
    return values


def axis_labels(figure: go.Figure, name: str, axis: dict[str, Any]) -> list[str] | None:
    """The tick labels axis `name` will show, or None when they cannot be told beforehand."""
    if axis.get("visible") is False or axis.get("showticklabels") is False:
        return []
    if axis.get("ticktext") is not None:
        return [str(label) for label in axis["ticktext"]]
    if axis.get("range") and None not in axis["range"] and axis.get("type") != "category":
        return number_labels(float(axis["range"][0]), float(axis["range"][1]), axis.get("tickformat"))
    values = axis_values(figure, name)
    if any(isinstance(value, str) for value in values):
        return [str(value) for value in values]
    numbers = [float(v) for v in values if isinstance(v, (int, float, np.number)) and math.isfinite(float(v))]
    if not numbers:
        return None
    return number_labels(min(numbers), max(numbers), axis.get("tickformat"))


def needed_margins(figure: go.Figure) -> dict[str, int]:
    """Per side (l, r, t, b), the pixels the axes at that edge of the figure need for their labels and titles."""
    layout = figure.layout.to_plotly_json()
    needed: dict[str, int] = {}
    axes = {"xaxis": {}, "yaxis": {}, **layout}  # the first axes exist whether or not the layout sets them
    for name, axis in axes.items():
        if not (name.startswith(("xaxis", "yaxis")) and isinstance(axis, dict)) or axis.get("automargin") is False:
            continue  # an axis whose builder turned automatic margins off keeps the layout's margins
        letter = name[0]
        other = layout.get(f"{'y' if letter == 'x' else 'x'}axis{name[5:]}", {})
        anchor = axis.get("anchor")
        if anchor and anchor != "free":
            other = layout.get(f"{anchor[0]}axis{anchor[1:]}", {})
        domain = other.get("domain", [0.0, 1.0]) if isinstance(other, dict) else [0.0, 1.0]
        far = axis.get("side") in ("top", "right")
        if (domain[1] < 0.99) if far else (domain[0] > 0.01):
            continue  # an inner subplot's labels sit inside the figure
        labels = axis_labels(figure, name, axis)
        if labels is None:
            continue
        title = axis.get("title") or {}
        titled = title.get("text") is not None and axis.get("visible") is not False  # an empty title takes room too
        if not labels and not titled:
            continue  # nothing drawn beside this axis: plotly pushes no margin for it
        size = (axis.get("tickfont") or {}).get("size", TICK_FONT_PX)
        angle = axis.get("tickangle", 0)
        extent = label_extent(labels, size, 0 if angle == "auto" else float(angle), letter)
        if titled:
            extent += TITLE_STANDOFF_PX[letter] + 1.3 * ((title.get("font") or {}).get("size", TITLE_FONT_PX))
        extent += EDGE_PX[titled]
        side = {"x": "tb", "y": "rl"}[letter][0 if far else 1]
        needed[side] = max(needed.get(side, 0), math.ceil(extent + SLACK_PX))
    return needed


def fit_margins(figure: go.Figure) -> go.Figure:
    """Widen `figure`'s margins (in place, never narrow them) to what its axes' labels need; returned."""
    margin = figure.layout.margin.to_plotly_json()
    wider = {side: pixels for side, pixels in needed_margins(figure).items()
             if pixels > margin.get(side, THEME_MARGINS[side])}
    if wider:
        figure.update_layout(margin=wider)
    return figure
