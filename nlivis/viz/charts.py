"""Bar, line and scatter charts over analysis tables: probabilities, accuracy by tag, projections, training curves."""
from __future__ import annotations

from typing import Mapping, Sequence

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from nlivis.viz.common import BELOW_LEGEND, CATEGORY_COLOURS, SIDE_LEGEND, empty_figure, percent_ticks


def _records(frame: pd.DataFrame) -> list[dict]:
    return frame.to_dict("records")


BAR_TEXT_MAX_MODELS = 3
"""Above this many models the values are left to the hover: printed over narrow bars they overlap."""


def probability_bars(probabilities: Mapping[str, Sequence[float]], labels: Sequence[str], title: str = "class probabilities",
                     colours: Mapping[str, str] | None = None) -> go.Figure:
    """One group of bars per class, one bar per model (in its colour from `colours`), so models compare side by side."""
    print_values = len(probabilities) <= BAR_TEXT_MAX_MODELS
    figure = go.Figure()
    for model, probs in probabilities.items():
        values = [float(p) for p in probs]
        if len(values) != len(labels):
            raise ValueError(f"{model}: {len(values)} probabilities for {len(labels)} labels {list(labels)}")
        figure.add_trace(go.Bar(
            x=list(labels), y=values, name=str(model), text=[f"{v:.2f}" for v in values] if print_values else None,
            textposition="outside", hovertemplate="%{x}: %{y:.3f}", marker=_marker(colours, model),
            meta={"kind": "table", "records": [{"model": model, "label": l, "probability": v} for l, v in zip(labels, values)]},
        ))
    figure.update_layout(title=title, barmode="group", yaxis={"range": [0, 1.1], "title": "probability"},
                         height=300, margin={"l": 10, "r": 10, "t": 50, "b": 10}, legend=BELOW_LEGEND)
    return figure


def _marker(colours: Mapping[str, str] | None, name: object) -> dict | None:
    """The marker of a model's series: its colour on every page (`nlivis.viz.common.model_colours`)."""
    colour = (colours or {}).get(str(name))
    return {"color": colour} if colour else None


def _interval_error(rows: pd.DataFrame, value: str, interval: tuple[str, str] | None) -> dict | None:
    """Plotly asymmetric error bars from interval columns (low, high), or None when the table has none."""
    if interval is None or not set(interval) <= set(rows.columns):
        return None
    low, high = interval
    return {"type": "data", "symmetric": False, "array": (rows[high] - rows[value]).tolist(),
            "arrayminus": (rows[value] - rows[low]).tolist(), "thickness": 1.2, "width": 3}


def accuracy_by_tag_bars(table: pd.DataFrame, group: str | None = None, tag: str = "tag", accuracy: str = "accuracy",
                         count: str = "count", title: str = "accuracy by annotation tag",
                         interval: tuple[str, str] | None = ("ci_low", "ci_high"),
                         baseline: str | None = "majority_accuracy", colours: Mapping[str, str] | None = None) -> go.Figure:
    """Horizontal bars of accuracy per tag (one series per value of `group`, e.g. matched/mismatched or
    model), the tag's pair count shown beside each bar (small counts mean noisy accuracies), the 95%
    interval as error bars and the majority-label baseline as a black tick per tag (where the table has
    those columns)."""
    if table.empty:
        return empty_figure("no tagged pairs to show")
    figure = go.Figure()
    groups = table.groupby(group, sort=False) if group else [("", table)]
    for name, rows in groups:
        counts = rows[count].tolist() if count in rows else [None] * len(rows)
        figure.add_trace(go.Bar(
            y=rows[tag].astype(str).tolist(), x=rows[accuracy].tolist(), orientation="h", name=str(name) or "accuracy",
            text=[f"{a:.1%} (n={c})" if c is not None else f"{a:.1%}" for a, c in zip(rows[accuracy], counts)],
            textposition="inside", insidetextanchor="start", error_x=_interval_error(rows, accuracy, interval),
            marker=_marker(colours, name),
            meta={"kind": "table", "records": _records(rows)},
        ))
    if baseline and baseline in table.columns:
        majority = table.drop_duplicates(tag)
        label_of = majority["majority_label"] if "majority_label" in majority else [""] * len(majority)
        figure.add_trace(go.Scatter(
            y=majority[tag].astype(str).tolist(), x=majority[baseline].tolist(), mode="markers",
            name="majority label (baseline)", marker={"symbol": "line-ns-open", "size": 22, "color": "black",
                                                      "line": {"width": 2}},
            customdata=list(label_of), hovertemplate="%{y}: always %{customdata} → %{x:.1%}<extra></extra>",
        ))
    n_tags = table[tag].nunique()
    n_series = max(1, sum(1 for trace in figure.data if trace.type == "bar"))
    height = max(300, 80 + 28 * n_tags * n_series)
    figure.update_traces(textfont={"size": 12}, selector={"type": "bar"})
    # the axis runs a little past 100% so a bar, interval or majority tick at 100% sits inside the plot, and the
    # legend keeps a fixed distance below it (a fraction of a tall chart's height left hundreds of blank pixels)
    figure.update_layout(title=title, barmode="group",
                         xaxis={"range": [0, 1.04], "title": "accuracy", "tickformat": ".0%", "tickfont": {"size": 12},
                                "tickvals": [0, 0.2, 0.4, 0.6, 0.8, 1.0]},
                         yaxis={"autorange": "reversed", "tickfont": {"size": 14}, "automargin": True},
                         height=height, margin={"l": 10, "r": 10, "t": 50, "b": 10},
                         legend={**BELOW_LEGEND, "y": -LEGEND_BELOW_PIXELS / (height - 60)},
                         uniformtext={"minsize": 11, "mode": "hide"})  # a label too long for its bar is left out, not shrunk
    return figure


LEGEND_BELOW_PIXELS = 60
"""How far below a horizontal bar chart's plot its legend starts: under the axis title, whatever the height."""


def accuracy_interval_bars(table: pd.DataFrame, category: str = "model", accuracy: str = "accuracy",
                           interval: tuple[str, str] = ("ci_low", "ci_high"), baseline: str | None = "majority_accuracy",
                           title: str = "accuracy", colours: Mapping[str, str] | None = None) -> go.Figure:
    """One bar per row (e.g. per model, each in its colour from `colours`) with its 95% interval, and the majority-label baseline as a dashed
    line (one line when every row shares it, as models scored on one split do; else a tick per bar)."""
    if table.empty:
        return empty_figure("nothing to compare")
    categories = table[category].astype(str).tolist()
    figure = go.Figure(go.Bar(
        x=categories, y=table[accuracy].tolist(), name="accuracy", error_y=_interval_error(table, accuracy, interval),
        text=[f"{a:.1%}" for a in table[accuracy]], textposition="inside",
        marker={"color": [(colours or {}).get(c, "#1f77b4") for c in categories]} if colours else None,
        meta={"kind": "table", "records": _records(table)},
    ))
    if baseline and baseline in table.columns:
        values = table[baseline].dropna().unique()
        label = table["majority_label"].iloc[0] if "majority_label" in table.columns else ""
        if len(values) == 1:  # said in the title: a text on the line sat over the first bar
            figure.add_hline(y=float(values[0]), line_dash="dash", line_color="black")
            title = f"{title} · majority label: {label}, {values[0]:.1%}"
        else:
            figure.add_trace(go.Scatter(x=categories, y=table[baseline].tolist(), mode="markers", name="majority label",
                                        marker={"symbol": "line-ew-open", "size": 30, "color": "black", "line": {"width": 2}}))
    figure.update_xaxes(automargin=True, tickangle=-30 if sum(map(len, categories)) > 120 else 0)
    figure.update_layout(title=title, yaxis={"range": [0, 1], "tickformat": ".0%", "title": "accuracy"}, height=360,
                         margin={"l": 10, "r": 10, "t": 50, "b": 10}, legend=BELOW_LEGEND, showlegend=False)
    return figure


def delta_bars(table: pd.DataFrame, label: str = "variant", tag: str = "tag", delta: str = "delta",
               significant: str | None = "significant", title: str = "accuracy change vs the full model") -> go.Figure:
    """Per-tag accuracy differences (variant − full) as bars, each variant in a hue of its own; significant ones
    drawn solid, others hatched in their variant's hue (faded bars of different variants all looked alike)."""
    if table.empty:
        return empty_figure("no per-tag differences to show")
    figure = go.Figure()
    for position, (name, rows) in enumerate(table.groupby(label, sort=False)):
        flags = rows[significant] if significant in rows else [True] * len(rows)
        colour = CATEGORY_COLOURS[position % len(CATEGORY_COLOURS)]
        figure.add_trace(go.Bar(
            y=rows[tag].astype(str).tolist(), x=rows[delta].tolist(), orientation="h", name=str(name),
            marker={"color": colour, "line": {"color": colour, "width": 1},
                    "pattern": {"shape": ["" if (significant is None or bool(flag)) else "/" for flag in flags],
                                "fillmode": "replace", "fgcolor": colour, "size": 6, "solidity": 0.4}},
            meta={"kind": "table", "records": _records(rows)},
        ))
    values = table[delta].astype(float)
    figure.update_layout(title=title + " (hatched: not significant)", barmode="group",
                         xaxis={"title": "accuracy difference", **percent_ticks(min(values.min(), 0.0), max(values.max(), 0.0)),
                                "automargin": True},
                         yaxis={"autorange": "reversed", "automargin": True},
                         height=max(300, 80 + 24 * table[tag].nunique() * max(1, len(figure.data))),
                         margin={"l": 10, "r": 10, "t": 50, "b": 10}, legend=SIDE_LEGEND)
    return figure


def difference_intervals(table: pd.DataFrame, label: str = "variant", difference: str = "difference",
                         low: str = "CI low", high: str = "CI high", significant: str | None = "significant",
                         noise: float | None = None, title: str = "accuracy difference vs the reference") -> go.Figure:
    """One horizontal bar per variant: its accuracy difference with the 95% paired-bootstrap interval as
    error bar (faded when McNemar's test finds it not significant); `noise` shades ± the gap between two
    seeds of the full model, so a bar inside the band is within seed noise."""
    rows = table.dropna(subset=[difference]) if difference in table else table.iloc[0:0]
    if rows.empty:
        return empty_figure("no paired differences to show")
    opacity = [1.0 if (significant is None or significant not in rows or bool(s)) else 0.35
               for s in (rows[significant] if significant in rows else [True] * len(rows))]
    values = rows[difference].astype(float)
    figure = go.Figure(go.Bar(  # the value goes in the bar's label: printed at the bar's end the whisker crossed it
        y=[f"{name} ({v:+.1%})".replace("(-", "(−") for name, v in zip(rows[label].astype(str), values)], x=values.tolist(),
        orientation="h", name="difference",
        marker={"opacity": opacity, "color": ["#2a9d8f" if v >= 0 else "#e76f51" for v in values]},
        error_x={"type": "data", "symmetric": False, "array": (rows[high].astype(float) - values).tolist(),
                 "arrayminus": (values - rows[low].astype(float)).tolist()},
        meta={"kind": "table", "records": _records(rows)},
    ))
    if noise is not None:
        figure.add_vrect(x0=-noise, x1=noise, fillcolor="grey", opacity=0.15, line_width=0,
                         annotation_text="seed noise", annotation_position="top left")
    figure.add_vline(x=0, line_width=1, line_color="black")
    ends = [*rows[low].astype(float), *rows[high].astype(float), *values, 0.0, *((-noise, noise) if noise is not None else ())]
    figure.update_layout(title=title + (" (faded: not significant)" if significant else ""),
                         xaxis={"title": "accuracy difference (variant − reference)", **percent_ticks(min(ends), max(ends)),
                                "automargin": True},
                         yaxis={"autorange": "reversed", "automargin": True}, height=max(260, 90 + 36 * len(rows)),
                         margin={"l": 10, "r": 10, "t": 50, "b": 10}, showlegend=False)
    return figure


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


def comparison_bars(table: pd.DataFrame, category: str, value: str, group: str | None = None,
                    title: str = "", value_format: str = ".1%", colours: Mapping[str, str] | None = None) -> go.Figure:
    """Plain grouped bars (e.g. dev accuracy per variant, ours vs reported)."""
    if table.empty:
        return empty_figure("nothing to compare")
    figure = go.Figure()
    groups = table.groupby(group, sort=False) if group else [(value, table)]
    for name, rows in groups:
        figure.add_trace(go.Bar(
            x=rows[category].astype(str).tolist(), y=rows[value].tolist(), name=str(name),
            text=[format(v, value_format) for v in rows[value]], textposition="outside", marker=_marker(colours, name),
            meta={"kind": "table", "records": _records(rows)},
        ))
    categories = list(dict.fromkeys(table[category].astype(str)))
    ticktext = [c.replace(" · ", "<br>") for c in categories]  # "a · b · c" labels wrap at the dots
    widest = max(len(line) for text in ticktext for line in text.split("<br>"))
    crowded = len(categories) * widest > 120  # e.g. eight "diin-no_self_attention-snli-small" bars
    figure.update_xaxes(tickmode="array", tickvals=categories, ticktext=ticktext, tickangle=-30 if crowded else 0,
                        automargin=True)
    # a tilted label hangs left of its bar: the left margin leaves room for the first one
    left = int(5.5 * len(ticktext[0].split("<br>")[0])) if crowded else 10
    figure.update_layout(title=title, barmode="group", height=340 + (8 * widest if crowded else 0),
                         margin={"l": left, "r": 10, "t": 50, "b": 10}, legend=SIDE_LEGEND,
                         yaxis={"tickformat": value_format.replace("f", ""), "automargin": True})
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
