"""All loaded models at a glance for one pair: small multiples on shared token axes, one row per model.

In the spirit of bertviz's head view: each model's main cross-sentence alignment (its last layer, both
directions), DIIN's interaction summary and AMN's memory keys, drawn from the trace entries alone. Panels in
one column share their axes (premise rows × hypothesis columns, hypothesis rows × premise columns, tokens ×
memory slots), so the eye can run down a column and compare the models.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from nlivis.models.trace import Alignment, FeatureMaps, MemoryKeys, Trace
from nlivis.viz.channel_grid import real_maps
from nlivis.viz.common import (DIVERGING_SCALE, LONG_AXIS, SEQUENTIAL_SCALE, empty_figure, fitted_range, labelled_heatmap,
                               token_ticks)
from nlivis.viz.heatmaps import alignment_matrix, memory_keys_matrix


@dataclass
class ModelReading:
    """One model's reading of the pair: its label, trace and the tokens it saw."""

    label: str
    trace: Trace
    premise_tokens: Sequence[str]
    hypothesis_tokens: Sequence[str]


@dataclass
class Panel:
    """One small multiple: values [rows, cols] with their labels, the colour axis it uses and its title."""

    values: np.ndarray
    rows: list[str]
    cols: list[str]
    row_name: str
    col_name: str
    value_name: str
    colour: str
    title: str


COLUMNS: tuple[tuple[str, str], ...] = (
    ("p×h", "premise rows × hypothesis columns"),
    ("h×p", "hypothesis rows × premise columns"),
    ("memory p", "premise tokens × memory slots"),
    ("memory h", "hypothesis tokens × memory slots"),
)
"""The grid's columns: which panel of a model goes where. Empty columns are left out."""

ALIGNMENT, INTERACTION, MEMORY_PREMISE, MEMORY_HYPOTHESIS = "coloraxis", "coloraxis2", "coloraxis3", "coloraxis4"
"""Colour axes: alignment weights (0–1, shared), DIIN's interaction summary (signed), AMN's memory keys of each
sentence (fitted to their own range: near-uniform addressing would be one flat block on 0–1)."""


def _last_cross(alignments: dict[str, Alignment], rows: str, cols: str) -> tuple[str, Alignment] | None:
    """The highest-layer normalised alignment from `rows` over `cols` (a model's main alignment)."""
    found = [(name, a) for name, a in alignments.items() if a.rows == rows and a.cols == cols]
    normalised = [(name, a) for name, a in found if a.kind != "similarity"] or found
    return max(normalised, key=lambda item: item[1].layer) if normalised else None


def model_panels(reading: ModelReading) -> dict[str, Panel]:
    """The panels of one model, by column key (a model without an entry for a column has no panel there)."""
    panels: dict[str, Panel] = {}
    premise, hypothesis = list(reading.premise_tokens), list(reading.hypothesis_tokens)
    alignments = reading.trace.of_type(Alignment)
    for key, rows, cols in (("p×h", "premise", "hypothesis"), ("h×p", "hypothesis", "premise")):
        chosen = _last_cross(alignments, rows, cols)
        if chosen is not None:
            name, entry = chosen
            values, row_tokens, col_tokens = alignment_matrix(entry, 0, premise, hypothesis)
            panels[key] = Panel(values, row_tokens, col_tokens, f"{rows} token", f"{cols} token", f"{entry.kind} weight",
                                ALIGNMENT, f"{entry.direction} · layer {entry.layer} · {entry.kind}")
    maps = {name: m for name, m in reading.trace.of_type(FeatureMaps).items() if m.token_axes}
    if "p×h" not in panels and maps:
        name, entry = next(((n, m) for n, m in maps.items() if m.stage == "interaction"), next(iter(maps.items())))
        values = real_maps(entry, 0, premise, hypothesis).mean(axis=0)
        panels["p×h"] = Panel(values, premise[:values.shape[0]], hypothesis[:values.shape[1]], "premise token",
                              "hypothesis token", "channel mean", INTERACTION,
                              f"{entry.stage} · mean of {entry.maps.shape[1]} channels")
    for entry in reading.trace.of_type(MemoryKeys).values():
        key = "memory p" if entry.tokens == "premise" else "memory h"
        values, rows, slots = memory_keys_matrix(entry, 0, premise if entry.tokens == "premise" else hypothesis)
        panels.setdefault(key, Panel(values, rows, slots, f"{entry.tokens} token", "memory slot", "address weight",
                                     MEMORY_PREMISE if key == "memory p" else MEMORY_HYPOTHESIS, f"memory keys · {entry.tokens}"))
    return panels


def _colour_axis(panels: Sequence[Panel], colour: str, position: int) -> tuple[dict, str | None]:
    """Layout of one colour axis fitted to the panels using it, and the note saying its range when narrow."""
    values = np.concatenate([p.values.ravel() for p in panels]) if panels else np.zeros(0)
    colourbar = {"len": 0.22, "y": 1.0 - 0.26 * position, "yanchor": "top", "x": 1.02, "thickness": 12}
    if colour == INTERACTION:
        bound = float(np.abs(values).max()) if values.size else 1.0
        bound = bound or 1.0
        return {"colorscale": DIVERGING_SCALE, "cmin": -bound, "cmax": bound,
                "colorbar": {**colourbar, "title": {"text": "interaction<br>(channel mean)"}}}, None
    low, high, note = fitted_range(values)
    name = {ALIGNMENT: "alignment weight", MEMORY_PREMISE: "premise memory", MEMORY_HYPOTHESIS: "hypothesis memory"}[colour]
    title = name.replace(" ", "<br>") + (f"<br>{low:.3f}–{high:.3f}" if note else "")
    return {"colorscale": SEQUENTIAL_SCALE, "cmin": low, "cmax": high, "colorbar": {**colourbar, "title": {"text": title}}}, note


def overview_grid(readings: Sequence[ModelReading], title: str = "all loaded models at a glance") -> go.Figure:
    """One row per model, one column per panel kind (see COLUMNS); shared colour scales per kind, each fitted
    to its values when they span a narrow range (the range is then stated on its colour bar and in the title)."""
    per_model = [(reading.label, model_panels(reading)) for reading in readings]
    columns = [key for key, _ in COLUMNS if any(key in panels for _, panels in per_model)]
    if not columns:
        return empty_figure("no loaded model has alignments, interaction maps or memory keys to show")
    titles = []  # the model's name over its row's first panel, each panel's own kind over it
    for label, panels in per_model:
        first = next((key for key in columns if key in panels), None)
        for key in columns:
            titles.append("" if key not in panels else (f"<b>{label}</b><br>" if key == first else "<br>") + panels[key].title)
    row_tokens = [max(len(p.rows) for p in panels.values()) if panels else 1 for _, panels in per_model]
    row_pixels = [max(120, 18 * n + 20) for n in row_tokens]
    long_x = any(len(p.cols) > LONG_AXIS for _, panels in per_model for p in panels.values())
    gap = 160 if long_x else 120  # room between rows for the x tick labels above and the next row's two-line titles
    plot_pixels = sum(row_pixels) + gap * (len(per_model) - 1)
    figure = make_subplots(rows=len(per_model), cols=len(columns), subplot_titles=titles, horizontal_spacing=0.12,
                           vertical_spacing=gap / plot_pixels if len(per_model) > 1 else 0.0,
                           row_heights=[float(h) for h in row_pixels],
                           column_widths=[float(max(6, *(len(p.cols) for _, ps in per_model for k, p in ps.items() if k == key)))
                                          for key in columns])
    used: dict[str, list[Panel]] = {}
    for r, (label, panels) in enumerate(per_model, start=1):
        for c, key in enumerate(columns, start=1):
            panel = panels.get(key)
            if panel is None:  # the model has no such panel: no empty axes either
                figure.update_xaxes(visible=False, row=r, col=c)
                figure.update_yaxes(visible=False, row=r, col=c)
                continue
            used.setdefault(panel.colour, []).append(panel)
            trace = labelled_heatmap(panel.values, panel.rows, panel.cols, panel.value_name, panel.row_name,
                                     panel.col_name, coloraxis=panel.colour, name=f"{label} · {panel.title}")
            figure.add_trace(trace, row=r, col=c)
            figure.update_xaxes(**token_ticks(panel.cols), row=r, col=c)
            figure.update_yaxes(**token_ticks(panel.rows, axis="y"), autorange="reversed", row=r, col=c)
    notes = []
    for position, colour in enumerate(sorted(used)):
        axis, note = _colour_axis(used[colour], colour, position)
        figure.update_layout({colour: axis})
        if note:
            notes.append({MEMORY_PREMISE: "premise memory keys: ", MEMORY_HYPOTHESIS: "hypothesis memory keys: "}.get(colour, "") + note)
    for annotation in figure.layout.annotations:  # subplot titles start at their panel's left edge
        if annotation.text and annotation.xref == "paper":
            axis = next((a for name, a in figure.layout.to_plotly_json().items() if name.startswith("xaxis")
                         and abs(sum(a.get("domain", [0, 1])) / 2 - annotation.x) < 1e-6), None)
            if axis is not None:
                annotation.update(x=axis["domain"][0], xanchor="left", font={"size": 11}, align="left")
    top = 100 if notes else 70
    figure.update_layout(title=title + (f"<br><sup>{' · '.join(notes)}</sup>" if notes else ""),
                         height=top + plot_pixels + gap, margin={"l": 10, "r": 90, "t": top, "b": 20})
    return figure
