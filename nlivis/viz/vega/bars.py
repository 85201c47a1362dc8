"""Bar charts as Vega-Lite specs: on the Ablations page accuracy per checkpoint, each variant's paired difference
with its interval and per-tag differences; on the Pair explorer each model's class probabilities. Pure functions, a frame in and a JSON dict out (no altair: it is slow
to import); the page's look is written in when the spec is drawn (`nlivis.app.components.figures.show`)."""
from __future__ import annotations

import json
from typing import Any, Mapping, Sequence

import pandas as pd

from nlivis.viz.common import percent_ticks
from nlivis.viz.vega.common import (RULE, SCHEMA, field, frame_records, group_hues, interval_rule, message_spec,
                                    records)

POSITIVE, NEGATIVE = "#2a9d8f", "#e76f51"
"""A difference's colour by its sign: a gain teal, a loss orange-red."""
FADED = 0.25
"""How much of a bar's fill is left where McNemar's test finds its difference not significant."""
SIGNIFICANCE = "significance"
"""The data field a spec adds to say "significant" / "not significant" (the legend reads it)."""
SIGNIFICANCE_DOMAIN = ["significant", "not significant"]


def tooltip(columns: Sequence[str], frame: pd.DataFrame, percent: Sequence[str] = (), signed: Sequence[str] = (),
            scientific: Sequence[str] = ()) -> list[dict]:
    """Tooltip entries for those `columns` the frame has: shares as 72.9%, differences as −1.0%, p-values as 1.5e-18."""
    entries = []
    for column in columns:
        if column not in frame:
            continue
        entry: dict[str, Any] = {"field": field(column), "title": column}
        if column in percent or column in signed:
            entry.update(type="quantitative", format="+.1%" if column in signed else ".1%")
        elif column in scientific:
            entry.update(type="quantitative", format=".1e")
        elif pd.api.types.is_numeric_dtype(frame[column]) and not pd.api.types.is_bool_dtype(frame[column]):
            entry["type"] = "quantitative"
        else:
            entry["type"] = "nominal"
        entries.append(entry)
    return entries


def wrapped_label(separator: str = " · ") -> str:
    """A label expression that breaks "a · b · c" category labels at the dots into lines."""
    return f"split(datum.label, '{separator}')"


def comparison_bars(table: pd.DataFrame, category: str, value: str, title: str = "", group: str | None = None,
                    colours: Mapping[str, str] | None = None) -> dict[str, Any]:
    """One bar per row (e.g. a checkpoint's accuracy on its select split) with its value printed above it; long
    category labels wrap at " · " and tilt when many would overlap. With `group` (e.g. model), the rows of a
    category stand side by side, each group in its colour from `colours` and named in a legend."""
    if table.empty:
        return message_spec("nothing to compare", height=80)
    rows = table.assign(**{category: table[category].astype(str)})
    categories = list(dict.fromkeys(rows[category]))
    widest = max(len(line) for text in categories for line in text.split(" · "))
    crowded = len(categories) * widest > 120  # e.g. eight "diin-no_self_attention-snli-small" bars
    x: dict[str, Any] = {"field": field(category), "type": "nominal", "sort": categories, "title": None,
                         "axis": {"labelExpr": wrapped_label(), "labelAngle": -30 if crowded else 0,
                                  "labelLimit": 0 if not crowded else 260}}
    y = {"field": field(value), "type": "quantitative", "title": value, "axis": {"format": ".0%"}}
    bar: dict[str, Any] = {"mark": {"type": "bar"}, "encoding": {"x": x, "y": y}}
    text = {"mark": {"type": "text", "baseline": "bottom", "dy": -3, "color": RULE},
            "encoding": {"x": x, "y": y, "text": {"field": field(value), "type": "quantitative", "format": ".1%"}}}
    if group:
        rows = rows.assign(**{group: rows[group].astype(str)})
        groups = list(dict.fromkeys(rows[group]))
        hues = group_hues(groups, colours)
        offset = {"xOffset": {"field": field(group), "type": "nominal", "sort": groups}}
        bar["encoding"].update(offset, color={"field": field(group), "type": "nominal", "title": group,
                                              "scale": {"domain": groups, "range": hues}})
        text["encoding"].update(offset)
    # the height is the whole chart's, axis labels included (Streamlit fits a spec to its width and height)
    return {"$schema": SCHEMA, "title": title, "data": {"values": frame_records(rows)}, "width": "container",
            "height": 340 + (8 * widest if crowded else 0),
            "encoding": {"tooltip": tooltip([category, *([group] if group else []), value], rows, percent=[value])},
            "layer": [bar, text]}


def percent_axis(ends: Sequence[float], title: str) -> dict[str, Any]:
    """A signed-percentage x axis covering `ends` (fractions), ticked at a round step with just enough decimals
    (`viz.common.percent_ticks`: Vega's own ticks at 0.5% steps with 1% labels read −1%, −1%, +0%, …)."""
    ticks = percent_ticks(min(ends), max(ends))
    labels = f"{json.dumps(ticks['ticktext'], ensure_ascii=False)}[indexof({json.dumps(ticks['tickvals'])}, datum.value)]"
    return {"title": title, "scale": {"domain": ticks["range"], "nice": False, "zero": False},
            "axis": {"values": ticks["tickvals"], "labelExpr": labels}}


def zero_rule() -> dict[str, Any]:
    """The vertical line at no difference."""
    return {"mark": {"type": "rule", "color": RULE, "strokeWidth": 1}, "encoding": {"x": {"datum": 0}}}


def significance_labels(rows: pd.DataFrame, significant: str | None) -> list[str]:
    """"significant" / "not significant" per row (all significant when the table has no such column)."""
    flags = rows[significant] if significant and significant in rows else [True] * len(rows)
    return [SIGNIFICANCE_DOMAIN[0] if bool(flag) else SIGNIFICANCE_DOMAIN[1] for flag in flags]


def difference_intervals(table: pd.DataFrame, label: str = "variant", difference: str = "difference",
                         low: str = "CI low", high: str = "CI high", significant: str | None = "significant",
                         noise: float | None = None, title: str = "accuracy difference vs the reference") -> dict[str, Any]:
    """One horizontal bar per variant: its accuracy difference (teal a gain, orange-red a loss, its value in the
    variant's label) with the 95% paired-bootstrap interval as a whisker, faded when McNemar's test finds it not
    significant; `noise` shades ± the gap between two seeds of the full model, so a bar inside the band is within
    seed noise."""
    rows = table.dropna(subset=[difference]) if difference in table else table.iloc[0:0]
    if rows.empty:
        return message_spec("no paired differences to show", height=80)
    values = rows[difference].astype(float)
    shown = [f"{name} ({v:+.1%})".replace("(-", "(−") for name, v in zip(rows[label].astype(str), values)]
    rows = rows.assign(bar=shown, sign=["gain" if v >= 0 else "loss" for v in values],
                       **{SIGNIFICANCE: significance_labels(rows, significant)})
    ends = [*rows[low].astype(float), *rows[high].astype(float), *values, 0.0, *((-noise, noise) if noise is not None else ())]
    x = {"field": field(difference), "type": "quantitative",
         **percent_axis(ends, "accuracy difference (variant − reference)")}
    y = {"field": "bar", "type": "nominal", "sort": shown, "title": None, "axis": {"labelLimit": 400}}
    hover = tooltip([label, difference, low, high, "pairs", "McNemar p", "Holm p", significant or "", "within seed noise"],
                    rows, signed=[difference, low, high], scientific=["McNemar p", "Holm p"])
    bars = {"mark": {"type": "bar", "height": {"band": 0.7}},
            "encoding": {"x": x, "y": y, "tooltip": hover,
                         "color": {"field": "sign", "type": "nominal", "legend": None,
                                   "scale": {"domain": ["gain", "loss"], "range": [POSITIVE, NEGATIVE]}},
                         "opacity": {"field": SIGNIFICANCE, "type": "ordinal", "title": None,
                                     "scale": {"domain": SIGNIFICANCE_DOMAIN, "range": [1.0, FADED + 0.1]},
                                     "legend": {"orient": "bottom"} if significant else None}}}
    whiskers = interval_rule(low, high, "x", y, tooltip=hover)
    layers: list[dict[str, Any]] = [bars, whiskers, zero_rule()]
    if noise is not None:
        band = {"data": {"values": [{"seed noise low": -noise, "seed noise high": noise}]},
                "mark": {"type": "rect", "color": RULE, "opacity": 0.15},
                "encoding": {"x": {"field": "seed noise low", "type": "quantitative"}, "x2": {"field": "seed noise high"},
                             "tooltip": {"value": f"seed noise: ± {noise:.1%}"}}}
        layers = [band, *layers]
    notes = [note for note, shown in (("faded: not significant", significant), ("grey band: seed noise", noise is not None))
             if shown]
    return {"$schema": SCHEMA, "title": title + (f" ({'; '.join(notes)})" if notes else ""),
            "data": {"values": frame_records(rows)},
            "width": "container", "height": {"step": 36}, "layer": layers}


LEGEND_LABEL_LIMIT = 320
"""Pixels a legend's variant name may take: Vega-Lite's 160 cut seed variants' names (`esan-snli-small-augmented-s…`)."""


def delta_bars(table: pd.DataFrame, label: str = "variant", tag: str = "tag", delta: str = "delta",
               significant: str | None = "significant", title: str = "accuracy change vs the full model") -> dict[str, Any]:
    """Per-tag accuracy differences (variant − full) as horizontal bars grouped by tag, each variant in a hue of
    its own; a significant difference drawn solid, the others hollow (a faint fill and a dashed outline in their
    variant's hue: faded bars of different variants all looked alike)."""
    if table.empty:
        return message_spec("no per-tag differences to show", height=80)
    variants = list(dict.fromkeys(table[label].astype(str)))
    tags = list(dict.fromkeys(table[tag].astype(str)))
    rows = table.assign(**{label: table[label].astype(str), tag: table[tag].astype(str),
                           SIGNIFICANCE: significance_labels(table, significant)})
    colour = {"field": field(label), "type": "nominal", "title": label,
              "scale": {"domain": variants, "range": group_hues(variants)},
              "legend": {"orient": "right", "labelLimit": LEGEND_LABEL_LIMIT}}
    key = {"symbolType": "square", "symbolFillColor": RULE, "symbolStrokeColor": RULE, "symbolStrokeWidth": 1.5}
    style: dict[str, Any] = {
        "color": colour, "stroke": colour,
        "fillOpacity": {"field": SIGNIFICANCE, "type": "ordinal", "title": "McNemar, Holm-adjusted", "legend": key,
                        "scale": {"domain": SIGNIFICANCE_DOMAIN, "range": [1.0, FADED]}},
        "strokeDash": {"field": SIGNIFICANCE, "type": "ordinal", "title": "McNemar, Holm-adjusted", "legend": key,
                       "scale": {"domain": SIGNIFICANCE_DOMAIN, "range": [[1, 0], [3, 2]]}}}
    hover = tooltip([label, tag, "tag status", "count", "reference accuracy", "accuracy", delta, "McNemar p", "Holm p",
                     significant or ""], rows, percent=["reference accuracy", "accuracy"], signed=[delta],
                    scientific=["McNemar p", "Holm p"])
    bars = {"mark": {"type": "bar", "strokeWidth": 1.5},
            "encoding": {"x": {"field": field(delta), "type": "quantitative",
                               **percent_axis([*rows[delta].astype(float), 0.0], "accuracy difference")},
                         "y": {"field": field(tag), "type": "nominal", "sort": tags, "title": None,
                               "axis": {"labelLimit": 300}},
                         "yOffset": {"field": field(label), "type": "nominal", "sort": variants},
                         "tooltip": hover, **style}}
    return {"$schema": SCHEMA, "title": title + (" (hollow: not significant)" if significant else ""),
            "data": {"values": frame_records(rows)}, "width": "container", "height": {"step": 16},
            "layer": [bars, zero_rule()]}


BAR_TEXT_MAX_MODELS = 3
"""Above this many models the values are left to the hover: printed over narrow bars they overlap."""


def probability_bars(probabilities: Mapping[str, Sequence[float]], labels: Sequence[str],
                     title: str = "class probabilities", colours: Mapping[str, str] | None = None) -> dict[str, Any]:
    """One group of bars per class, one bar per model (in its colour from `colours`), so models compare side by
    side; each bar's value printed above it while few models share a group."""
    models = [str(model) for model in probabilities]
    rows: dict[str, list[Any]] = {"model": [], "label": [], "probability": []}
    for model, probs in zip(models, probabilities.values()):
        values = [float(p) for p in probs]
        if len(values) != len(labels):
            raise ValueError(f"{model}: {len(values)} probabilities for {len(labels)} labels {list(labels)}")
        rows["model"] += [model] * len(values)
        rows["label"] += [str(label) for label in labels]
        rows["probability"] += values
    x = {"field": "label", "type": "nominal", "sort": [str(label) for label in labels], "title": None,
         "axis": {"labelAngle": 0}}
    y = {"field": "probability", "type": "quantitative", "title": "probability",
         "scale": {"domain": [0, 1.1], "nice": False}, "axis": {"values": [0, 0.2, 0.4, 0.6, 0.8, 1.0]}}
    offset = {"field": "model", "type": "nominal", "sort": models}
    bars = {"mark": {"type": "bar"},
            "encoding": {"x": x, "y": y, "xOffset": offset,
                         "color": {"field": "model", "type": "nominal", "title": None,
                                   "scale": {"domain": models, "range": group_hues(models, colours)},
                                   "legend": {"orient": "bottom", "direction": "horizontal"}},
                         "tooltip": [{"field": "model", "type": "nominal"}, {"field": "label", "type": "nominal"},
                                     {"field": "probability", "type": "quantitative", "format": ".3f"}]}}
    layers: list[dict[str, Any]] = [bars]
    if len(models) <= BAR_TEXT_MAX_MODELS:
        layers.append({"mark": {"type": "text", "baseline": "bottom", "dy": -3, "color": RULE},
                       "encoding": {"x": x, "y": y, "xOffset": offset,
                                    "text": {"field": "probability", "type": "quantitative", "format": ".2f"}}})
    return {"$schema": SCHEMA, "title": title, "data": {"values": records(rows)}, "width": "container",
            "height": 260, "layer": layers}
