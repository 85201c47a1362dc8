"""Line and scatter charts over analysis tables: training curves, accuracy by category as dots (the last for the
README's Python API; the app draws it with `nlivis.viz.vega.errors.accuracy_dots`)."""
from __future__ import annotations

from typing import Mapping, Sequence

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from nlivis.viz.common import BELOW_LEGEND, SIDE_LEGEND, empty_figure


def _records(frame: pd.DataFrame) -> list[dict]:
    return frame.to_dict("records")


def _interval_error(rows: pd.DataFrame, value: str, interval: tuple[str, str] | None) -> dict | None:
    """Plotly asymmetric error bars from interval columns (low, high), or None when the table has none."""
    if interval is None or not set(interval) <= set(rows.columns):
        return None
    low, high = interval
    return {"type": "data", "symmetric": False, "array": (rows[high] - rows[value]).tolist(),
            "arrayminus": (rows[value] - rows[low]).tolist(), "thickness": 1.2, "width": 3}


def training_curves(records: Sequence[Mapping], step: str = "step") -> go.Figure:
    """Loss (left) and accuracy (right) against the step, from metrics.jsonl lines; pairs/s when logged."""
    frame = pd.DataFrame([dict(r) for r in records])
    if frame.empty or step not in frame:
        return empty_figure("no metrics logged yet")
    loss_columns = [c for c in frame.columns if "loss" in c and pd.api.types.is_numeric_dtype(frame[c])]
    accuracy_columns = [c for c in frame.columns if ("acc" in c) and pd.api.types.is_numeric_dtype(frame[c])]
    speed_columns = [c for c in frame.columns if ("per_s" in c or "pairs_per" in c) and pd.api.types.is_numeric_dtype(frame[c])]
    panels = [("loss", loss_columns), ("accuracy", accuracy_columns), ("pairs / s", speed_columns)]
    panels = [p for p in panels if p[1]]
    if not panels:
        return empty_figure("metrics logged so far have no loss or accuracy")
    figure = make_subplots(rows=1, cols=len(panels), subplot_titles=[p[0] for p in panels])
    for i, (_, columns) in enumerate(panels):
        for column in columns:
            rows = frame[[step, column]].dropna()
            figure.add_trace(go.Scatter(
                x=rows[step].tolist(), y=rows[column].tolist(), mode="lines+markers" if len(rows) < 30 else "lines",
                name=column, meta={"kind": "table", "records": _records(rows)},
            ), row=1, col=i + 1)
        figure.update_xaxes(title=step, row=1, col=i + 1)
    figure.update_layout(height=320, margin={"l": 10, "r": 10, "t": 50, "b": 10}, legend=BELOW_LEGEND)
    return figure


DOT_ROW_PIXELS = 26
"""Height per category of `accuracy_dots`: one row per category however many models, so 44 categories fit."""


def accuracy_dots(table: pd.DataFrame, category: str, group: str = "model", accuracy: str = "accuracy",
                  interval: tuple[str, str] = ("ci_low", "ci_high"), count: str = "count",
                  baseline: str | None = "majority_accuracy", title: str = "accuracy by category",
                  colours: Mapping[str, str] | None = None, axis_title: str = "accuracy") -> go.Figure:
    """Accuracy per category as dots with their 95% interval, one row per category (most pairs first) and one
    dot per model, side by side within the row (in the model's colour); the majority-label baseline as a
    black tick. Reads where grouped bars of many categories and models overlap. Any share with an interval reads
    the same way (`axis_title`: e.g. a failure rate)."""
    if table.empty:
        return empty_figure("nothing to compare")
    order = (table.groupby(category, sort=False)[count].max().sort_values(ascending=False, kind="stable").index
             if count in table else list(dict.fromkeys(table[category])))
    position = {value: i for i, value in enumerate(order)}
    groups = list(dict.fromkeys(table[group])) if group in table else [""]
    figure = go.Figure()
    for g_index, (name, rows) in enumerate(table.groupby(group, sort=False) if group in table else [("", table)]):
        offset = (g_index - (len(groups) - 1) / 2) * min(0.8 / max(1, len(groups)), 0.2)
        y = [position[value] + offset for value in rows[category]]
        counts = rows[count].tolist() if count in rows else [None] * len(rows)
        figure.add_trace(go.Scatter(
            x=rows[accuracy].tolist(), y=y, mode="markers", name=str(name) or "accuracy",
            marker={"size": 9, **({"color": colours[str(name)]} if colours and str(name) in colours else {})},
            error_x=_interval_error(rows, accuracy, interval),
            customdata=[[c, n] for c, n in zip(rows[category].astype(str), counts)],
            hovertemplate="%{customdata[0]}: %{x:.1%} (n=%{customdata[1]})<extra>" + str(name) + "</extra>",
            meta={"kind": "table", "records": _records(rows)}))
    if baseline and baseline in table.columns:
        majority = table.drop_duplicates(category)
        figure.add_trace(go.Scatter(
            x=majority[baseline].tolist(), y=[position[v] for v in majority[category]], mode="markers",
            name="majority label (baseline)", marker={"symbol": "line-ns-open", "size": 18, "color": "black",
                                                      "line": {"width": 2}},
            hovertemplate="%{x:.1%}<extra>majority label</extra>", meta={"kind": "overlay"}))
    labels = [f"{value} (n={int(table[table[category] == value][count].max())})" if count in table else str(value)
              for value in order]
    height = max(300, 140 + DOT_ROW_PIXELS * len(order))
    # the x axis (its title and ticks) is on top, under the chart's title: the title is pinned to the figure's top
    # edge and the margin holds both (the axis title was printed over the chart title)
    figure.update_layout(
        title={"text": title, "yref": "container", "y": 1.0 - 14 / height, "yanchor": "top"}, height=height,
        xaxis={"range": [0, 1.04], "title": {"text": axis_title, "standoff": 6}, "tickformat": ".0%", "side": "top",
               "tickvals": [0, 0.2, 0.4, 0.6, 0.8, 1.0]},
        yaxis={"tickmode": "array", "tickvals": list(range(len(order))), "ticktext": labels, "autorange": "reversed",
               "automargin": True, "tickfont": {"size": 12}},
        margin={"l": 10, "r": 10, "t": 110, "b": 10}, legend=SIDE_LEGEND, hovermode="closest")
    return figure
