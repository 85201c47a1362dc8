"""Evaluate a checkpoint on a protocol's split or on challenge files: read and check the data first, analyse it
(cached), predict, score, and keep the predictions through `store.evaluations` (never over what the checkpoint
recorded).

`python -m nlivis evaluate` calls `evaluate_split` and `evaluate_file`; the app calls `challenge_predictions`
(which evaluates a challenge set through `evaluate_file` when it was never evaluated) and `evaluated_files`.
The scoring itself (label sets, intervals, contrast tables, task checks) is in `nlivis.analysis.evaluation`."""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import pandas as pd
import torch

from nlivis.analysis.breakdown import accuracy_by_tag_and_source, taxonomy_report
from nlivis.analysis.challenge import ORIGINAL_VALUE, OVERALL_GROUP, accuracy_by_group, two_way_predictions
from nlivis.analysis.evaluation import (Scored, TruncationCount, accuracy_interval, check_gold_labels, check_pairs,
                                        check_task, contrast_field_of, contrast_table, count_truncated,
                                        rows_in_label_set, score)
from nlivis.analysis.metrics import ClassificationReport, classification_report
from nlivis.analysis.overlap import TrainingOverlap, training_overlap
from nlivis.analysis.tags import read_tag_file, tag_pairs, unavailable_tags
from nlivis.data.challenge import BINARY_LABELS, DEFAULT_LABEL_SCHEME, read_challenge_files
from nlivis.data.protocols import find_split_file, gold_tag_file, read_split, split_key
from nlivis.data.records import NLI_LABELS, InputError, ReadResult
from nlivis.data.taxonomies import TaxonomyFile, is_taxinli_file, join_to_pairs, read_taxinli
from nlivis.features.dataset import AnalysedPair, analyse_pairs, source_files, split_cache_key
from nlivis.inference import LoadedCheckpoint, check_finite, load_checkpoint, predict_probabilities, prediction_rows
from nlivis.store.evaluations import (DataIdentity, NamedEvaluation, StoredEvaluation, as_predictions,
                                      data_identity, find_named_evaluations, read_named_predictions,
                                      store_evaluation)
from nlivis.store.files import sanitized_name
from nlivis.store.predictions import Prediction

EVALUATION_BATCH_SIZE = 128
"""Pairs per forward pass in `evaluate_checkpoint` (memory, not results, depends on it)."""

# ------------------------------------------------------------------------------------ analysed pairs, scored


@dataclass
class EvaluationResult:
    """Scores over the labelled pairs, and one prediction row per pair (labelled or not)."""
    report: ClassificationReport
    predictions: list[dict[str, Any]]
    probabilities: torch.Tensor
    unlabelled: int = 0


def evaluate_checkpoint(loaded: LoadedCheckpoint, pairs_analysed: Sequence,
                        batch_size: int = EVALUATION_BATCH_SIZE) -> EvaluationResult:
    """Predict every analysed pair with a loaded checkpoint and score the labelled ones."""
    if not pairs_analysed:
        raise ValueError("no pairs to evaluate")
    device = next(loaded.model.parameters()).device
    probabilities = check_finite(predict_probabilities(loaded.model, loaded.featurizer, pairs_analysed, batch_size,
                                                       device), loaded.path)
    rows = prediction_rows(pairs_analysed, probabilities, loaded.labels)
    index = {label: i for i, label in enumerate(loaded.labels)}
    labelled = [r for r in rows if r["gold"] is not None]
    unknown = sorted({r["gold"] for r in labelled} - set(index))
    if unknown:
        raise ValueError(f"gold labels {unknown} are not among this checkpoint's labels {list(loaded.labels)}")
    report = classification_report([index[r["gold"]] for r in labelled], [index[r["predicted"]] for r in labelled],
                                   loaded.labels)
    return EvaluationResult(report, rows, probabilities, unlabelled=len(rows) - len(labelled))


def evaluation_record(report: Any, read: Any, truncation: TruncationCount, unlabelled: int,
                      **extra: Any) -> dict[str, Any]:
    """What evaluation.json keeps besides the data identity."""
    return {"count": report.count, "accuracy": report.accuracy, "unlabelled": unlabelled,
            "dropped_no_gold": read.dropped_no_gold, "ambiguous_ids": len(read.ambiguous_ids),
            "truncated": truncation.to_dict(), **extra}

# ------------------------------------------------------------------------------------------ a protocol's split


def read_split_checked(ref: Any, data_dir: str | Path, labels: Sequence[str] | None) -> Any:
    """Read a split and check it (pairs present, gold labels known to the model) before any spaCy work.
    With `labels` None the label check is left to the caller (`check_split_labels`), so a split can be
    read and checked before the checkpoint is loaded."""
    result = read_split(ref, data_dir)
    source = str(find_split_file(ref, data_dir) or result.path)
    check_pairs(result.pairs, source, result.dropped_no_gold)
    if labels is not None:
        check_gold_labels(result.pairs, labels, source)
    return result


def check_split_labels(ref: Any, data_dir: str | Path, result: Any, labels: Sequence[str]) -> None:
    """`check_gold_labels` for a split read by `read_split_checked(..., labels=None)`."""
    check_gold_labels(result.pairs, labels, str(find_split_file(ref, data_dir) or result.path))


def gold_tags_for(ref, data_dir: str | None, tags_file: str | None) -> tuple[dict[str, frozenset[str]], str | None]:
    """(gold tags, their file): `tags_file` when given, else the split's published annotation tags found
    under `data_dir` (MultiNLI dev matched/mismatched), else none. Read and checked in milliseconds,
    so a bad file stops the command before any parsing or prediction."""
    path = tags_file or (gold_tag_file(ref, data_dir) if data_dir else None)
    if path is None:
        return {}, None
    return read_tag_file(path), str(path)


def tags_by_pair(pairs: Sequence, gold: dict[str, frozenset[str]], tag_source: str = "both"
                 ) -> tuple[dict[str, frozenset[str]] | None, dict[str, str]]:
    """Automatic tags for the pairs without gold tags (None when `tag_source` is "gold"), and the tags
    the automatic tagger cannot decide here."""
    if tag_source == "gold":
        return None, {}
    untagged = [pair for pair in pairs if pair.id not in gold]
    return (tag_pairs(untagged, progress=True) if untagged else {}), unavailable_tags()


@dataclass
class SplitTags:
    """The tags a split is broken down by (`--by-tag`): gold tags and their file, or a TaxiNLI file's
    categories, genres and reference models (`taxonomy`, read from `taxonomy_file`), and which kind of tag to
    use (`source`)."""
    source: str = "both"
    gold: dict[str, frozenset[str]] = field(default_factory=dict)
    gold_file: str | None = None
    taxonomy: TaxonomyFile | None = None
    taxonomy_file: str | None = None


def split_tags(ref: Any, data_dir: str | Path, tags_file: str | None, tag_source: str) -> SplitTags:
    """Read the tags of `--by-tag` before anything else (milliseconds): a TaxiNLI `tags_file`, else gold tags
    (`tags_file`, or the split's published annotation file under `data_dir`) unless `tag_source` is
    "automatic". A ValueError names a bad file, or a split without gold tags when `tag_source` is "gold"."""
    if tags_file and is_taxinli_file(tags_file):
        return SplitTags(tag_source, taxonomy=read_taxinli(tags_file), taxonomy_file=tags_file)
    if tag_source == "automatic":
        return SplitTags(tag_source)
    gold, gold_file = gold_tags_for(ref, data_dir, tags_file)
    if tag_source == "gold" and gold_file is None:
        raise ValueError(f"--tag-source gold: {split_key(ref)} has no published gold tags under {data_dir}; "
                         "give --tags-file")
    return SplitTags(tag_source, gold, gold_file)


def check_tags_join(tags: SplitTags, ref: Any, read: ReadResult) -> None:
    """Stop a tag file of another split before any spaCy work (the taxonomy is joined again after prediction)."""
    if tags.taxonomy is not None and not join_to_pairs(tags.taxonomy.rows, read.pairs):
        raise ValueError(f"{tags.taxonomy_file}: none of its {len(tags.taxonomy.rows)} TaxiNLI rows is a pair of "
                         f"{split_key(ref)} (TaxiNLI covers MultiNLI dev matched and mismatched)")
    if tags.gold and not {pair.id for pair in read.pairs} & set(tags.gold):
        raise ValueError(f"{tags.gold_file}: none of its {len(tags.gold)} pair ids is a pair of {split_key(ref)}; "
                         "is it the tag file of another split?")


@dataclass
class TagTables:
    """Accuracy per tag (and per TaxiNLI genre), with a note on where the tags came from."""
    by_tag: pd.DataFrame | None = None
    by_genre: pd.DataFrame | None = None
    note: str = ""


def tag_tables(tags: SplitTags, loaded: Any, items: Sequence[AnalysedPair], read: ReadResult,
               predictions: list[Prediction]) -> TagTables:
    """Accuracy by TaxiNLI category and genre (with its reference models), or by tag and source: the pairs with
    gold tags scored with them, the others with the automatic tags."""
    if tags.taxonomy is not None:
        return TagTables(*taxonomy_report(predictions, loaded.path.name, tags.taxonomy, read.pairs))
    split_ids = {item.pair.id for item in items}
    gold = {pair_id: names for pair_id, names in tags.gold.items() if pair_id in split_ids}
    automatic, unavailable = tags_by_pair([item.pair for item in items], gold, tags.source)
    note = (f"gold tags: {len(gold)} pairs" + (f" from {tags.gold_file}" if tags.gold_file else "")
            + (f"; automatic tags: {len(automatic)} other pairs" if automatic is not None else ""))
    return TagTables(accuracy_by_tag_and_source(predictions, gold, automatic, unavailable), note=note)


@dataclass
class SplitEvaluation:
    """`evaluate_split`'s result: the scores, the split as read, what was cut, where the predictions are kept,
    and the tag tables (`--by-tag`)."""
    checkpoint: Path
    split: str
    result: EvaluationResult
    read: ReadResult
    truncation: TruncationCount
    stored: StoredEvaluation
    tables: TagTables | None = None

    def notes(self) -> list[str]:
        return self.read.notes() + ([self.truncation.describe()] if self.truncation.pairs else [])

    def record(self) -> dict[str, Any]:
        """What `evaluate --dataset … --json` prints."""
        output = {"checkpoint": str(self.checkpoint), "split": self.split, **self.result.report.to_dict(),
                  "unlabelled": self.result.unlabelled, "dropped_no_gold": self.read.dropped_no_gold,
                  "truncated": self.truncation.to_dict(), "notes": self.notes(),
                  "predictions_file": str(self.stored.predictions_file), "written": self.stored.written,
                  "name": self.stored.name, "message": self.stored.message}
        if self.tables is not None and self.tables.by_tag is not None:
            output["by_tag"] = json.loads(self.tables.by_tag.to_json(orient="records"))
            output["tag_sources"] = self.tables.note
        if self.tables is not None and self.tables.by_genre is not None:
            output["by_genre"] = json.loads(self.tables.by_genre.to_json(orient="records"))
        return output


def evaluate_split(checkpoint: str | Path, ref: Any, data_dir: str | Path, *, by_tag: bool = False,
                   tags_file: str | None = None, tag_source: str = "both", name: str | None = None,
                   cache_dir: str | Path | None = None,
                   load: Callable[[str | Path], LoadedCheckpoint] = load_checkpoint) -> SplitEvaluation:
    """A protocol's split: the tags (`by_tag`) and the split are read and checked first, then the checkpoint
    is loaded (`load`), the split analysed (cached), predicted, scored and kept as a named evaluation (never
    over the recorded predictions_<split> file). With `by_tag`, pairs with gold tags (`tags_file`, or the
    split's published annotation file under `data_dir`) are scored with them and the other pairs with the
    automatic tags, in rows whose `source` says which (`tag_source` "gold" / "automatic" keeps one kind)."""
    tags = split_tags(ref, data_dir, tags_file, tag_source) if by_tag else None
    read = read_split_checked(ref, data_dir, labels=None)  # milliseconds, before any spaCy work
    if tags is not None:
        check_tags_join(tags, ref, read)
    loaded = load(checkpoint)
    check_split_labels(ref, data_dir, read, loaded.labels)
    items = analyse_pairs(read.pairs, cache_dir=cache_dir, cache_key=split_cache_key(ref, read))
    result = evaluate_checkpoint(loaded, items)
    truncation = count_truncated(loaded.featurizer.settings, items)
    stored = store_evaluation(loaded.path, result.predictions, data_identity(source_files(read)),
                              evaluation_record(result.report, read, truncation, result.unlabelled),
                              split_key=split_key(ref), name=name)
    tables = None if tags is None else tag_tables(tags, loaded, items, read, as_predictions(result.predictions))
    return SplitEvaluation(Path(loaded.path), split_key(ref), result, read, truncation, stored, tables)


# ------------------------------------------------------------------------------------------ challenge files


@dataclass
class FileEvaluation:
    """`evaluate_file`'s result: the challenge set, the rows in its label set, the report, what was cut,
    where the predictions are kept, and the accuracy by `group_by` (`table`, None without it)."""
    checkpoint: Path
    challenge: Any
    scored: Scored
    report: Any
    truncation: TruncationCount
    stored: StoredEvaluation | None
    identity: DataIdentity
    contrast: Any = None
    """`contrast_consistency`'s table (None without a contrast field)."""
    contrast_field: str | None = None
    overlap: TrainingOverlap | None = None
    group_by: str | None = None
    table: Any = None

    def predictions(self) -> list[Prediction]:
        return as_predictions(self.scored.rows)

    def notes(self) -> list[str]:
        notes = list(self.challenge.notes)
        if self.scored.mapping_note and self.challenge.label_scheme != "2way":  # the reader's 2-way note says it
            notes.append(self.scored.mapping_note)
        if self.truncation.pairs:
            notes.append(self.truncation.describe())
        if self.contrast is not None:
            overall = self.contrast.iloc[-1]
            if overall["single_member_groups"]:
                notes.append(f"{overall['single_member_groups']:,} {self.contrast_field} value(s) have one labelled "
                             "pair: no contrast group, left out of the consistency")
        return notes

    def contrast_record(self) -> dict[str, Any] | None:
        """The contrast consistency overall (and by `group_by`), or None without contrast groups."""
        if self.contrast is None:
            return None
        records = json.loads(self.contrast.to_json(orient="records"))
        original = next((r for r in records[:-1] if r["group"].lower() == ORIGINAL_VALUE), None)
        return {"field": self.contrast_field, "overall": {k: v for k, v in records[-1].items() if k != "group"},
                "per_original": original and {k: v for k, v in original.items() if k != "group"},
                "by_group": records[:-1]}

    def overall_row(self) -> dict[str, Any]:
        """The whole file as one group of `accuracy_by_group` (count, accuracy, interval, majority label)."""
        if self.table is not None:
            return json.loads(self.table[self.table["group"] == OVERALL_GROUP].to_json(orient="records"))[0]
        whole = accuracy_by_group(self.predictions(), {pair.id: (OVERALL_GROUP,) for pair in self.challenge.pairs})
        return json.loads(whole.to_json(orient="records"))[0]

    def record(self) -> dict[str, Any]:
        """What `evaluate --file … --json` prints: `by_group` is always there (an empty list without
        `--group-by`) and `overall` always holds the whole file as one group."""
        stored = self.stored
        output = {"checkpoint": str(self.checkpoint), "files": [str(p) for p in self.challenge.files],
                  "data": self.identity.to_dict(), "label_scheme": label_scheme_of(self.scored.labels),
                  **self.report.to_dict(),
                  "accuracy_interval": [None if math.isnan(v) else v for v in accuracy_interval(self.report)],
                  "labels": list(self.scored.labels), "label_mapping": self.scored.mapping_note or None,
                  "unlabelled": sum(row["gold"] is None for row in self.scored.rows),
                  "dropped_no_gold": self.challenge.result.dropped_no_gold,
                  "truncated": self.truncation.to_dict(), "training_overlap": self.overlap.to_dict(),
                  "contrast_consistency": self.contrast_record(), "notes": self.notes(),
                  "name": stored.name, "predictions_file": str(stored.predictions_file), "written": stored.written,
                  "message": stored.message}
        records = [] if self.table is None else json.loads(self.table.to_json(orient="records"))
        output["group_by"] = self.group_by
        output["by_group"] = [r for r in records if r["group"] != OVERALL_GROUP]
        output["overall"] = self.overall_row()
        return output


def label_scheme_of(labels: Sequence[str]) -> str | None:
    """"2way" for entailment / non-entailment, "3way" for 3-way NLI, None for another task (paraphrase)."""
    return {BINARY_LABELS: "2way", NLI_LABELS: "3way"}.get(tuple(labels))


def read_challenge_checked(paths: Sequence[str | Path], model_labels: Sequence[str], split: str | None = None, *,
                           label_scheme: str = DEFAULT_LABEL_SCHEME, columns: Mapping[str, str] | None = None) -> Any:
    """Read challenge files (a counterfactual folder's `split`; `columns` named, gold labels in `label_scheme`)
    and check that the model can answer their labels — the same task, then each label — before any spaCy
    work."""
    challenge = read_challenge_files(paths, split, label_scheme=label_scheme, columns=columns)
    check_task(challenge, model_labels)
    answerable = tuple(model_labels)
    if challenge.labels == BINARY_LABELS and tuple(model_labels) == NLI_LABELS:
        answerable = BINARY_LABELS
    check_gold_labels(challenge.pairs, answerable, challenge.result.path)
    return challenge


def challenge_overlap(config: Any, challenge: Any, data_dir: str | Path | None) -> TrainingOverlap:
    """How many of a challenge set's pairs, premises and hypotheses occur in the checkpoint's training split
    (`analysis.overlap.training_overlap`), read from `data_dir`; "not checked" with the reason when absent."""
    return training_overlap(config, [(pair.premise, pair.hypothesis) for pair in challenge.pairs], data_dir)


def scored_rows(loaded: Any, challenge: Any, items: Sequence[AnalysedPair]) -> Scored:
    """The model's prediction rows on a challenge set's analysed pairs, in the file's label set (a 2-way file's
    gold labels are not the model's, so its pairs are predicted unlabelled and folded afterwards)."""
    device = next(loaded.model.parameters()).device
    unlabelled = items if tuple(challenge.labels) == tuple(loaded.labels) else [
        replace(item, pair=replace(item.pair, label=None)) for item in items]
    probabilities = check_finite(predict_probabilities(loaded.model, loaded.featurizer, unlabelled,
                                                       EVALUATION_BATCH_SIZE, device), loaded.path)
    return rows_in_label_set(prediction_rows(items, probabilities, loaded.labels), loaded.labels, challenge.labels)


def stored_file_evaluation(loaded: Any, evaluation: FileEvaluation, name: str | None) -> StoredEvaluation:
    """Keep a file evaluation's predictions and record as a named evaluation."""
    scored = evaluation.scored
    unlabelled = sum(row["gold"] is None for row in scored.rows)
    contrast = None
    if evaluation.contrast is not None:
        overall = json.loads(evaluation.contrast.iloc[[-1]].to_json(orient="records"))[0]
        contrast = {"field": evaluation.contrast_field, **{k: v for k, v in overall.items() if k != "group"}}
    record = evaluation_record(evaluation.report, evaluation.challenge.result, evaluation.truncation, unlabelled,
                               group_by=evaluation.group_by, labels=list(scored.labels),
                               label_mapping=scored.mapping_note or None, notes=evaluation.notes(),
                               contrast_consistency=contrast)
    data_name = evaluation.challenge.name + ("-2way" if evaluation.challenge.folded else "")
    return store_evaluation(loaded.path, scored.rows, evaluation.identity,
                            {**record, "label_scheme": label_scheme_of(scored.labels)}, name=name, data_name=data_name)


def checked_fields(challenge: Any, group_by: str | None, contrast_group: str | None) -> tuple[Any, str | None]:
    """(pair id → values of `group_by` or None, the contrast field) — an unknown field is an InputError naming
    the option that gave it (`--group-by`, `--contrast-group`), before any spaCy work."""
    contrast_field = contrast_field_of(challenge, contrast_group)
    checked = {}
    for option, field_name in (("--group-by", group_by), ("--contrast-group", contrast_field)):
        if not field_name:
            continue
        try:
            checked[option] = challenge.groups(field_name)
        except ValueError as error:
            raise InputError(f"{option} {field_name}: {error}") from None
    return checked.get("--group-by"), contrast_field


def evaluate_file(loaded: Any, paths: Sequence[str | Path], *, split: str | None = None, group_by: str | None = None,
                  name: str | None = None, cache_dir: str | Path | None = None, progress: bool = True,
                  store: bool = True, challenge: Any = None, contrast_group: str | None = None,
                  data_dir: str | Path | None = None, label_scheme: str = DEFAULT_LABEL_SCHEME,
                  columns: Mapping[str, str] | None = None) -> FileEvaluation:
    """Evaluate a checkpoint on challenge files (a counterfactual folder's `split`, `columns` named, gold labels
    in `label_scheme`; or `challenge`, already read): read and check everything (labels, the group-by and
    contrast fields) first, count the overlap with the training split under `data_dir`, then analyse
    (cached), predict, score, and keep the predictions as a named evaluation (unless `store` is False). The
    evaluation carries its contrast consistency when the set has contrast groups and the `accuracy_by_group`
    table (None without `group_by`)."""
    challenge = challenge or read_challenge_checked(paths, loaded.labels, split, label_scheme=label_scheme,
                                                    columns=columns)
    groups, contrast_field = checked_fields(challenge, group_by, contrast_group)
    overlap = challenge_overlap(loaded.config, challenge, data_dir)
    identity = data_identity(challenge.source_files())
    items = analyse_pairs(challenge.pairs, cache_dir=cache_dir, progress=progress,
                          cache_key=f"challenge-{sanitized_name(challenge.name)}-{identity.digest[:16]}")
    scored = scored_rows(loaded, challenge, items)
    evaluation = FileEvaluation(Path(loaded.path), challenge, scored, score(scored),
                                count_truncated(loaded.featurizer.settings, items), None, identity,
                                contrast_field=contrast_field, overlap=overlap, group_by=group_by)
    evaluation.contrast = contrast_table(evaluation.predictions(), challenge, contrast_field, group_by)
    if store:
        evaluation.stored = stored_file_evaluation(loaded, evaluation, name)
    if groups is not None:
        evaluation.table = accuracy_by_group(evaluation.predictions(), groups, overall=True)
    return evaluation


def challenge_predictions(loaded: Any, challenge: Any, cache_dir: str | Path | None = None,
                          compute: bool = True) -> tuple[list[Prediction], NamedEvaluation | None]:
    """A checkpoint's predictions on a challenge set for the app: its named evaluation of exactly this data
    when there is one, else (with `compute`) evaluated now and kept as a named evaluation, as the CLI does.
    ([], None) when not evaluated yet and `compute` is False."""
    identity = data_identity(challenge.source_files())
    existing = evaluation_in_labels(loaded, challenge, identity)
    if existing is None and compute:
        evaluate_file(loaded, challenge.files, challenge=challenge, cache_dir=cache_dir, progress=False)
        existing = evaluation_in_labels(loaded, challenge, identity)
    if existing is None:
        return [], None
    predictions = read_named_predictions(existing)
    folded = existing.record.get("labels") == list(NLI_LABELS) and tuple(challenge.labels) == BINARY_LABELS
    return (two_way_predictions(predictions) if folded else predictions), existing


def evaluation_in_labels(loaded: Any, challenge: Any, identity: DataIdentity) -> NamedEvaluation | None:
    """The checkpoint's named evaluation of exactly this data whose predictions can be scored in the labels the
    challenge set was read in: in those labels (older records, which do not say, count as the file's own), or
    3-way ones when the set was read 2-way (folded by the caller)."""
    wanted = label_set_for(challenge.labels, loaded.labels)
    candidates = [e for e in find_named_evaluations(loaded.path).values() if e.data_digest == identity.digest]
    usable = [e for e in candidates if e.record.get("labels", list(wanted)) == list(wanted)]
    if not usable and wanted == BINARY_LABELS and tuple(loaded.labels) == NLI_LABELS:
        usable = [e for e in candidates if e.record.get("labels") == list(NLI_LABELS)]
    return usable[0] if usable else None


def label_set_for(file_labels: Sequence[str], model_labels: Sequence[str]) -> tuple[str, ...]:
    """The labels a checkpoint's predictions on a file are kept in (`rows_in_label_set`)."""
    return BINARY_LABELS if tuple(file_labels) == BINARY_LABELS and tuple(model_labels) == NLI_LABELS \
        else tuple(model_labels)


def evaluated_files(checkpoint: str | Path) -> dict[str, list[Path]]:
    """"<description>" → the files of each named evaluation of a checkpoint whose files are still there (named
    evaluations of recorded splits are left out: those are the splits), for the app to offer again."""
    found: dict[str, list[Path]] = {}
    for evaluation in find_named_evaluations(checkpoint).values():
        files = [Path(f.get("path", "")) for f in evaluation.record.get("data", {}).get("files", [])]
        if files and all(f.is_file() for f in files) and not evaluation.record.get("split_key"):
            found[evaluation.describe()] = files
    return found
