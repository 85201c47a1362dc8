"""Attribution figures as Vega-Lite specs: token strips per method for one pair (and the attention summary per
layer), and over a split the faithfulness bars, the agreement (Kendall τ) boxes and the plausibility bars.

Strips are one heatmap over token slots: the premise's tokens, a "|" slot, then the hypothesis's, one row per
method. Each row is scaled by its largest |score| so methods with different units share one colour scale (signed
methods span −1…1 on a diverging scale, red supporting the class; unsigned ones 0…1); the hover and the CSV give
the raw score.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

import pandas as pd

from nlivis.viz.vega.common import (RULE, SCHEMA, field, frame_records, group_hues, interval_rule, message_spec,
                                    token_axis, visible_tokens)

STRIP_ROW_PIXELS = 30
STRIPS_PIXELS = 140
"""The least height of the strips: the colour bar's (120 px) and its labels, which a one- or two-row strip would cut."""
SEPARATOR = "|"
"""The label of the empty slot between the premise's tokens and the hypothesis's."""


def model_colours(models: Sequence[str], colours: Mapping[str, str] | None) -> dict[str, Any]:
    """A colour encoding by model: each model's colour on every page, else the palette's next one."""
    return {"field": "model", "type": "nominal", "title": "model",
            "scale": {"domain": list(models), "range": group_hues(models, colours)}}


def strip_records(rows: Mapping[str, tuple[Sequence[float], Sequence[float]]], premise_tokens: Sequence[str],
                  hypothesis_tokens: Sequence[str], value_name: str) -> list[dict[str, Any]]:
    """One record per (row, sentence, position): its token, raw score, the score over the row's largest |score|
    (`scaled`) and its slot on the shared axis (the hypothesis's start after the separator)."""
    found: list[dict[str, Any]] = []
    for name, sides in rows.items():
        largest = max([abs(float(v)) for side in sides for v in side] or [0.0])
        for offset, sentence, tokens, scores in ((0, "premise", premise_tokens, sides[0]),
                                                 (len(premise_tokens) + 1, "hypothesis", hypothesis_tokens, sides[1])):
            for position, (token, score) in enumerate(zip(visible_tokens(tokens), scores)):
                found.append({"row": name, "sentence": sentence, "position": position, "token": token,
                              value_name: float(score), "scaled": float(score) / largest if largest > 0 else 0.0,
                              "slot": offset + position})
    return found


def token_strips(rows: Mapping[str, tuple[Sequence[float], Sequence[float]]], premise_tokens: Sequence[str],
                 hypothesis_tokens: Sequence[str], title: str, value_name: str = "score") -> dict[str, Any]:
    """Rows name → (premise scores, hypothesis scores), drawn as one strip per row over the premise's tokens then
    the hypothesis's (named on the top axis). Every row is divided by its largest |score| over both sentences
    (colour); the raw score is in the hover and in the CSV (one record per row, sentence, position and token)."""
    premise, hypothesis = [str(t) for t in premise_tokens], [str(t) for t in hypothesis_tokens]
    slots = [*premise, SEPARATOR, *hypothesis]
    x = {"field": "slot", "type": "ordinal", "scale": {"domain": list(range(len(slots)))},
         "axis": {**token_axis(slots), "labelFontSize": 11, "grid": False}}
    middles = [(len(premise) - 1) / 2, len(premise) + 1 + (len(hypothesis) - 1) / 2]
    cells = {"mark": {"type": "rect"},
             "encoding": {"x": x, "y": {"field": "row", "type": "nominal", "sort": list(rows), "title": None},
                          "color": {"field": "scaled", "type": "quantitative", "title": ["score /", "max |score|"],
                                    "scale": {"scheme": "redblue", "reverse": True, "domain": [-1, 1]},
                                    "legend": {"gradientLength": 120, "direction": "vertical"}},
                          "tooltip": [{"field": "row", "type": "nominal"}, {"field": "sentence", "type": "nominal"},
                                      {"field": "token", "type": "nominal"}, {"field": "position", "type": "ordinal"},
                                      {"field": value_name, "type": "quantitative", "format": "+.4g"},
                                      {"field": "scaled", "title": "score / max |score|", "type": "quantitative",
                                       "format": "+.2f"}]}}
    names = {"mark": {"type": "text", "opacity": 0}, "data": {"values": [{"slot": 0}]},
             "encoding": {"x": {"field": "slot", "type": "ordinal",
                                "axis": {"orient": "top", "title": None, "values": [round(m) for m in middles],
                                         "labelExpr": f"datum.value == {round(middles[0])} ? 'premise' : 'hypothesis'",
                                         "ticks": False, "domain": False, "grid": False, "labelFontWeight": "bold",
                                         "labelAngle": 0}}}}
    return {"$schema": SCHEMA, "title": title, "data": {"values": strip_records(rows, premise, hypothesis, value_name)},
            "width": "container", "height": {"step": max(STRIP_ROW_PIXELS, STRIPS_PIXELS // max(1, len(rows)))},
            "layer": [cells, names],
            "resolve": {"axis": {"x": "independent"}}}


def faithfulness_bars(table: pd.DataFrame, metric: str, title: str, colours: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Bars of one AOPC metric ("comprehensiveness" or "sufficiency") per method, one colour per model beside each
    other, with the bootstrap interval as a whisker (`faithfulness.faithfulness_table` columns)."""
    if table.empty:
        return message_spec("no faithfulness to show", height=80)
    low, high = f"{metric}_low", f"{metric}_high"
    rows = table[["model", "method", metric, low, high, "pairs"]].assign(model=table["model"].astype(str))
    models, methods = list(dict.fromkeys(rows["model"])), list(dict.fromkeys(rows["method"]))
    x = {"field": "method", "type": "nominal", "sort": methods, "title": None, "axis": {"labelAngle": -30}}
    offset = {"field": "model", "type": "nominal", "sort": models}
    hover = [{"field": "model", "type": "nominal"}, {"field": "method", "type": "nominal"},
             *({"field": field(c), "type": "quantitative", "format": ".3f"} for c in (metric, low, high)),
             {"field": "pairs", "type": "quantitative"}]
    bars = {"mark": "bar", "encoding": {"x": x, "xOffset": offset, "y": {"field": field(metric), "type": "quantitative",
                                                                          "title": f"AOPC {metric}", "scale": {"zero": True}},
                                        "color": model_colours(models, colours), "tooltip": hover}}
    whiskers = interval_rule(low, high, "y", x, offset, tooltip=hover)
    better = "higher" if metric == "comprehensiveness" else "lower"
    return {"$schema": SCHEMA, "title": f"{title} ({better} = more faithful)", "data": {"values": frame_records(rows)},
            "width": "container", "height": 420, "layer": [bars, whiskers]}


def agreement_boxes(taus: pd.DataFrame, title: str, colours: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Kendall τ between attention and each salience method, one box per (model, method, measure) with its mean as
    a tick, from a table with columns model, method, measure, tau (one row per pair): Jain & Wallace's figure, with
    the pooled τ beside the sentence-membership baseline and the τ within each sentence."""
    if taus.empty:
        return message_spec("no agreement to show", height=80)
    rows = taus[["model", "method", "measure", "tau"]].assign(
        model=taus["model"].astype(str), comparison=taus["method"].astype(str) + " · " + taus["measure"].astype(str))
    models = list(dict.fromkeys(rows["model"]))
    x = {"field": "comparison", "type": "nominal", "sort": list(dict.fromkeys(rows["comparison"])), "title": None,
         "axis": {"labelAngle": -30}}
    y = {"field": "tau", "type": "quantitative", "title": "Kendall τ", "scale": {"domain": [-1.05, 1.05]}}
    offset = {"field": "model", "type": "nominal", "sort": models}
    boxes = {"mark": {"type": "boxplot", "extent": 1.5, "size": 14},
             "encoding": {"x": x, "xOffset": offset, "y": y, "color": model_colours(models, colours)}}
    means = {"mark": {"type": "tick", "color": RULE, "thickness": 2, "size": 14, "strokeDash": [3, 2]},
             "encoding": {"x": x, "xOffset": offset, "y": {**y, "aggregate": "mean"},
                          "tooltip": [{"field": "model", "type": "nominal"}, {"field": "comparison", "type": "nominal"},
                                      {"field": "tau", "aggregate": "mean", "title": "mean τ", "type": "quantitative",
                                       "format": ".3f"},
                                      {"field": "tau", "aggregate": "count", "title": "pairs", "type": "quantitative"}]}}
    zero = {"mark": {"type": "rule", "color": RULE, "strokeDash": [2, 2]}, "encoding": {"y": {"datum": 0}}}
    return {"$schema": SCHEMA, "title": title, "data": {"values": frame_records(rows)}, "width": "container",
            "height": 480, "layer": [zero, boxes, means]}


PLAUSIBILITY_METRICS = {"auprc": "token AUPRC", "f1": "F1 at the highlight count"}


def plausibility_bars(table: pd.DataFrame, title: str, colours: Mapping[str, str] | None = None) -> dict[str, Any]:
    """AUPRC and F1 at the annotator's highlight count per method, one colour per model, the two metrics side by
    side."""
    if table.empty:
        return message_spec("no plausibility to show", height=80)
    rows = table[["model", "method", *PLAUSIBILITY_METRICS, "plausibility_pairs"]].assign(model=table["model"].astype(str))
    models, methods = list(dict.fromkeys(rows["model"])), list(dict.fromkeys(rows["method"]))

    def panel(metric: str, label: str) -> dict[str, Any]:
        return {"title": label, "width": 36 * len(methods) * max(1, len(models)) // 2 + 120, "height": 260,
                "mark": "bar",
                "encoding": {"x": {"field": "method", "type": "nominal", "sort": methods, "title": None,
                                   "axis": {"labelAngle": -30}},
                             "xOffset": {"field": "model", "type": "nominal", "sort": models},
                             "y": {"field": metric, "type": "quantitative", "title": None, "scale": {"domain": [0, 1]}},
                             "color": model_colours(models, colours),
                             "tooltip": [{"field": "model", "type": "nominal"}, {"field": "method", "type": "nominal"},
                                         {"field": metric, "title": label, "type": "quantitative", "format": ".3f"},
                                         {"field": "plausibility_pairs", "title": "pairs", "type": "quantitative"}]}}
    return {"$schema": SCHEMA, "title": title, "data": {"values": frame_records(rows)},
            "hconcat": [panel(metric, label) for metric, label in PLAUSIBILITY_METRICS.items()]}
