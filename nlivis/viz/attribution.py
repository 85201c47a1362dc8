"""Attribution figures: token strips per method for one pair, the attention summary per layer, and over a
split the faithfulness bars, the agreement (Kendall τ) distributions and the plausibility bars.

Strips are heatmaps over token positions, premise and hypothesis side by side, one row per method. Each
row is scaled by its largest |score| so methods with different units share one colour scale (signed
methods span −1…1 on a diverging scale; unsigned ones 0…1); the hover and the CSV give the raw score.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from nlivis.viz.common import BELOW_LEGEND, CATEGORY_COLOURS, DIVERGING_SCALE, SIDE_LEGEND, token_ticks


def _colour(colours: Mapping[str, str] | None, model: object, index: int) -> str:
    """A model's colour on every page, or the palette's next one for a model `colours` does not name."""
    return (colours or {}).get(str(model)) or CATEGORY_COLOURS[index % len(CATEGORY_COLOURS)]


def _scaled(values: Sequence[float], scale: float) -> list[float]:
    return [float(v) / scale if scale > 0 else 0.0 for v in values]


def token_strips(rows: Mapping[str, tuple[Sequence[float], Sequence[float]]], premise_tokens: Sequence[str],
                 hypothesis_tokens: Sequence[str], title: str, value_name: str = "score") -> go.Figure:
    """Rows name → (premise scores, hypothesis scores), drawn as two heatmaps (premise | hypothesis).

    Every row is divided by its largest |score| over both sentences (colour), the raw score is in the hover
    and in the CSV (`figure_data`: one record per row, side, position and token)."""
    names = list(rows)
    premise_tokens, hypothesis_tokens = [str(t) for t in premise_tokens], [str(t) for t in hypothesis_tokens]
    widths = [max(1, len(premise_tokens)), max(1, len(hypothesis_tokens))]
    figure = make_subplots(rows=1, cols=2, column_widths=widths, horizontal_spacing=0.04,
                           subplot_titles=("premise", "hypothesis"))
    records: list[dict[str, Any]] = []
    for column, (side, tokens) in enumerate((("premise", premise_tokens), ("hypothesis", hypothesis_tokens)), start=1):
        z, raw = [], []
        for name in names:
            scores = list(rows[name][column - 1])
            scale = max([abs(float(v)) for side_scores in rows[name] for v in side_scores] or [0.0])
            z.append(_scaled(scores, scale))
            raw.append([float(v) for v in scores])
            records += [{"row": name, "sentence": side, "position": i, "token": t, value_name: float(v)}
                        for i, (t, v) in enumerate(zip(tokens, scores))]
        hover = np.array([[f"{name}<br>{t}: {v:+.4g}" for t, v in zip(tokens, values)] for name, values in zip(names, raw)],
                         dtype=object)
        figure.add_trace(go.Heatmap(
            z=z, x=list(range(len(tokens))), y=list(range(len(names))), zmin=-1.0, zmax=1.0,
            colorscale=DIVERGING_SCALE, reversescale=True, showscale=column == 2,
            colorbar={"title": {"text": "score /<br>max |score|"}, "lenmode": "pixels", "len": 140, "thickness": 14,
                      "yanchor": "top", "y": 1},
            customdata=hover if hover.size else None,
            hovertemplate="%{customdata}<extra></extra>", name=side,
            meta={"kind": "table", "records": records if column == 2 else []}), row=1, col=column)
        figure.update_xaxes(**{**token_ticks(tokens), "tickfont": {"size": 11}}, row=1, col=column)
        figure.update_yaxes(tickmode="array", tickvals=list(range(len(names))), ticktext=names if column == 1 else [""] * len(names),
                            autorange="reversed", row=1, col=column)
    # at least the colour bar's height, so a one- or two-row strip (the attention summary) is not squashed
    figure.update_layout(title=title, height=max(260, 130 + 34 * len(names)), margin={"l": 10, "r": 10, "t": 70, "b": 10})
    return figure


def faithfulness_bars(table: pd.DataFrame, metric: str, title: str, colours: Mapping[str, str] | None = None) -> go.Figure:
    """Bars of one AOPC metric ("comprehensiveness" or "sufficiency") per method, one colour per model, with
    the bootstrap interval as error bars (`faithfulness.faithfulness_table` columns)."""
    figure = go.Figure()
    for index, (model, rows) in enumerate(table.groupby("model", sort=False)):
        figure.add_trace(go.Bar(
            x=list(rows["method"]), y=list(rows[metric]), name=str(model),
            marker={"color": _colour(colours, model, index)},
            error_y={"type": "data", "symmetric": False, "array": list(rows[f"{metric}_high"] - rows[metric]),
                     "arrayminus": list(rows[metric] - rows[f"{metric}_low"])},
            hovertemplate="%{x}: %{y:.3f}<extra>" + str(model) + "</extra>",
            meta={"kind": "table", "records": rows[["model", "method", metric, f"{metric}_low", f"{metric}_high", "pairs"]]
                  .to_dict("records")}))
    better = "higher" if metric == "comprehensiveness" else "lower"
    figure.update_layout(title=f"{title} ({better} = more faithful)", barmode="group", yaxis_title=f"AOPC {metric}",
                         legend=BELOW_LEGEND, height=420, margin={"l": 10, "r": 10, "t": 50, "b": 120})
    return figure


def agreement_boxes(taus: pd.DataFrame, title: str, colours: Mapping[str, str] | None = None) -> go.Figure:
    """Kendall τ between attention and each salience method, one box per (model, method, measure), from a table
    with columns model, method, measure, tau (one row per pair): Jain & Wallace's figure, with the pooled τ beside
    the sentence-membership baseline and the τ within each sentence."""
    figure = go.Figure()
    for index, (model, rows) in enumerate(taus.groupby("model", sort=False)):
        figure.add_trace(go.Box(
            x=list(rows["method"] + " · " + rows["measure"]), y=list(rows["tau"]), name=str(model),
            marker={"color": _colour(colours, model, index)}, boxmean=True,
            meta={"kind": "table", "records": rows.to_dict("records")}))
    figure.add_hline(y=0.0, line={"color": "grey", "dash": "dot"})
    figure.update_xaxes(automargin=True, tickangle=-30, tickfont={"size": 12})
    figure.update_layout(title=title, boxmode="group", yaxis={"title": "Kendall τ", "range": [-1.05, 1.05]},
                         legend=SIDE_LEGEND, height=480, margin={"l": 10, "r": 10, "t": 50, "b": 10})
    return figure


def plausibility_bars(table: pd.DataFrame, title: str, colours: Mapping[str, str] | None = None) -> go.Figure:
    """AUPRC and F1 at the annotator's highlight count per method, one colour per model."""
    figure = make_subplots(rows=1, cols=2, subplot_titles=("token AUPRC", "F1 at the highlight count"))
    for index, (model, rows) in enumerate(table.groupby("model", sort=False)):
        colour = _colour(colours, model, index)
        for column, metric in enumerate(("auprc", "f1"), start=1):
            figure.add_trace(go.Bar(
                x=list(rows["method"]), y=list(rows[metric]), name=str(model), legendgroup=str(model),
                showlegend=column == 1, marker={"color": colour},
                hovertemplate="%{x}: %{y:.3f}<extra>" + str(model) + "</extra>",
                meta={"kind": "table", "records": rows[["model", "method", metric, "plausibility_pairs"]].to_dict("records")}),
                row=1, col=column)
    figure.update_yaxes(range=[0, 1])
    figure.update_layout(title=title, barmode="group", legend=BELOW_LEGEND, height=420,
                         margin={"l": 10, "r": 10, "t": 70, "b": 120})
    return figure
