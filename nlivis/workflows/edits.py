"""Edit runs: every proposed edit of a pair (`analysis.edits`), predicted by every loaded checkpoint in
batches, with whether the prediction flipped and whether it meets the edit's expectation
(`analysis.edit_runs` decides and records; this module loads checkpoints and runs the models).

Each distinct sentence of a run is analysed by spaCy once (`features.sentences`), and each model sees all
pairs in a few batches (`inference`'s batched prediction), so fifty edits cost about one batch per model.
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from nlivis.analysis.edit_runs import (EditOptions, EditOutcome, EditRun, checkpoint_names, expectation_met,
                                       protocol_notes, task_of)
from nlivis.analysis.edits import Edit, propose_edits, user_edit
from nlivis.features.dataset import analyse_text_pairs
from nlivis.inference import LoadedCheckpoint, check_finite, load_checkpoint, predict_probabilities
from nlivis.workflows.protocol import AnalysisSpec, register_analysis

PREDICTION_BATCH_SIZE = 128


def load_checkpoints(paths: Sequence[str | Path]) -> list[LoadedCheckpoint]:
    """Every checkpoint loaded on the CPU (a `CheckpointError` names the one that failed)."""
    return [load_checkpoint(path) for path in paths]


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


EDITS = register_analysis(AnalysisSpec(name="edits", needs=frozenset(), options=EditOptions, run=edit_pair))
"""Edits read only the output distribution: every model applies."""
