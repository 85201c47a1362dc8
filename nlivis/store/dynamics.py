"""Training dynamics on disk: for every training pair and epoch, the probability the model gave the pair's
gold label and whether its prediction was right, as seen during that epoch's training pass (the records
dataset cartography is computed from: Swayamdipta et al., EMNLP 2020; `nlivis.analysis.datamap`).

`dynamics.safetensors` (in a checkpoint folder, listed in its manifest; in `<out>/state/` while a run trains):
- `records`  uint16 [epochs, pairs]: bits 15…1 hold round(p × 32766), p being the gold label's probability
  (steps of 1/32766 ≈ 3e-5), bit 0 is 1 when the prediction (the most probable label) was the gold one.
  `MISSING` (0xFFFF, which no record can take) marks a pair not trained on in that epoch: a mix-in pair not
  drawn that epoch, a pair in a batch dropped so that every DDP process takes the same number of steps, or
  the untrained rest of a run's last, partial epoch. 2 bytes per pair per epoch.
- `gold`     uint8 [pairs]: the gold label's index in `labels`.
- metadata (strings, JSON-encoded): `format`, `format_version`, `labels`, `ids` (the pairs' ids in column
  order) and `sources` ([{"split", "start", "count"}]: which split each run of columns comes from). Ids and
  numbers only, never sentences. Nothing is unpickled.
- the augmented pairs of a run trained with `--augment` (`nlivis.training.augment`) are one source of split
  `AUGMENTED_SPLIT` whose entry also lists, per column, its augmentation `kinds`, `originals` (the column
  of the training pair it was made from) and `digests` (`pair_digest` of the pair's text and label: 12 hex digits,
  so that a data map can check the text it makes again against the one trained on without storing a sentence;
  runs before session 42 lack it); their ids are `<original id>~<kind>~<where>`.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from safetensors import SafetensorError, safe_open
from safetensors.numpy import save

from nlivis.store.checkpoints import DYNAMICS_FILE, MANIFEST, CheckpointError, read_json
from nlivis.store.files import atomic_write_bytes, sha256_file

FORMAT = "nlivis-training-dynamics"
FORMAT_VERSION = 1
AUGMENTED_SPLIT = "augmented"
"""The split name of the columns that hold a run's augmented pairs."""
DYNAMICS_REPAIR = ("the records cannot be recomputed without training again: retrain the checkpoint "
                   "(`python -m nlivis train --config CONFIG --out FOLDER`, with the options in its config.json)")
MISSING = 0xFFFF
"""A record slot for a pair that was not trained on in that epoch."""
PROBABILITY_SCALE = 32766
"""Probabilities are stored as round(p × 32766) in 15 bits; 32766 (not 32767) keeps a right answer with p = 1
(0xFFFD) apart from `MISSING` (0xFFFF)."""


def pair_digest(premise: str, hypothesis: str, label: str) -> str:
    """12 hex digits of the sha256 of a pair's texts and gold label: what a run records of each augmented pair it
    trained on (never the sentences), and what the text made again later must hash to."""
    return hashlib.sha256(f"{premise}\n{hypothesis}\n{label}".encode("utf-8")).hexdigest()[:12]


def encode(probability: np.ndarray, correct: np.ndarray) -> np.ndarray:
    """uint16 records from gold-label probabilities in [0, 1] and right/wrong flags."""
    levels = np.rint(np.clip(np.asarray(probability, dtype=np.float64), 0.0, 1.0) * PROBABILITY_SCALE).astype(np.uint16)
    return (levels << 1) | np.asarray(correct, dtype=np.uint16)


@dataclass
class TrainingDynamics:
    """Per pair (columns) and epoch (rows): gold probability and correctness; see the module docstring."""

    ids: list[str]
    gold: np.ndarray
    """uint8 [pairs]: index into `labels`."""
    labels: list[str]
    records: np.ndarray
    """uint16 [epochs, pairs]."""
    sources: list[dict[str, Any]]
    """[{"split", "start", "count"}] covering the columns in order."""

    @property
    def epochs(self) -> int:
        return int(self.records.shape[0])

    @property
    def pairs(self) -> int:
        return len(self.ids)

    def seen(self) -> np.ndarray:
        """bool [epochs, pairs]: whether the pair was trained on in the epoch."""
        return self.records != MISSING

    def probabilities(self) -> np.ndarray:
        """float64 [epochs, pairs]: the gold label's probability, NaN where the pair was not trained on."""
        values = (self.records >> 1).astype(np.float64) / PROBABILITY_SCALE
        values[~self.seen()] = np.nan
        return values

    def correct(self) -> np.ndarray:
        """bool [epochs, pairs]: right in that epoch (False where not trained on: see `seen`)."""
        return ((self.records & 1) == 1) & self.seen()

    def augmented_kinds(self) -> list[str | None]:
        """Per column: the augmentation kind of an augmented pair, None for a training pair."""
        return self._per_augmented_column("kinds")

    def augmented_originals(self) -> list[int | None]:
        """Per column: the column of the training pair an augmented pair was made from, None for a training pair."""
        return self._per_augmented_column("originals")

    def augmented_digests(self) -> list[str | None]:
        """Per column: the `pair_digest` the run recorded of an augmented pair's text, None for a training pair and
        for every column of a run that recorded none (before session 42)."""
        return self._per_augmented_column("digests")

    def _per_augmented_column(self, key: str) -> list[Any]:
        """Per column: the augmented split's list `key` ("kinds", "originals" or "digests") at its columns, None
        elsewhere (and where a source lacks the list)."""
        values: list[Any] = [None] * self.pairs
        for source in self.sources:
            if source["split"] == AUGMENTED_SPLIT and key in source:
                values[source["start"]:source["start"] + source["count"]] = source[key]
        return values


def write_dynamics(path: str | Path, dynamics: TrainingDynamics) -> None:
    """Write `dynamics` to `path` atomically (a temporary sibling renamed into place)."""
    path = Path(path)
    _check_shapes(path, dynamics)
    metadata = {"format": FORMAT, "format_version": str(FORMAT_VERSION), "labels": json.dumps(dynamics.labels),
                "ids": json.dumps(dynamics.ids, ensure_ascii=False), "sources": json.dumps(dynamics.sources)}
    data = save({"records": np.ascontiguousarray(dynamics.records, dtype=np.uint16),
                 "gold": np.ascontiguousarray(dynamics.gold, dtype=np.uint8)}, metadata=metadata)
    atomic_write_bytes(path, data)


def read_dynamics(path: str | Path) -> TrainingDynamics:
    """Read a dynamics file (or a checkpoint folder's); anything that is not one is a `CheckpointError`
    naming the file and what is wrong with it."""
    path = Path(path)
    if path.is_dir():
        path = path / DYNAMICS_FILE
    if not path.is_file():
        raise CheckpointError(path.parent, f"{path.name} is missing: this checkpoint was trained without recording "
                                           "training dynamics (retrain it with this version of nlivis)")
    _check_against_manifest(path)
    try:
        with safe_open(str(path), "np") as handle:
            metadata = handle.metadata() or {}
            names = set(handle.keys())
            if not {"records", "gold"} <= names:
                raise CheckpointError(path.parent, f"{path.name} lacks the tensors 'records' and 'gold'")
            records, gold = handle.get_tensor("records"), handle.get_tensor("gold")
    except (SafetensorError, OSError, ValueError, TypeError) as error:
        raise CheckpointError(path.parent, f"{path.name} cannot be read as safetensors ({error})") from error
    if metadata.get("format") != FORMAT:
        raise CheckpointError(path.parent, f"{path.name} is not an nlivis training-dynamics file")
    if metadata.get("format_version") != str(FORMAT_VERSION):
        raise CheckpointError(path.parent, f"{path.name} has format version {metadata.get('format_version')!r}; "
                                           f"this code reads {FORMAT_VERSION}")
    try:
        labels, ids, sources = (json.loads(metadata[key]) for key in ("labels", "ids", "sources"))
    except (KeyError, ValueError, RecursionError) as error:
        raise CheckpointError(path.parent, f"{path.name}: its metadata 'labels', 'ids' and 'sources' must be JSON "
                                           f"({type(error).__name__}: {error})") from error
    dynamics = TrainingDynamics(ids=ids, gold=gold, labels=labels, records=records, sources=sources)
    _check_shapes(path, dynamics)
    return dynamics


def _check_against_manifest(path: Path) -> None:
    """In a checkpoint folder (one with a `COMPLETE` manifest), the dynamics file must have the size and sha256
    the manifest records; it is small (2 bytes per pair and epoch), so it is hashed on every read. Records
    zeroed in place keep the size and would otherwise draw a map of nothing but hard-to-learn pairs."""
    folder = path.parent
    if path.name != DYNAMICS_FILE or not (folder / MANIFEST).is_file():
        return  # a run's state/ folder while it trains: no manifest yet
    entry = read_json(folder, MANIFEST).get("files", {})
    entry = entry.get(DYNAMICS_FILE) if isinstance(entry, dict) else None
    if not (isinstance(entry, dict) and isinstance(entry.get("bytes"), int) and isinstance(entry.get("sha256"), str)):
        raise CheckpointError(folder, f"{MANIFEST} does not record {DYNAMICS_FILE}'s size and sha256 (damaged "
                                      f"manifest); {DYNAMICS_REPAIR}")
    if path.stat().st_size != entry["bytes"]:
        raise CheckpointError(folder, f"{DYNAMICS_FILE} is {path.stat().st_size:,} bytes, {MANIFEST} says "
                                      f"{entry['bytes']:,} (truncated or replaced); {DYNAMICS_REPAIR}")
    if sha256_file(path) != entry["sha256"]:
        raise CheckpointError(folder, f"{DYNAMICS_FILE} does not match its sha256 in {MANIFEST} (damaged or "
                                      f"replaced); {DYNAMICS_REPAIR}")


def _check_shapes(path: Path, dynamics: TrainingDynamics) -> None:
    """Types and sizes that every reader relies on, so a damaged file fails here and not in a view."""
    def broken(problem: str) -> CheckpointError:
        return CheckpointError(path.parent, f"{path.name}: {problem}")

    if not (isinstance(dynamics.ids, list) and all(isinstance(i, str) for i in dynamics.ids)):
        raise broken("'ids' must be a list of strings")
    if not (isinstance(dynamics.labels, list) and dynamics.labels and all(isinstance(x, str) for x in dynamics.labels)):
        raise broken("'labels' must be a non-empty list of strings")
    records, gold = np.asarray(dynamics.records), np.asarray(dynamics.gold)
    if records.dtype != np.uint16 or records.ndim != 2 or records.shape[1] != len(dynamics.ids):
        raise broken(f"'records' must be uint16 [epochs, {len(dynamics.ids)} pairs], not {records.dtype} "
                     f"{list(records.shape)}")
    if gold.dtype != np.uint8 or gold.shape != (len(dynamics.ids),) or (gold.size and gold.max() >= len(dynamics.labels)):
        raise broken(f"'gold' must be uint8 [{len(dynamics.ids)}] indices into the {len(dynamics.labels)} labels")
    if not isinstance(dynamics.sources, list) or not all(
            isinstance(s, dict) and isinstance(s.get("split"), str)
            and all(isinstance(s.get(k), int) and not isinstance(s.get(k), bool) for k in ("start", "count"))
            for s in dynamics.sources):
        raise broken("'sources' must be a list of {\"split\", \"start\", \"count\"}")
    covered = 0
    for source in dynamics.sources:
        if source["start"] != covered or source["count"] < 0:
            raise broken("'sources' must cover the pairs in order, without gaps")
        if source["split"] == AUGMENTED_SPLIT:
            kinds, originals = source.get("kinds"), source.get("originals")
            if not (isinstance(kinds, list) and len(kinds) == source["count"] and all(isinstance(k, str) for k in kinds)
                    and isinstance(originals, list) and len(originals) == source["count"]
                    and all(isinstance(o, int) and not isinstance(o, bool) and 0 <= o < source["start"]
                            for o in originals)):
                raise broken(f"the {AUGMENTED_SPLIT!r} source must list a kind and an original column (before it) "
                             "for each of its pairs")
            digests = source.get("digests")
            if digests is not None and not (isinstance(digests, list) and len(digests) == source["count"]
                                            and all(isinstance(d, str) for d in digests)):
                raise broken(f"the {AUGMENTED_SPLIT!r} source's digests must be one string per pair")
        covered += source["count"]
    if covered != len(dynamics.ids):
        raise broken(f"'sources' cover {covered} pairs, the file has {len(dynamics.ids)}")
