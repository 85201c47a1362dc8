"""An edited pair beside its original, as a model read both: which tokens the two share, the difference of an
alignment on those tokens, and how much of an attribution fell on the words the edit changed.

Tokens are matched by their text (`difflib`), not by the edit's recorded positions, so a typed edit, an
inserted "not" and a one-word substitution are handled alike: equal runs are shared, a replaced run of the
same length is shared position by position and marked changed (the substituted word keeps its row and
column, so its difference is drawn), and inserted or removed tokens have no counterpart (they are listed,
not drawn).
"""
from __future__ import annotations

from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Sequence

import numpy as np

CHANGED_MARK = "[{}]"
"""How a changed token is written on axes and strips: `[short]`."""


@dataclass(frozen=True)
class TokenMatch:
    """Original position → edited position for the tokens both sentences have (`shared`, in order), whether
    each of those was changed, and the tokens of either side without a counterpart."""

    shared: tuple[tuple[int, int], ...]
    changed: tuple[bool, ...]
    changed_original: tuple[int, ...]
    """Original positions not equal to their counterpart (replaced, or removed)."""
    changed_edited: tuple[int, ...]
    """Edited positions not equal to their counterpart (replacing, or inserted)."""
    unmatched_original: tuple[int, ...]
    unmatched_edited: tuple[int, ...]


def match_tokens(original: Sequence[str], edited: Sequence[str]) -> TokenMatch:
    """Match two token lists (case-sensitive text; see the module docstring)."""
    shared, changed, changed_original, changed_edited, lone_original, lone_edited = [], [], [], [], [], []
    matcher = SequenceMatcher(a=list(original), b=list(edited), autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            shared += zip(range(i1, i2), range(j1, j2))
            changed += [False] * (i2 - i1)
            continue
        changed_original += range(i1, i2)
        changed_edited += range(j1, j2)
        if tag == "replace" and i2 - i1 == j2 - j1:
            shared += zip(range(i1, i2), range(j1, j2))
            changed += [True] * (i2 - i1)
        else:
            lone_original += range(i1, i2)
            lone_edited += range(j1, j2)
    return TokenMatch(tuple(shared), tuple(changed), tuple(changed_original), tuple(changed_edited),
                      tuple(lone_original), tuple(lone_edited))


def marked(tokens: Sequence[str], changed: Sequence[int]) -> list[str]:
    """Tokens with the changed positions written as `[token]`."""
    changed = set(changed)
    return [CHANGED_MARK.format(t) if i in changed else str(t) for i, t in enumerate(tokens)]


def _axis_labels(match: TokenMatch, original: Sequence[str], edited: Sequence[str]) -> list[str]:
    return [f"{original[i]}→{edited[j]}" if change else str(original[i])
            for (i, j), change in zip(match.shared, match.changed)]


@dataclass(frozen=True)
class AlignmentDifference:
    """Edited minus original weights over the shared rows × columns, labelled by their tokens (a changed one
    as `old→new`), which rows / columns were changed, and the tokens left out for want of a counterpart."""

    values: np.ndarray
    row_labels: list[str]
    col_labels: list[str]
    changed_rows: list[bool]
    changed_cols: list[bool]
    left_out: list[str]


def alignment_difference(before: np.ndarray, before_rows: Sequence[str], before_cols: Sequence[str],
                         after: np.ndarray, after_rows: Sequence[str], after_cols: Sequence[str]) -> AlignmentDifference:
    """`after − before` on the tokens the two alignments share (rows matched to rows, columns to columns)."""
    before, after = np.asarray(before, dtype=float), np.asarray(after, dtype=float)
    rows, cols = match_tokens(before_rows, after_rows), match_tokens(before_cols, after_cols)
    old_rows = [i for i, _ in rows.shared]
    new_rows = [j for _, j in rows.shared]
    old_cols = [i for i, _ in cols.shared]
    new_cols = [j for _, j in cols.shared]
    values = after[np.ix_(new_rows, new_cols)] - before[np.ix_(old_rows, old_cols)]
    left_out = ([f"{before_rows[i]} (original row)" for i in rows.unmatched_original]
                + [f"{after_rows[j]} (edited row)" for j in rows.unmatched_edited]
                + [f"{before_cols[i]} (original column)" for i in cols.unmatched_original]
                + [f"{after_cols[j]} (edited column)" for j in cols.unmatched_edited])
    return AlignmentDifference(values, _axis_labels(rows, before_rows, after_rows),
                               _axis_labels(cols, before_cols, after_cols), list(rows.changed), list(cols.changed),
                               left_out)


@dataclass(frozen=True)
class ChangedShare:
    """How much of one attribution fell on the changed tokens: their share of the total |score| over both
    sentences, and the best rank (1 = the largest |score|) among all tokens; None when nothing changed."""

    share: float | None
    best_rank: int | None
    tokens: int


def changed_share(premise_scores: Sequence[float], hypothesis_scores: Sequence[float],
                  changed_premise: Sequence[int], changed_hypothesis: Sequence[int]) -> ChangedShare:
    magnitudes = np.abs(np.asarray([*premise_scores, *hypothesis_scores], dtype=float))
    offset = len(premise_scores)
    positions = [i for i in changed_premise if i < offset] + [offset + j for j in changed_hypothesis
                                                              if j < len(hypothesis_scores)]
    if not positions or magnitudes.size == 0:
        return ChangedShare(None, None, int(magnitudes.size))
    total = float(magnitudes.sum())
    order = np.argsort(-magnitudes, kind="stable")
    rank = {int(position): r for r, position in enumerate(order, start=1)}
    return ChangedShare(float(magnitudes[positions].sum()) / total if total > 0 else 0.0,
                        min(rank[p] for p in positions), int(magnitudes.size))
