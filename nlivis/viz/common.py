"""What every figure shares: download settings, token-labelled axes and the data behind a figure.

Heatmaps put token *positions* on their axes and label the ticks with the tokens, because plotly
merges repeated category names ("the … the") into one row. Each trace carries in `meta` the labels
and the name of its value, so `figure_data` can give back exactly what is drawn as a table.
"""
from __future__ import annotations

import re
import unicodedata
from typing import Any, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.colors import get_colorscale, sample_colorscale

from nlivis.models.families import FAMILIES

SEQUENTIAL_SCALE = "Viridis"
"""Colour scale of every non-negative map (DIIN Figure 2 uses viridis)."""

DIVERGING_SCALE = "RdBu"
"""Colour scale for signed values (e.g. raw similarities, deltas)."""

CATEGORY_COLOURS: tuple[str, ...] = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
                                     "#7f7f7f", "#bcbd22", "#17becf")
"""Distinct hues for categories (plotly's D3 palette): labels in a scatter must not differ only in lightness."""

FAMILY_COLOURS: dict[str, str] = {name: family.colour for name, family in FAMILIES.items()}
"""One colour per model family (declared in `models.families`), the same on every page (a figure of several
models colours each by it)."""

EXTRA_COLOURS: tuple[str, ...] = ("#17becf", "#bcbd22", "#e377c2", "#7f7f7f", "#aec7e8", "#ffbb78", "#98df8a",
                                  "#ff9896", "#c5b0d5", "#c49c94")
"""For a second checkpoint of a family shown beside the first, and for families without a colour of their own."""


def model_colours(models: Sequence[tuple[str, str]]) -> dict[str, str]:
    """Checkpoint name → colour, for (name, model family) in display order: the first checkpoint of a family
    gets the family's colour (FAMILY_COLOURS), any other checkpoint the next unused colour of EXTRA_COLOURS."""
    colours: dict[str, str] = {}
    used: set[str] = set()
    spare = iter(EXTRA_COLOURS * (1 + len(models) // len(EXTRA_COLOURS)))
    for name, family in models:
        own = FAMILY_COLOURS.get(family)
        if own is not None and own not in used:
            colours[name] = own
        else:
            colours[name] = next(c for c in spare if c not in used)
        used.add(colours[name])
    return colours


BELOW_LEGEND: dict[str, Any] = {"orientation": "h", "yanchor": "top", "y": -0.22, "x": 0}
"""A horizontal legend far enough below the plot that it never covers the x tick labels."""

NICE_PERCENT_STEPS = (0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.25, 0.5)
"""Tick steps (as fractions) an axis of percentages may use."""


def percent_ticks(low: float, high: float, most: int = 8, signed: bool = True) -> dict[str, Any]:
    """Axis settings with ticks at a round step covering [low, high] (fractions) and labels with just
    enough decimals for that step: 0.5% steps read −1.0%, −0.5%, +0.0%, … rather than plotly's rounded
    "+.0%" labels (−1%, −1%, +0%, …). At most `most` ticks; `signed` puts a + on positive values."""
    low, high = float(min(low, high)), float(max(low, high))
    if not np.isfinite(low) or not np.isfinite(high):
        raise ValueError(f"percent ticks need finite bounds, got {low}, {high}")
    span = max(high - low, 1e-9)
    step = next((s for s in NICE_PERCENT_STEPS if span / s <= most - 1), NICE_PERCENT_STEPS[-1])
    first, last = int(np.floor(low / step + 1e-9)), int(np.ceil(high / step - 1e-9))
    values = [round(k * step, 10) for k in range(first, last + 1)]
    decimals = max(0, int(np.ceil(-np.log10(step * 100) - 1e-9)))
    sign = "+" if signed else ""
    text = [f"{value * 100:{sign if value else ''}.{decimals}f}%".replace("-", "−") for value in values]
    return {"tickmode": "array", "tickvals": values, "ticktext": text, "range": [values[0] - step, values[-1] + step]}


def clean_file_name(name: str, fallback: str = "nlivis_figure") -> str:
    """A file name any system accepts, from a label: `gcnn · snli-small · gcnn-snli-small_forget gate` →
    `gcnn_snli-small_gcnn-snli-small_forget_gate` (runs of other characters become one `_`)."""
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._-")
    return cleaned[:150] or fallback


def real_length(tokens: Sequence[str], available: int) -> int:
    """How many positions of a padded axis are real tokens: the token count, never beyond the tensor."""
    return max(0, min(len(tokens), int(available)))


INVISIBLE_NAMES = {"\u200d": "ZWJ", "\u200c": "ZWNJ", "\u200b": "ZWSP", "\u2060": "WJ", "\ufeff": "BOM", "\u00ad": "SHY"}
"""Short names for the zero-width characters a tokenizer can leave as tokens of their own (emoji sequences)."""


def _invisible(char: str) -> bool:
    code = ord(char)
    return (unicodedata.category(char) == "Cf" or 0xFE00 <= code <= 0xFE0F or 0xE0100 <= code <= 0xE01EF
            or code in (0x180B, 0x180C, 0x180D, 0x180F))


def _invisible_name(char: str) -> str:
    code = ord(char)
    if 0xFE00 <= code <= 0xFE0F:
        return f"VS{code - 0xFE00 + 1}"
    if 0xE0100 <= code <= 0xE01EF:
        return f"VS{code - 0xE0100 + 17}"
    return INVISIBLE_NAMES.get(char, f"U+{code:04X}")


def visible_token(token: str) -> str:
    """A token as an axis can show it: zero-width joiners and variation selectors are dropped from a token
    that has visible characters, and a token made only of them is named ("ZWJ", "VS16"), never left blank."""
    token = str(token)
    visible = "".join(c for c in token if not _invisible(c))
    if visible.strip():
        return visible
    if token and all(_invisible(c) for c in token):
        return "·".join(_invisible_name(c) for c in token)
    return token if token.strip() else "␣"


LONG_AXIS = 16
"""More tokens than this: x labels stand upright and get smaller, so neighbours never overlap."""

MAX_TICK_CHARS = 14
"""Longer tokens are cut with an ellipsis on the axis (hover shows them whole)."""


def token_ticks(tokens: Sequence[str], axis: str = "x") -> dict[str, Any]:
    """Axis settings that label positions 0..n-1 with the tokens (each position once, even repeats). Long
    axes stay legible: upright, smaller x labels past LONG_AXIS tokens; every label visible and short."""
    labels = [visible_token(t) for t in tokens]
    labels = [label if len(label) <= MAX_TICK_CHARS else label[:MAX_TICK_CHARS - 1] + "…" for label in labels]
    settings: dict[str, Any] = {"tickmode": "array", "tickvals": list(range(len(tokens))), "ticktext": labels}
    if axis == "x":
        settings["tickangle"] = -90 if len(tokens) > LONG_AXIS else -45
    if len(tokens) > 2 * LONG_AXIS:
        settings["tickfont"] = {"size": 9}
    elif len(tokens) > LONG_AXIS:
        settings["tickfont"] = {"size": 10}
    return settings


def scale_colours(values: Sequence[float], scale: str, low: float, high: float) -> list[str]:
    """The colour of each value on the named plotly colour scale over [low, high] (values outside are clipped).
    Bars are given these rather than numbers and a colour scale: plotly.js 4 colours numeric bar colours right but
    warns "Invalid color specifier" per bar and draw (a console trace each, 36 per gate strip)."""
    span = (high - low) or 1.0
    where = [min(max((float(value) - low) / span, 0.0), 1.0) for value in values]
    return sample_colorscale(get_colorscale(scale), where) if where else []


NARROW_SPAN = 0.1
"""Values spanning less than this share of a fixed colour range get their own range (and say so)."""


def fitted_range(values: np.ndarray, low: float = 0.0, high: float = 1.0) -> tuple[float, float, str | None]:
    """(zmin, zmax, note): the fixed range [low, high] so figures compare by eye, unless the values span less
    than NARROW_SPAN of it — then their own range (one flat block otherwise), with a note stating it."""
    values = np.asarray(values, dtype=float)
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return low, high, None
    smallest, largest = float(finite.min()), float(finite.max())
    if largest - smallest >= NARROW_SPAN * (high - low):
        return low, high, None
    if largest == smallest:
        return smallest - 1e-6, largest + 1e-6, f"all values {smallest:.4g}"
    return smallest, largest, f"own colour scale {smallest:.4g}–{largest:.4g} (narrow range)"


def labelled_heatmap(
    values: np.ndarray,
    row_labels: Sequence[str],
    col_labels: Sequence[str],
    value_name: str,
    row_name: str,
    col_name: str,
    colorscale: str = SEQUENTIAL_SCALE,
    zmin: float | None = None,
    zmax: float | None = None,
    coloraxis: str | None = None,
    showscale: bool = True,
    name: str = "",
) -> go.Heatmap:
    """A heatmap trace over positions, with labels and the value's name kept in `meta` for `figure_data`."""
    values = np.asarray(values, dtype=float)
    rows = [str(r) for r in row_labels]
    cols = [str(c) for c in col_labels]
    hover = np.array([[f"{row_name}: {visible_token(r)}<br>{col_name}: {visible_token(c)}" for c in cols] for r in rows],
                     dtype=object)
    kwargs: dict[str, Any] = {}
    if coloraxis is not None:
        kwargs["coloraxis"] = coloraxis
    else:
        kwargs.update(colorscale=colorscale, zmin=zmin, zmax=zmax, showscale=showscale)
    return go.Heatmap(
        z=values,
        x=list(range(len(cols))),
        y=list(range(len(rows))),
        customdata=hover if hover.size else None,
        hovertemplate="%{customdata}<br>" + value_name + ": %{z:.4f}<extra></extra>",
        name=name,
        meta={"kind": "heatmap", "rows": rows, "cols": cols, "row_name": row_name, "col_name": col_name,
              "value_name": value_name, "name": name},
        **kwargs,
    )


def figure_data(figure: go.Figure) -> pd.DataFrame:
    """The numbers behind a figure as a long table, one row per drawn value.

    Heatmaps give (panel, row, column, value) with token labels (a heatmap whose meta says `skip_gaps` leaves
    out its blank cells: the gaps between a mosaic's thumbnails); bars and scatters give their x/y
    (and the text shown on hover). Every figure built in nlivis.viz supports this.
    """
    frames: list[pd.DataFrame] = []
    for trace in figure.data:
        meta = trace.meta if isinstance(trace.meta, dict) else {}
        if meta.get("kind") == "overlay":  # clickable markers laid over a figure carry no data of their own
            continue
        if meta.get("kind") == "heatmap":
            z = np.asarray(trace.z, dtype=float)
            rows, cols = meta["rows"], meta["cols"]
            if z.size == 0:
                continue
            r_idx, c_idx = np.meshgrid(np.arange(z.shape[0]), np.arange(z.shape[1]), indexing="ij")
            drawn = ~np.isnan(z) if meta.get("skip_gaps") else np.ones(z.shape, dtype=bool)  # a mosaic's blank cells
            r_idx, c_idx = r_idx[drawn], c_idx[drawn]
            frames.append(pd.DataFrame({
                "panel": meta.get("name", ""),
                "row_position": r_idx,
                meta["row_name"]: [rows[i] for i in r_idx],
                "column_position": c_idx,
                meta["col_name"]: [cols[j] for j in c_idx],
                meta["value_name"]: z[drawn],
            }))
        elif meta.get("kind") == "table":
            frames.append(pd.DataFrame(meta["records"]))
        elif trace.type in {"bar", "scatter", "scattergl"}:
            x = list(trace.x) if trace.x is not None else []
            y = list(trace.y) if trace.y is not None else []
            frame = pd.DataFrame({"series": trace.name or "", "x": x, "y": y})
            if trace.text is not None and not isinstance(trace.text, str) and len(trace.text) == len(frame):
                frame["text"] = list(trace.text)
            frames.append(frame)
    if not frames:
        return pd.DataFrame()
    return pd.concat(frames, ignore_index=True)


def figure_data_csv(figure: go.Figure) -> str:
    """`figure_data` as CSV text, for a download button next to the figure."""
    return figure_data(figure).to_csv(index=False)


def empty_figure(message: str) -> go.Figure:
    """A blank figure that states why there is nothing to draw (never an empty axis without words)."""
    figure = go.Figure()
    figure.add_annotation(text=message, showarrow=False, x=0.5, y=0.5, xref="paper", yref="paper", font={"size": 14})
    figure.update_layout(xaxis={"visible": False}, yaxis={"visible": False}, height=200)
    return figure
