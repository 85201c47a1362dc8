"""Gate activations: per token (mean over dims, then every dim) for one pair, and summary bars for a split."""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from nlivis.models.trace import Gate
from nlivis.viz.common import (DIVERGING_SCALE, SEQUENTIAL_SCALE, labelled_heatmap, real_length, scale_colours,
                               token_ticks)


def gate_values(entry: Gate, index: int, tokens: Sequence[str]) -> np.ndarray:
    """One pair's gate values [T, d] for the real tokens only."""
    values = entry.values[index].detach().float().cpu().numpy()
    return values[: real_length(tokens, values.shape[0])]


def gate_title(entry: Gate, label: str = "") -> str:
    return " · ".join(p for p in (label, f"{entry.name} gate", f"layer {entry.layer}", entry.tokens) if p)


GATE_DIMS_SHOWN = 64
"""Dimensions one gate heatmap shows at a time (more rows than this cannot be told apart); the rest are
reached by moving the window (`first_dim`)."""


def dimension_windows(dimensions: int, size: int = GATE_DIMS_SHOWN) -> list[int]:
    """First dimension of each window of `size` that together cover all `dimensions` (0, 64, 128, …)."""
    return list(range(0, max(dimensions, 1), size))


def gate_strip(entry: Gate, index: int, tokens: Sequence[str], label: str = "", first_dim: int = 0,
               max_dims: int = GATE_DIMS_SHOWN) -> go.Figure:
    """Top: the mean gate value per token over all dimensions (how open the gate is); bottom: dimensions
    `first_dim` … `first_dim + max_dims − 1` per token, labelled with their true index, so every dimension
    of a 128- or 384-wide gate is reachable window by window. Values outside [0, 1] (a tanh transform)
    get a diverging scale."""
    values = gate_values(entry, index, tokens)
    if not 0 <= first_dim < max(values.shape[1], 1):
        raise ValueError(f"first_dim {first_dim} is outside the gate's {values.shape[1]} dimensions")
    shown_tokens = list(tokens)[: values.shape[0]]
    mean = values.mean(axis=1) if values.size else np.zeros(0)
    signed = bool(values.size) and float(values.min()) < 0.0
    figure = make_subplots(rows=2, cols=1, shared_xaxes=True, row_heights=[0.3, 0.7], vertical_spacing=0.06)
    figure.add_trace(go.Bar(
        x=list(range(len(shown_tokens))), y=mean, name="mean over dims",
        marker={"color": scale_colours(mean, DIVERGING_SCALE if signed else SEQUENTIAL_SCALE,
                                       -1.0 if signed else 0.0, 1.0)},
        customdata=shown_tokens, hovertemplate="%{customdata}: %{y:.3f}<extra>mean</extra>",
        meta={"kind": "table", "records": [{"panel": "mean over dims", "position": i, "token": t, "mean_gate": float(m)}
                                            for i, (t, m) in enumerate(zip(shown_tokens, mean))]},
    ), row=1, col=1)
    last_dim = min(first_dim + max_dims, values.shape[1])
    dims = values[:, first_dim:last_dim].T
    figure.add_trace(labelled_heatmap(
        dims, [f"dim {d}" for d in range(first_dim, last_dim)], shown_tokens, "gate value", "dimension", "token",
        DIVERGING_SCALE if signed else SEQUENTIAL_SCALE, zmin=-1.0 if signed else 0.0, zmax=1.0, name="per dimension"),
        row=2, col=1)
    figure.update_xaxes(**token_ticks(shown_tokens), row=2, col=1)
    figure.update_xaxes(showticklabels=False, row=1, col=1)
    figure.update_yaxes(title="mean", range=[-1.0 if signed else 0.0, 1.0], row=1, col=1)
    figure.update_yaxes(title="dimension", autorange="reversed", row=2, col=1)
    window = values.shape[1] > last_dim - first_dim
    dims_note = f" (dims {first_dim}–{last_dim - 1} of {values.shape[1]})" if window else ""
    figure.update_layout(title=gate_title(entry, label) + dims_note, height=420, showlegend=False,
                         margin={"l": 10, "r": 10, "t": 50, "b": 10})
    return figure


def gate_summary_bars(summary: pd.DataFrame, title: str = "mean gate value over the sample",
                      colours: dict[str, str] | None = None) -> go.Figure:
    """Bars of mean gate value per (model, gate), from a table with columns
    model, gate, layer, tokens, mean, std, pairs."""
    figure = go.Figure()
    for model, rows in summary.groupby("model", sort=False):
        labels = [f"{g} · L{l} · {t}" for g, l, t in zip(rows["gate"], rows["layer"], rows["tokens"])]
        figure.add_trace(go.Bar(
            x=labels, y=rows["mean"], name=str(model), error_y={"type": "data", "array": rows["std"].tolist()},
            marker={"color": colours[str(model)]} if colours and str(model) in colours else None,
            meta={"kind": "table", "records": rows.to_dict("records")},
        ))
    figure.update_layout(title=title, barmode="group", yaxis={"title": "mean gate value"}, height=380,
                         margin={"l": 10, "r": 10, "t": 50, "b": 10})
    return figure
