"""Error analysis tables: accuracy by annotation tag, gold label and genre; confusion matrices;
per-label precision/recall/F1; DIIN-Table-7-style layouts; paired model comparisons; disagreements.

Everything takes predictions (a list of `Prediction` or the frame `predictions_frame` makes) and plain
mappings keyed by pair id, and returns pandas DataFrames the app shows as they are. Pairs without a
gold label are left out of every accuracy.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from nlivis.store.predictions import Prediction, predictions_frame
from nlivis.analysis.significance import (DEFAULT_RESAMPLES, DEFAULT_SEED, Interval, discordant_counts,
                                          mcnemar_exact, paired_bootstrap, wilson_interval)
from nlivis.analysis.tags import TAGS, approximate_tags, unavailable_tags
from nlivis.data.records import NLI_LABELS, Pair
from nlivis.data.taxonomies import REFERENCE_MODELS, TAXINLI_CATEGORIES, TaxonomyFile, TaxonomyRow, join_to_pairs

Predictions = Sequence[Prediction] | pd.DataFrame
TAG_COLUMNS = ["tag", "count", "frequency", "correct", "accuracy", "ci_low", "ci_high", "majority_label",
               "majority_accuracy", "status"]
"""`ci_low`/`ci_high`: the accuracy's 95% Wilson interval; `majority_accuracy`: always answering the tag's
most frequent gold label (`majority_label`), the baseline of the MultiNLI tag script."""
TAG_SOURCES = ("gold", "automatic")
"""Where a pair's tags come from: the human annotation (RepEval 2017 release, or a --tags-file), or
the automatic tagger (`nlivis.analysis.tags`) for pairs nobody annotated."""


def for_each_model(table_fn, predictions, *args, **kwargs) -> pd.DataFrame:
    """Apply a one-model table function to every model of a {model: predictions} mapping and stack
    the results with a leading `model` column."""
    tables = []
    for model, model_predictions in predictions.items():
        table = table_fn(model_predictions, *args, **kwargs)
        table.insert(0, "model", model)
        tables.append(table)
    return pd.concat(tables, ignore_index=True) if tables else pd.DataFrame()


def labelled(predictions: Predictions) -> pd.DataFrame:
    frame = predictions_frame(predictions)
    return frame[frame["gold"].notna()].reset_index(drop=True)


def group_row(group: pd.DataFrame) -> dict:
    count = len(group)
    correct = int(group["correct"].astype(bool).sum())
    if count:
        label_counts = group["gold"].value_counts()
        majority_label, majority_count = label_counts.index[0], int(label_counts.iloc[0])
    else:
        majority_label, majority_count = None, 0
    low, high = wilson_interval(correct, count)
    return {"count": count, "correct": correct,
            "accuracy": correct / count if count else np.nan, "ci_low": low, "ci_high": high,
            "majority_label": majority_label,
            "majority_accuracy": majority_count / count if count else np.nan}


def accuracy_by_tag(predictions: Predictions | Mapping[str, Predictions], tags: Mapping[str, frozenset[str]],
                    tag_order: Sequence[str] = TAGS,
                    unavailable: Mapping[str, str] | None = None,
                    approximate: Mapping[str, str] | None = None) -> pd.DataFrame:
    """One row per tag: count, frequency, correct, accuracy, majority label and its share.

    Only labelled pairs that appear in `tags` count (a hand-annotated subset covers part of a split);
    `frequency` is the share of those pairs carrying the tag. The majority baseline is the accuracy of
    always answering the tag's most frequent gold label, as in the MultiNLI tag script. Tags listed in
    `unavailable` (tag → reason, e.g. from `tags.unavailable_tags()`) get NaN numbers and the reason
    in `status`, so a missing WordNet is shown rather than read as "no antonym pairs"; tags listed in
    `approximate` (tag → why, `tags.approximate_tags()`) keep their numbers with `status` "approximate: …".
    Given {model name: predictions}, the per-model tables are stacked with a leading `model` column.
    """
    if isinstance(predictions, Mapping):
        return for_each_model(accuracy_by_tag, predictions, tags, tag_order, unavailable, approximate)
    unavailable = dict(unavailable or {})
    approximate = dict(approximate or {})
    frame = labelled(predictions)
    # membership and lookups in Python: pandas' isin on Arrow strings makes a pyarrow scalar of every tagged id
    frame = frame[np.fromiter((pair_id in tags for pair_id in frame["id"].tolist()), bool, len(frame))]
    frame = frame.reset_index(drop=True)
    annotated = len(frame)
    pair_tags = [tags[pair_id] for pair_id in frame["id"].tolist()]
    rows_of_tag: dict[str, list[int]] = {}
    for position, pair_tag_set in enumerate(pair_tags):
        for tag in pair_tag_set:
            rows_of_tag.setdefault(tag, []).append(position)
    order = list(tag_order) + sorted(set(rows_of_tag) - set(tag_order))
    rows = []
    for tag in order:
        if tag in unavailable:
            rows.append({"tag": tag, "count": np.nan, "frequency": np.nan, "correct": np.nan,
                         "accuracy": np.nan, "ci_low": np.nan, "ci_high": np.nan,
                         "majority_label": None, "majority_accuracy": np.nan,
                         "status": f"unavailable: {unavailable[tag]}"})
            continue
        group = frame.iloc[rows_of_tag.get(tag, [])] if annotated else frame
        row = {"tag": tag, **group_row(group)}
        row["frequency"] = row["count"] / annotated if annotated else np.nan
        row["status"] = f"approximate: {approximate[tag]}" if tag in approximate else "ok"
        rows.append(row)
    table = pd.DataFrame(rows, columns=TAG_COLUMNS)
    table.attrs["pairs"] = annotated
    return table


def accuracy_by_tag_and_source(predictions: Predictions | Mapping[str, Predictions],
                               gold: Mapping[str, frozenset[str]] | None,
                               automatic: Mapping[str, frozenset[str]] | None,
                               unavailable: Mapping[str, str] | None = None) -> pd.DataFrame:
    """`accuracy_by_tag` with a leading `source` column: "gold" rows over the pairs that have gold tags
    (scored with those), "automatic" rows over the other pairs (scored with the automatic tags), so
    the two kinds of tag are never mixed in one number. Either mapping may be None (left out);
    `unavailable` applies to the automatic tags only (a human annotator needed no WordNet), and so does
    the "approximate" status of an automatic tag whose rule agrees poorly with the annotators
    (`tags.approximate_tags`)."""
    gold = dict(gold or {})
    tables = []
    if gold:
        table = accuracy_by_tag(predictions, gold)
        table.insert(1 if "model" in table.columns else 0, "source", "gold")
        tables.append(table)
    if automatic is not None:
        rest = {pair_id: names for pair_id, names in automatic.items() if pair_id not in gold}
        table = accuracy_by_tag(predictions, rest, unavailable=unavailable, approximate=approximate_tags())
        table.insert(1 if "model" in table.columns else 0, "source", "automatic")
        tables.append(table)
    return pd.concat(tables, ignore_index=True) if tables else pd.DataFrame(columns=["source", *TAG_COLUMNS])


def overall_accuracy(predictions: Mapping[str, Predictions]) -> pd.DataFrame:
    """One row per model: labelled pairs, correct, accuracy with its 95% Wilson interval, and the
    majority-label baseline of those pairs (what always answering the most frequent gold label scores)."""
    rows = [{"model": model, **group_row(labelled(model_predictions))}
            for model, model_predictions in predictions.items()]
    return pd.DataFrame(rows, columns=["model", "count", "correct", "accuracy", "ci_low", "ci_high",
                                       "majority_label", "majority_accuracy"])


def accuracy_by_label(predictions: Predictions | Mapping[str, Predictions], labels: Sequence[str] | None = None) -> pd.DataFrame:
    """One row per gold label: count, correct, accuracy (= recall of that label).
    Several models ({name: predictions}) are stacked with a leading `model` column."""
    if isinstance(predictions, Mapping):
        return for_each_model(accuracy_by_label, predictions, labels)
    frame = labelled(predictions)
    order = list(labels) if labels is not None else sorted(frame["gold"].unique())
    rows = [{"label": label, **_counts(frame[frame["gold"] == label])} for label in order]
    return pd.DataFrame(rows, columns=["label", "count", "correct", "accuracy"])


def _counts(group: pd.DataFrame) -> dict:
    count = len(group)
    correct = int(group["correct"].astype(bool).sum())
    return {"count": count, "correct": correct, "accuracy": correct / count if count else np.nan}


def accuracy_by_genre(predictions: Predictions | Mapping[str, Predictions], genres: Mapping[str, str | None]) -> pd.DataFrame:
    """One row per genre (pairs without a genre are grouped as "(none)"), sorted by genre name.
    Several models ({name: predictions}) are stacked with a leading `model` column."""
    if isinstance(predictions, Mapping):
        return for_each_model(accuracy_by_genre, predictions, genres)
    frame = labelled(predictions)
    genre = frame["id"].map(lambda pair_id: genres.get(pair_id) or "(none)")
    rows = [{"genre": name, **_counts(frame[genre == name])} for name in sorted(genre.unique())]
    return pd.DataFrame(rows, columns=["genre", "count", "correct", "accuracy"])


def confusion_matrix(predictions: Predictions, labels: Sequence[str] = NLI_LABELS) -> pd.DataFrame:
    """Counts with gold labels as rows and predicted labels as columns (in `labels` order)."""
    frame = labelled(predictions)
    gold, predicted = _label_codes(frame["gold"], labels), _label_codes(frame["predicted"], labels)
    unknown = set(frame["gold"][gold < 0]) | set(frame["predicted"][predicted < 0])
    if unknown:
        raise ValueError(f"labels {sorted(map(str, unknown))} are not among {list(labels)}")
    counts = np.zeros((len(labels), len(labels)), dtype=int)  # np.add.at: a tenth of pd.crosstab's time
    np.add.at(counts, (gold, predicted), 1)
    return pd.DataFrame(counts, index=pd.Index(list(labels), name="gold"),
                        columns=pd.Index(list(labels), name="predicted"))


def _label_codes(column: pd.Series, labels: Sequence[str]) -> np.ndarray:
    """Each value's position in `labels`, -1 for a value not among them. Through a categorical, vectorised:
    `Series.map` over Arrow-backed strings walks the values in Python (a second per Error analysis run, py-spy)."""
    return pd.Categorical(column.to_numpy(dtype=object), categories=list(labels)).codes.astype(int)


def per_label_scores(predictions: Predictions, labels: Sequence[str] = NLI_LABELS) -> pd.DataFrame:
    """Precision, recall, F1 and support per label (NaN where undefined: nothing predicted / no gold)."""
    matrix = confusion_matrix(predictions, labels).to_numpy()
    rows = []
    for index, label in enumerate(labels):
        true_positive = matrix[index, index]
        predicted = matrix[:, index].sum()
        support = matrix[index, :].sum()
        precision = true_positive / predicted if predicted else np.nan
        recall = true_positive / support if support else np.nan
        if np.isnan(precision) or np.isnan(recall):
            f1 = np.nan
        elif precision + recall == 0:
            f1 = 0.0
        else:
            f1 = 2 * precision * recall / (precision + recall)
        rows.append({"label": label, "precision": precision, "recall": recall, "f1": f1,
                     "support": int(support)})
    return pd.DataFrame(rows, columns=["label", "precision", "recall", "f1", "support"])


@dataclass
class TaggedSplit:
    """One evaluation split for `table7`: model name → predictions, and pair id → tags."""

    predictions: Mapping[str, Predictions]
    tags: Mapping[str, frozenset[str]]


def table7(matched: TaggedSplit, mismatched: TaggedSplit | None = None,
           unavailable: Mapping[str, str] | None = None) -> pd.DataFrame:
    """DIIN's Table 7 layout: tags as rows (Table 7 order); per split a frequency column and one
    accuracy column per model, named "<split> frequency" and "<split> <model>" (split = matched /
    mismatched)."""
    columns: dict[str, pd.Series] = {}
    for split_name, split in (("matched", matched), ("mismatched", mismatched)):
        if split is None:
            continue
        for position, (model, predictions) in enumerate(split.predictions.items()):
            by_tag = accuracy_by_tag(predictions, split.tags, unavailable=unavailable).set_index("tag")
            if position == 0:
                columns[f"{split_name} frequency"] = by_tag["frequency"]
            columns[f"{split_name} {model}"] = by_tag["accuracy"]
    table = pd.DataFrame(columns)
    table.index.name = "tag"
    return table


TABLE7_LONG_COLUMNS = ["split", "source", "model", "tag", "count", "frequency", "correct", "accuracy", "ci_low",
                      "ci_high", "majority_label", "majority_accuracy", "status"]


def table7_long(splits: Mapping[str, TaggedSplit], source: str = "gold",
                unavailable: Mapping[str, str] | None = None) -> pd.DataFrame:
    """The numbers behind a Table 7 layout with counts: one row per split × model × tag, with the
    count, accuracy and its 95% interval, the majority baseline and the status, so any cell can be
    traced to its pairs (`pairs_with_tag`). `source` labels where the tags came from (see TAG_SOURCES);
    automatic tags are marked unavailable (`unavailable`, default `tags.unavailable_tags()`) or
    approximate (`tags.approximate_tags()`) as in `accuracy_by_tag_and_source`."""
    marks: dict = {}
    if source == "automatic":
        marks = {"unavailable": unavailable_tags() if unavailable is None else unavailable,
                 "approximate": approximate_tags()}
    rows = []
    for split_name, split in splits.items():
        for model, predictions in split.predictions.items():
            table = accuracy_by_tag(predictions, split.tags, **marks)
            table.insert(0, "model", model)
            table.insert(0, "source", source)
            table.insert(0, "split", split_name)
            rows.append(table)
    if not rows:
        return pd.DataFrame(columns=TABLE7_LONG_COLUMNS)
    return pd.concat(rows, ignore_index=True)[TABLE7_LONG_COLUMNS]


def table7_with_counts(long: pd.DataFrame) -> pd.DataFrame:
    """DIIN's Table 7 layout from `table7_long`, with what the paper's table leaves out: tags as rows,
    splits side by side; per split the pair count, the majority baseline and, per model, the accuracy
    with its 95% interval (text cells such as "71.2 [64.0, 77.5]", in %); a last `status` column where
    any tag is not "ok" (unavailable, approximate)."""
    if long.empty:
        return pd.DataFrame()
    columns: dict[str, pd.Series] = {}
    order = list(dict.fromkeys(long["tag"]))
    for split_name, split_rows in long.groupby("split", sort=False):
        first = split_rows.drop_duplicates("tag").set_index("tag").reindex(order)
        columns[f"{split_name} pairs"] = first["count"].astype("Int64")
        columns[f"{split_name} majority"] = first["majority_accuracy"].map(
            lambda v: "" if pd.isna(v) else f"{100 * v:.1f}")
        for model, rows in split_rows.groupby("model", sort=False):
            rows = rows.set_index("tag").reindex(order)
            columns[f"{split_name} {model}"] = [
                "" if pd.isna(a) else f"{100 * a:.1f} [{100 * lo:.1f}, {100 * hi:.1f}]"
                for a, lo, hi in zip(rows["accuracy"], rows["ci_low"], rows["ci_high"])]
    if "status" in long and (long["status"].fillna("ok") != "ok").any():
        columns["status"] = long.drop_duplicates("tag").set_index("tag")["status"].reindex(order)
    table = pd.DataFrame(columns, index=pd.Index(order, name="tag"))
    return table


def with_status_marks(table: pd.DataFrame) -> pd.DataFrame:
    """A copy of a by-tag table whose approximate tags read "TAG ≈" (for a chart's axis, which shows no
    status column)."""
    marked = table.copy()
    approximate = marked["status"].fillna("").str.startswith("approximate")
    marked.loc[approximate, "tag"] = marked.loc[approximate, "tag"] + " ≈"
    return marked


def pairs_with_tag(predictions: Predictions, tags: Mapping[str, frozenset[str]], tag: str | None = None,
                   only_wrong: bool = False) -> pd.DataFrame:
    """The labelled pairs behind one tag's number (all tagged pairs when `tag` is None): the predictions
    frame restricted to them, optionally to the wrong ones."""
    frame = labelled(predictions)
    frame = frame[frame["id"].isin(tags.keys())]
    if tag is not None:
        frame = frame[frame["id"].map(lambda pair_id: tag in tags[pair_id])]
    if only_wrong:
        frame = frame[~frame["correct"].astype(bool)]
    return frame.reset_index(drop=True)


@dataclass(frozen=True)
class ModelComparison:
    """Model A against model B on the labelled pairs both predicted."""

    pairs: int
    accuracy_a: float
    accuracy_b: float
    only_a_correct: int
    only_b_correct: int
    mcnemar_p: float
    difference: Interval
    """accuracy_a − accuracy_b with its paired-bootstrap interval."""

    def as_dict(self) -> dict:
        return {"pairs": self.pairs, "accuracy_a": self.accuracy_a, "accuracy_b": self.accuracy_b,
                "difference": self.difference.estimate, "ci_low": self.difference.low,
                "ci_high": self.difference.high, "confidence": self.difference.confidence,
                "only_a_correct": self.only_a_correct, "only_b_correct": self.only_b_correct,
                "mcnemar_p": self.mcnemar_p}


def _paired(a: Predictions, b: Predictions) -> pd.DataFrame:
    left, right = labelled(a), labelled(b)
    joined = left.merge(right, on="id", suffixes=("_a", "_b"))
    mismatch = joined[joined["gold_a"] != joined["gold_b"]]
    if len(mismatch):
        raise ValueError(f"the two prediction sets disagree on the gold label of pair {mismatch['id'].iloc[0]!r}; "
                         "they are not from the same split")
    if joined.empty:
        raise ValueError("the two prediction sets share no labelled pair id")
    return joined


def compare_models(a: Predictions, b: Predictions, resamples: int = DEFAULT_RESAMPLES,
                   seed: int = DEFAULT_SEED, confidence: float = 0.95) -> ModelComparison:
    """Accuracy difference on shared pairs, McNemar's exact p and a paired bootstrap interval."""
    joined = _paired(a, b)
    correct_a = joined["correct_a"].astype(bool).to_numpy()
    correct_b = joined["correct_b"].astype(bool).to_numpy()
    only_a, only_b = discordant_counts(correct_a, correct_b)
    return ModelComparison(
        pairs=len(joined), accuracy_a=float(correct_a.mean()), accuracy_b=float(correct_b.mean()),
        only_a_correct=only_a, only_b_correct=only_b, mcnemar_p=mcnemar_exact(only_a, only_b),
        difference=paired_bootstrap(correct_a, correct_b, resamples, seed, confidence),
    )


def disagreements(predictions_by_model: Mapping[str, Predictions],
                  labels: Sequence[str] = NLI_LABELS) -> pd.DataFrame:
    """Pairs (predicted by every model) on which the models do not all give the same label, ranked.

    Columns: id, gold, one column per model with its predicted label, `distinct_predictions`,
    `models_correct` (NaN without gold) and `gold_probability_spread` — the largest minus the smallest
    probability the models give the gold label (NaN without gold), i.e. how far apart they are about
    the truth. Ranked by distinct predictions, then spread, both descending; ties keep id order.
    """
    if len(predictions_by_model) < 2:
        raise ValueError("disagreements need at least two models")
    label_index = {label: position for position, label in enumerate(labels)}
    merged: pd.DataFrame | None = None
    for model, predictions in predictions_by_model.items():
        frame = predictions_frame(predictions)[["id", "gold", "predicted", "probs"]].rename(
            columns={"predicted": model, "probs": f"probs {model}", "gold": f"gold {model}"})
        merged = frame if merged is None else merged.merge(frame, on="id")
    models = list(predictions_by_model)
    assert merged is not None
    merged["gold"] = merged[f"gold {models[0]}"]
    answers = np.sort(merged[models].astype(str).to_numpy(), axis=1)  # [pairs, models]; nunique(axis=1) took 2 s
    merged["distinct_predictions"] = 1 + (answers[:, 1:] != answers[:, :-1]).sum(axis=1)
    merged = merged[merged["distinct_predictions"] > 1].copy()

    gold_index = [label_index.get(gold) if isinstance(gold, str) else None for gold in merged["gold"]]
    gold_chances = np.array([[probs[index] if index is not None and index < len(probs) else np.nan
                              for probs, index in zip(merged[f"probs {m}"], gold_index)] for m in models],
                            dtype=float).reshape(len(models), len(merged))  # [models, pairs]
    known = ~np.isnan(gold_chances)
    spreads = np.where(known.any(axis=0), np.where(known, gold_chances, -np.inf).max(axis=0)
                       - np.where(known, gold_chances, np.inf).min(axis=0), np.nan)
    has_gold = np.array([isinstance(gold, str) for gold in merged["gold"]], dtype=bool)
    hits = sum((merged[m] == merged["gold"]).to_numpy(dtype=int) for m in models)
    correct = np.where(has_gold, hits, np.nan)
    merged["models_correct"] = correct
    merged["gold_probability_spread"] = spreads
    merged = merged.sort_values(["distinct_predictions", "gold_probability_spread"],
                                ascending=[False, False], kind="stable", na_position="last")
    return merged[["id", "gold", *models, "distinct_predictions", "models_correct",
                   "gold_probability_spread"]].reset_index(drop=True)


# ----------------------------------------------------------------------------------- TaxiNLI categories

TAXINLI_SOURCE = "taxinli"
"""`source` of rows whose groups are TaxiNLI's human categories (or its genres)."""
REFERENCE_SUFFIX = " (full MultiNLI)"
"""Appended to a reference model's name wherever it stands beside ours: it was trained on all of MultiNLI."""


def taxonomy_groups(rows_by_id: Mapping[str, TaxonomyRow], by: str = "category") -> dict[str, frozenset[str]]:
    """Pair id → its TaxiNLI categories (`by` "category") or its genre as a one-element set (`by` "genre")."""
    if by == "genre":
        return {pair_id: frozenset({row.genre or "(none)"}) for pair_id, row in rows_by_id.items()}
    return {pair_id: row.categories for pair_id, row in rows_by_id.items()}


def reference_predictions(rows_by_id: Mapping[str, TaxonomyRow], gold: Mapping[str, str | None] | None = None
                          ) -> dict[str, list[Prediction]]:
    """The TaxiNLI file's reference models as predictions (display name + `REFERENCE_SUFFIX` → one per
    pair), scored against `gold` (pair id → the split's gold label; default the file's own label), so
    they go through the same tables as our models."""
    names = list(dict.fromkeys(name for row in rows_by_id.values() for name, _ in row.references))
    out: dict[str, list[Prediction]] = {}
    for name in names:
        out[f"{REFERENCE_MODELS.get(name, name)}{REFERENCE_SUFFIX}"] = [
            Prediction(pair_id, (gold or {}).get(pair_id, row.label), row.reference_labels()[name], ())
            for pair_id, row in rows_by_id.items() if name in row.reference_labels()]
    return out


def taxonomy_breakdown(predictions: Mapping[str, Predictions], rows_by_id: Mapping[str, TaxonomyRow],
                       by: str = "category") -> pd.DataFrame:
    """Accuracy per TaxiNLI category (or genre) for our models and, on the same pairs, the file's reference
    models: one row per model × group with count, frequency, accuracy and its 95% Wilson interval and the
    majority baseline (`accuracy_by_tag`'s columns), `source` "taxinli" and `reference` (True for a model
    trained on the full MultiNLI). The pairs are those of `rows_by_id` our first model predicted with a
    gold label, so every model is scored on the same pairs."""
    first = labelled(next(iter(predictions.values()))) if predictions else pd.DataFrame(columns=["id", "gold"])
    predicted = set(first["id"])  # once: built inside the comprehension it made this quadratic (minutes on MultiNLI dev)
    shared = {pair_id: row for pair_id, row in rows_by_id.items() if pair_id in predicted}
    gold = dict(zip(first["id"], first["gold"]))
    groups = taxonomy_groups(shared, by)
    order = TAXINLI_CATEGORIES if by == "category" else sorted({g for names in groups.values() for g in names})
    references = reference_predictions(shared, gold)
    table = accuracy_by_tag({**predictions, **references}, groups, tag_order=order)
    table.insert(1, "source", TAXINLI_SOURCE)
    table.insert(2, "reference", table["model"].isin(list(references)))
    table.attrs["pairs"] = len(shared)
    return table


def taxonomy_long(splits: Mapping[str, tuple[Mapping[str, Predictions], Mapping[str, TaxonomyRow]]],
                  by: str = "category") -> pd.DataFrame:
    """`taxonomy_breakdown` of several splits (name → (predictions by model, TaxiNLI rows by pair id)) in the
    long layout `table7_with_counts` draws side by side (the reference models as models)."""
    tables = []
    for split_name, (predictions, rows_by_id) in splits.items():
        table = taxonomy_breakdown(predictions, rows_by_id, by)
        table.insert(0, "split", split_name)
        tables.append(table)
    if not tables:
        return pd.DataFrame(columns=[*TABLE7_LONG_COLUMNS, "reference"])
    return pd.concat(tables, ignore_index=True)[[*TABLE7_LONG_COLUMNS, "reference"]]


def taxonomy_report(predictions: Predictions, model: str, taxonomy: TaxonomyFile, pairs: Sequence
                    ) -> tuple[pd.DataFrame, pd.DataFrame, str]:
    """For `evaluate --by-tag --tags-file <TaxiNLI file>`: (accuracy per TaxiNLI category, per genre, a note
    on what was joined) for one model's predictions on one split whose `pairs` (records with ids and
    sentences) the file's rows join (`taxonomies.join_to_pairs`). ValueError when no row is a pair of the
    split."""
    rows = join_to_pairs(taxonomy.rows, pairs)
    if not rows:
        raise ValueError(f"{taxonomy.path}: none of its {len(taxonomy.rows)} rows is a pair of this split "
                         "(TaxiNLI covers MultiNLI dev matched and mismatched)")
    by_category = taxonomy_breakdown({model: predictions}, rows)
    by_genre = taxonomy_breakdown({model: predictions}, rows, by="genre")
    references = sorted(set(by_category.loc[by_category["reference"], "model"]))
    note = (f"TaxiNLI categories (human annotation) from {taxonomy.path}: {by_category.attrs['pairs']} pairs of this "
            f"split, of the file's {len(taxonomy.rows)}; reference models on the same pairs: {', '.join(references)}"
            + "".join(f"; {line}" for line in taxonomy.notes))
    return by_category, by_genre, note


def pair_taxonomy(rows: Sequence[TaxonomyRow], pair_id: str | None, premise: str, hypothesis: str) -> dict | None:
    """What TaxiNLI says about one pair, for the Pair explorer: its categories (in the file's order), genre,
    gold label and each reference model's label (display name + `REFERENCE_SUFFIX`); None when the file does
    not have the pair. Found by pair id (a renamed `<id>-line<N>` by its sentences too), or, for a typed pair
    without an id, by its sentences (whitespace aside)."""
    if pair_id is not None:  # only rows of this id (or of the id it was renamed from) can join: a scan, not a join
        base, renamed, _ = pair_id.rpartition("-line")
        candidates = [row for row in rows if row.pair_id == pair_id or (renamed and row.pair_id == base)]
        found = join_to_pairs(candidates, [Pair(pair_id, premise, hypothesis)]).get(pair_id)
    else:
        key = (" ".join(premise.split()), " ".join(hypothesis.split()))
        found = next((row for row in rows if (" ".join(row.premise.split()), " ".join(row.hypothesis.split())) == key),
                     None)
    if found is None:
        return None
    return {"pair_id": found.pair_id, "categories": [name for name in TAXINLI_CATEGORIES if name in found.categories],
            "genre": found.genre, "label": found.label,
            "references": {f"{REFERENCE_MODELS.get(name, name)}{REFERENCE_SUFFIX}": label
                           for name, label in found.references}}
