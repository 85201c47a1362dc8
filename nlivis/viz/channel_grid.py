"""DIIN's interaction space as a grid of channel maps (in the spirit of the paper's Figure 2, viridis)."""
from __future__ import annotations

import math
from typing import Literal, Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from nlivis.models.trace import FeatureMaps
from nlivis.viz.common import SEQUENTIAL_SCALE, labelled_heatmap, real_length, token_ticks

ChannelSelection = Literal["index", "max_activation", "variance"]
SELECTIONS: tuple[str, ...] = ("index", "max_activation", "variance")
"""index: the channels asked for (or the first k); max_activation: the k with the highest value in the
real region; variance: the k that vary most across the real region."""


def real_maps(entry: FeatureMaps, index: int, premise_tokens: Sequence[str], hypothesis_tokens: Sequence[str]) -> np.ndarray:
    """One pair's maps [C, P', H'], cut to the real tokens while the axes still index tokens."""
    maps = entry.maps[index].detach().float().cpu().numpy()
    if entry.token_axes:
        maps = maps[:, : real_length(premise_tokens, maps.shape[1]), : real_length(hypothesis_tokens, maps.shape[2])]
    return maps


def select_channels(maps: np.ndarray, selection: ChannelSelection = "index", k: int = 8,
                    channels: Sequence[int] | None = None) -> list[int]:
    """Which channels of maps [C, P', H'] to draw.

    "index" keeps `channels` (in range, in the order given) or the first k; the other two rank the
    channels by their maximum or their variance over the map and keep the top k (ties by index).
    """
    n_channels = int(maps.shape[0])
    k = max(0, min(int(k), n_channels))
    if selection == "index":
        if channels is None:
            return list(range(k))
        chosen = [int(c) for c in channels if 0 <= int(c) < n_channels]
        return list(dict.fromkeys(chosen))
    if selection not in SELECTIONS:
        raise ValueError(f"channel selection must be one of {SELECTIONS}, got {selection!r}")
    if maps[0].size == 0:
        return list(range(k))
    flat = maps.reshape(n_channels, -1)
    score = flat.max(axis=1) if selection == "max_activation" else flat.var(axis=1)
    order = sorted(range(n_channels), key=lambda c: (-float(score[c]), c))
    return order[:k]


def channel_grid(entry: FeatureMaps, index: int, premise_tokens: Sequence[str], hypothesis_tokens: Sequence[str],
                 channels: Sequence[int] | None = None, selection: ChannelSelection = "index", k: int = 8,
                 columns: int = 4, shared_scale: bool = False, label: str = "") -> go.Figure:
    """A grid of k channel maps of one pair (premise rows × hypothesis columns), viridis.

    With `shared_scale` every panel uses one colour range (compare channels); otherwise each panel
    has its own (see each channel's pattern, as the paper's figure does).
    """
    maps = real_maps(entry, index, premise_tokens, hypothesis_tokens)
    chosen = select_channels(maps, selection, k, channels)
    n = max(1, len(chosen))
    columns = max(1, min(columns, n))
    rows = math.ceil(n / columns)
    titles = [f"channel {c}" for c in chosen]
    if entry.token_axes:
        row_labels = list(premise_tokens)[: maps.shape[1]]
        col_labels = list(hypothesis_tokens)[: maps.shape[2]]
    else:
        row_labels = [str(i) for i in range(maps.shape[1])]
        col_labels = [str(j) for j in range(maps.shape[2])]
    panel_px = 130 + 12 * min(len(row_labels), 30)
    gap_px = 110 if entry.token_axes else 60  # a row's rotated token ticks and axis title, then the next row's titles
    plot_px = rows * panel_px + (rows - 1) * gap_px
    figure = make_subplots(rows=rows, cols=columns, subplot_titles=titles or ["no channel"], horizontal_spacing=0.06,
                           vertical_spacing=gap_px / plot_px if rows > 1 else 0.08)
    lo = float(maps[chosen].min()) if chosen and maps[chosen].size else 0.0
    hi = float(maps[chosen].max()) if chosen and maps[chosen].size else 1.0
    for i, channel in enumerate(chosen):
        r, c = divmod(i, columns)
        trace = labelled_heatmap(
            maps[channel], row_labels, col_labels, "activation", "premise" if entry.token_axes else "row",
            "hypothesis" if entry.token_axes else "column", SEQUENTIAL_SCALE,
            zmin=lo if shared_scale else None, zmax=hi if shared_scale else None,
            coloraxis="coloraxis" if shared_scale else None, showscale=False, name=f"channel {channel}")
        figure.add_trace(trace, row=r + 1, col=c + 1)
        x_axis = {"title": "hypothesis" if r == rows - 1 else None}
        y_axis = {"autorange": "reversed", "title": "premise" if c == 0 else None}
        if entry.token_axes:
            x_axis |= token_ticks(col_labels)
            y_axis |= token_ticks(row_labels, axis="y")
            x_axis["tickfont"] = y_axis["tickfont"] = {"size": 9}
            y_axis["showticklabels"] = c == 0  # every panel has the premise down: its words once, at the left
        figure.update_xaxes(**x_axis, row=r + 1, col=c + 1)
        figure.update_yaxes(**y_axis, row=r + 1, col=c + 1)
    if shared_scale:
        figure.update_layout(coloraxis={"colorscale": SEQUENTIAL_SCALE, "cmin": lo, "cmax": hi})
    size_note = "" if entry.token_axes else f" · {maps.shape[1]}×{maps.shape[2]} after pooling (axes are positions, not tokens)"
    title = " · ".join(p for p in (label, entry.stage, f"{len(chosen)} of {maps.shape[0]} channels by {selection.replace('_', ' ')}") if p)
    figure.update_layout(title=title + size_note, height=plot_px + 80,
                         margin={"l": 10, "r": 10, "t": 70, "b": 10})
    return figure
