"""A multi-head model's attention as data: its head family (layer × head × block), the summaries over its heads,
each head's thumbnail blocks and one head's full square of both sentences' words (drawn by
`nlivis.viz.vega.head_grid`: bertviz's "model view" and one head large).

A model whose `Alignment` entries carry a `head` (MiniLM: 6 layers × 12 heads × four word blocks) is a *head
family*: drawing each entry as its own heatmap made hundreds of figures for one pair. Everything is decided from the
entries' types and fields alone.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from nlivis.models.trace import Alignment, Trace
from nlivis.viz.common import fitted_range, real_length
from nlivis.viz.heatmaps import alignment_matrix

DIRECTIONS = ("p→h", "h→p", "p→p", "h→h")
"""The blocks a thumbnail can show, cross-sentence first."""
SIDES = {"p": "premise", "h": "hypothesis"}
GRID_QUANTILE = 0.99
"""The grid's shared colour scale ends at this quantile of its weights when that is below 0.95 (stated on its bar):
many thin weights would otherwise all be the darkest colour."""


@dataclass(frozen=True)
class HeadFamily:
    """The multi-head alignments of one trace: (layer, head, direction) → entry."""

    entries: dict[tuple[int, int, str], Alignment]

    @property
    def layers(self) -> list[int]:
        return sorted({layer for layer, _, _ in self.entries})

    @property
    def heads(self) -> list[int]:
        return sorted({head for _, head, _ in self.entries})

    @property
    def directions(self) -> list[str]:
        found = {direction for _, _, direction in self.entries}
        return [d for d in DIRECTIONS if d in found] + sorted(found - set(DIRECTIONS))

    def picks(self) -> list[str]:
        """Every head as `layer.head` ("3.7"), the spelling a pick has in the URL."""
        return [f"{layer}.{head}" for layer in self.layers for head in self.heads]

    def default_pick(self) -> str:
        """The last layer's first head: what a model's classifier reads last."""
        return f"{self.layers[-1]}.{self.heads[0]}"

    def blocks(self, pick: str) -> dict[str, Alignment]:
        """The picked head's entries, direction → entry."""
        layer, head = (int(part) for part in pick.split("."))
        return {d: e for (l, h, d), e in self.entries.items() if (l, h) == (layer, head)}


def head_family(trace: Trace) -> HeadFamily | None:
    """The trace's alignments that name a head, or None when it has none (one alignment per layer and direction)."""
    entries = {(e.layer, e.head, e.direction): e for e in trace.of_type(Alignment).values() if e.head is not None}
    return HeadFamily(entries) if entries else None


def summaries(trace: Trace) -> dict[str, dict[str, Alignment]]:
    """In a trace with a head family, its head-less alignments (summaries over heads, such as attention rollout),
    grouped by their names' stem ("rollout.p→h" → "rollout"), each group direction → entry."""
    if head_family(trace) is None:
        return {}
    groups: dict[str, dict[str, Alignment]] = defaultdict(dict)
    for name, entry in trace.of_type(Alignment).items():
        if entry.head is None:
            stem = name[:-len(entry.direction) - 1] if name.endswith(f".{entry.direction}") else name
            groups[stem][entry.direction] = entry
    return dict(groups)


def shared_range(values: np.ndarray) -> tuple[float, float, str | None]:
    """0 to 1 (or a narrow range's own, `fitted_range`), or 0 to the `GRID_QUANTILE` of the weights when that is
    below 0.95, with a note saying so."""
    low, high, note = fitted_range(values)
    finite = values[np.isfinite(values)]
    top = float(np.quantile(finite, GRID_QUANTILE)) if finite.size else 1.0
    if note is None and 0.0 < top < 0.95:
        return 0.0, top, f"colour scale 0–{top:.2f}: {GRID_QUANTILE:.0%} of the weights are below it"
    return low, high, note


@dataclass
class Thumbnails:
    """Every head's `direction` block of one pair: (layer, head) → its real rows × columns (a head the trace lacks
    has none), and the words along its rows and columns."""

    blocks: dict[tuple[int, int], np.ndarray]
    row_words: list[str]
    col_words: list[str]

    def values(self) -> np.ndarray:
        """Every block's weights in one flat array (what the grid's one colour scale is fitted to)."""
        return np.concatenate([b.ravel() for b in self.blocks.values()]) if self.blocks else np.zeros(0)


def thumbnails(family: HeadFamily, direction: str, index: int, premise_tokens: Sequence[str],
               hypothesis_tokens: Sequence[str]) -> Thumbnails:
    """Every layer's and head's `direction` block of pair `index`, padding cut, layers then heads in order."""
    blocks: dict[tuple[int, int], np.ndarray] = {}
    rows: list[str] = []
    cols: list[str] = []
    for layer in family.layers:
        for head in family.heads:
            entry = family.entries.get((layer, head, direction))
            if entry is not None:
                blocks[(layer, head)], rows, cols = alignment_matrix(entry, index, premise_tokens, hypothesis_tokens)
    return Thumbnails(blocks, rows, cols)


def full_square(blocks: dict[str, Alignment], index: int, premise_tokens: Sequence[str],
                hypothesis_tokens: Sequence[str]) -> tuple[np.ndarray, list[str], int]:
    """Pair `index`'s word blocks (direction → entry) as one square over the premise's then the hypothesis'
    words (a missing block stays blank): (values, the words along both axes, the premise's length)."""
    tokens = {"premise": premise_tokens, "hypothesis": hypothesis_tokens}
    lengths = {sentence: len(words) for sentence, words in tokens.items()}
    for entry in blocks.values():
        for sentence, size in ((entry.rows, entry.weights.shape[1]), (entry.cols, entry.weights.shape[2])):
            lengths[sentence] = real_length(tokens[sentence][:lengths[sentence]], size)
    p, h = lengths["premise"], lengths["hypothesis"]
    values = np.full((p + h, p + h), np.nan)
    spans = {"premise": slice(0, p), "hypothesis": slice(p, p + h)}
    for entry in blocks.values():
        block = alignment_matrix(entry, index, premise_tokens, hypothesis_tokens)[0]
        rows, cols = spans[entry.rows], spans[entry.cols]
        values[rows, cols] = block[:rows.stop - rows.start, :cols.stop - cols.start]
    return values, [*premise_tokens[:p], *hypothesis_tokens[:h]], p
