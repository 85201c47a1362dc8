"""Which surface cues decide a checkpoint's answers (`python -m nlivis cues`): per cue of `analysis.cues`
(words changed between premise and hypothesis, the side holding a negation) and value, how often gold says
contradiction and how often each checkpoint does, on SNLI dev (the checkpoints' recorded predictions) and on
any challenge files (their named evaluations, computed and kept as `evaluate --file` keeps them when missing).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from nlivis.analysis.cues import CUES, cue_table
from nlivis.data.protocols import SplitRef, read_split, split_key
from nlivis.inference import load_checkpoint
from nlivis.store.predictions import read_predictions
from nlivis.workflows.evaluate import challenge_predictions, read_challenge_checked

SNLI_DEV = SplitRef("snli", "dev", "snli/esnli_tokenized")
SELECT_PREDICTIONS = "predictions_snli_dev.jsonl.gz"
CONTRADICTION = "contradiction"


@dataclass
class CueReport:
    """Per evidence set (SNLI dev, each file) the `cue_table` of the checkpoints."""

    checkpoints: list[str]
    label: str
    sets: dict[str, dict] = field(default_factory=dict)

    def record(self) -> dict:
        return {"checkpoints": self.checkpoints, "label": self.label, "cues": dict(CUES), "sets": self.sets}


def snli_dev_predictions(checkpoints: Sequence[Path], data_dir: str | Path) -> tuple[list, list, dict]:
    """(texts, gold, name → predicted labels) on the SNLI dev pairs every checkpoint recorded; ValueError naming
    a checkpoint without `predictions_snli_dev.jsonl.gz`."""
    pairs = {pair.id: pair for pair in read_split(SNLI_DEV, data_dir).pairs}
    by_model = {}
    for folder in checkpoints:
        path = folder / SELECT_PREDICTIONS
        if not path.is_file():
            raise ValueError(f"{folder}: no {SELECT_PREDICTIONS} (its select split is not {split_key(SNLI_DEV)})")
        by_model[folder.name] = {p.id: p.predicted for p in read_predictions(path)}
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
    """The cue tables of the checkpoints on SNLI dev and on each file of `files`."""
    folders = [Path(c) for c in checkpoints]
    report = CueReport([f.name for f in folders], label)
    report.sets[split_key(SNLI_DEV)] = cue_table(*snli_dev_predictions(folders, data_dir), label=label)
    for path in files:
        report.sets[str(path)] = cue_table(*file_predictions(folders, [path], cache_dir), label=label)
    return report
