"""Edits run through models: every proposed edit of a pair, predicted by every loaded checkpoint in batches,
with whether the prediction flipped and whether it meets the edit's expectation.

`predict_text_pairs` is the one place here that runs models: each distinct sentence is analysed by spaCy
once per process (as `features.sentences` does for a typed pair), and each model sees all pairs in a few
batches (`inference`'s batched prediction), so fifty edits cost about one batch per model.
"""
from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping, Sequence

import numpy as np

from nlivis.analysis.edit_expectations import (DIRECTION_TOLERANCE, FALL, INVARIANT, LABEL, NOT_FALL, NOT_RISE,
                                               TASK_LABELS)
from nlivis.analysis.edits import Edit, propose_edits

PREDICTION_BATCH_SIZE = 128
ANALYSES_REMEMBERED = 50_000
"""Distinct sentences whose spaCy analysis (tokens, tags, lemmas: a few hundred bytes) is kept."""

_ANALYSES: OrderedDict = OrderedDict()


def analyse_texts(texts: Sequence[str]) -> list:
    """`features.sentences.analyze_sentences` of each text, remembered per text for this process."""
    from nlivis.features.sentences import analyze_sentences

    missing = list(dict.fromkeys(t for t in texts if t not in _ANALYSES))
    if missing:
        for text, analysis in zip(missing, analyze_sentences(missing)):
            _ANALYSES[text] = analysis
            if len(_ANALYSES) > ANALYSES_REMEMBERED:
                _ANALYSES.popitem(last=False)
    return [_ANALYSES[t] for t in texts]


def load_checkpoints(paths: Sequence[str]) -> list:
    """Every checkpoint loaded on the CPU (a `CheckpointError` names the one that failed)."""
    from nlivis.inference import load_checkpoint

    return [load_checkpoint(path) for path in paths]


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


def analysed_pairs(pairs: Sequence[tuple[str, str]], cache_dir: str | Path | None = None,
                   disk_cache: bool = False) -> list:
    """`AnalyzedPair`s of text pairs: spaCy once per distinct sentence, remembered in memory, or (with
    `disk_cache`, for a probe suite's thousands of pairs) through the feature cache on disk."""
    from nlivis.data.records import Pair
    from nlivis.features.dataset import AnalyzedPair, analyze_pairs

    records = [Pair(id=str(i), premise=premise, hypothesis=hypothesis) for i, (premise, hypothesis) in enumerate(pairs)]
    if disk_cache:
        return analyze_pairs(records, cache_dir=cache_dir, progress=False)
    analyses = analyse_texts([text for pair in pairs for text in pair])
    return [AnalyzedPair(record, analyses[2 * i], analyses[2 * i + 1]) for i, record in enumerate(records)]


def predict_items(loaded: Sequence, items: Sequence, batch_size: int = PREDICTION_BATCH_SIZE) -> list[np.ndarray]:
    """Class probabilities [len(items), labels] per checkpoint, in the order of `loaded`."""
    from nlivis.inference import check_finite, predict_probabilities

    results = []
    for checkpoint in loaded:
        device = next(checkpoint.model.parameters()).device
        probabilities = predict_probabilities(checkpoint.model, checkpoint.featurizer, items, batch_size, device)
        results.append(check_finite(probabilities, checkpoint.path).numpy())
    return results


def predict_text_pairs(loaded: Sequence, pairs: Sequence[tuple[str, str]]) -> list[np.ndarray]:
    """Class probabilities [len(pairs), labels] per checkpoint for text pairs (spaCy once per new sentence)."""
    return predict_items(loaded, analysed_pairs(pairs))


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


def run_edits(loaded: Sequence, premise: str, hypothesis: str, label: str | None = None,
              kinds: Iterable[str] | None = None, extra: Sequence[Edit] = ()) -> EditRun:
    """Propose the pair's edits (plus `extra`, e.g. a user's own) and predict the original and every edit with
    every checkpoint, in batches."""
    task = task_of(loaded)
    labels = tuple(loaded[0].labels)
    names = checkpoint_names(loaded)
    edits = [*propose_edits(premise, hypothesis, label, task, kinds), *extra]
    pairs = [(premise, hypothesis), *((edit.premise, edit.hypothesis) for edit in edits)]
    predicted = dict(zip(names, predict_text_pairs(loaded, pairs)))
    original = {name: probabilities[0] for name, probabilities in predicted.items()}
    outcomes = []
    for row, edit in enumerate(edits, start=1):
        after = {name: probabilities[row] for name, probabilities in predicted.items()}
        outcomes.append(EditOutcome(
            edit, after,
            {name: int(np.argmax(after[name])) != int(np.argmax(original[name])) for name in names},
            {name: expectation_met(edit.expectation, edit.expected, edit.direction, labels, original[name], after[name])
             for name in names}))
    return EditRun(task, labels, names, premise, hypothesis, label, original, outcomes)


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
