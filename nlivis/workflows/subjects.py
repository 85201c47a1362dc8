"""What an analysis is run on (`protocol.SUBJECTS`), as typed values: the command line builds one from its
arguments, the app from its loaded models, a notebook by hand. Each loader reads through the same functions
the rest of nlivis uses (`inference.load_checkpoint`, `features.dataset.load_split_analysed`)."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from nlivis.analysis.edit_runs import checkpoint_names
from nlivis.data.protocols import resolve_split, split_key
from nlivis.features.dataset import AnalysedPair, load_split_analysed

if TYPE_CHECKING:
    from nlivis.inference import LoadedCheckpoint


@dataclass
class Checkpoints:
    """Loaded checkpoints and the names results call them by (default: their folder names)."""

    loaded: list[LoadedCheckpoint]
    names: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.names = list(self.names) or checkpoint_names(self.loaded)

    @classmethod
    def read(cls, paths: Sequence[str | Path]) -> Checkpoints:
        """`load_checkpoints`, named by their folders."""
        return cls(load_checkpoints(paths))


def load_checkpoints(paths: Sequence[str | Path]) -> list[LoadedCheckpoint]:
    """Every checkpoint loaded on the CPU (a `CheckpointError` names the one that failed)."""
    from nlivis.inference import load_checkpoint  # torch: a module that only names a subject's type loads none

    return [load_checkpoint(path) for path in paths]


@dataclass
class TypedPair:
    """One loaded checkpoint and a pair a person typed."""

    loaded: LoadedCheckpoint
    premise: str
    hypothesis: str


@dataclass
class SplitSample:
    """One loaded checkpoint and the analysed pairs of a split (`split`: its key, e.g. "snli_dev"), with the
    folder the split was read from (where files that go with it, like e-SNLI highlights, are looked for) and the
    cache folder (None: the cache root)."""

    loaded: LoadedCheckpoint
    items: list[AnalysedPair]
    split: str
    data_dir: str | Path | None = None
    cache_dir: str | Path | None = None

    @classmethod
    def read(cls, checkpoint: str | Path, dataset: str, split: str, data_dir: str | Path,
             cache_dir: str | Path | None = None) -> SplitSample:
        """The checkpoint loaded and split `split` of `dataset` read from `data_dir` and analysed (cached)."""
        from nlivis.inference import load_checkpoint  # torch, only once a checkpoint is loaded

        loaded = load_checkpoint(checkpoint)
        ref = resolve_split(dataset, split)
        items, _ = load_split_analysed(ref, data_dir, cache_dir)
        return cls(loaded, items, split_key(ref), data_dir, cache_dir)
