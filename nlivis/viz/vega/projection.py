"""A projection of pooled pair representations as a Vega-Lite scatter: a point per pair at (x, y), coloured by a
category, hovering shows the pair; a click on a point selects its split and row, so the page can open the pair."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pandas as pd

from nlivis.viz.common import CATEGORY_COLOURS
from nlivis.viz.vega.common import message_spec, point_selection

FIXED_COLOURS = {"right": "#4c78a8", "wrong": "#e45756", "(no gold)": "#9d9d9d", "other": "#c7c7c7"}
"""Colours that mean the same in every projection: wrong pairs red, right ones blue, the rest grey."""

CLICKED = "point"
"""The selection parameter a click sets (to the point's `LINK_FIELDS`)."""

LINK_FIELDS = ("split", "row")
"""What a click gives back: the point's split key and 0-based row (-1 when the pair is not in the local split)."""

HEIGHT_PX = 560
AXIS = {"labels": False, "title": None, "ticks": False, "tickCount": 8}
"""The axes of a projection: its coordinates mean nothing, so a light grid and no numbers."""
POINT_AREA = 28
"""A point's area in square pixels: a disc 6 px across."""


def category_colours(values: Sequence[Any]) -> tuple[list[str], list[str]]:
    """The categories in sorted order and a colour each: the fixed meaning of right, wrong, no gold and other, else
    the category palette by position."""
    categories = sorted({str(value) for value in values})
    return categories, [FIXED_COLOURS.get(c, CATEGORY_COLOURS[i % len(CATEGORY_COLOURS)]) for i, c in enumerate(categories)]


def point_frame(frame: pd.DataFrame, columns: Sequence[str], texts: Sequence[str]) -> pd.DataFrame:
    """The points as the chart's data: `columns` of `frame`, those in `texts` as text, the coordinates as float32
    (a projection's units mean nothing; float32's 7 digits are far below a pixel) and the row as int32. Streamlit
    sends the frame as Arrow with these types (a NaN as null, which Vega leaves out), so the server builds no row
    dict per point: 1,000 of them took a third of the page's warm script (bench/page_script_time.py)."""
    kinds = {"x": np.float32, "y": np.float32, "row": np.int32}
    return pd.DataFrame({c: frame[c].astype(str) if c in texts else frame[c].astype(kinds.get(c, frame[c].dtype))
                         for c in columns}).reset_index(drop=True)


def projection_scatter(frame: pd.DataFrame, color: str, hover: Sequence[str] = ("premise", "hypothesis"),
                       title: str = "projection of pooled representations") -> dict[str, Any]:
    """A Vega-Lite spec of the points at (x, y), coloured by the category in column `color`; hovering shows the
    pair's columns in `hover` and its category. When the frame has `split` and `row` columns, a click on a point
    selects them (parameter `CLICKED`), so the page can open the pair (`nlivis.app.components.projection`).
    The spec's data — the CSV — is id, x, y, the category, the hover columns, split and row, one row per point."""
    if frame.empty:
        return message_spec("no points to project")
    hover_columns = [c for c in hover if c in frame.columns]
    linked = set(LINK_FIELDS) <= set(frame.columns)
    columns = list(dict.fromkeys(c for c in ("id", "x", "y", color, *hover_columns, *(LINK_FIELDS if linked else ()))
                                 if c in frame.columns))
    data = point_frame(frame, columns, (color, *hover_columns))
    categories, colours = category_colours(frame[color])
    tooltip = [{"field": c, "type": "nominal"} for c in dict.fromkeys([*hover_columns, color])]
    spec: dict[str, Any] = {
        "title": title, "height": HEIGHT_PX,
        "data": {"values": data},
        "mark": {"type": "circle", "size": POINT_AREA, "opacity": 0.75, "cursor": "pointer" if linked else "default"},
        "encoding": {
            "x": {"field": "x", "type": "quantitative", "scale": {"zero": False}, "axis": AXIS},
            "y": {"field": "y", "type": "quantitative", "scale": {"zero": False}, "axis": AXIS},
            "color": {"field": color, "type": "nominal", "scale": {"domain": categories, "range": colours},
                      "legend": {"title": color, "orient": "right"}},
            "tooltip": tooltip},
    }  # Streamlit draws it on a canvas past 2,000 points, as SVG below
    if linked:
        spec["params"] = [point_selection(CLICKED, LINK_FIELDS)]
    return spec
