"""Data maps of checkpoints (`analysis.datamap` computes them from the training dynamics a run recorded): the map
read from a checkpoint folder, and the listing behind a selection of it — the selected training pairs joined
with their text from the local training splits, a second checkpoint's confidence and region, and the labels
other checkpoints predict now (the "possibly mislabelled" list).

Splits and predictions are read through callables the caller hands in (`ListingSources`), so the app (its
cached readers), the CLI and the tests share one join.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping, Sequence

import pandas as pd

from nlivis.analysis.datamap import ORDERS, DataMap, Selection, Thresholds, data_map, listing, members
from nlivis.data.protocols import get_protocol
from nlivis.data.records import Pair
from nlivis.features.dataset import load_split_analysed
from nlivis.store.checkpoints import read_checkpoint_info, read_json
from nlivis.store.dynamics import AUGMENTED_SPLIT, pair_digest, read_dynamics
from nlivis.training import augment

MAX_PREDICTED = 2000
"""A listing gets the checkpoints' predictions when it has at most this many pairs (each model runs on them)."""


def read_data_map(folder: str | Path, thresholds: Thresholds | None = None) -> DataMap:
    """The data map of the checkpoint in `folder` (a `CheckpointError` when it is not a complete checkpoint or
    recorded no dynamics)."""
    read_checkpoint_info(folder)  # a folder that is not a complete checkpoint is named as such
    return data_map(read_dynamics(folder), thresholds)


@dataclass(frozen=True)
class TrainedAs:
    """What a run's training dynamics say of one augmented pair it trained on: the digest of its text and label
    (`store.dynamics.pair_digest`; None for a run before session 42) and its gold label (every run keeps it)."""

    digest: str | None
    label: str


@dataclass(frozen=True)
class AugmentedRun:
    """What remaking a run's augmented pairs needs: its labelled training pairs (analysed, in the run's order), its
    labels, its config.json `augmentation` record and what its dynamics say of each augmented id (`recorded`);
    `cached` whether the candidate edits are in the cache (else remaking them parses every training pair once:
    minutes)."""

    train_items: list
    labels: list[str]
    record: dict
    cached: bool
    recorded: dict[str, TrainedAs] = field(default_factory=dict)


def augmented_run(folder: str | Path, data_root: str | Path, cache_dir: str | Path | None = None) -> AugmentedRun | None:
    """The augmentation of the checkpoint in `folder` (None when it was trained without `--augment`), its
    training splits read from `data_root` and analysed through the feature cache, as its run read them."""
    config = read_json(Path(folder), "config.json")
    record = config.get("augmentation")
    if not isinstance(record, dict) or not record.get("kinds"):
        return None
    protocol = get_protocol(str(config["dataset"]["protocol"]))
    items = [item for ref in protocol.train for item in load_split_analysed(ref, data_root, cache_dir)[0]
             if item.pair.label is not None]  # the labelled training pairs in order, as `prepare_data` takes them
    labels = list(config["labels"])
    pool = augment.pool_cache_path([item.pair for item in items], augment.task_of_labels(labels),
                                   int(record["min_word_count"]), cache_dir)
    dynamics = read_dynamics(folder)
    recorded = {pid: TrainedAs(digest, dynamics.labels[int(gold)])
                for pid, kind, digest, gold in zip(dynamics.ids, dynamics.augmented_kinds(),
                                                   dynamics.augmented_digests(), dynamics.gold) if kind is not None}
    return AugmentedRun(items, labels, record, pool.is_file(), recorded)


class RemadePairs(dict):
    """Augmented pair id → its edited pair (`Pair`: edited text, gold label), made again with today's edit engine,
    with what the reader must know: `checked` (the run recorded a digest of each pair's text and only the pairs
    whose text matches it are here), `differing` (the run's augmented pairs not here: today's engine no longer
    makes them, or makes them differently; they open as the training pair each was made from) and `note` (that,
    in words)."""

    def __init__(self, pairs: Mapping[str, Pair], checked: bool, differing: int, note: str):
        super().__init__(pairs)
        self.checked, self.differing, self.note = checked, differing, note


def augmented_pairs(run: AugmentedRun, cache_dir: str | Path | None = None) -> RemadePairs:
    """The run's augmented pairs with their edited text and gold label, made again from its training pairs (their
    candidate edits, then the seeded draw of its config.json record: `training.augment`; training dynamics keep
    only ids and numbers, never sentences) and kept only where they are the run's own (`remade_pairs`). The edit
    engine changes between versions, so an older run's pair may come out differently or not at all."""
    pairs = [item.pair for item in run.train_items]
    record = run.record
    pool = augment.load_pool(pairs, augment.task_of_labels(run.labels), augment.WordCounts.of(run.train_items),
                             int(record["min_word_count"]), cache_dir)
    chosen, _ = augment.draw(pool, list(record["kinds"]), float(record["ratio"]), len(pairs), int(record["seed"]),
                             ((p.premise, p.hypothesis) for p in pairs), float(record.get("negated_share", 0.0)),
                             bool(record.get("exclusive_twins", False)))
    ids = augment.unique_ids([augment.augmented_id(pairs[c.original].id, c) for c in chosen])
    made = {pid: Pair(id=pid, premise=c.premise, hypothesis=c.hypothesis, label=c.label) for pid, c in zip(ids, chosen)}
    return remade_pairs(made, run.recorded)


def remade_pairs(made: Mapping[str, Pair], recorded: Mapping[str, TrainedAs]) -> RemadePairs:
    """Of the pairs made again (`made`), those that are the run's (`recorded`: augmented id → what the run's
    dynamics say of it): an id the run trained on, with the gold label it trained on and, when the run recorded
    digests, the same text; with the note a listing shows."""
    total = len(recorded)
    checked = total > 0 and all(trained.digest is not None for trained in recorded.values())

    def the_runs(pid: str, pair: Pair) -> bool:
        trained = recorded.get(pid)
        return trained is not None and pair.label == trained.label and (
            not checked or pair_digest(pair.premise, pair.hypothesis, pair.label) == trained.digest)

    kept = {pid: pair for pid, pair in made.items() if the_runs(pid, pair)}
    differing = total - len(kept)
    if checked:
        note = (f"the edited text of {len(kept):,} of the run's {total:,} augmented pairs was made again and matches "
                "the digest the run recorded of it")
        if differing:
            note += (f"; today's edit engine makes the other {differing:,} differently or no longer makes them, so "
                     "they are listed with the training pair each was made from")
    else:
        note = (f"this run recorded no digest of its augmented pairs' text (it was trained before nlivis did), so "
                f"the edited text made again with today's edit engine cannot be checked against what it trained on: "
                f"{len(kept):,} of its {total:,} augmented ids are made again with the gold label each was trained "
                "with (the training dynamics keep it), and a text may differ where the engine has changed since")
        if differing:
            note += (f"; the other {differing:,} are no longer made, or made with another label, and are listed with "
                     "the training pair each was made from")
    return RemadePairs(kept, checked, differing, note)


def pair_lengths(pairs: Sequence[Pair]) -> dict[str, int]:
    """Pair id → tokens in premise + hypothesis (whitespace-separated: the shipped SNLI files are tokenised)."""
    return {p.id: len(p.premise.split()) + len(p.hypothesis.split()) for p in pairs}


def predicted_labels(loaded, items: Sequence) -> dict[str, str]:
    """Pair id → the label the loaded checkpoint predicts for each analysed pair of `items`."""
    from nlivis.workflows.edits import predict_items  # runs the model: torch loads here, not with the map

    if not items:
        return {}
    labels = list(loaded.labels)
    probabilities = predict_items([loaded], items, batch_size=256)[0]
    return {item.pair.id: labels[int(p)] for item, p in zip(items, probabilities.argmax(axis=-1))}


@dataclass(frozen=True)
class ListingSources:
    """How a listing reads: `rows(split)` pair id → 0-based row of a local split (empty when not local),
    `pairs(split)` its pairs in row order, `predict(checkpoint, split, ids)` (pair id → predicted label, a
    problem or None)."""

    rows: Callable[[str], Mapping[str, int]]
    pairs: Callable[[str], Sequence[Pair]]
    predict: Callable[[str, str, list[str]], tuple[Mapping[str, str], str | None]]


@dataclass
class DataMapListing:
    """The selected pairs of a map (one row each: row in its split, id, split, gold, confidence, variability,
    correctness, epochs, region, augmented, premise, hypothesis, then the compared and predicting
    checkpoints' columns) and what the reader should know about it."""

    frame: pd.DataFrame
    notes: list[str] = field(default_factory=list)


def datamap_listing(points: DataMap, selection: Selection, order: str | None, sources: ListingSources,
                    compare: tuple[str, DataMap | None, str | None] | None = None,
                    predictors: Sequence[str] = (), edited: RemadePairs | None = None) -> DataMapListing:
    """The training pairs of `points` that `selection` holds, in `order` (default: the first of ORDERS), with
    their text; `compare` (name, its map or None, why there is none) adds that map's confidence and region per
    pair, `predictors` the label each named checkpoint predicts (for lists of at most MAX_PREDICTED pairs);
    `edited` (augmented pair id → its edited pair, `augmented_pairs`) gives augmented pairs their own text and says
    how far it is the run's own."""
    order = order if order in ORDERS else next(iter(ORDERS))
    result = DataMapListing(listing(points, members(points, selection), order))
    augmented = _open_augmented_as_originals(result, points, edited)
    _add_text(result, sources)
    _add_edited_text(result.frame, edited or {})
    if compare is not None:
        name, other, problem = compare
        if other is None:
            result.notes.append(f"{name}: {problem}")
        else:
            _add_comparison(result.frame, name, other)
    if predictors and len(result.frame) > MAX_PREDICTED:
        result.notes.append(f"predictions are shown for lists of at most {MAX_PREDICTED:,} pairs; this one has "
                            f"{len(result.frame):,} (narrow the selection)")
    elif predictors:
        _add_predictions(result, augmented, predictors, sources)
    result.frame["augmented"] = result.frame["augmented"].fillna("")
    result.frame = result.frame.drop(columns=["column", "original"])
    return result


def _open_augmented_as_originals(result: DataMapListing, points: DataMap, edited: RemadePairs | None) -> pd.Series:
    """An augmented pair's text is not stored: one without an `edited` pair opens as the training pair it was made
    from (its split is that pair's); one with it keeps its own split (no row: it opens as typed text, its edited
    pair). Returns which rows are augmented."""
    frame = result.frame
    augmented = frame["augmented"].notna()
    as_original = augmented & ~frame["id"].isin(list(edited or {}))
    if as_original.any():
        column_of = {pid: i for i, pid in enumerate(points.ids)}
        frame.loc[as_original, "split"] = [points.splits[column_of[o]] for o in frame.loc[as_original, "original"]]
        why = ("their edited text is not stored" if edited is None
               else "their edited text is not made again as the run made it")
        result.notes.append(f"{int(as_original.sum()):,} augmented pairs are listed with the training pair each was "
                            f"made from ({why}: they open as that pair)")
    if (augmented & ~as_original).any():
        result.notes.append(f"{int((augmented & ~as_original).sum()):,} augmented pairs are listed with their edited "
                            "text, made again from the run's training pairs (they open as that text)")
    if edited is not None and augmented.any():
        result.notes.append(edited.note)
    frame["looked_up"] = frame["original"].where(as_original, frame["id"])
    return augmented


def _add_edited_text(frame: pd.DataFrame, edited: Mapping[str, Pair]) -> None:
    """The edited premise, hypothesis and label of each listed augmented pair that `edited` holds (no row)."""
    where = frame["id"].isin(list(edited))
    if where.any():
        frame.loc[where, "premise"] = [edited[pid].premise for pid in frame.loc[where, "id"]]
        frame.loc[where, "hypothesis"] = [edited[pid].hypothesis for pid in frame.loc[where, "id"]]
        frame.loc[where, "gold"] = [edited[pid].label for pid in frame.loc[where, "id"]]


def _add_text(result: DataMapListing, sources: ListingSources) -> None:
    """Each pair's row in its local split and its premise and hypothesis (empty where the split is not local)."""
    frame = result.frame
    readable = {split for split in frame["split"] if split and split != AUGMENTED_SPLIT}
    rows_of = {split: sources.rows(split) for split in readable}  # once per split, not once per listed pair
    pairs_of = {split: sources.pairs(split) for split in readable}
    rows, texts = [], []
    for split, pid in zip(frame["split"], frame.pop("looked_up")):
        row = rows_of[split].get(pid) if split in rows_of else None
        rows.append(row)
        texts.append((pairs_of[split][row].premise, pairs_of[split][row].hypothesis) if row is not None else ("", ""))
    missing = sum(r is None and split != AUGMENTED_SPLIT for r, split in zip(rows, frame["split"]))
    if missing:
        result.notes.append(f"{missing:,} of these pairs are not in the local copy of their split, so their text is "
                            "not shown")
    frame.insert(0, "row", pd.array(rows, dtype="Int64"))
    frame["premise"], frame["hypothesis"] = [t[0] for t in texts], [t[1] for t in texts]


def _add_comparison(frame: pd.DataFrame, name: str, other: DataMap) -> None:
    """`<name> confidence` and `<name> region` of each pair on the other map (None where it has no such pair)."""
    where = {pid: i for i, pid in enumerate(other.ids)}
    at = [where.get(pid) for pid in frame["id"]]
    frame[f"{name} confidence"] = [None if i is None else round(float(other.confidence[i]), 4) for i in at]
    frame[f"{name} region"] = [None if i is None else other.region[i] for i in at]


def _add_predictions(result: DataMapListing, augmented: pd.Series, predictors: Sequence[str],
                     sources: ListingSources) -> None:
    """`<checkpoint> predicts` per predicting checkpoint for the listed training pairs (not augmented ones)."""
    frame = result.frame
    for split in sorted({s for s in frame.loc[~augmented, "split"] if s}):
        chosen = (frame["split"] == split) & ~augmented
        ids = frame.loc[chosen, "id"].tolist()
        for model in predictors:
            predicted, problem = sources.predict(model, split, ids)
            if problem:
                result.notes.append(problem)
            column = f"{model} predicts"
            if column not in frame:
                frame[column] = None
            frame.loc[chosen, column] = frame.loc[chosen, "id"].map(predicted)
