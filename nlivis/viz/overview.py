"""All loaded models at a glance for one pair: small multiples on shared token axes, one row per model.

In the spirit of bertviz's head view: each model's main cross-sentence alignment (its last layer, both
directions), DIIN's interaction summary and AMN's memory keys, drawn from the trace entries alone. Every panel
is laid out the same way — the premise's tokens across (the longer sentence, read left to right on a wide
screen), the hypothesis' tokens (or memory slots) down — so the eye can run down the page and compare the
models; a premise → hypothesis alignment is drawn transposed for that (its columns then sum to 1, and its title
says so). Panels share the page's width, two per row, so tokens get room instead of ~100-pixel panels.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from nlivis.models.trace import Alignment, FeatureMaps, MemoryKeys, Trace
from nlivis.viz.channel_grid import real_maps
from nlivis.viz.common import DIVERGING_SCALE, SEQUENTIAL_SCALE, empty_figure, fitted_range, labelled_heatmap, token_ticks
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


ALIGNMENT, INTERACTION, MEMORY_PREMISE, MEMORY_HYPOTHESIS = "coloraxis", "coloraxis2", "coloraxis3", "coloraxis4"
"""Colour axes: alignment weights (0–1, shared), DIIN's interaction summary (signed), AMN's memory keys of each
sentence (fitted to their own range: near-uniform addressing would be one flat block on 0–1)."""

ROW_PIXELS = 22
"""Height of one token row of a panel."""
ALIGNMENT_QUANTILE = 0.99
"""The alignment colour scale ends at this quantile of the weights shown (stated on the figure)."""
SLOT_PIXELS = 12
"""Height of one memory-slot row (AMN has dozens of slots: token-height rows would make its panels tower)."""


def _last_cross(alignments: dict[str, Alignment], rows: str, cols: str) -> tuple[str, Alignment] | None:
    """The highest-layer normalised alignment from `rows` over `cols` (a model's main alignment); of a multi-head
    model, its summary over heads (MiniLM's attention rollout) rather than one head of the last layer."""
    found = [(name, a) for name, a in alignments.items() if a.rows == rows and a.cols == cols]
    normalised = [(name, a) for name, a in found if a.kind != "similarity"] or found
    return max(normalised, key=lambda item: (item[1].layer, item[1].head is None)) if normalised else None


def model_panels(reading: ModelReading) -> list[Panel]:
    """A model's panels in display order (at most two: hypothesis → premise and premise → hypothesis, or DIIN's
    interaction, or AMN's premise and hypothesis memory keys), each with the premise (or a sentence) across."""
    panels: list[Panel] = []
    premise, hypothesis = list(reading.premise_tokens), list(reading.hypothesis_tokens)
    alignments = reading.trace.of_type(Alignment)
    for rows, cols in (("hypothesis", "premise"), ("premise", "hypothesis")):
        chosen = _last_cross(alignments, rows, cols)
        if chosen is None:
            continue
        name, entry = chosen
        values, row_tokens, col_tokens = alignment_matrix(entry, 0, premise, hypothesis)
        title = f"{entry.direction} · layer {entry.layer} · {entry.kind}"
        if entry.head is None and any(a.head is not None for a in alignments.values()):  # a summary over heads
            title = f"{name} · {entry.kind} (all layers and heads)"
        value_name = f"{entry.kind} weight ({rows} → {cols})"
        if rows == "premise":  # drawn transposed, so the premise runs across as in every panel
            values, row_tokens, col_tokens = values.T, col_tokens, row_tokens
            title += " · transposed: each column sums to 1"
        panels.append(Panel(values, row_tokens, col_tokens, "hypothesis token", "premise token", value_name, ALIGNMENT,
                            title))
    maps = {name: m for name, m in reading.trace.of_type(FeatureMaps).items() if m.token_axes}
    if not panels and maps:
        name, entry = next(((n, m) for n, m in maps.items() if m.stage == "interaction"), next(iter(maps.items())))
        values = real_maps(entry, 0, premise, hypothesis).mean(axis=0).T  # [hypothesis, premise]
        panels.append(Panel(values, hypothesis[:values.shape[0]], premise[:values.shape[1]], "hypothesis token",
                            "premise token", "channel mean", INTERACTION,
                            f"{entry.stage} · mean of {entry.maps.shape[1]} channels"))
    for entry in reading.trace.of_type(MemoryKeys).values():
        values, tokens, slots = memory_keys_matrix(entry, 0, premise if entry.tokens == "premise" else hypothesis)
        panels.append(Panel(values.T, slots, tokens, "memory slot", f"{entry.tokens} token", "address weight",
                            MEMORY_PREMISE if entry.tokens == "premise" else MEMORY_HYPOTHESIS,
                            f"memory keys · {entry.tokens} tokens across"))
    return panels[:2]


def _colour_axis(panels: Sequence[Panel], colour: str, place: tuple[float, float]) -> tuple[dict, str | None]:
    """Layout of one colour axis fitted to the panels using it, its bar at `place` (bottom, top of the figure's
    height, the first row that uses it), and the note saying its range when it is not the whole 0–1. Alignment
    weights run from 0 to their `ALIGNMENT_QUANTILE`: a long sentence (MultiNLI) spreads them thin, and on the
    whole 0–1 range (or up to one peak) every other cell was the same dark colour."""
    values = np.concatenate([p.values.ravel() for p in panels]) if panels else np.zeros(0)
    bottom, top = place
    colourbar = {"len": max(0.02, top - bottom), "y": top, "yanchor": "top", "x": 1.02, "thickness": 12}
    if colour == INTERACTION:
        bound = float(np.abs(values).max()) if values.size else 1.0
        bound = bound or 1.0
        return {"colorscale": DIVERGING_SCALE, "cmin": -bound, "cmax": bound,
                "colorbar": {**colourbar, "title": {"text": "interaction<br>(channel mean)"}}}, None
    low, high, note = fitted_range(values)
    finite = values[np.isfinite(values)]
    top = float(np.quantile(finite, ALIGNMENT_QUANTILE)) if finite.size else 1.0
    if colour == ALIGNMENT and note is None and 0.0 < top < 0.95:
        low, high = 0.0, top
        note = (f"alignment colour scale 0–{high:.2f} ({ALIGNMENT_QUANTILE:.0%} of the weights are below it; larger "
                "ones take its top colour)")
    name = {ALIGNMENT: "alignment weight", MEMORY_PREMISE: "premise memory", MEMORY_HYPOTHESIS: "hypothesis memory"}[colour]
    title = name.replace(" ", "<br>") + (f"<br>{low:.3f}–{high:.3f}" if note else "")
    return {"colorscale": SEQUENTIAL_SCALE, "cmin": low, "cmax": high, "colorbar": {**colourbar, "title": {"text": title}}}, note


def _bar_places(figure: go.Figure, first_rows: dict[str, int]) -> dict[str, tuple[float, float]]:
    """Colour axis → (bottom, top) of its bar: beside the first row that uses it, the row's height shared among
    the axes whose first row it is (AMN's two memory scales share its row)."""
    places = {}
    for row in sorted(set(first_rows.values())):
        colours = sorted(c for c, r in first_rows.items() if r == row)
        bottom, top = figure.get_subplot(row, 1).yaxis.domain
        share = (top - bottom) / len(colours)
        for position, colour in enumerate(colours):
            places[colour] = (top - share * (position + 1) + 0.01 * share, top - share * position)
    return places


def _titles_at_left_edges(layout: dict) -> None:
    """Move each subplot title (an annotation of a layout as a plain dict) to its panel's left edge."""
    domains = [a.get("domain", [0, 1]) for name, a in layout.items() if name.startswith("xaxis")]
    for annotation in layout.get("annotations", []):
        if annotation.get("text") and annotation.get("xref") == "paper":
            domain = next((d for d in domains if abs(sum(d) / 2 - annotation["x"]) < 1e-6), None)
            if domain is not None:
                annotation.update(x=domain[0], xanchor="left", font={**annotation.get("font", {}), "size": 12},
                                  align="left")


def overview_grid(readings: Sequence[ModelReading], title: str = "all loaded models at a glance") -> go.Figure:
    """One row per model, its panels side by side (each half the width), every panel with a sentence's tokens
    across; shared colour scales per kind of panel, each fitted to its values when they span a narrow range or,
    for alignment weights, up to their largest one (the range is then stated on its colour bar and in the title),
    each bar beside the first row that uses it."""
    per_model = [(reading.label, model_panels(reading)) for reading in readings]
    per_model = [(label, panels) for label, panels in per_model if panels]
    if not per_model:
        return empty_figure("no loaded model has alignments, interaction maps or memory keys to show")
    columns = max(len(panels) for _, panels in per_model)
    titles = []
    for label, panels in per_model:
        for c in range(columns):
            titles.append("" if c >= len(panels) else (f"<b>{label}</b> · " if c == 0 else "") + panels[c].title)
    row_pixels = [max((SLOT_PIXELS if p.row_name == "memory slot" else ROW_PIXELS) * len(p.rows) for p in panels) + 20
                  for _, panels in per_model]
    gap = 130  # room for the x tick labels (rotated tokens) and the next row's title
    plot_pixels = sum(row_pixels) + gap * (len(per_model) - 1)
    figure = make_subplots(rows=len(per_model), cols=columns, subplot_titles=titles, horizontal_spacing=0.08,
                           vertical_spacing=gap / plot_pixels if len(per_model) > 1 else 0.0,
                           row_heights=[float(h) for h in row_pixels])
    used: dict[str, list[Panel]] = {}
    first_rows: dict[str, int] = {}
    traces = []
    layout = figure.layout.to_plotly_json()  # the grid's axes and titles, set below as one plain dict: plotly's
    for r, (label, panels) in enumerate(per_model, start=1):  # update calls validated and dispatched each anew
        for c in range(1, columns + 1):  # (47 of them, ~0.2 s a pair, most of the Pair explorer's run)
            subplot = figure.get_subplot(r, c)
            x_name, y_name = subplot.xaxis.plotly_name, subplot.yaxis.plotly_name
            if c > len(panels):  # no such panel: no empty axes either
                layout[x_name]["visible"] = layout[y_name]["visible"] = False
                continue
            panel = panels[c - 1]
            used.setdefault(panel.colour, []).append(panel)
            first_rows.setdefault(panel.colour, r)
            trace = labelled_heatmap(panel.values, panel.rows, panel.cols, panel.value_name, panel.row_name,
                                     panel.col_name, coloraxis=panel.colour, name=f"{label} · {panel.title}")
            traces.append(trace.update(xaxis=x_name.replace("axis", ""), yaxis=y_name.replace("axis", "")))
            layout[x_name].update({**token_ticks(panel.cols), "tickfont": {"size": 11}})
            layout[y_name].update({**token_ticks(panel.rows, axis="y"),
                                   "tickfont": {"size": 9 if panel.row_name == "memory slot" else 11},
                                   "autorange": "reversed"})
    notes = []
    places = _bar_places(figure, first_rows)
    for colour in sorted(used):
        layout[colour], note = _colour_axis(used[colour], colour, places[colour])
        if note:
            notes.append({MEMORY_PREMISE: "premise memory keys: ", MEMORY_HYPOTHESIS: "hypothesis memory keys: "}.get(colour, "") + note)
    _titles_at_left_edges(layout)
    top = 80 + 22 * len(notes)  # a line per note: side by side they ran past the figure's right edge
    # the bottom margin holds the last row's rotated token labels, as `gap` does between rows
    height = top + plot_pixels + gap
    layout.update(title={"text": title + "".join(f"<br><sup>{note}</sup>" for note in notes), "yref": "container",
                         "y": 1.0 - 30 / height, "yanchor": "top"},
                  height=height, margin={"l": 10, "r": 110, "t": top, "b": gap})
    return go.Figure(data=traces, layout=layout)
