"""Scoring a checkpoint's predictions: checks on the data before any spaCy work (pairs present, gold labels the
model can answer, the same task), what the model's cut-offs shortened, predictions folded into a file's label
set, the accuracy with its Wilson interval, and contrast consistency tables.

Pure: no model runs and no file is read or written here; `nlivis.workflows.evaluate` reads the data, runs the
checkpoint and keeps the predictions.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence, Sized

from nlivis.analysis.challenge import contrast_consistency
from nlivis.analysis.metrics import classification_report
from nlivis.analysis.significance import wilson_interval
from nlivis.data.challenge import BINARY_LABELS
from nlivis.data.records import NLI_LABELS, PARAPHRASE_LABELS, InputError
from nlivis.features.settings import FeatureSettings

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


def count_truncated(settings: FeatureSettings, items: Sequence[Any]) -> TruncationCount:
    """Count the analysed pairs (`AnalysedPair`) that a checkpoint's cut-offs (its featurizer's `settings`, or
    the same read from config.json without the weights) shorten; the CLI calls this for a split, the app for a
    sample."""
    return count_truncated_sides(settings, [(item.premise, item.hypothesis) for item in items])


def count_truncated_sides(settings: FeatureSettings, sides: Sequence[tuple[Sized, Sized]]) -> TruncationCount:
    """`count_truncated` over (premise, hypothesis) per pair — their analyses or just their tokens, since the
    cut-offs count tokens — with a checkpoint's `FeatureSettings` (read from its config.json, so the app counts a
    whole split from its cached tokens, decoded once for every model, without loading any)."""
    premises = hypotheses = pairs = 0
    for premise, hypothesis in sides:
        cut = settings.truncation(premise, hypothesis)
        premise_cut, hypothesis_cut = cut.premise_kept < cut.premise_tokens, cut.hypothesis_kept < cut.hypothesis_tokens
        premises += premise_cut
        hypotheses += hypothesis_cut
        pairs += premise_cut or hypothesis_cut
    return TruncationCount(pairs, premises, hypotheses, len(sides), settings.max_premise_len,
                           settings.max_hypothesis_len)

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
    correct = sum(report.confusion[i][i] for i in range(len(report.confusion)))
    return wilson_interval(correct, report.count, confidence)


def score(scored: Scored) -> Any:
    """The classification report over the labelled rows of `scored`."""
    index = {label: i for i, label in enumerate(scored.labels)}
    labelled = [row for row in scored.rows if row["gold"] is not None]
    return classification_report([index[row["gold"]] for row in labelled],
                                 [index[row["predicted"]] for row in labelled], scored.labels)

# --------------------------------------------------------------------------------- a challenge file


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
