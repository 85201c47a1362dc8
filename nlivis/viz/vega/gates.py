"""The Gates page's figures as Vega-Lite specs: a model's gates for one pair in one spec (per gate, its mean over all
dimensions per token above a window of its dimensions per token) and the mean gate value per model and gate over a
split.

Pure functions, arrays and frames in, a JSON dict out (no altair: it is slow to import); the page's look is written
in when the spec is drawn (`nlivis.app.components.figures.show`). The strips are one simple vconcat (one mark per
view, each on its own named table), which Streamlit fits to the page's width.
"""
from __future__ import annotations

from typing import Any, Mapping, NamedTuple, Sequence

import numpy as np
import pandas as pd

from nlivis.viz.vega.common import frame_records, interval_rule, records, token_axis, visible_tokens

GATE_DIMS_SHOWN = 64
"""Dimensions one gate heatmap shows at a time (more rows than this cannot be told apart); the rest are
reached by moving the window (`first_dim`)."""

SEAMLESS = 1.1
"""A heatmap cell's size in bands: a little over one, so that neighbours overlap (cells of exactly one band, 3.4 px
high, showed the background between them as white lines)."""

LEGEND = {"gradientLength": 200, "orient": "top", "direction": "horizontal", "titleOrient": "left"}
"""The gate value's colour bar, across the top of the strips it colours (of all, when they share a scale): at the
right it was placed past the longest title, far from a short pair's narrow strips."""

DIMENSION_TICK_STEP = 16
"""The heatmap's dimension axis names every 16th dimension (64 rows in 220 px: every label would overlap)."""


def dimension_windows(dimensions: int, size: int = GATE_DIMS_SHOWN) -> list[int]:
    """First dimension of each window of `size` that together cover all `dimensions` (0, 64, 128, …)."""
    return list(range(0, max(dimensions, 1), size))


def gate_colour(signed: bool) -> dict[str, Any]:
    """The colour scale both panels share: 0…1 on viridis for a sigmoid gate; −1…1 diverging (blue low, red high)
    when some value is negative (a tanh transform)."""
    if signed:
        return {"scheme": "redblue", "reverse": True, "domain": [-1.0, 1.0]}
    return {"scheme": "viridis", "domain": [0.0, 1.0]}


class Strip(NamedTuple):
    """One gate of one pair as its strip needs it: `values` [tokens, dims] of its real tokens, the `tokens`, its
    `title`, and the first dimension of the window its heatmap shows."""
    values: np.ndarray
    tokens: Sequence[str]
    title: str
    first_dim: int = 0


def strip_records(values: np.ndarray, tokens: Sequence[str], first_dim: int,
                  last_dim: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The strip's two tables: per token its mean over all dimensions (the bars'), and per token and dimension of
    the window its value (the heatmap's); tokens as a tooltip shows them. Each holds only the fields its view
    draws or hovers (no strip or panel column: each view has its table, `gate_strips`)."""
    shown = visible_tokens(tokens)
    positions = list(range(len(shown)))
    mean = values.mean(axis=1) if values.size else np.zeros(len(shown))
    window = values[:, first_dim:last_dim]
    dims = np.arange(first_dim, last_dim)
    means = records({"position": positions, "token": shown, "value": mean})
    cells = records({"dimension": np.tile(dims, len(shown)), "position": np.repeat(positions, len(dims)),
                     "token": np.repeat(np.array(shown, dtype=object), len(dims)), "value": window.reshape(-1)})
    return means, cells


def dataset_names(index: int) -> tuple[str, str]:
    """The names of strip `index`'s two tables in the spec's `datasets`: its bars' (means) and its heatmap's
    (dimensions), numbered from 1 as the strips are shown top to bottom."""
    return f"gate{index + 1}_means", f"gate{index + 1}_dimensions"


def signed_values(values: np.ndarray) -> bool:
    """Whether a gate has a negative value (a tanh transform: the diverging scale of `gate_colour`)."""
    return bool(values.size) and float(values.min()) < 0.0


def strip_views(index: int, strip: Strip, max_dims: int, shared: bool) -> tuple[dict[str, list[dict[str, Any]]],
                                                                                list[dict[str, Any]]]:
    """The two tables (`strip_records`, named by `dataset_names`) and the two views of strip `index`, titled with
    the gate (and its window when the gate is wider): top, the mean per token over all dimensions; below,
    dimensions `first_dim` … `first_dim + max_dims − 1` per token, named by their true index, so every dimension of
    a 128- or 384-wide gate is reachable window by window. Each view reads its own table: one shared table that
    each view filtered cost the browser 24 filters × every gate's rows, each row through Streamlit's CSP-safe
    expression interpreter (issue 30). Both share one colour scale (`gate_colour`), whose legend the heatmap
    shows; with `shared` (one scale for all strips) the bars name the same legend too, as Vega-Lite merges a
    shared scale's legends only when every view asks for it (one with none, and the merged legend is gone)."""
    values, first_dim = np.asarray(strip.values, dtype=float), strip.first_dim
    width = values.shape[1]
    if not 0 <= first_dim < max(width, 1):
        raise ValueError(f"first_dim {first_dim} is outside the gate's {width} dimensions")
    tokens = [str(t) for t in strip.tokens][: values.shape[0]]
    last_dim = min(first_dim + max_dims, width)
    signed = signed_values(values)
    colour = {"field": "value", "type": "quantitative", "title": "gate value", "scale": gate_colour(signed)}
    x = {"field": "position", "type": "ordinal", "scale": {"domain": list(range(len(tokens)))}}
    hover_token = [{"field": "token", "type": "nominal"}, {"field": "position", "type": "ordinal"}]
    window = f" (dims {first_dim}–{last_dim - 1} of {width})" if width > last_dim - first_dim else ""
    title = strip.title + window
    means_name, cells_name = dataset_names(index)
    means = {"title": title, "data": {"name": means_name}, "height": 80, "mark": {"type": "bar"},
             "encoding": {"x": {**x, "axis": None},
                          "y": {"field": "value", "type": "quantitative", "title": "mean",
                                "scale": {"domain": [-1.0 if signed else 0.0, 1.0]}, "axis": {"tickCount": 3}},
                          "color": {**colour, "legend": LEGEND if shared else None},
                          "tooltip": [*hover_token, {"field": "value", "type": "quantitative", "title": "mean",
                                                     "format": ".3f"}]}}
    dims = list(range(first_dim, last_dim))
    cells = {"data": {"name": cells_name}, "height": 220,
             "mark": {"type": "rect", "width": {"band": SEAMLESS}, "height": {"band": SEAMLESS}},
             "encoding": {"x": {**x, "axis": {**token_axis(tokens), "grid": False}},
                          "y": {"field": "dimension", "type": "ordinal", "title": "dimension",
                                "scale": {"domain": dims},
                                "axis": {"values": [d for d in dims if d % DIMENSION_TICK_STEP == 0]}},
                          "color": {**colour, "legend": LEGEND},
                          "tooltip": [{"field": "dimension", "type": "ordinal"}, *hover_token,
                                      {"field": "value", "type": "quantitative", "title": "gate value",
                                       "format": ".4f"}]}}
    mean_rows, cell_rows = strip_records(values, tokens, first_dim, last_dim)
    return {means_name: mean_rows, cells_name: cell_rows}, [means, cells]


def gate_strips(strips: Sequence[Strip], max_dims: int = GATE_DIMS_SHOWN) -> dict[str, Any]:
    """A model's gates for one pair as ONE spec: each gate's strip (`strip_views`: its title, mean bars above a
    window of its dimensions, on its own token axis, each view on its own named table in `datasets`, which
    Streamlit sends as Arrow tables of their own) stacked in a plain vconcat, which Streamlit fits to the page's
    width. One Vega view compiles, builds its dataflow and draws once, where a chart per gate paid that per gate
    (twelve strips were the Gates page's warm cost, issue 30). The gates share one colour scale and legend
    when all are on one scale (all sigmoid, or all signed), else each strip has its own. No ARIA description per
    mark (`aria: false`): Vega-Lite would otherwise encode one string per bar and cell, thousands per chart, that
    no screen reader could read out usefully; the page says what the chart shows in words."""
    shared = len({signed_values(np.asarray(strip.values, dtype=float)) for strip in strips}) <= 1
    datasets: dict[str, list[dict[str, Any]]] = {}
    views: list[dict[str, Any]] = []
    for index, strip in enumerate(strips):
        tables, pair = strip_views(index, strip, max_dims, shared)
        datasets.update(tables)
        views += pair
    return {"datasets": datasets, "vconcat": views, "spacing": 6, "config": {"aria": False},
            "resolve": {"scale": {"x": "independent", "y": "independent",
                                  "color": "shared" if shared else "independent"}}}


def gate_summary_bars(summary: pd.DataFrame, title: str = "mean gate value over the sample",
                      colours: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Bars of mean gate value per (model, gate) side by side with ± its std as a whisker, from a table with
    columns model, gate, layer, tokens, mean, std, pairs (every column is in the hover and the CSV); a model's
    bars in its colour when `colours` names them all."""
    rows = summary.assign(model=summary["model"].astype(str),
                          label=[f"{g} · L{l} · {t}" for g, l, t in zip(summary["gate"], summary["layer"],
                                                                        summary["tokens"])])
    rows = rows.assign(low=rows["mean"] - rows["std"], high=rows["mean"] + rows["std"])
    models = list(dict.fromkeys(rows["model"]))
    scale: dict[str, Any] = {"domain": models}
    if colours and all(m in colours for m in models):
        scale["range"] = [colours[m] for m in models]
    x = {"field": "label", "type": "nominal", "sort": list(dict.fromkeys(rows["label"])), "title": None,
         "axis": {"labelAngle": -30, "labelLimit": 260}}
    offset = {"field": "model", "type": "nominal", "sort": models}
    hover = [{"field": name, "type": "quantitative" if pd.api.types.is_numeric_dtype(summary[name]) else "nominal",
              **({"format": ".3f"} if name in ("mean", "std") else {})} for name in summary.columns]
    bars = {"mark": {"type": "bar"},
            "encoding": {"x": x, "xOffset": offset, "y": {"field": "mean", "type": "quantitative",
                                                          "title": "mean gate value"},
                         "color": {"field": "model", "type": "nominal", "title": "model", "scale": scale},
                         "tooltip": hover}}
    whiskers = interval_rule("low", "high", "y", x, offset, tooltip=hover)
    return {"title": title, "data": {"values": frame_records(rows)}, "width": "container", "height": 380,
            "layer": [bars, whiskers]}
