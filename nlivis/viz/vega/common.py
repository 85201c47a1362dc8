"""What every Vega-Lite spec shares: Streamlit's look written into it, data values a spec can carry, token axes,
a click's selection, and the CSV of a spec's data.

The look is Streamlit 1.67's own chart look, light or dark (its font, text, grid and heading colours, tick,
axis-title and title sizes, palettes), read off the charts it draws. It goes into the spec's `config` and the
chart is drawn with `theme=None`: Streamlit's own Vega theme (merged in the browser) has spacing and defaults of its
own (no tick marks, wide label padding, a fitted autosize). The background is transparent: the page's own colour
shows through, in either theme.
"""
from __future__ import annotations

import csv
import hashlib
import io
import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from nlivis.viz.common import CATEGORY_COLOURS, token_ticks, visible_token

FONT = '"Source Sans", sans-serif'
TEXT_FONT_PX = 12
"""Size of Streamlit's chart text: legends, colour bar ticks, tooltips."""
TICK_FONT_PX = 12
"""Size of an axis's tick labels."""
TITLE_FONT_PX = 14
"""Size of an axis's title and of a facet's header."""
HEADING_FONT_PX = 16
"""Size of a chart's (bold) title."""

LIGHT: dict[str, Any] = {
    "text": "#808495", "heading": "#2F2D2B", "legend": "#262730", "grid": "#e6eaf1",
    "colourway": ["#0068c9", "#83c9ff", "#ff2b2b", "#ffabab", "#29b09d", "#7defa1", "#ff8700", "#ffd16a", "#6d3fc0",
                  "#d5dae5"],
    "sequential": ["#e4f5ff", "#c7ebff", "#a6dcff", "#83c9ff", "#60b4ff", "#3d9df3", "#1c83e1", "#0068c9", "#0054a3",
                   "#004280"],
}
"""Streamlit's light theme as its charts show it."""

DARK: dict[str, Any] = {
    "text": "#e6eaf1", "heading": "#EDEBE8", "legend": "#fafafa", "grid": "#31333F",
    "colourway": ["#83c9ff", "#0068c9", "#ffabab", "#ff2b2b", "#7defa1", "#29b09d", "#ffd16a", "#ff8700", "#6d3fc0",
                  "#d5dae5"],
    "sequential": LIGHT["sequential"][::-1],
}
"""Streamlit's dark theme as its charts show it."""

DIVERGING = ["#7d353b", "#bd4043", "#ff4b4b", "#ff8c8c", "#ffc7c7", "#a6dcff", "#60b4ff", "#1c83e1", "#0054a3",
             "#004280"]
"""Streamlit's diverging scale (the same in both themes)."""

TRANSPARENT = "transparent"
"""Vega's name for no background."""
SCHEMA = "https://vega.github.io/schema/vega-lite/v6.json"
RULE = "#808495"
"""The colour of zero lines, whiskers, printed values and messages: Streamlit's axis-text grey, read on a light and
a dark background alike (Vega's default black text is lost on the dark theme)."""


def look(dark: bool = False) -> dict[str, Any]:
    """A Vega-Lite `config` with Streamlit's chart look, light or `dark` (the facts above)."""
    theme = DARK if dark else LIGHT
    text, grid = theme["text"], theme["grid"]
    axis = {"labelColor": text, "titleColor": text, "labelFont": FONT, "titleFont": FONT,
            "labelFontSize": TICK_FONT_PX, "titleFontSize": TITLE_FONT_PX, "titleFontWeight": "normal",
            "gridColor": grid, "tickColor": grid, "domain": False}
    return {
        "background": TRANSPARENT, "font": FONT,
        "title": {"anchor": "start", "color": theme["heading"], "font": FONT, "fontSize": HEADING_FONT_PX,
                  "fontWeight": "bold", "subtitleColor": text, "subtitleFontSize": TEXT_FONT_PX},
        "axis": axis,
        "header": {"labelColor": theme["heading"], "labelFont": FONT, "labelFontSize": TITLE_FONT_PX,
                   "titleColor": text, "titleFont": FONT, "titleFontSize": TITLE_FONT_PX,
                   "titleFontWeight": "normal"},
        "legend": {"labelColor": theme["legend"], "titleColor": text, "labelFont": FONT, "titleFont": FONT,
                   "labelFontSize": TEXT_FONT_PX, "titleFontSize": TEXT_FONT_PX, "titleFontWeight": "normal"},
        "view": {"stroke": None},
        "mark": {"color": theme["colourway"][0]},
        "text": {"color": text},
        "range": {"category": list(theme["colourway"]), "ramp": list(theme["sequential"]),
                  "heatmap": list(theme["sequential"]), "diverging": list(DIVERGING)},
    }


def themed(spec: Mapping[str, Any], dark: bool = False) -> dict[str, Any]:
    """`spec` with Streamlit's look (`look`) as its config, under whatever config the spec sets itself (one level
    deep: a spec's `axis` settings replace the look's one by one); `spec` itself is not changed."""
    config = look(dark)
    for key, value in dict(spec.get("config", {})).items():
        config[key] = {**config[key], **value} if isinstance(value, dict) and isinstance(config.get(key), dict) \
            else value
    return {**spec, "config": config}


def message_spec(message: str, height: int = 200) -> dict[str, Any]:
    """A spec that draws only `message` (never an empty axis without words); its data is one empty row, so its CSV
    is empty."""
    return {"$schema": SCHEMA, "height": height, "width": "container", "data": {"values": [{}]},
            "mark": {"type": "text", "text": message, "fontSize": TITLE_FONT_PX, "color": RULE}}


def plain(value: Any) -> Any:
    """A value a spec's data (JSON, then Arrow) can carry: numpy scalars as Python ones, a NaN or infinity as None
    (JSON has neither; Vega leaves a null out of scales and marks)."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def spec_fingerprint(spec: Mapping[str, Any]) -> str:
    """A digest of everything in `spec`: its nested dicts, lists and values, and each DataFrame or numpy array in
    it by its column names, types, categories, index and values. It is the key a figure's drawing is kept under
    (`app.cache.figures`): Streamlit hashing a spec passed to a cached function walks its data in Python value by
    value (10-25 ms for a data map's ten thousand points, on every run, for every cached call it was passed to);
    here a frame's columns are hashed as arrays (about 1 ms for the same points). Object columns are hashed by
    their values' text (pandas' `hash_pandas_object`), as the drawn figure shows them."""
    digest = hashlib.blake2b(digest_size=20)

    def whole(value: Any) -> Any:
        if isinstance(value, pd.DataFrame):
            digest.update(json.dumps([[str(name), str(kind), [str(c) for c in kind.categories] if
                                       isinstance(kind, pd.CategoricalDtype) else None]
                                      for name, kind in value.dtypes.items()]).encode())
            digest.update(pd.util.hash_pandas_object(value, index=True).to_numpy().tobytes())
            return f"<frame {len(value)}>"
        if isinstance(value, np.ndarray):
            if value.dtype.kind in "biuf":
                digest.update(f"{value.dtype}{value.shape}".encode() + np.ascontiguousarray(value).tobytes())
                return f"<array {value.shape}>"
            return value.tolist()
        if isinstance(value, np.generic):
            return value.item()
        if isinstance(value, (pd.Series, pd.Index)):
            return whole(value.to_frame() if isinstance(value, pd.Series) else value.to_frame(index=False))
        if isinstance(value, (set, frozenset)):
            return sorted(value, key=repr)
        return f"<{type(value).__qualname__} {value!r}>"

    digest.update(json.dumps(spec, default=whole, ensure_ascii=False, separators=(",", ":")).encode())
    return digest.hexdigest()


def records(columns: Mapping[str, Sequence[Any] | np.ndarray]) -> list[dict[str, Any]]:
    """Columns of equal length as a spec's data values, one dict per row, each value `plain`."""
    lengths = {name: len(values) for name, values in columns.items()}
    if len(set(lengths.values())) > 1:
        raise ValueError(f"columns of a spec's data must have one length, got {lengths}")
    lists = [plain_column(values) for values in columns.values()]
    names = list(columns)
    return [dict(zip(names, row)) for row in zip(*lists)]


def plain_column(values: Sequence[Any] | np.ndarray) -> list[Any]:
    """A column's values, each `plain`, without a call per value where it can: a numpy array of numbers is
    converted whole, its non-finite values then set to None (a pair's figures hold tens of thousands of values:
    a call per value was a tenth of a second of each new pair's run)."""
    if isinstance(values, np.ndarray) and values.ndim == 1 and values.dtype.kind in "biuf":
        column = values.tolist()
        if values.dtype.kind == "f":
            for position in np.flatnonzero(~np.isfinite(values)).tolist():
                column[position] = None
        return column
    items = values.tolist() if isinstance(values, np.ndarray) else values
    return [plain(value) if isinstance(value, (float, np.generic)) else value for value in items]


def group_hues(names: Sequence[str], colours: Mapping[str, str] | None = None) -> list[str]:
    """A colour per name: its own from `colours` (a model's colour on every page), else (a name without one, or
    with an empty one) the category palette's in order."""
    return [(colours or {}).get(name) or CATEGORY_COLOURS[i % len(CATEGORY_COLOURS)] for i, name in enumerate(names)]


def field(name: str) -> str:
    """A column name as a Vega-Lite field: dots and brackets would otherwise be read as nested access."""
    return "".join("\\" + c if c in ".[]\\" else c for c in str(name))


def frame_records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """The rows of `frame` as a spec's data values (`records`: NaN as null, numpy scalars plain; a float32 value as
    the shortest decimal that is that float32, e.g. 0.1234, not 0.12340000271797180)."""
    return records({str(name): [float(v) for v in values.to_numpy().astype(str)] if values.dtype == np.float32
                    else values.tolist() for name, values in frame.items()})


def interval_rule(low: str, high: str, across: str, position: Mapping[str, Any],
                  offset: Mapping[str, Any] | None = None, tooltip: list[dict[str, Any]] | None = None,
                  stroke_width: float = 1.5) -> dict[str, Any]:
    """A whisker: a rule from each row's `low` to its `high` column along `across` ("x" or "y"), at its bar's or
    dot's `position` (and `offset`) encoding on the other axis, in the axis-text grey."""
    other = "x" if across == "y" else "y"
    encoding: dict[str, Any] = {across: {"field": field(low), "type": "quantitative"},
                                f"{across}2": {"field": field(high)}, other: dict(position)}
    if offset:
        encoding[f"{other}Offset"] = dict(offset)
    if tooltip is not None:
        encoding["tooltip"] = tooltip
    return {"mark": {"type": "rule", "color": RULE, "strokeWidth": stroke_width}, "encoding": encoding}


LABEL_SEPARATOR = "\u001f"
"""Between a token axis's labels in its label expression (ASCII's unit separator: no tokenizer's token holds it)."""


def token_axis(tokens: Sequence[str], axis: str = "x", title: str | None = None) -> dict[str, Any]:
    """A Vega-Lite axis over positions 0..n-1 labelled with the tokens, as viz.common.token_ticks labels a plotly
    one (each position once, even a repeated token; invisible characters named; long tokens cut; long x axes
    upright and smaller): positions, not the tokens, are the scale's values, so that "the … the" stay two rows.

    The labels are one string split at LABEL_SEPARATOR (which ends it too), not a list of string literals: Vega
    6's expression parser takes a string literal "if" for a signal of that name ("Unrecognized signal name"), and
    the chart of a sentence with "if" in it was never drawn."""
    ticks = token_ticks(tokens, axis)
    joined = "".join(label.replace(LABEL_SEPARATOR, "") + LABEL_SEPARATOR for label in ticks["ticktext"])
    settings: dict[str, Any] = {"title": title, "labelOverlap": False,
                                "labelExpr": f"split({json.dumps(joined)}, {json.dumps(LABEL_SEPARATOR)})[datum.value]"}
    if "tickangle" in ticks:
        settings["labelAngle"] = ticks["tickangle"]
    if "tickfont" in ticks:
        settings["labelFontSize"] = ticks["tickfont"]["size"]
    return settings


def axis_labels(axis: Mapping[str, Any]) -> list[str]:
    """The labels a `token_axis` shows, position by position, read back from its label expression."""
    expression = str(axis["labelExpr"])
    joined = json.loads(expression[len("split("):expression.rindex(", " + json.dumps(LABEL_SEPARATOR))])
    return joined.split(LABEL_SEPARATOR)[:-1]


def visible_tokens(tokens: Sequence[str]) -> list[str]:
    """Tokens as a tooltip shows them whole (viz.common.visible_token: no blank for an invisible one)."""
    return [visible_token(token) for token in tokens]


def point_selection(name: str, fields: Sequence[str]) -> dict[str, Any]:
    """A selection parameter that a click on a mark sets to that mark's `fields` (st.vega_lite_chart returns them
    as `event.selection[name]`: a list with one dict of those fields, `clicked_values` reads it)."""
    return {"name": name, "select": {"type": "point", "fields": list(fields), "on": "click", "clear": "dblclick"}}


def clicked_values(selection: Any, name: str) -> list[dict[str, Any]]:
    """The dicts of fields a point selection `name` holds in a Vega-Lite selection event's `selection` (empty
    when nothing is selected or the event is not one)."""
    try:
        chosen = selection[name]
    except (KeyError, TypeError, IndexError):
        return []
    return [dict(item) for item in chosen if isinstance(item, Mapping)] if isinstance(chosen, list) else []


def data_values(spec: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The rows of a spec's own data: its top-level `data.values` (a list of rows, or a typed frame that Streamlit
    sends as Arrow, `frame_records`), then each named table of its `datasets` (views that each read their own
    table, `{"data": {"name": …}}`), whose rows name it first as `dataset`; empty when it has neither."""
    data = spec.get("data")
    values = data.get("values") if isinstance(data, Mapping) else None
    rows = frame_records(values) if isinstance(values, pd.DataFrame) else list(values) if isinstance(values, list) \
        else []
    named = spec.get("datasets")
    for name, table in (named.items() if isinstance(named, Mapping) else ()):
        if isinstance(table, list):
            rows += [{"dataset": name, **row} for row in table]
    return rows


def with_records(spec: Mapping[str, Any]) -> dict[str, Any]:
    """`spec` with its top-level data's rows as plain dicts (`frame_records`), for what reads a spec as JSON (the
    SVG converter); `spec` itself is not changed."""
    data = spec.get("data")
    if not isinstance(data, Mapping) or not isinstance(data.get("values"), pd.DataFrame):
        return dict(spec)
    return {**spec, "data": {**data, "values": frame_records(data["values"])}}


def data_csv(spec: Mapping[str, Any]) -> str:
    """A spec's data (`data_values`: its own and its named tables') as CSV text, for the figure's "data (CSV)"
    download: a column per field in the order the rows first name them, an empty cell for a missing or null
    value."""
    rows = data_values(spec)
    fields = list(dict.fromkeys(field for row in rows for field in row))
    if not fields:
        return ""
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=fields, lineterminator="\r\n", restval="")  # RFC 4180: a lone \r is quoted
    writer.writeheader()
    writer.writerows(rows)
    return text.getvalue()
