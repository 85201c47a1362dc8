"""Accuracy by category on a challenge set (ANLI's reasoning tags, HANS heuristics, stress-test files …).

`accuracy_by_group` is the table `evaluate --file F --group-by FIELD` prints and the Error analysis page
shows per model: one row per value of the field, with count, correct, accuracy, its 95% interval and the
majority-label baseline. A pair with several values (a list-valued field) counts in each of its groups, so
the counts may add up to more than the number of pairs.

The interval is Wilson's score interval for a binomial proportion: categories are often small (ANLI R1
has categories of 1 to 659 pairs) and accuracies near 0 or 1, where the bootstrap percentile interval of
`significance.bootstrap_accuracy` collapses to a point (every resample of 5/5 correct is 5/5).

`contrast_consistency` is the contrast-set number beside it (`evaluate --file F --contrast-group FIELD`, and
files in counterfactually-augmented NLI's layout by themselves): the share of groups — an original and its
edits — where the model is right on every member. Broken down by a field (`--group-by edit`, or `file` for the
counterfactual layout) whose value marks the original (`ORIGINAL_VALUE`), each value's row takes an original
together with its edits of that value, and the original's row takes each original with all its edits (the
per-original consistency); without such a value, each row cuts the groups to that value's members.

`two_way_predictions` folds stored 3-way predictions into the 2-way scheme (`--label-scheme 2way`).
"""
from __future__ import annotations

from dataclasses import replace
from typing import Mapping, Sequence

import pandas as pd

from nlivis.analysis.breakdown import Predictions, for_each_model, group_row, labelled
from nlivis.analysis.significance import wilson_interval
from nlivis.data.challenge import BINARY_LABELS, NO_VALUE, two_way_label
from nlivis.data.records import NLI_LABELS
from nlivis.store.predictions import Prediction

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
        return for_each_model(accuracy_by_group, predictions, groups, confidence, overall)
    frame = labelled(predictions)
    frame = frame[frame["id"].isin(groups.keys())].reset_index(drop=True)
    exploded = frame.assign(group=frame["id"].map(lambda pair_id: tuple(groups[pair_id]))).explode("group")
    rows = []
    for value, members in exploded.groupby("group", sort=False):
        rows.append({"group": str(value), **group_row(members)})
    rows.sort(key=lambda row: (-row["count"], row["group"]))
    if overall and len(frame):
        rows.append({"group": OVERALL_GROUP, **group_row(frame)})
    for row in rows:
        row["ci_low"], row["ci_high"] = wilson_interval(row["correct"], row["count"], confidence)
    return pd.DataFrame(rows, columns=GROUP_COLUMNS)


def pairs_in_group(predictions: Predictions, groups: Mapping[str, Sequence[str]], group: str) -> pd.DataFrame:
    """The labelled predictions behind one row of `accuracy_by_group` (all of them for `OVERALL_GROUP`)."""
    frame = labelled(predictions)
    if group == OVERALL_GROUP:
        return frame[frame["id"].isin(groups.keys())].reset_index(drop=True)
    return frame[frame["id"].map(lambda pair_id: group in groups.get(pair_id, ()))].reset_index(drop=True)


def two_way_predictions(predictions: Sequence[Prediction]) -> list[Prediction]:
    """Predictions in the 2-way scheme: gold and predicted label through `two_way_label`, and 3-way
    probabilities (`NLI_LABELS` order) folded to (p(entailment), p(neutral) + p(contradiction)). Predictions
    already 2-way are unchanged, so folding twice is folding once."""
    folded = []
    for prediction in predictions:
        probs = prediction.probs
        if len(probs) == len(NLI_LABELS):
            probs = (probs[0], probs[1] + probs[2])
        elif len(probs) != len(BINARY_LABELS):
            raise ValueError(f"pair {prediction.id}: {len(probs)} probabilities; the 2-way scheme folds 3-way NLI "
                             "predictions")
        folded.append(replace(prediction, gold=two_way_label(prediction.gold),
                              predicted=two_way_label(prediction.predicted), probs=probs))
    return folded


ORIGINAL_VALUE = "original"
"""The category value (any case) that marks the original of a contrast group, as counterfactually-augmented
NLI's `file` field does; an edits file says it in its edit-kind column."""

CONTRAST_COLUMNS = ["group", "contrast_groups", "consistent", "consistency", "ci_low", "ci_high", "members",
                    "member_accuracy", "single_member_groups"]
"""`contrast_groups`: groups of two or more labelled members; `consistent`: those the model gets right on
every member; `consistency` = consistent / contrast_groups with its Wilson interval; `members` and
`member_accuracy`: the pairs of those groups and the plain accuracy on them; `single_member_groups`: groups
with one labelled member, which are no contrast groups and are left out."""


def contrast_consistency(predictions: Predictions | Mapping[str, Predictions],
                         contrast: Mapping[str, Sequence[str]],
                         groups: Mapping[str, Sequence[str]] | None = None,
                         confidence: float = 0.95) -> pd.DataFrame:
    """Contrast consistency (Gardner et al. 2020): the share of contrast groups — an original and its edits,
    the pairs sharing a value of `contrast` (pair id → its group ids; `NO_VALUE` is no group) — where the model
    is right on every labelled member, with a Wilson interval, beside the accuracy on the same pairs.

    The last row, `OVERALL_GROUP`, takes whole groups. With `groups` (a category field: pair id → values),
    one row per category first. When some pair's category is `ORIGINAL_VALUE`, a category's row takes each
    original together with its members of that category (by `file` of the counterfactual layout,
    `revised_premise` asks whether an original and both its revised premises are right), and the original's
    own row takes the groups that hold an original, whole: the share of originals right together with all
    their edits. Otherwise each group is cut to its members of the category. Given {model: predictions},
    tables are stacked with a leading `model` column."""
    if isinstance(predictions, Mapping):
        return for_each_model(contrast_consistency, predictions, contrast, groups, confidence)
    frame = labelled(predictions)
    frame = frame[frame["id"].isin(contrast.keys())].reset_index(drop=True)
    members = frame.assign(contrast=frame["id"].map(lambda pair_id: tuple(contrast[pair_id]))).explode("contrast")
    members = members[members["contrast"].notna() & (members["contrast"] != NO_VALUE)]
    rows = []
    if groups is not None:
        rows = _rows_by_category(members, groups, confidence)
    rows.append({"group": OVERALL_GROUP, **_consistency_row(members, confidence)})
    return pd.DataFrame(rows, columns=CONTRAST_COLUMNS)


def _rows_by_category(members: pd.DataFrame, groups: Mapping[str, Sequence[str]], confidence: float) -> list[dict]:
    """`contrast_consistency`'s rows per category (see there for what each row's groups hold)."""
    categories = members["id"].map(lambda pair_id: tuple(groups.get(pair_id, ())))
    originals = members[categories.map(lambda values: any(str(v).lower() == ORIGINAL_VALUE for v in values))]
    rows = []
    for value, part in members.assign(category=categories).explode("category").dropna(
            subset=["category"]).groupby("category", sort=False):
        part = part.drop(columns="category")
        if len(originals) and str(value).lower() == ORIGINAL_VALUE:
            part = members[members["contrast"].isin(originals["contrast"])]
        elif len(originals):
            part = pd.concat([originals[originals["contrast"].isin(part["contrast"])], part]).drop_duplicates(
                ["id", "contrast"])
        rows.append({"group": str(value), **_consistency_row(part, confidence)})
    rows.sort(key=lambda row: (-row["contrast_groups"], row["group"]))
    return rows


def _consistency_row(members: pd.DataFrame, confidence: float) -> dict:
    """Consistency over the contrast groups of `members` (one row per pair and group id it belongs to)."""
    sizes = members["correct"].astype(bool).groupby(members["contrast"]).agg(["size", "all"])
    contrast_groups = sizes[sizes["size"] >= 2]
    counted = members[members["contrast"].isin(contrast_groups.index)]
    consistent = int(contrast_groups["all"].sum())
    total = len(contrast_groups)
    low, high = wilson_interval(consistent, total, confidence)
    if total:  # the closed form leaves ~1e-17 where the bound is exactly 0 or 1
        low, high = (0.0 if consistent == 0 else low), (1.0 if consistent == total else high)
    correct = int(counted["correct"].astype(bool).sum())
    return {"contrast_groups": total, "consistent": consistent,
            "consistency": consistent / total if total else float("nan"), "ci_low": low, "ci_high": high,
            "members": len(counted), "member_accuracy": correct / len(counted) if len(counted) else float("nan"),
            "single_member_groups": int((sizes["size"] == 1).sum())}
