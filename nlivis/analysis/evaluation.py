"""Evaluating a checkpoint: read and check the data first, analyse it (cached), predict, score, and keep the
predictions through `store.evaluations` (never over what the checkpoint recorded).

Used by `python -m nlivis evaluate` and by the app (challenge sets, truncation counts of a split).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Sequence

import torch

from nlivis.analysis.challenge import accuracy_by_group, contrast_consistency
from nlivis.analysis.metrics import ClassificationReport, classification_report
from nlivis.analysis.overlap import TrainingOverlap, training_overlap
from nlivis.analysis.tags import read_tag_file, tag_pairs, unavailable_tags
from nlivis.data.challenge import BINARY_LABELS, read_challenge_files
from nlivis.data.protocols import find_split_file, gold_tag_file, read_split
from nlivis.data.records import NLI_LABELS, PARAPHRASE_LABELS, InputError
from nlivis.features.cache import AnalysisCache, texts_digest
from nlivis.features.dataset import AnalyzedPair, analyze_pairs, split_cache_key
from nlivis.inference import (
    LoadedCheckpoint,
    check_finite,
    predict_probabilities,
    prediction_rows,
)
from nlivis.store.evaluations import (
    DataIdentity,
    NamedEvaluation,
    StoredEvaluation,
    as_predictions,
    data_identity,
    named_evaluation_for,
    read_named_predictions,
    store_evaluation,
)
from nlivis.store.files import sanitized_name
from nlivis.store.predictions import Prediction

# ------------------------------------------------------------------------------------ checks on inputs


def check_gold_labels(pairs: Sequence[Any], labels: Sequence[str], source: str) -> None:
    """Before any analysis: every gold label must be one the model (or its mapping) can answer. The error
    names the file and the first line of each unknown label."""
    first_line: dict[str, Any] = {}
    for pair in pairs:
        if pair.label is not None and pair.label not in labels and pair.label not in first_line:
            first_line[pair.label] = pair.line
    if first_line:
        where = ", ".join(f"{label!r} (first on line {line})" for label, line in first_line.items())
        raise ValueError(f"{source}: gold labels {where} are not among this checkpoint's labels {list(labels)}; "
                         "nothing was analysed")


def check_pairs(pairs: Sequence[Any], source: str, dropped_no_gold: int = 0) -> None:
    """A ValueError naming the source when there is nothing to evaluate."""
    if not pairs:
        extra = f" ({dropped_no_gold} pair(s) have gold label '-' and were left out)" if dropped_no_gold else ""
        raise ValueError(f"{source}: no pairs to evaluate{extra}")

# ------------------------------------------------------------------------------------------ truncation


@dataclass(frozen=True)

class TruncationCount:
    """How many pairs the model's token cut-offs shortened (the shipped models read ≤ 32 tokens a side)."""
    pairs: int
    premises: int
    hypotheses: int
    total: int
    max_premise_len: int
    max_hypothesis_len: int

    def describe(self) -> str:
        """One sentence for the user; "" when nothing was cut."""
        if not self.pairs:
            return ""
        return (f"{self.pairs:,} of {self.total:,} pairs were cut to the model's {self.max_premise_len} premise / "
                f"{self.max_hypothesis_len} hypothesis tokens ({self.premises:,} premises, "
                f"{self.hypotheses:,} hypotheses); the words after the cut were not read")

    def to_dict(self) -> dict[str, int]:
        return {"pairs": self.pairs, "premises": self.premises, "hypotheses": self.hypotheses,
                "total": self.total, "max_premise_len": self.max_premise_len,
                "max_hypothesis_len": self.max_hypothesis_len}


def count_truncated(featurizer: Any, items: Sequence[Any]) -> TruncationCount:
    """Count the analysed pairs (`AnalyzedPair`) that `featurizer`'s cut-offs shorten; the app calls this
    for a split as the CLI does."""
    premises = hypotheses = pairs = 0
    for item in items:
        cut = featurizer.truncation(item.premise, item.hypothesis)
        premise_cut, hypothesis_cut = cut.premise_kept < cut.premise_tokens, cut.hypothesis_kept < cut.hypothesis_tokens
        premises += premise_cut
        hypotheses += hypothesis_cut
        pairs += premise_cut or hypothesis_cut
    settings = featurizer.settings
    return TruncationCount(pairs, premises, hypotheses, len(items), settings.max_premise_len,
                           settings.max_hypothesis_len)

# --------------------------------------------------------------------------------------- data identity


# ----------------------------------------------------------------------------------- named evaluations


# -------------------------------------------------------------------------------- predicting, labels

BINARY_MAPPING_NOTE = ("the model's 3-way answer is mapped to the file's 2-way labels as HANS does: a predicted "
                       "neutral or contradiction counts as non-entailment (p(non-entailment) = p(neutral) + "
                       "p(contradiction))")


@dataclass

class Scored:
    """Prediction rows in the file's label set, and what mapping (if any) got them there."""
    rows: list[dict[str, Any]]
    labels: tuple[str, ...]
    mapping_note: str = ""
    notes: list[str] = field(default_factory=list)


def rows_in_label_set(rows: list[dict[str, Any]], model_labels: Sequence[str],
                      file_labels: Sequence[str]) -> Scored:
    """Rows as they are when the file uses the model's labels; for a 2-way entailment/non-entailment file
    and a 3-way NLI model, the predicted label and the probabilities folded to 2-way (see
    `BINARY_MAPPING_NOTE`)."""
    if tuple(file_labels) == BINARY_LABELS and tuple(model_labels) == NLI_LABELS:
        folded = []
        for row in rows:
            probs = dict(zip(model_labels, row["probs"]))
            binary = [probs["entailment"], probs["neutral"] + probs["contradiction"]]
            predicted = BINARY_LABELS[0] if row["predicted"] == "entailment" else BINARY_LABELS[1]
            folded.append({**row, "predicted": predicted, "probs": binary})
        return Scored(folded, BINARY_LABELS, BINARY_MAPPING_NOTE)
    return Scored(rows, tuple(model_labels))


def accuracy_interval(report: Any, confidence: float = 0.95) -> tuple[float, float]:
    """The Wilson interval of a report's accuracy (correct = the confusion matrix's diagonal)."""
    from nlivis.analysis.significance import wilson_interval

    correct = sum(report.confusion[i][i] for i in range(len(report.confusion)))
    return wilson_interval(correct, report.count, confidence)


def score(scored: Scored) -> Any:
    """The classification report over the labelled rows of `scored`."""
    index = {label: i for i, label in enumerate(scored.labels)}
    labelled = [row for row in scored.rows if row["gold"] is not None]
    return classification_report([index[row["gold"]] for row in labelled],
                                 [index[row["predicted"]] for row in labelled], scored.labels)

# ------------------------------------------------------------------------------ a protocol's split


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


def analyze_split(ref: Any, result: Any, cache_dir: str | Path | None, progress: bool = True) -> list[Any]:
    """The split's pairs analysed through the feature cache (keyed by split and file content)."""
    return analyze_pairs(result.pairs, cache_dir=cache_dir, cache_key=split_cache_key(ref, result), progress=progress)


def evaluation_record(report: Any, read: Any, truncation: TruncationCount, unlabelled: int,
                      **extra: Any) -> dict[str, Any]:
    """What evaluation.json keeps besides the data identity."""
    return {"count": report.count, "accuracy": report.accuracy, "unlabelled": unlabelled,
            "dropped_no_gold": read.dropped_no_gold, "ambiguous_ids": len(read.ambiguous_ids),
            "truncated": truncation.to_dict(), **extra}

# --------------------------------------------------------------------------------- a challenge file


@dataclass

class FileEvaluation:
    """`evaluate_file`'s result: the challenge set, the rows in its label set, the report, what was cut,
    and where the predictions are kept."""
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

    def predictions(self) -> list[Prediction]:
        return as_predictions(self.scored.rows)

    def notes(self) -> list[str]:
        notes = list(self.challenge.notes)
        if self.scored.mapping_note:
            notes.append(self.scored.mapping_note)
        if self.truncation.pairs:
            notes.append(self.truncation.describe())
        if self.contrast is not None:
            overall = self.contrast.iloc[-1]
            if overall["single_member_groups"]:
                notes.append(f"{overall['single_member_groups']:,} {self.contrast_field} value(s) have one labelled "
                             "pair: no contrast group, left out of the consistency")
        return notes


def task_name(labels: Sequence[str]) -> str:
    """"paraphrase" for the Quora label set, else "NLI"."""
    return "paraphrase" if set(labels) <= set(PARAPHRASE_LABELS) else "NLI"


def check_task(challenge: Any, model_labels: Sequence[str]) -> None:
    """An NLI file cannot score a paraphrase model, nor the other way: an InputError naming the files, where
    each label first appears and what each side's labels are."""
    file_task, model_task = task_name(challenge.labels), task_name(model_labels)
    if file_task == model_task:
        return
    first: dict[str, Any] = {}
    for pair in challenge.pairs:
        if pair.label is not None:
            first.setdefault(pair.label, pair)
    where = ", ".join(f"{label!r} (first on line {pair.line}{'' if len(challenge.files) == 1 else ' of ' + str(pair.source)})"
                      for label, pair in first.items())
    article = {"NLI": "an", "paraphrase": "a"}
    raise InputError(f"{challenge.result.path}: {article[file_task]} {file_task} file (gold labels {where}) cannot be "
                     f"scored by this {model_task} checkpoint (labels {', '.join(model_labels)}); give "
                     f"{article[file_task]} {file_task} checkpoint"
                     + (" (labels 0 / 1 are read as paraphrase labels, 1 = duplicate)" if file_task == "paraphrase"
                        else "") + "; nothing was analysed", challenge.result.path)


def read_challenge_checked(paths: Sequence[str | Path], model_labels: Sequence[str], split: str | None = None) -> Any:
    """Read challenge files (a counterfactual folder's `split`) and check that the model can answer their
    labels — the same task, then each label — before any spaCy work."""
    challenge = read_challenge_files(paths, split)
    check_task(challenge, model_labels)
    answerable = tuple(model_labels)
    if challenge.labels == BINARY_LABELS and tuple(model_labels) == NLI_LABELS:
        answerable = BINARY_LABELS
    check_gold_labels(challenge.pairs, answerable, challenge.result.path)
    return challenge


def contrast_field_of(challenge: Any, contrast_group: str | None) -> str | None:
    """The field that forms contrast groups: the one given, else the one the layout brings (counterfactually
    augmented NLI's `contrast_group`), else None."""
    return contrast_group or challenge.contrast_field


def contrast_table(predictions: Any, challenge: Any, contrast_group: str | None = None,
                   group_by: str | None = None) -> Any:
    """`contrast_consistency` of predictions (one model's, or {model: predictions}) on a challenge set, by
    `group_by` too when given; None when the set has no contrast field and none is named. An unknown field
    is a ValueError listing the known ones."""
    field_name = contrast_field_of(challenge, contrast_group)
    if field_name is None:
        return None
    groups = challenge.groups(group_by) if group_by else None
    return contrast_consistency(predictions, challenge.groups(field_name), groups)


def challenge_overlap(config: Any, challenge: Any, data_dir: str | Path | None) -> TrainingOverlap:
    """How many of a challenge set's pairs, premises and hypotheses occur in the checkpoint's training split
    (`analysis.overlap.training_overlap`), read from `data_dir`; "not checked" with the reason when absent."""
    return training_overlap(config, [(pair.premise, pair.hypothesis) for pair in challenge.pairs], data_dir)


def evaluate_file(loaded: Any, paths: Sequence[str | Path], *, group_by: str | None = None,
                  name: str | None = None, cache_dir: str | Path | None = None, progress: bool = True,
                  store: bool = True, challenge: Any = None, contrast_group: str | None = None,
                  data_dir: str | Path | None = None) -> tuple[FileEvaluation, Any]:
    """Evaluate a checkpoint on challenge files: read and check everything (labels, the group-by and contrast
    fields) first, count the overlap with the training split under `data_dir`, then analyse (cached),
    predict, score, and keep the predictions as a named evaluation (unless `store` is False). Returns the
    evaluation (with its contrast consistency when the set has contrast groups) and the `accuracy_by_group`
    table (None without `group_by`)."""
    challenge = challenge or read_challenge_checked(paths, loaded.labels)
    groups = challenge.groups(group_by) if group_by else None
    contrast_field = contrast_field_of(challenge, contrast_group)
    if contrast_field:
        challenge.groups(contrast_field)  # an unknown field fails here, before spaCy
    overlap = challenge_overlap(loaded.config, challenge, data_dir)
    identity = data_identity(challenge.source_files())
    items = analyze_pairs(challenge.pairs, cache_dir=cache_dir, progress=progress,
                          cache_key=f"challenge-{sanitized_name(challenge.name)}-{identity.digest[:16]}")
    device = next(loaded.model.parameters()).device
    unlabelled = items if tuple(challenge.labels) == tuple(loaded.labels) else [  # 2-way gold: not the model's
        replace(item, pair=replace(item.pair, label=None)) for item in items]
    probabilities = check_finite(predict_probabilities(loaded.model, loaded.featurizer, unlabelled, 128, device),
                                 loaded.path)
    scored = rows_in_label_set(prediction_rows(items, probabilities, loaded.labels), loaded.labels, challenge.labels)
    report = score(scored)
    truncation = count_truncated(loaded.featurizer, items)
    evaluation = FileEvaluation(challenge, scored, report, truncation, None, identity,
                                contrast_field=contrast_field, overlap=overlap)
    evaluation.contrast = contrast_table(evaluation.predictions(), challenge, contrast_field, group_by)
    if store:
        unlabelled = sum(row["gold"] is None for row in scored.rows)
        contrast = None
        if evaluation.contrast is not None:
            overall = json.loads(evaluation.contrast.iloc[[-1]].to_json(orient="records"))[0]
            contrast = {"field": contrast_field, **{k: v for k, v in overall.items() if k != "group"}}
        record = evaluation_record(report, challenge.result, truncation, unlabelled, group_by=group_by,
                                   labels=list(scored.labels), label_mapping=scored.mapping_note or None,
                                   notes=evaluation.notes(), contrast_consistency=contrast)
        evaluation.stored = store_evaluation(loaded.path, scored.rows, identity, record, name=name,
                                             data_name=challenge.name)
    table = accuracy_by_group(evaluation.predictions(), groups, overall=True) if groups is not None else None
    return evaluation, table

# ------------------------------------------------------------------------------------- for the app


def cached_split_truncation(featurizer: Any, ref: Any, data_root: str | Path,
                            cache_dir: str | Path | None = None) -> TruncationCount | None:
    """How many pairs of a protocol split the model's cut-offs shorten, from the feature cache only (None
    when the split was never analysed here: `prepare` or `evaluate` fill the cache). No spaCy runs, so a
    page can show it next to every split cheaply."""
    result = read_split(ref, data_root)
    pairs = result.pairs
    rows = AnalysisCache(cache_dir).read(split_cache_key(ref, result),
                                         texts_digest((p.id, p.premise, p.hypothesis) for p in pairs), len(pairs))
    if rows is None:
        return None
    return count_truncated(featurizer, [AnalyzedPair(p, a, b) for p, (a, b) in zip(pairs, rows)])


def challenge_predictions(loaded: Any, challenge: Any, cache_dir: str | Path | None = None,
                          compute: bool = True) -> tuple[list[Prediction], NamedEvaluation | None]:
    """A checkpoint's predictions on a challenge set for the app: its named evaluation of exactly this data
    when there is one, else (with `compute`) evaluated now and kept as a named evaluation, as the CLI does.
    ([], None) when not evaluated yet and `compute` is False."""
    identity = data_identity(challenge.source_files())
    existing = named_evaluation_for(loaded.path, identity)
    if existing is None and compute:
        evaluate_file(loaded, challenge.files, challenge=challenge, cache_dir=cache_dir, progress=False)
        existing = named_evaluation_for(loaded.path, identity)
    if existing is None:
        return [], None
    return read_named_predictions(existing), existing

EVALUATION_BATCH_SIZE = 128
"""Pairs per forward pass in `evaluate_checkpoint` (memory, not results, depends on it)."""


@dataclass

class EvaluationResult:
    """Scores over the labelled pairs, and one prediction row per pair (labelled or not)."""
    report: ClassificationReport
    predictions: list[dict[str, Any]]
    probabilities: torch.Tensor
    unlabelled: int = 0


def evaluate_checkpoint(loaded: LoadedCheckpoint, pairs_analyzed: Sequence, batch_size: int = EVALUATION_BATCH_SIZE) -> EvaluationResult:
    """Predict every analysed pair with a loaded checkpoint and score the labelled ones."""
    if not pairs_analyzed:
        raise ValueError("no pairs to evaluate")
    device = next(loaded.model.parameters()).device
    probabilities = check_finite(predict_probabilities(loaded.model, loaded.featurizer, pairs_analyzed, batch_size, device),
                                 loaded.path)
    rows = prediction_rows(pairs_analyzed, probabilities, loaded.labels)
    index = {label: i for i, label in enumerate(loaded.labels)}
    labelled = [r for r in rows if r["gold"] is not None]
    unknown = sorted({r["gold"] for r in labelled} - set(index))
    if unknown:
        raise ValueError(f"gold labels {unknown} are not among this checkpoint's labels {list(loaded.labels)}")
    report = classification_report([index[r["gold"]] for r in labelled], [index[r["predicted"]] for r in labelled],
                                   loaded.labels)
    return EvaluationResult(report, rows, probabilities, unlabelled=len(rows) - len(labelled))


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
