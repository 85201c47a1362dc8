"""Edit runs: every proposed edit of a pair (`analysis.edits`), predicted by every loaded checkpoint in
batches, with whether the prediction flipped and whether it meets the edit's expectation
(`analysis.edit_runs` decides and records; this module loads checkpoints and runs the models).

Each distinct sentence of a run is analysed by spaCy once (`features.sentences`), and each model sees all
pairs in a few batches (`inference`'s batched prediction), so fifty edits cost about one batch per model.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Iterable, Sequence

import numpy as np

from nlivis.analysis.edit_runs import (EditOptions, EditOutcome, EditRun, checkpoint_names, expectation_met,
                                       protocol_notes, task_of)
from nlivis.analysis.edit_expectations import TASK_LABELS
from nlivis.analysis.edits import Edit, propose_edits, user_edit
from nlivis.features.dataset import analyse_text_pairs
from nlivis.inference import LoadedCheckpoint, check_finite, predict_probabilities
from nlivis.data.text import text_problem
from nlivis.workflows.protocol import Progress
from nlivis.workflows.subjects import Checkpoints

PREDICTION_BATCH_SIZE = 128
MAX_TEXT_CHARS = 1000
"""Longest sentence `edits` accepts: every word of it gets edits, and the models read a few dozen tokens."""
PARAPHRASE_LABEL_ALIASES = {"0": "not_duplicate", "1": "duplicate"}


def predict_items(loaded: Sequence[LoadedCheckpoint], items: Sequence,
                  batch_size: int = PREDICTION_BATCH_SIZE) -> list[np.ndarray]:
    """Class probabilities [len(items), labels] per checkpoint, in the order of `loaded`."""
    results = []
    for checkpoint in loaded:
        device = next(checkpoint.model.parameters()).device
        probabilities = predict_probabilities(checkpoint.model, checkpoint.featurizer, items, batch_size, device)
        results.append(check_finite(probabilities, checkpoint.path).numpy())
    return results


def predict_text_pairs(loaded: Sequence[LoadedCheckpoint], pairs: Sequence[tuple[str, str]]) -> list[np.ndarray]:
    """Class probabilities [len(pairs), labels] per checkpoint for text pairs (spaCy once per distinct sentence)."""
    return predict_items(loaded, analyse_text_pairs(pairs))


def run_edits(loaded: Sequence[LoadedCheckpoint], premise: str, hypothesis: str, label: str | None = None,
              kinds: Iterable[str] | None = None, extra: Sequence[Edit] = (),
              names: Sequence[str] | None = None) -> EditRun:
    """Propose the pair's edits (plus `extra`, e.g. a user's own) and predict the original and every edit with
    every checkpoint, in batches. `names` name the checkpoints in the result (default: their folder names)."""
    task = task_of(loaded)
    labels = tuple(loaded[0].labels)
    names = list(names) if names is not None else checkpoint_names(loaded)
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
    return EditRun(task, labels, names, premise, hypothesis, label, original, outcomes, protocol_notes(loaded, names))


def edit_pair(loaded: Sequence[LoadedCheckpoint], options: EditOptions,
              names: Sequence[str] | None = None) -> EditRun:
    """The edit run `options` asks for: the proposed edits of the pair, or (with `options.own`) only the user's
    own edited pair, predicted by every checkpoint."""
    if options.own is None:
        return run_edits(loaded, options.premise, options.hypothesis, options.label, options.kinds, names=names)
    own = user_edit(options.premise, options.hypothesis, *options.own)
    return run_edits(loaded, options.premise, options.hypothesis, options.label, kinds=(), extra=[own], names=names)




def task_label(value: str | None, task: str) -> str | None:
    """A label as one of the task's label names (paraphrase also takes 0 / 1); ValueError otherwise."""
    if value is None:
        return None
    if task == "paraphrase":
        value = PARAPHRASE_LABEL_ALIASES.get(value, value)
    if value not in TASK_LABELS[task]:
        raise ValueError(f"--label {value!r} is not one of this {task} model's labels {list(TASK_LABELS[task])}")
    return value


def edits_subject(subject: Checkpoints, options: EditOptions, progress: Progress) -> EditRun:
    """`edit_pair` as the registered edits analysis runs it: each sentence checked (no control characters, at
    most `MAX_TEXT_CHARS`) and the label read in the checkpoints' task (ValueError naming the option)."""
    for name, text in (("premise", options.premise), ("hypothesis", options.hypothesis)):
        problem = text_problem(text, f"--{name}")
        if problem:
            raise ValueError(problem)
        if len(text) > MAX_TEXT_CHARS:
            raise ValueError(f"the --{name} has {len(text):,} characters; edits take sentences of at most "
                             f"{MAX_TEXT_CHARS:,}")
    options = replace(options, label=task_label(options.label, task_of(subject.loaded)))
    return edit_pair(subject.loaded, options, subject.names)
