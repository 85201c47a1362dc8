"""Accuracy by category on a challenge set (ANLI's reasoning tags, HANS heuristics, stress-test files …).

`accuracy_by_group` is the table `evaluate --file F --group-by FIELD` prints and the Error analysis page
shows per model: one row per value of the field, with count, correct, accuracy, its 95% interval and the
majority-label baseline. A pair with several values (a list-valued field) counts in each of its groups, so
the counts may add up to more than the number of pairs.

The interval is Wilson's score interval for a binomial proportion: categories are often small (ANLI R1
has categories of 1 to 659 pairs) and accuracies near 0 or 1, where the bootstrap percentile interval of
`significance.bootstrap_accuracy` collapses to a point (every resample of 5/5 correct is 5/5).
"""
from __future__ import annotations

from typing import Mapping, Sequence

import pandas as pd

from nlivis.analysis.breakdown import Predictions, _for_each_model, _group_row, _labelled
from nlivis.analysis.significance import wilson_interval

GROUP_COLUMNS = ["group", "count", "correct", "accuracy", "ci_low", "ci_high", "majority_label",
                 "majority_accuracy"]
OVERALL_GROUP = "(all pairs)"
"""The `group` of the summary row `accuracy_by_group(..., overall=True)` appends."""


def accuracy_by_group(predictions: Predictions | Mapping[str, Predictions],
                      groups: Mapping[str, Sequence[str]], confidence: float = 0.95,
                      overall: bool = False) -> pd.DataFrame:
    """One row per group value (most pairs first, then by name): count, correct, accuracy, Wilson interval,
    majority label and its share. Only labelled pairs whose id is in `groups` count. With `overall`, a last
    row `OVERALL_GROUP` covers every such pair once. Given {model: predictions}, the per-model tables are
    stacked with a leading `model` column (side by side on the page)."""
    if isinstance(predictions, Mapping):
        return _for_each_model(accuracy_by_group, predictions, groups, confidence, overall)
    frame = _labelled(predictions)
    frame = frame[frame["id"].isin(groups.keys())].reset_index(drop=True)
    exploded = frame.assign(group=frame["id"].map(lambda pair_id: tuple(groups[pair_id]))).explode("group")
    rows = []
    for value, members in exploded.groupby("group", sort=False):
        rows.append({"group": str(value), **_group_row(members)})
    rows.sort(key=lambda row: (-row["count"], row["group"]))
    if overall and len(frame):
        rows.append({"group": OVERALL_GROUP, **_group_row(frame)})
    for row in rows:
        row["ci_low"], row["ci_high"] = wilson_interval(row["correct"], row["count"], confidence)
    return pd.DataFrame(rows, columns=GROUP_COLUMNS)


def pairs_in_group(predictions: Predictions, groups: Mapping[str, Sequence[str]], group: str) -> pd.DataFrame:
    """The labelled predictions behind one row of `accuracy_by_group` (all of them for `OVERALL_GROUP`)."""
    frame = _labelled(predictions)
    if group == OVERALL_GROUP:
        return frame[frame["id"].isin(groups.keys())].reset_index(drop=True)
    return frame[frame["id"].map(lambda pair_id: group in groups.get(pair_id, ()))].reset_index(drop=True)
