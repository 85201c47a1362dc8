"""Which surface cues decide a checkpoint's answers (`python -m nlivis cues`): per cue of `analysis.cues`
(words changed between premise and hypothesis, the side holding a negation) and value, how often gold says
contradiction and how often each checkpoint does, on the splits the checkpoints recorded predictions on (SNLI dev
for snli-small; XNLI-en dev, MultiNLI dev matched / mismatched and their hard subsets for mnli-small) and on any
challenge files (their named evaluations, computed and kept as `evaluate --file` keeps them when missing).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from nlivis.analysis.cues import CUES, cue_table
from nlivis.data.protocols import Protocol, SplitRef, find_split_file, get_protocol, read_split, split_key
from nlivis.inference import load_checkpoint
from nlivis.store.checkpoints import read_json, table
from nlivis.store.predictions import find_prediction_files, read_predictions
from nlivis.workflows.evaluate import challenge_predictions, read_challenge_checked

CONTRADICTION = "contradiction"


@dataclass
class CueReport:
    """Per evidence set (SNLI dev, each file) the `cue_table` of the checkpoints."""

    checkpoints: list[str]
    label: str
    sets: dict[str, dict] = field(default_factory=dict)

    def record(self) -> dict:
        return {"checkpoints": self.checkpoints, "label": self.label, "cues": dict(CUES), "sets": self.sets}


def shared_protocol(checkpoints: Sequence[Path]) -> Protocol:
    """The protocol the checkpoints were trained on (config.json's dataset.protocol), which names the splits
    their recorded predictions cover. ValueError naming the checkpoints when they differ, since one table
    compares the checkpoints on the same pairs."""
    protocols = {folder: get_protocol(str(table(folder, read_json(folder, "config.json"), "dataset",
                                                "config.json").get("protocol"))) for folder in checkpoints}
    if len({protocol.name for protocol in protocols.values()}) > 1:
        named = ", ".join(f"{folder.name} ({protocol.name})" for folder, protocol in protocols.items())
        raise ValueError(f"the checkpoints were trained on different protocols: {named}; compare checkpoints of one "
                         f"protocol, or give the pairs with --file")
    return next(iter(protocols.values()))


def recorded_splits(checkpoints: Sequence[Path], protocol: Protocol, data_dir: str | Path) -> list[SplitRef]:
    """The protocol's select split, then each report split every checkpoint recorded predictions on and
    `data_dir` holds (snli-small: SNLI dev; mnli-small: XNLI-en dev, then MultiNLI dev matched / mismatched and
    their hard subsets). ValueError naming a checkpoint without its select-split predictions."""
    for folder in checkpoints:
        if split_key(protocol.select) not in find_prediction_files(folder):
            raise ValueError(f"{folder}: no predictions_{split_key(protocol.select)}.jsonl.gz (the predictions on "
                             f"its select split)")
    reported = [ref for ref in protocol.report if ref != protocol.select and find_split_file(ref, data_dir)
                and all(split_key(ref) in find_prediction_files(folder) for folder in checkpoints)]
    return [protocol.select, *reported]


def recorded_predictions(checkpoints: Sequence[Path], split: SplitRef,
                         data_dir: str | Path) -> tuple[list, list, dict]:
    """(texts, gold, name → predicted labels) on the pairs of `split` every checkpoint recorded."""
    pairs = {pair.id: pair for pair in read_split(split, data_dir).pairs}
    by_model = {folder.name: {p.id: p.predicted for p in read_predictions(find_prediction_files(folder)[
        split_key(split)])} for folder in checkpoints}
    ids = [i for i in pairs if all(i in found for found in by_model.values())]
    return ([(pairs[i].premise, pairs[i].hypothesis) for i in ids], [pairs[i].label for i in ids],
            {name: [found[i] for i in ids] for name, found in by_model.items()})


def file_predictions(checkpoints: Sequence[Path], paths: Sequence[str | Path],
                     cache_dir: str | Path | None) -> tuple[list, list, dict]:
    """(texts, gold, name → predicted labels) of challenge files, in the first checkpoint's label set."""
    by_model, challenge = {}, None
    for folder in checkpoints:
        loaded = load_checkpoint(folder)
        challenge = challenge or read_challenge_checked(paths, loaded.labels)
        predictions, _ = challenge_predictions(loaded, challenge, cache_dir)
        by_model[folder.name] = {p.id: p.predicted for p in predictions}
    pairs = [p for p in challenge.pairs if all(p.id in found for found in by_model.values())]
    return ([(p.premise, p.hypothesis) for p in pairs], [p.label for p in pairs],
            {name: [found[p.id] for p in pairs] for name, found in by_model.items()})


def cue_report(checkpoints: Sequence[str | Path], data_dir: str | Path, files: Sequence[str | Path] = (),
               cache_dir: str | Path | None = None, label: str = CONTRADICTION) -> CueReport:
    """The cue tables of the checkpoints on the splits they recorded and on each file of `files`."""
    folders = [Path(c) for c in checkpoints]
    report = CueReport([f.name for f in folders], label)
    for split in recorded_splits(folders, shared_protocol(folders), data_dir):
        report.sets[split_key(split)] = cue_table(*recorded_predictions(folders, split, data_dir), label=label)
    for path in files:
        report.sets[str(path)] = cue_table(*file_predictions(folders, [path], cache_dir), label=label)
    return report
