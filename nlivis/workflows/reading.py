"""One pair read by one model: the tokens as it saw them, its class probabilities and its typed trace — what
the explorer, the model views and the pair comparisons draw.

A reading is also kept on disk (`read_pair_kept`), with the trace entry types its model declares
(`declared_types`): the Pair explorer's first page after a launch imported torch and loaded five checkpoints only
to read its default pair again (~6 of its ~11 CPU s at load 2, py-spy on the server; bench/RESULTS.md, session
28), and now draws a pair read before from plain arrays and JSON, without either.
"""
from __future__ import annotations

import hashlib
import io
import json
import zipfile
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

import nlivis
from nlivis.analysis.projection import ProjectionError
from nlivis.features.spacy_pipeline import installed_pipeline_version
from nlivis.models.trace import ENTRY_TYPES, Trace
from nlivis.store.files import (atomic_write_json, cache_root, file_digest, file_stamp, folder_stamp, read_sealed,
                                seal_path, write_sealed)
from nlivis.workflows.projection import checkpoint_fingerprint

if TYPE_CHECKING:
    from nlivis.inference import LoadedCheckpoint


@dataclass
class PairReading:
    """One model's reading of one pair: tokens as it saw them, class probabilities and its typed trace."""

    model: str
    premise: str
    hypothesis: str
    premise_tokens: list[str]
    hypothesis_tokens: list[str]
    labels: list[str]
    probs: list[float]
    trace: Trace
    """Its entries hold float32 numpy arrays (`Trace.as_arrays`), computed or read back from disk alike."""
    notices: list[str] = field(default_factory=list)
    """What the user should know about how the pair was read (cut-offs, unknown words)."""

    @property
    def predicted(self) -> str:
        return self.labels[max(range(len(self.probs)), key=self.probs.__getitem__)]


def read_pair(loaded: LoadedCheckpoint, name: str, premise: str, hypothesis: str) -> PairReading:
    """How the loaded checkpoint `name` reads the pair (a ValueError when it cannot, e.g. an empty sentence)."""
    from nlivis.inference import predict_pair  # runs the model: torch loads here, not with the reading's type

    prediction = predict_pair(loaded, premise, hypothesis, trace=True)
    labels = list(loaded.labels)
    return PairReading(name, premise, hypothesis, list(prediction.premise_tokens), list(prediction.hypothesis_tokens),
                       labels, [float(prediction.probabilities[label]) for label in labels],
                       prediction.trace.as_arrays(), list(prediction.notices))


# ---------------------------------------------------------------- readings kept on disk

KEPT_FORMAT = 1
"""Part of every kept reading's key: raised when what a kept reading holds changes."""
KEPT_FOLDER = "readings"
"""Under the cache root (`store.files.cache_root`)."""
READINGS_KEPT = 500
"""Readings kept on disk, the oldest written going first: five models' readings of a pair are ~0.4 MB (DIIN's
interaction maps most of it) and a reader stepping through a list reads hundreds of pairs, while what a launch's
first page reads from disk is one pair (the default, or the one in its URL)."""


def prediction_code() -> tuple[Path, ...]:
    """The source a prediction runs (the models and their layers, the featurizer, batching, inference), found
    without importing it (inference imports torch): what kept predictions and readings are keyed by."""
    package = Path(nlivis.__file__).parent
    return (*(package / "models").rglob("*.py"), *(package / "features").rglob("*.py"), package / "inference.py")


@lru_cache(maxsize=1)
def reading_code_digest() -> str:
    """The digest of the code a reading runs (`prediction_code` and this module), read once per process: a
    changed model, feature or reading never answers from an earlier run."""
    return file_digest((*prediction_code(), Path(__file__)))


@lru_cache(maxsize=64)
def _fingerprint(folder: str, stamp: float) -> str:
    """`checkpoint_fingerprint` (a sha256 of its weights and config) once per folder state in this process."""
    return checkpoint_fingerprint(folder)


def _kept_path(folder: str | Path, key: list[Any], suffix: str, cache_dir: str | Path | None) -> Path | None:
    """Where a fact of the checkpoint in `folder` is kept: keyed by its weights and config, the spaCy pipeline
    that analyses the text, the code that reads and `key`; None for a folder without weights or config."""
    try:
        fingerprint = _fingerprint(str(folder), folder_stamp(folder))
    except (OSError, ProjectionError):
        return None
    text = json.dumps([KEPT_FORMAT, fingerprint, installed_pipeline_version(), reading_code_digest(), *key])
    return cache_root(cache_dir) / KEPT_FOLDER / f"{hashlib.sha256(text.encode()).hexdigest()[:24]}{suffix}"


def kept_reading_path(folder: str | Path, premise: str, hypothesis: str,
                      cache_dir: str | Path | None = None) -> Path | None:
    """Where `read_pair_kept` keeps the reading of the pair by the checkpoint in `folder` (a sealed .npz)."""
    return _kept_path(folder, ["reading", premise, hypothesis], ".npz", cache_dir)


def _reading_bytes(reading: PairReading) -> bytes:
    """The reading as an .npz without pickled objects: every entry's arrays under "<position>.<field>" and the
    rest (tokens, labels, probabilities, notices, each entry's name, type and scalar fields) as JSON text."""
    arrays: dict[str, np.ndarray] = {}
    entries = []
    for position, (name, entry) in enumerate(reading.trace.items()):
        scalars = {}
        for key, value in vars(entry).items():
            if isinstance(value, np.ndarray):
                arrays[f"{position}.{key}"] = value
            else:
                scalars[key] = value
        entries.append([name, type(entry).__name__, scalars])
    text = json.dumps({"premise_tokens": reading.premise_tokens, "hypothesis_tokens": reading.hypothesis_tokens,
                       "labels": reading.labels, "probs": reading.probs, "notices": reading.notices,
                       "entries": entries})
    buffer = io.BytesIO()
    np.savez(buffer, reading=np.array(text), **arrays)
    return buffer.getvalue()


def kept_reading(path: Path, name: str, premise: str, hypothesis: str) -> PairReading | None:
    """The reading kept in `path`, named `name`; None when it is absent, damaged, unsealed or not what this code
    keeps (the caller reads the pair again)."""
    data = read_sealed(path)
    if data is None:
        return None
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as stored:
            kept = json.loads(str(stored["reading"]))
            trace = Trace()
            for position, (entry_name, kind, scalars) in enumerate(kept["entries"]):
                arrays = {key.split(".", 1)[1]: stored[key] for key in stored.files if key.startswith(f"{position}.")}
                trace.add(entry_name, ENTRY_TYPES[kind](**scalars, **arrays))
        return PairReading(name, premise, hypothesis, kept["premise_tokens"], kept["hypothesis_tokens"],
                           kept["labels"], kept["probs"], trace, kept["notices"])
    except (KeyError, TypeError, ValueError, OSError, zipfile.BadZipFile):
        return None


def read_pair_kept(load: Callable[[], LoadedCheckpoint], folder: str | Path, name: str, premise: str,
                   hypothesis: str, cache_dir: str | Path | None = None) -> PairReading:
    """`read_pair` by the checkpoint in `folder` (loaded by `load` only when the pair must be read), kept on disk
    (`kept_reading_path`, sealed) and read back the next time the same checkpoint, code and pair are asked for,
    in this process or after a restart, without torch. The model's declared trace types are kept with it
    (`declared_types`). A kept file that is absent, damaged or unsealed is read again; one that cannot be written
    leaves the reading as it is."""
    path = kept_reading_path(folder, premise, hypothesis, cache_dir)
    kept = kept_reading(path, name, premise, hypothesis) if path is not None else None
    if kept is not None:
        return kept
    loaded = load()
    reading = read_pair(loaded, name, premise, hypothesis)
    if path is not None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_sealed(path, _reading_bytes(reading))
            _keep_types(folder, frozenset(loaded.model.trace_types()), cache_dir)
            _forget_oldest(path.parent)
        except (OSError, TypeError, ValueError):
            pass  # a cache that cannot be written (or a field JSON cannot hold): the reading stands
    return reading


def _forget_oldest(folder: Path) -> None:
    """Remove the oldest kept readings (and their seals) beyond `READINGS_KEPT`."""
    kept = sorted(folder.glob("*.npz"), key=file_stamp)
    for old in kept[:max(0, len(kept) - READINGS_KEPT)]:
        old.unlink(missing_ok=True)
        seal_path(old).unlink(missing_ok=True)


def _keep_types(folder: str | Path, types: frozenset[type], cache_dir: str | Path | None) -> None:
    path = _kept_path(folder, ["declared types"], ".json", cache_dir)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_json(path, sorted(kind.__name__ for kind in types), indent=None, sealed=True)


def declared_types(load: Callable[[], LoadedCheckpoint], folder: str | Path,
                   cache_dir: str | Path | None = None) -> frozenset[type]:
    """The trace entry types the checkpoint in `folder` declares (`model.trace_types()`: what views can draw),
    kept on disk with its readings and read back without torch; `load` loads it when they are not kept."""
    path = _kept_path(folder, ["declared types"], ".json", cache_dir)
    data = read_sealed(path) if path is not None else None
    try:
        names = json.loads(data) if data is not None else None
        if isinstance(names, list):
            return frozenset(ENTRY_TYPES[name] for name in names)
    except (KeyError, TypeError, ValueError):
        pass  # not what this code keeps: asked of the model below
    types = frozenset(load().model.trace_types())
    try:
        _keep_types(folder, types, cache_dir)
    except OSError:
        pass
    return types
