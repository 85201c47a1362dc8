"""What an edit run found, and how it is judged: whether a model's probabilities before and after an edit
meet the edit's expectation, the run's typed result and its `edits --json` record. Pure: the models are run by
`nlivis.workflows.edits`, which loads the checkpoints and predicts every edit in batches.
"""
from __future__ import annotations

from dataclasses import MISSING, dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from nlivis.analysis.edit_expectations import (DIRECTION_TOLERANCE, FALL, INVARIANT, LABEL, NOT_FALL, NOT_RISE,
                                               TASK_LABELS)
from nlivis.analysis.edits import Edit
from nlivis.data.flags import comma_separated, option


def protocol_notes(loaded: Sequence, names: Sequence[str]) -> dict[str, str | None]:
    """Each checkpoint's protocol sentence (reduced protocols say what they trained on)."""
    return {name: (item.config.get("dataset") or {}).get("note") for name, item in zip(names, loaded)}


def checkpoint_names(loaded: Sequence) -> list[str]:
    """A short name per checkpoint: its folder name, or its path where two folders share a name."""
    names = [Path(item.path).name for item in loaded]
    return [name if names.count(name) == 1 else str(item.path) for name, item in zip(names, loaded)]


def task_of(loaded: Sequence) -> str:
    """"nli" or "paraphrase" from the checkpoints' labels; ValueError when they differ or are neither."""
    label_sets = {tuple(item.labels) for item in loaded}
    if len(label_sets) != 1:
        raise ValueError("the checkpoints answer different label sets "
                         f"({'; '.join(', '.join(s) for s in sorted(label_sets))}): compare models of one task")
    labels = label_sets.pop()
    for task, task_labels in TASK_LABELS.items():
        if labels == task_labels:
            return task
    raise ValueError(f"labels {list(labels)} are neither NLI's {list(TASK_LABELS['nli'])} nor paraphrase's "
                     f"{list(TASK_LABELS['paraphrase'])}")


def expectation_met(expectation: str | None, expected: str | None, direction: str | None, labels: Sequence[str],
                    before: np.ndarray, after: np.ndarray) -> bool | None:
    """Whether a model's probabilities before and after an edit meet the edit's expectation (its
    `expectation`, `expected` and `direction` fields); None when it has none."""
    if expectation is None:
        return None
    if expectation == LABEL:
        return labels[int(np.argmax(after))] == expected
    if expectation == INVARIANT:
        return int(np.argmax(after)) == int(np.argmax(before))
    index = labels.index(expected)
    change = float(after[index] - before[index])
    if direction == FALL:
        return change < 0
    if direction == NOT_RISE:
        return change <= DIRECTION_TOLERANCE
    if direction == NOT_FALL:
        return change >= -DIRECTION_TOLERANCE
    raise ValueError(f"unknown direction {direction!r}")


@dataclass(frozen=True)
class EditOptions:
    """What an edit run is asked: the pair, its gold label (None: only invariance and direction expectations
    apply), the edit kinds (None: all) and, instead of the proposed edits, the user's own edited pair."""

    premise: str = option(MISSING, "the premise (for paraphrase models: the first question)", required=True)
    hypothesis: str = option(MISSING, "the hypothesis (for paraphrase models: the second question)", required=True)
    label: str | None = option(None, "the original pair's label (entailment / neutral / contradiction, or "
                               "not_duplicate / duplicate, also 0 / 1); with it, more edits get a label expectation "
                               "(default: none, so only invariance and direction expectations)")
    kinds: tuple[str, ...] | None = option(
        None, "comma-separated edit kinds (substitution, number, quantifier, negation, name, gender, swap, typo) or "
        "substitution relations (synonym, hypernym, hyponym, antonym, exclusive) (default: all but quantifier, "
        "negation, gender and antonym, which the hand-judged audit found short of its targets and which are made "
        "only when named here: nlivis.analysis.edit_filters.OFF_BY_DEFAULT says why)", type=comma_separated)
    own: tuple[str, str] | None = None


@dataclass
class EditOutcome:
    edit: Edit
    probabilities: dict[str, np.ndarray]
    flipped: dict[str, bool]
    meets_expectation: dict[str, bool | None]


@dataclass
class EditRun:
    task: str
    labels: tuple[str, ...]
    names: list[str]
    premise: str
    hypothesis: str
    label: str | None
    original: dict[str, np.ndarray]
    outcomes: list[EditOutcome]
    notes: dict[str, str | None] = field(default_factory=dict)
    """Each checkpoint's protocol sentence (`protocol_notes`), for the record."""

    def record(self) -> dict[str, Any]:
        """The `edits --json` output (`edit_run_record`)."""
        return edit_run_record(self, self.notes)


def prediction_record(labels: Sequence[str], probabilities: np.ndarray) -> dict:
    """{label, probabilities} of one model on one pair, as the JSON outputs write it."""
    return {"label": labels[int(np.argmax(probabilities))],
            "probabilities": {name: round(float(p), 6) for name, p in zip(labels, probabilities)}}


def edit_run_record(run: EditRun, notes: Mapping[str, str] | None = None) -> dict:
    """The `edits --json` output: the original's predictions per model and one record per edit."""
    return {
        "task": run.task, "premise": run.premise, "hypothesis": run.hypothesis, "label": run.label,
        "checkpoints": {name: {"protocol_note": (notes or {}).get(name)} for name in run.names},
        "original": {"predictions": {name: prediction_record(run.labels, run.original[name]) for name in run.names}},
        "edits": [{**outcome.edit.to_dict(),
                   "predictions": {name: prediction_record(run.labels, outcome.probabilities[name])
                                   for name in run.names},
                   "flipped": outcome.flipped, "meets_expectation": outcome.meets_expectation}
                  for outcome in run.outcomes],
    }
