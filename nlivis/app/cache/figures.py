"""Figures a page shows again at every rerun, sidebar switch and Back, built once and kept in the server: a pair's
overview grid, gate strips and alignment heatmaps (per pair, model and state of its folder) and a predictions
file's confusion matrix (per file state, title and normalisation). Building a plotly figure was most of a warm Pair
explorer, Gates or Error analysis run (bench/RESULTS.md, the server's script per click). The figures are shared
between runs and sessions: never modify one."""
from __future__ import annotations

from typing import Any, Sequence

import streamlit as st

from nlivis.app import state
from nlivis.app.cache import Model, SplitScores, read_pair_cached, scores_cached
from nlivis.store.files import folder_stamp
from nlivis.viz.gate_strips import gate_title, gate_values
from nlivis.viz.heatmaps import alignment_heatmap
from nlivis.viz.overview import ModelReading
from nlivis.viz.vega import errors as vega_errors
from nlivis.viz.vega import gates as vega_gates
from nlivis.viz.vega import overview as vega_overview

PAIR_FIGURES_KEPT = 256
"""Figures of pairs kept in the server (a pair's overview is one, its gate strips one per gate and window of
dimensions). Building a plotly figure was most of a warm Pair explorer or Gates run (py-spy and cProfile on the
served app: the overview grid ~0.3 s, twelve gate strips ~0.5 s), paid again at every sidebar switch, rerun
and Back to a pair already shown."""


def _cleaned(premise: str, hypothesis: str) -> tuple[str, str]:
    return state.clean_sentence(premise)[0], state.clean_sentence(hypothesis)[0]


def labels_unchecked(figure: Any) -> Any:
    """`figure` (changed in place and returned) with every x and y axis's tick labels drawn as they are
    (`ticklabeloverflow="allow"`). plotly.js's default for a numeric axis, "hide past div", measures each tick
    label in the page once more after drawing it (`_adjustTickLabelsOverflow`: a forced layout per label) to
    hide those past the chart's edge; here none is, as the axes' automargin grows the margins around their
    labels, so the chart looks the same. A pair's figures label each token: the overview of a 33-word premise
    has over 300 labels, and the check was ~0.6 s of Chromium's main thread when a pair from a list opens
    (bench/chart_draw.py --clicks, issue 30)."""
    figure.update_xaxes(ticklabeloverflow="allow")
    figure.update_yaxes(ticklabeloverflow="allow")
    return figure


@st.cache_resource(max_entries=PAIR_FIGURES_KEPT, show_spinner=False)
def _overview_cached(models: tuple[tuple[str, str, float], ...], premise: str, hypothesis: str, title: str) -> Any:
    readings = [(name, read_pair_cached(name, path, stamp, premise, hypothesis)) for name, path, stamp in models]
    return vega_overview.overview_grid([ModelReading(name, r.trace, r.premise_tokens, r.hypothesis_tokens)
                                        for name, r in readings], title=title)


def overview_figure(models: Sequence[Model], premise: str, hypothesis: str, title: str) -> Any:
    """`viz.vega.overview.overview_grid` (a Vega-Lite spec) of the models' readings of the pair (models that
    `read_pair` read it), built once per pair, models and state of their folders. Shared between runs and sessions:
    never modify it."""
    premise, hypothesis = _cleaned(premise, hypothesis)
    return _overview_cached(tuple((m.name, m.path, folder_stamp(m.path)) for m in models), premise, hypothesis, title)


@st.cache_resource(max_entries=PAIR_FIGURES_KEPT, show_spinner=False)
def _gate_strip_cached(name: str, path: str, stamp: float, premise: str, hypothesis: str, entry: str,
                       first_dim: int, label: str) -> Any:
    reading = read_pair_cached(name, path, stamp, premise, hypothesis)
    gate = reading.trace[entry]
    tokens = reading.premise_tokens if gate.tokens == "premise" else reading.hypothesis_tokens
    return vega_gates.gate_strip(gate_values(gate, 0, tokens), tokens, gate_title(gate, label), first_dim=first_dim)


def gate_strip_figure(model: Model, premise: str, hypothesis: str, entry: str, first_dim: int, label: str) -> Any:
    """`viz.vega.gates.gate_strip` (a Vega-Lite spec) of gate `entry` of the model's reading of the pair (one it
    read: `read_pair`), dimensions from `first_dim`, built once per pair, window and state of the model's folder.
    Shared: never modify it."""
    premise, hypothesis = _cleaned(premise, hypothesis)
    return _gate_strip_cached(model.name, model.path, folder_stamp(model.path), premise, hypothesis, entry, first_dim,
                              label)


@st.cache_resource(max_entries=PAIR_FIGURES_KEPT, show_spinner=False)
def _alignment_cached(name: str, path: str, stamp: float, premise: str, hypothesis: str, entry: str, label: str) -> Any:
    reading = read_pair_cached(name, path, stamp, premise, hypothesis)
    return labels_unchecked(alignment_heatmap(reading.trace[entry], 0, reading.premise_tokens, reading.hypothesis_tokens,
                                              label=label))


def alignment_figure(model: Model, premise: str, hypothesis: str, entry: str, label: str) -> Any:
    """`viz.heatmaps.alignment_heatmap` of alignment `entry` of the model's reading of the pair (one it read:
    `read_pair`), built once per pair and state of the model's folder. Shared: never modify it."""
    premise, hypothesis = _cleaned(premise, hypothesis)
    return _alignment_cached(model.name, model.path, folder_stamp(model.path), premise, hypothesis, entry, label)


# ---------------------------------------------------------------- a predictions file's confusion matrix

@st.cache_resource(max_entries=256, show_spinner=False)
def _confusion_figure_cached(path: str, stamp: float, labels: tuple[str, ...], title: str, normalize: bool) -> Any:
    matrix = scores_cached(path, stamp, labels).matrix
    return vega_errors.confusion_matrix(matrix.to_numpy(), list(matrix.index), title=title, normalize=normalize)


def confusion_figure(scores: SplitScores, title: str, normalize: bool) -> Any:
    """`viz.vega.errors.confusion_matrix` (a Vega-Lite spec) of the scores' matrix (one they have), built once per file state,
    title and normalisation. Shared: never modify it."""
    return _confusion_figure_cached(scores.path, scores.stamp, scores.labels, title, normalize)
