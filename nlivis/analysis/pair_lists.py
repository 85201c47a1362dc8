"""A model's predictions on a split as a table of pairs to read: every pair (or every error), with what a
reader filters and sorts by — the confusion cell (gold → predicted), tags, length and unknown words.

Every number in the app leads to such a list (a confusion cell, a tag's accuracy, a Table 7 cell); the Pair
explorer steps through the same list in the same order, so `filter_pairs` and `sort_pairs` are the one place
that decides what is in it and in which order.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from nlivis.store.predictions import Prediction
from nlivis.features.vocab import UNK_ID

SORTS: dict[str, tuple[str, bool]] = {
    "row": ("row", False),
    "most confident first": ("confidence", True),
    "least confident first": ("confidence", False),
    "longest first": ("length", True),
    "shortest first": ("length", False),
    "most unknown words first": ("unknown", True),
}
"""Orders a list can be read in: name → (column, descending). Ties keep the split's row order."""

UNKNOWN_FILTERS = ("any", "none", "some")
"""Unknown-word filters: any pair, pairs whose words are all in the model's vocabulary, pairs with at least one not."""

COLUMNS = ["row", "id", "gold", "predicted", "correct", "confidence", "length", "unknown", "tags", "premise",
           "hypothesis"]


@dataclass(frozen=True)
class PairFilter:
    """What a list keeps: a confusion cell (gold and / or predicted label), only errors, a tag, a length
    range (tokens of premise + hypothesis) and unknown words (`UNKNOWN_FILTERS`)."""

    gold: str | None = None
    predicted: str | None = None
    wrong_only: bool = False
    tag: str | None = None
    min_length: int | None = None
    max_length: int | None = None
    unknown: str = "any"

    def describe(self) -> str:
        """What the filter keeps, in words ("" when it keeps everything)."""
        parts = []
        if self.gold or self.predicted:
            parts.append(f"gold {self.gold or 'any'} → predicted {self.predicted or 'any'}")
        if self.wrong_only:
            parts.append("errors only")
        if self.tag:
            parts.append(f"tag {self.tag}")
        if self.min_length is not None or self.max_length is not None:
            parts.append(f"{self.min_length or 0}–{self.max_length if self.max_length is not None else '∞'} tokens")
        if self.unknown == "none":
            parts.append("no unknown words")
        elif self.unknown == "some":
            parts.append("with unknown words")
        return ", ".join(parts)


def prediction_rows(predictions: Sequence[Prediction], rows: Mapping[str, int], pairs: Sequence | None = None,
                    tags: Mapping[str, frozenset[str]] | None = None,
                    token_counts: Mapping[str, tuple[int, int]] | None = None) -> pd.DataFrame:
    """One row per labelled prediction: its 0-based split `row` (from pair id → row; NA when not in the local
    split), gold, predicted, correct, confidence, `length` and `unknown` (tokens of both sentences and those
    the model reads as unknown, from `token_counts` pair id → (length, unknown); NA where not known), `tags`
    (comma-joined; NA for a pair that was not tagged) and the sentences when `pairs` (the split in row order)
    is given."""
    labelled = [p for p in predictions if p.gold is not None]
    frame = pd.DataFrame({
        "row": pd.array([rows.get(p.id) for p in labelled], dtype="Int64"),
        "id": [p.id for p in labelled],
        "gold": [p.gold for p in labelled],
        "predicted": [p.predicted for p in labelled],
        "correct": [p.predicted == p.gold for p in labelled],
        "confidence": [round(p.confidence, 3) for p in labelled],
    })
    counts = token_counts or {}
    frame["length"] = pd.array([counts[p.id][0] if p.id in counts else None for p in labelled], dtype="Int64")
    frame["unknown"] = pd.array([counts[p.id][1] if p.id in counts else None for p in labelled], dtype="Int64")
    if tags is None:
        frame["tags"] = pd.Series([None] * len(labelled), dtype="object")
    else:
        frame["tags"] = [", ".join(sorted(tags[p.id])) if p.id in tags else None for p in labelled]
    if pairs is not None:
        frame["premise"] = [pairs[r].premise if r is not pd.NA and r is not None and 0 <= r < len(pairs) else ""
                            for r in frame["row"]]
        frame["hypothesis"] = [pairs[r].hypothesis if r is not pd.NA and r is not None and 0 <= r < len(pairs) else ""
                               for r in frame["row"]]
    else:
        frame["premise"] = frame["hypothesis"] = ""
    return frame[COLUMNS]


def filter_pairs(frame: pd.DataFrame, keep: PairFilter) -> pd.DataFrame:
    """The rows of a `prediction_rows` frame that `keep` keeps (a tag filter keeps only tagged pairs; a length
    or unknown-word filter only pairs whose counts are known)."""
    mask = np.ones(len(frame), dtype=bool)
    if keep.gold:
        mask &= (frame["gold"] == keep.gold).to_numpy()
    if keep.predicted:
        mask &= (frame["predicted"] == keep.predicted).to_numpy()
    if keep.wrong_only:
        mask &= ~frame["correct"].astype(bool).to_numpy()
    if keep.tag:
        mask &= frame["tags"].map(lambda text: isinstance(text, str) and keep.tag in text.split(", ")).to_numpy(bool)
    if keep.min_length is not None:
        mask &= (frame["length"] >= keep.min_length).fillna(False).to_numpy(bool)
    if keep.max_length is not None:
        mask &= (frame["length"] <= keep.max_length).fillna(False).to_numpy(bool)
    if keep.unknown == "none":
        mask &= (frame["unknown"] == 0).fillna(False).to_numpy(bool)
    elif keep.unknown == "some":
        mask &= (frame["unknown"] > 0).fillna(False).to_numpy(bool)
    elif keep.unknown != "any":
        raise ValueError(f"unknown-word filter must be one of {UNKNOWN_FILTERS}, got {keep.unknown!r}")
    return frame[mask].reset_index(drop=True)


def sort_pairs(frame: pd.DataFrame, order: str) -> pd.DataFrame:
    """`frame` in the order named `order` (a key of SORTS); unknown values last, ties in row order."""
    if order not in SORTS:
        raise ValueError(f"order must be one of {list(SORTS)}, got {order!r}")
    column, descending = SORTS[order]
    if column == "row":
        return frame.sort_values("row", kind="stable", na_position="last").reset_index(drop=True)
    by_row = frame.sort_values("row", kind="stable", na_position="last")
    return by_row.sort_values(column, ascending=not descending, kind="stable", na_position="last").reset_index(drop=True)


def token_counts(analyses: Mapping[str, tuple[Sequence[str], Sequence[str]]], vocabulary) -> dict[str, tuple[int, int]]:
    """Pair id → (tokens in premise + hypothesis, how many of them `vocabulary` reads as unknown), from each
    pair's tokens (pair id → (premise tokens, hypothesis tokens))."""
    counts = {}
    for pair_id, (premise, hypothesis) in analyses.items():
        tokens = [*premise, *hypothesis]
        counts[pair_id] = (len(tokens), sum(1 for token_id in vocabulary.encode(tokens) if token_id == UNK_ID))
    return counts


def position_of(frame: pd.DataFrame, row: int | None = None, pair_id: str | None = None,
                premise: str | None = None, hypothesis: str | None = None) -> int | None:
    """Where a pair (by split row, id, or text) is in a list frame, or None when it is not in it."""
    if row is not None and "row" in frame:
        found = np.flatnonzero((frame["row"] == row).fillna(False).to_numpy(bool))
    elif pair_id is not None:
        found = np.flatnonzero((frame["id"] == pair_id).to_numpy())
    else:
        found = np.flatnonzero(((frame["premise"] == premise) & (frame["hypothesis"] == hypothesis)).to_numpy())
    return int(found[0]) if len(found) else None
