"""Token × token and token × slot heatmaps: alignments (attention), AMN memory keys, an edit's differences."""
from __future__ import annotations

from typing import Sequence

import numpy as np
import plotly.graph_objects as go

from nlivis.models.trace import Alignment, MemoryKeys
from nlivis.viz.common import DIVERGING_SCALE, SEQUENTIAL_SCALE, fitted_range, labelled_heatmap, real_length, token_ticks


def _tokens_of(sentence: str, premise_tokens: Sequence[str], hypothesis_tokens: Sequence[str]) -> Sequence[str]:
    return premise_tokens if sentence == "premise" else hypothesis_tokens


def alignment_matrix(entry: Alignment, index: int, premise_tokens: Sequence[str], hypothesis_tokens: Sequence[str]) -> tuple[np.ndarray, list[str], list[str]]:
    """The real (unpadded) rows × columns of one pair's alignment, with their tokens."""
    weights = entry.weights[index].detach().float().cpu().numpy()
    row_tokens = list(_tokens_of(entry.rows, premise_tokens, hypothesis_tokens))
    col_tokens = list(_tokens_of(entry.cols, premise_tokens, hypothesis_tokens))
    n_rows = real_length(row_tokens, weights.shape[0])
    n_cols = real_length(col_tokens, weights.shape[1])
    return weights[:n_rows, :n_cols], row_tokens[:n_rows], col_tokens[:n_cols]


def alignment_title(entry: Alignment, label: str = "") -> str:
    """'layer 2 · p→h · softmax' (plus the entry's name when given)."""
    parts = [label] if label else []
    parts += [f"layer {entry.layer}", entry.direction, entry.kind]
    return " · ".join(parts)


def alignment_heatmap(entry: Alignment, index: int, premise_tokens: Sequence[str], hypothesis_tokens: Sequence[str],
                      label: str = "", height: int | None = None) -> go.Figure:
    """One pair's alignment weights: rows and columns labelled by their sentence's tokens, padding cut.

    Normalised kinds (softmax, sparsemax) share the fixed range [0, 1] so two figures compare by eye, unless
    the weights span less than a tenth of it (near-uniform attention): then they get their own range, stated
    in the title; raw similarities use a diverging scale centred on zero.
    """
    values, rows, cols = alignment_matrix(entry, index, premise_tokens, hypothesis_tokens)
    note = None
    if entry.kind == "similarity":
        bound = float(np.abs(values).max()) if values.size else 1.0
        trace = labelled_heatmap(values, rows, cols, "similarity", entry.rows, entry.cols, DIVERGING_SCALE,
                                 zmin=-bound, zmax=bound, name=label or entry.direction)
    else:
        zmin, zmax, note = fitted_range(values)
        trace = labelled_heatmap(values, rows, cols, f"{entry.kind} weight", entry.rows, entry.cols,
                                 SEQUENTIAL_SCALE, zmin=zmin, zmax=zmax, name=label or entry.direction)
    figure = go.Figure(trace)
    figure.update_layout(
        title=" · ".join(p for p in (alignment_title(entry, label), note) if p),
        xaxis={**token_ticks(cols), "title": f"{entry.cols} tokens", "side": "bottom"},
        yaxis={**token_ticks(rows, axis="y"), "title": f"{entry.rows} tokens", "autorange": "reversed"},
        height=height or max(260, 60 + 22 * len(rows) + 40 + (40 if len(cols) > 16 else 0)),
        margin={"l": 10, "r": 10, "t": 50, "b": 10},
    )
    return figure


def memory_keys_heatmap(entry: MemoryKeys, index: int, tokens: Sequence[str], label: str = "") -> go.Figure:
    """AMN's memory addressing: for each real token a distribution over the memory slots. Near-uniform
    addressing (e.g. 0.098–0.102 over ten slots) gets its own colour range, stated in the title."""
    values, rows, slots = memory_keys_matrix(entry, index, tokens)
    zmin, zmax, note = fitted_range(values)
    trace = labelled_heatmap(values, rows, slots, "address weight", f"{entry.tokens} token", "memory slot",
                             SEQUENTIAL_SCALE, zmin=zmin, zmax=zmax, name=label or f"memory keys {entry.tokens}")
    figure = go.Figure(trace)
    figure.update_layout(
        title=" · ".join([p for p in (label, f"memory keys · {entry.tokens} · layer {entry.layer}",
                                      note or (f"weights {values.min():.3f}–{values.max():.3f}" if values.size else "")) if p]),
        xaxis={**token_ticks(slots), "title": "memory slot"},
        yaxis={**token_ticks(rows, axis="y"), "title": f"{entry.tokens} tokens", "autorange": "reversed"},
        height=max(260, 60 + 22 * len(rows) + 40),
        margin={"l": 10, "r": 10, "t": 50, "b": 10},
    )
    return figure


def memory_keys_matrix(entry: MemoryKeys, index: int, tokens: Sequence[str]) -> tuple[np.ndarray, list[str], list[str]]:
    """One pair's memory addressing [real tokens, slots], with the tokens and slot names."""
    weights = entry.weights[index].detach().float().cpu().numpy()
    n = real_length(tokens, weights.shape[0])
    return weights[:n], list(tokens)[:n], [f"slot {s}" for s in range(weights.shape[1])]


def difference_heatmap(values: np.ndarray, row_labels: Sequence[str], col_labels: Sequence[str],
                       changed_rows: Sequence[bool], changed_cols: Sequence[bool], row_name: str, col_name: str,
                       title: str) -> go.Figure:
    """Edited minus original weights on the tokens two alignments share, on a diverging scale centred on zero
    (red: the edited pair attends more). Changed tokens (labelled `old→new`) are bold on the axes and their row
    and column are outlined, so one sees whether the attention moved to or from the word that changed."""
    values = np.asarray(values, dtype=float)
    bound = float(np.abs(values).max()) if values.size else 0.0
    bound = bound if bound > 0 else 1.0
    trace = labelled_heatmap(values, row_labels, col_labels, "edited − original", row_name, col_name, DIVERGING_SCALE,
                             zmin=-bound, zmax=bound, name=title)
    trace.update(reversescale=True)
    x_ticks, y_ticks = token_ticks(col_labels), token_ticks(row_labels, axis="y")
    x_ticks["ticktext"] = [f"<b>{t}</b>" if c else t for t, c in zip(x_ticks["ticktext"], changed_cols)]
    y_ticks["ticktext"] = [f"<b>{t}</b>" if c else t for t, c in zip(y_ticks["ticktext"], changed_rows)]
    outline = {"type": "rect", "line": {"color": "#222", "width": 2}, "fillcolor": "rgba(0,0,0,0)"}
    shapes = [{**outline, "x0": -0.5, "x1": len(col_labels) - 0.5, "y0": r - 0.5, "y1": r + 0.5}
              for r, changed in enumerate(changed_rows) if changed]
    shapes += [{**outline, "x0": c - 0.5, "x1": c + 0.5, "y0": -0.5, "y1": len(row_labels) - 0.5}
               for c, changed in enumerate(changed_cols) if changed]
    figure = go.Figure(trace)
    figure.update_layout(
        title=f"{title} · largest change {bound:.3f}" if values.size else f"{title} · no shared tokens",
        xaxis={**x_ticks, "title": f"{col_name} tokens (shared)", "side": "bottom"},
        yaxis={**y_ticks, "title": f"{row_name} tokens (shared)", "autorange": "reversed"},
        shapes=shapes, height=max(260, 60 + 22 * len(row_labels) + 40 + (40 if len(col_labels) > 16 else 0)),
        margin={"l": 10, "r": 10, "t": 50, "b": 10},
    )
    return figure
