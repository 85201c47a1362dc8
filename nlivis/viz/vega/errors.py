"""The Error analysis page's figures as Vega-Lite specs: accuracy per model with its interval and the majority
baseline, the models' confusion matrices (one chart) whose clicked cell lists its pairs, accuracy per tag as grouped
horizontal bars, and accuracy (or any share with an interval) per category as dots.

Pure functions, frames and arrays in, a JSON dict out (no altair: it is slow to import); the page's look is written
in when the spec is drawn (`nlivis.app.components.figures.show`). Each model keeps its colour (`colours`, as
`nlivis.viz.common.model_colours` gives them on every page)."""
from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from nlivis.viz.vega.bars import tooltip
from nlivis.viz.vega.common import (RULE, SCHEMA, field, frame_records, group_hues, interval_rule, message_spec,
                                    point_selection, records)

CELL = "cell"
"""The confusion matrices' point selection: a click sets it to the cell's `model`, `gold` and `predicted` labels."""
CELL_FIELDS = ("model", "gold", "predicted")
FRACTION = "fraction of gold"
"""A normalised matrix's value: a cell's share of its gold label's pairs."""
PANEL_PIXELS = 240
"""A confusion matrix's width and height (its cells, without the axes): three labels read as 80-pixel squares, and
three panels with their axes fit beside one another in the page's wide layout."""
HINT = "hint"
"""A data field carrying the tooltip's last line ("click to list them")."""
INTERVAL_COLUMNS = ["ci_low", "ci_high"]
PERCENT_AXIS = {"format": ".0%", "values": [0, 0.2, 0.4, 0.6, 0.8, 1.0]}
DOT_ROW_PIXELS = 26
"""Height per category of `accuracy_dots`: one row per category however many models, so 44 categories fit."""


def group_colour(names: Sequence[str], colours: Mapping[str, str] | None, title: str | None,
                 legend: Mapping[str, Any] | None) -> dict[str, Any]:
    """A colour encoding of the `model` (or other group) field: each name in its colour from `colours`, the others
    in the category palette's order."""
    return {"scale": {"domain": list(names), "range": group_hues(names, colours)}, "title": title,
            "legend": dict(legend) if legend is not None else None}


def whiskers(table: pd.DataFrame, interval: tuple[str, str] | None, across: str,
             position: Mapping[str, Any], offset: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    """A 95%-interval rule from `interval`'s low to high column along the `across` axis ("x" or "y"), at the
    `position` (and `offset`) encoding of its bar or dot; none when the table lacks the columns."""
    if interval is None or not set(interval) <= set(table.columns):
        return []
    return [interval_rule(*interval, across, position, offset, stroke_width=1.2)]


def accuracy_interval_bars(table: pd.DataFrame, category: str = "model", accuracy: str = "accuracy",
                           interval: tuple[str, str] = ("ci_low", "ci_high"), baseline: str | None = "majority_accuracy",
                           title: str = "accuracy", colours: Mapping[str, str] | None = None) -> dict[str, Any]:
    """One bar per row (e.g. per model, in its colour) with its 95% interval and its value printed inside, and the
    majority-label baseline dashed: one line (said in the title) when every row shares it, as models scored on one
    split do; else a tick per bar."""
    if table.empty:
        return message_spec("nothing to compare", height=80)
    rows = table.assign(**{category: table[category].astype(str)})
    categories = list(rows[category])
    x = {"field": field(category), "type": "nominal", "sort": categories, "title": None,
         "axis": {"labelAngle": -30 if sum(map(len, categories)) > 120 else 0, "labelLimit": 300}}
    y = {"field": field(accuracy), "type": "quantitative", "title": "accuracy", "scale": {"domain": [0, 1]},
         "axis": PERCENT_AXIS}
    hover = tooltip([category, accuracy, *interval, "count", "majority_label", baseline or ""], rows,
                    percent=[accuracy, *interval, baseline or ""])
    bars = {"mark": {"type": "bar"}, "encoding": {"x": x, "y": y, "tooltip": hover,
                                                   "color": {"field": field(category), "type": "nominal",
                                                             **group_colour(categories, colours, None, None)}}}
    text = {"mark": {"type": "text", "baseline": "top", "dy": 4, "color": "white", "fontSize": 12},
            "encoding": {"x": x, "y": y, "text": {"field": field(accuracy), "type": "quantitative", "format": ".1%"}}}
    layers: list[dict[str, Any]] = [bars, text, *whiskers(rows, interval, "y", x)]
    if baseline and baseline in rows:
        values = rows[baseline].dropna().unique()
        label = rows["majority_label"].iloc[0] if "majority_label" in rows else ""
        if len(values) == 1:
            layers.append({"mark": {"type": "rule", "color": RULE, "strokeDash": [6, 4], "strokeWidth": 1.5},
                           "encoding": {"y": {"datum": float(values[0])}}})
            title = f"{title} · majority label: {label}, {values[0]:.1%}"
        else:
            layers.append({"mark": {"type": "tick", "color": RULE, "thickness": 2, "orient": "horizontal"},
                           "encoding": {"x": x, "y": {"field": field(baseline), "type": "quantitative"},
                                        "tooltip": hover}})
    return {"$schema": SCHEMA, "title": title, "data": {"values": frame_records(rows)}, "width": "container",
            "height": 360, "layer": layers}


def confusion_cells(name: str, counts: Sequence[Sequence[float]] | np.ndarray, labels: Sequence[str],
                    normalize: bool) -> dict[str, list[Any]]:
    """One model's matrix as data columns, a row per cell: model, gold, predicted, its count of pairs (and with
    `normalize` its fraction of the gold label's pairs), and the tooltip's hint."""
    matrix = np.asarray(counts, dtype=float)
    if matrix.shape != (len(labels), len(labels)):
        raise ValueError(f"{name}'s confusion matrix has shape {matrix.shape}, expected {len(labels)}×{len(labels)} "
                         f"for labels {list(labels)}")
    names = [str(label) for label in labels]
    gold, predicted = np.meshgrid(np.arange(len(names)), np.arange(len(names)), indexing="ij")
    columns: dict[str, list[Any]] = {"model": [name] * matrix.size, "gold": [names[g] for g in gold.ravel()],
                                     "predicted": [names[p] for p in predicted.ravel()],
                                     "pairs": matrix.ravel().astype(int).tolist()}
    if normalize:
        totals = matrix.sum(axis=1, keepdims=True)
        columns[FRACTION] = np.divide(matrix, totals, out=np.zeros_like(matrix), where=totals > 0).ravel().tolist()
    columns[HINT] = ["click to list them"] * matrix.size
    return columns


def confusion_matrices(matrices: Mapping[str, tuple[Sequence[Sequence[float]] | np.ndarray, Sequence[str]]],
                       normalize: bool = False, columns: int = 3) -> dict[str, Any]:
    """Each model's confusion matrix (`matrices`: model → counts, labels), gold labels on rows and predictions on
    columns, each cell's count (or with `normalize` its fraction of the gold label's pairs) printed in it, as ONE
    faceted spec (a panel per model, named above it, `columns` to a row): one Vega view compiles and draws once
    where a chart per model paid that per model (issue 30). The panels share one colour scale (the models read one
    split) and the gold axis of their row; a click on a cell selects its `model`, `gold` and `predicted`
    (selection `CELL`)."""
    data: dict[str, list[Any]] = {}
    for name, (counts, labels) in matrices.items():
        for column, values in confusion_cells(name, counts, labels, normalize).items():
            data.setdefault(column, []).extend(values)
    value = FRACTION if normalize else "pairs"
    names = list(dict.fromkeys(str(label) for _, labels in matrices.values() for label in labels))
    top = max(data.get(value, []), default=0.0)
    x = {"field": "predicted", "type": "nominal", "sort": names, "title": "predicted", "axis": {"labelAngle": 0}}
    y = {"field": "gold", "type": "nominal", "sort": names, "title": "gold"}
    hover = [{"field": "model", "type": "nominal"}, {"field": "gold", "type": "nominal"},
             {"field": "predicted", "type": "nominal"}, {"field": "pairs", "type": "quantitative"},
             *([{"field": field(value), "type": "quantitative", "format": ".2f"}] if normalize else []),
             {"field": HINT, "type": "nominal", "title": " "}]
    # each cell's description is its SVG path's aria-label: what a screen reader says, and what a browser test reads
    described = {"calculate": "'model: ' + datum.model + '; gold: ' + datum.gold + '; predicted: ' + datum.predicted"
                              " + '; pairs: ' + datum.pairs", "as": "description"}
    cells = {"mark": {"type": "rect", "cursor": "pointer"}, "params": [point_selection(CELL, CELL_FIELDS)],
             "transform": [described],
             "encoding": {"x": x, "y": y, "tooltip": hover, "description": {"field": "description"},
                          "color": {"field": field(value), "type": "quantitative", "title": value,
                                    "scale": {"scheme": "blues", "domainMin": 0}}}}
    printed = {"mark": {"type": "text", "fontSize": 14},
               "encoding": {"x": x, "y": y, "tooltip": hover,
                            "text": {"field": field(value), "type": "quantitative", "format": ".2f" if normalize else "d"},
                            "color": {"condition": {"test": f"datum[{value!r}] > {top / 2!r}", "value": "white"},
                                      "value": "black"}}}
    models = list(matrices)
    return {"$schema": SCHEMA, "data": {"values": records(data)},
            "facet": {"field": "model", "type": "nominal", "sort": models, "title": None},
            "columns": max(1, min(columns, len(models))),
            "spec": {"width": PANEL_PIXELS, "height": PANEL_PIXELS, "layer": [cells, printed]},
            "resolve": {"scale": {"x": "independent"}}}


def majority_ticks(table: pd.DataFrame, category: str, baseline: str | None, y: Mapping[str, Any],
                   size: int) -> list[dict[str, Any]]:
    """The majority-label baseline as one tick per category (`y`'s row), its label in the tooltip ("always
    neutral → 35.2%"); none when the table has no `baseline` column."""
    if not baseline or baseline not in table:
        return []
    majority = table.drop_duplicates(category)
    label = majority["majority_label"].astype(str) if "majority_label" in majority else [""] * len(majority)
    rows = records({category: majority[category].astype(str).tolist(), baseline: majority[baseline].tolist(),
                    "majority label": [f"always {name}" if name else "majority label" for name in label]})
    return [{"data": {"values": rows},
             "mark": {"type": "tick", "color": RULE, "thickness": 2, "size": size, "orient": "vertical"},
             "encoding": {"x": {"field": field(baseline), "type": "quantitative"}, "y": dict(y),
                          "tooltip": [{"field": field(category), "type": "nominal"},
                                      {"field": "majority label", "type": "nominal"},
                                      {"field": field(baseline), "type": "quantitative", "format": ".1%",
                                       "title": "majority label (baseline)"}]}}]


def accuracy_by_tag_bars(table: pd.DataFrame, group: str | None = None, tag: str = "tag", accuracy: str = "accuracy",
                         count: str = "count", title: str = "accuracy by annotation tag",
                         interval: tuple[str, str] | None = ("ci_low", "ci_high"),
                         baseline: str | None = "majority_accuracy",
                         colours: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Horizontal bars of accuracy per tag, one per value of `group` (e.g. model, in its colour) side by side, the
    value and the tag's pair count printed in the bar (small counts mean noisy accuracies), the 95% interval as a
    whisker and the majority-label baseline as a tick per tag (where the table has those columns)."""
    if table.empty:
        return message_spec("no tagged pairs to show", height=80)
    series = "series"
    names = table[group].astype(str) if group else pd.Series(["accuracy"] * len(table), index=table.index)
    counts = table[count] if count in table else [None] * len(table)
    rows = table.assign(**{tag: table[tag].astype(str), series: names,
                           "printed": [f"{a:.1%} (n={int(c)})" if c is not None and c == c else f"{a:.1%}"
                                       for a, c in zip(table[accuracy], counts)]})
    tags, groups = list(dict.fromkeys(rows[tag])), list(dict.fromkeys(rows[series]))
    y = {"field": field(tag), "type": "nominal", "sort": tags, "title": None, "axis": {"labelLimit": 400,
                                                                                     "labelFontSize": 14}}
    offset = {"field": series, "type": "nominal", "sort": groups}
    x = {"field": field(accuracy), "type": "quantitative", "title": "accuracy", "scale": {"domain": [0, 1.04]},
         "axis": PERCENT_AXIS}
    hover = tooltip([group or "", tag, accuracy, *(interval or ()), count, "majority_label", baseline or "", "source",
                     "status"], rows, percent=[accuracy, *(interval or ()), baseline or ""])
    bars = {"mark": {"type": "bar"},
            "encoding": {"x": x, "y": y, "yOffset": offset, "tooltip": hover,
                         "color": {"field": series, "type": "nominal",
                                   **group_colour(groups, colours, group, {"orient": "bottom"})}}}
    text = {"mark": {"type": "text", "align": "left", "dx": 4, "color": "white", "fontSize": 12},
            "encoding": {"x": {"datum": 0}, "y": y, "yOffset": offset, "text": {"field": "printed"}}}
    layers = [bars, text, *whiskers(rows, interval, "x", y, offset),
              *majority_ticks(rows, tag, baseline, y, 22)]
    return {"$schema": SCHEMA, "title": title, "data": {"values": frame_records(rows)}, "width": "container",
            "height": max(300, 80 + 28 * len(tags) * len(groups)), "layer": layers}


def accuracy_dots(table: pd.DataFrame, category: str, group: str = "model", accuracy: str = "accuracy",
                  interval: tuple[str, str] = ("ci_low", "ci_high"), count: str = "count",
                  baseline: str | None = "majority_accuracy", title: str = "accuracy by category",
                  colours: Mapping[str, str] | None = None, axis_title: str = "accuracy") -> dict[str, Any]:
    """Accuracy per category as dots with their 95% interval, one row per category (most pairs first, its count in
    the label) and one dot per model side by side within the row (in the model's colour); the majority-label
    baseline as a tick. Reads where grouped bars of many categories and models overlap. Any share with an interval
    reads the same way (`axis_title`: e.g. a failure rate)."""
    if table.empty:
        return message_spec("nothing to compare", height=80)
    order = [str(value) for value in
             (table.groupby(category, sort=False)[count].max().sort_values(ascending=False, kind="stable").index
              if count in table else dict.fromkeys(table[category]))]
    most = table.groupby(table[category].astype(str))[count].max() if count in table else {}
    shown = {value: f"{value} (n={int(most[value])})" if count in table else value for value in order}
    series = "series"
    names = table[group].astype(str) if group in table else pd.Series([axis_title] * len(table), index=table.index)
    rows = table.assign(**{category: table[category].astype(str), series: names,
                           "row": [shown[str(value)] for value in table[category]]})
    groups = list(dict.fromkeys(rows[series]))
    y = {"field": "row", "type": "nominal", "sort": [shown[value] for value in order], "title": None,
         "axis": {"labelLimit": 400}}
    offset = {"field": series, "type": "nominal", "sort": groups}
    x = {"field": field(accuracy), "type": "quantitative", "title": axis_title, "scale": {"domain": [0, 1.04]},
         "axis": {**PERCENT_AXIS, "orient": "top"}}
    hover = tooltip([group, category, accuracy, *interval, count], rows, percent=[accuracy, *interval])
    dots = {"mark": {"type": "circle", "size": 70, "opacity": 1},
            "encoding": {"x": x, "y": y, "yOffset": offset, "tooltip": hover,
                         "color": {"field": series, "type": "nominal",
                                   **group_colour(groups, colours, group if group in table else None,
                                                  {"orient": "right"})}}}
    ticks = majority_ticks(rows, "row", baseline, y, 18)
    return {"$schema": SCHEMA, "title": title, "data": {"values": frame_records(rows)}, "width": "container",
            "height": max(300, 140 + DOT_ROW_PIXELS * len(order)),
            "layer": [*whiskers(rows, interval, "x", y, offset), dots, *ticks]}
