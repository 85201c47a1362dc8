"""Figures a page shows again at every rerun, sidebar switch and Back, built once and kept in the server: a pair's
overview grid, gate strips and alignment heatmaps (per pair, model and state of its folder) and the predictions
files' confusion matrices (per files' state and normalisation). Building a figure (then plotly's) was most of a
warm Pair explorer, Gates or Error analysis run (bench/RESULTS.md, the server's script per click); a Vega-Lite spec
of a pair's tokens is still thousands of rows. The figures are shared between runs and sessions: never modify one."""
from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, Mapping, Sequence

import streamlit as st

from nlivis.app import state
from nlivis.app.cache import Model, SplitScores, read_pair_cached, scores_cached
from nlivis.app.cache.run_memo import folder_stamp_in_run
from nlivis.viz.gate_strips import gate_title, gate_values
from nlivis.viz.overview import ModelReading
from nlivis.viz.vega import datamap as vega_datamap
from nlivis.viz.vega import errors as vega_errors
from nlivis.viz.vega import export as vega_export
from nlivis.viz.vega import gates as vega_gates
from nlivis.viz.vega import overview as vega_overview
from nlivis.viz.vega.common import spec_fingerprint
from nlivis.viz.vega.heatmaps import alignment_heatmap

PAIR_FIGURES_KEPT = 256
"""Figures of pairs kept in the server (a pair's overview is one, a model's gate strips one per choice of layers
and window of dimensions). Building the plotly figures was most of a warm Pair explorer or Gates run (py-spy and
cProfile on the served app: the overview grid ~0.3 s, twelve gate strips ~0.5 s), paid again at every sidebar
switch, rerun and Back to a pair already shown."""


def _cleaned(premise: str, hypothesis: str) -> tuple[str, str]:
    return state.clean_sentence(premise)[0], state.clean_sentence(hypothesis)[0]


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
    return _overview_cached(tuple((m.name, m.path, folder_stamp_in_run(m.path)) for m in models), premise, hypothesis, title)


@st.cache_resource(max_entries=PAIR_FIGURES_KEPT, show_spinner=False)
def _gate_strips_cached(name: str, path: str, stamp: float, premise: str, hypothesis: str,
                        entries: tuple[tuple[str, int], ...], label: str) -> Any:
    reading = read_pair_cached(name, path, stamp, premise, hypothesis)
    strips = []
    for entry, first_dim in entries:
        gate = reading.trace[entry]
        tokens = reading.premise_tokens if gate.tokens == "premise" else reading.hypothesis_tokens
        strips.append(vega_gates.Strip(gate_values(gate, 0, tokens), tokens, gate_title(gate, f"{label} · {entry}"),
                                        first_dim))
    return vega_gates.gate_strips(strips)


def gate_strips_figure(model: Model, premise: str, hypothesis: str, entries: Sequence[tuple[str, int]],
                       label: str) -> Any:
    """`viz.vega.gates.gate_strips` (one Vega-Lite spec) of the gate `entries` (name, first dimension of its
    window) of the model's reading of the pair (one it read: `read_pair`), built once per pair, gates, windows and
    state of the model's folder. Shared: never modify it."""
    premise, hypothesis = _cleaned(premise, hypothesis)
    return _gate_strips_cached(model.name, model.path, folder_stamp_in_run(model.path), premise, hypothesis,
                               tuple((entry, int(first_dim)) for entry, first_dim in entries), label)


@st.cache_resource(max_entries=PAIR_FIGURES_KEPT, show_spinner=False)
def _alignment_cached(name: str, path: str, stamp: float, premise: str, hypothesis: str, entry: str, label: str) -> Any:
    reading = read_pair_cached(name, path, stamp, premise, hypothesis)
    return alignment_heatmap(reading.trace[entry], 0, reading.premise_tokens, reading.hypothesis_tokens, label=label)


def alignment_figure(model: Model, premise: str, hypothesis: str, entry: str, label: str) -> Any:
    """`viz.vega.heatmaps.alignment_heatmap` (a Vega-Lite spec) of alignment `entry` of the model's reading of the
    pair (one it read: `read_pair`), built once per pair and state of the model's folder. Shared: never modify it."""
    premise, hypothesis = _cleaned(premise, hypothesis)
    return _alignment_cached(model.name, model.path, folder_stamp_in_run(model.path), premise, hypothesis, entry, label)


# ---------------------------------------------------------------- the predictions files' confusion matrices

@st.cache_resource(max_entries=256, show_spinner=False)
def _confusion_figure_cached(files: tuple[tuple[str, str, float, tuple[str, ...]], ...], normalize: bool) -> Any:
    matrices = {}
    for name, path, stamp, labels in files:
        matrix = scores_cached(path, stamp, labels).matrix
        matrices[name] = (matrix.to_numpy(), list(matrix.index))
    return vega_errors.confusion_matrices(matrices, normalize=normalize)


def confusion_figure(scores: Mapping[str, SplitScores], normalize: bool) -> Any:
    """`viz.vega.errors.confusion_matrices` (one Vega-Lite spec, a panel per model: `scores` maps each model's name
    to its scores, each with a matrix) built once per files' state, models and normalisation. Shared: never modify
    it."""
    return _confusion_figure_cached(tuple((name, score.path, score.stamp, score.labels) for name, score in scores.items()),
                                    normalize)


# ---------------------------------------------------------------- figures drawn on the server

PAGE_SVGS_KEPT = 1024
"""SVG drawings kept in the server (`page_svg`): a pair's page has a dozen (its overview, each model's alignments
and probabilities), 10-300 kB each."""


FINGERPRINTS_KEPT = 128
"""Specs whose fingerprint is remembered by the object (`fingerprint`): a pair's page shows a dozen figures kept
in the server; a data map's spec, made anew each run, is a few hundred kB, so not thousands are held."""
_fingerprints: OrderedDict[int, tuple[Mapping[str, Any], str]] = OrderedDict()
_fingerprints_lock = threading.Lock()


def fingerprint(spec: Mapping[str, Any]) -> str:
    """`viz.vega.common.spec_fingerprint(spec)`, the key `page_svg` keeps a drawing under; found again without
    reading the spec when the same object comes back, as a figure kept in the server (a pair's overview, gate
    strips, alignments: thousands of rows each) does at every run. The spec is held while its entry is kept, so
    its id names no other object meanwhile; specs are shared and never modified (this module's rule)."""
    with _fingerprints_lock:
        kept = _fingerprints.get(id(spec))
        if kept is not None and kept[0] is spec:
            _fingerprints.move_to_end(id(spec))
            return kept[1]
    printed = spec_fingerprint(spec)
    with _fingerprints_lock:
        _fingerprints[id(spec)] = (spec, printed)
        while len(_fingerprints) > FINGERPRINTS_KEPT:
            _fingerprints.popitem(last=False)
    return printed


@st.cache_data(max_entries=PAGE_SVGS_KEPT, show_spinner=False)
def page_svg(key: str, dark: bool, columns: int, _spec: Mapping[str, Any]) -> str:
    """`viz.vega.export.page_svg` of `_spec` in the `dark` or light look for one of `columns` columns, drawn once
    per spec, look and width (50-75 ms for an alignment heatmap, 0.5-0.8 s for a long pair's gates) and shared
    between runs and sessions: a sidebar switch, a rerun or Back to a figure already shown sends the kept SVG.
    Kept under `key` = `fingerprint(_spec)`, not under the spec itself (leading
    underscore: Streamlit does not hash it) nor its page JSON: preparing that text (records, hover texts, click
    numbers) for a projection's or a data map's thousands of points cost each run 30-70 ms before the kept
    drawing was found. A ValueError (`page_json`: a NaN in the data) is raised, not kept."""
    return vega_export.page_svg(vega_export.page_json(_spec, dark, columns))


@st.cache_resource(max_entries=16, show_spinner=False)
def points_image(key: str, plot_width: int, plot_height: int, _spec: Mapping[str, Any]) -> bytes:
    """`viz.vega.datamap.points_image` of a data map's spec (0.1-0.3 s for ten thousand points), made once per map,
    colouring and plot size and shared between runs and sessions; kept under `key` = `fingerprint(_spec)`, as `page_svg`."""
    return vega_datamap.points_image(_spec, plot_width, plot_height)


@st.cache_resource(max_entries=16, show_spinner=False)
def browser_points(key: str, _spec: Mapping[str, Any]) -> dict[str, Any]:
    """`viz.vega.datamap.browser_points` of a data map's spec, made once per map and colouring, kept under
    `key` = `fingerprint(_spec)`, as `page_svg`. Shared: never modify it."""
    return vega_datamap.browser_points(_spec)
