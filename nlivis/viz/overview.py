"""All loaded models at a glance for one pair: the panels each model shows, as data (drawn by
`nlivis.viz.vega.overview`).

In the spirit of bertviz's head view: each model's main cross-sentence alignment (its last layer, both
directions), DIIN's interaction summary and AMN's memory keys, read from the trace entries alone. Every panel
is laid out the same way — the premise's tokens across (the longer sentence, read left to right on a wide
screen), the hypothesis' tokens (or memory slots) down — so the eye can run down the page and compare the
models; a premise → hypothesis alignment is given transposed for that (its columns then sum to 1, and its title
says so).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from nlivis.models.trace import Alignment, FeatureMaps, MemoryKeys, Trace
from nlivis.viz.channel_grid import real_maps
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
    """One small multiple: values [rows, cols] with their labels, the colour scale it uses and its title."""

    values: np.ndarray
    rows: list[str]
    cols: list[str]
    row_name: str
    col_name: str
    value_name: str
    colour: str
    title: str


ALIGNMENT, INTERACTION, MEMORY_PREMISE, MEMORY_HYPOTHESIS = ("alignment weight", "interaction", "premise memory",
                                                          "hypothesis memory")
"""The colour scales a panel can use: alignment weights (0–1, shared), DIIN's interaction summary (signed), AMN's
memory keys of each sentence (fitted to their own range: near-uniform addressing would be one flat block on 0–1)."""


def _last_cross(alignments: dict[str, Alignment], rows: str, cols: str) -> tuple[str, Alignment] | None:
    """The highest-layer normalised alignment from `rows` over `cols` (a model's main alignment); of a multi-head
    model, its summary over heads (MiniLM's attention rollout) rather than one head of the last layer."""
    found = [(name, a) for name, a in alignments.items() if a.rows == rows and a.cols == cols]
    normalised = [(name, a) for name, a in found if a.kind != "similarity"] or found
    return max(normalised, key=lambda item: (item[1].layer, item[1].head is None)) if normalised else None


def glance_entries(trace: Trace) -> list[tuple[str, Any]]:
    """The trace entries a model's row of the glance draws, (name, entry) in display order, at most two: its main
    alignment hypothesis → premise and premise → hypothesis (`_last_cross`), or else its interaction feature maps
    (DIIN), then its memory keys (AMN)."""
    alignments = trace.of_type(Alignment)
    chosen = [found for rows, cols in (("hypothesis", "premise"), ("premise", "hypothesis"))
              if (found := _last_cross(alignments, rows, cols)) is not None]
    maps = {name: m for name, m in trace.of_type(FeatureMaps).items() if m.token_axes}
    if not chosen and maps:
        chosen.append(next(((n, m) for n, m in maps.items() if m.stage == "interaction"), next(iter(maps.items()))))
    chosen.extend(trace.of_type(MemoryKeys).items())
    return chosen[:2]


def model_panels(reading: ModelReading) -> list[Panel]:
    """A model's panels in display order (`glance_entries`), each with the premise (or a sentence) across."""
    panels: list[Panel] = []
    premise, hypothesis = list(reading.premise_tokens), list(reading.hypothesis_tokens)
    alignments = reading.trace.of_type(Alignment)
    for name, entry in glance_entries(reading.trace):
        if isinstance(entry, Alignment):
            rows, cols = entry.rows, entry.cols
            values, row_tokens, col_tokens = alignment_matrix(entry, 0, premise, hypothesis)
            title = f"{entry.direction} · layer {entry.layer} · {entry.kind}"
            if entry.head is None and any(a.head is not None for a in alignments.values()):  # a summary over heads
                title = f"{name} · {entry.kind} (all layers and heads)"
            value_name = f"{entry.kind} weight ({rows} → {cols})"
            if rows == "premise":  # drawn transposed, so the premise runs across as in every panel
                values, row_tokens, col_tokens = values.T, col_tokens, row_tokens
                title += " · transposed: each column sums to 1"
            panels.append(Panel(values, row_tokens, col_tokens, "hypothesis token", "premise token", value_name,
                                ALIGNMENT, title))
        elif isinstance(entry, FeatureMaps):
            values = real_maps(entry, 0, premise, hypothesis).mean(axis=0).T  # [hypothesis, premise]
            panels.append(Panel(values, hypothesis[:values.shape[0]], premise[:values.shape[1]], "hypothesis token",
                                "premise token", "channel mean", INTERACTION,
                                f"{entry.stage} · mean of {entry.maps.shape[1]} channels"))
        else:
            values, tokens, slots = memory_keys_matrix(entry, 0, premise if entry.tokens == "premise" else hypothesis)
            panels.append(Panel(values.T, slots, tokens, "memory slot", f"{entry.tokens} token", "address weight",
                                MEMORY_PREMISE if entry.tokens == "premise" else MEMORY_HYPOTHESIS,
                                f"memory keys · {entry.tokens} tokens across"))
    return panels
