"""Named evaluations: results on other data, kept beside a checkpoint and never over what it recorded.

A checkpoint folder records predictions for its protocol's splits (`predictions_<split>.jsonl.gz`,
written when it was trained). `evaluate` never writes over those files. An evaluation is identified by
the data it saw (`DataIdentity`: each file's path and sha256):

- re-evaluating a recorded split on the same pairs that gives the same results writes nothing;
- anything else (another file, another data folder, a challenge set, the same split giving different
  results) becomes a *named evaluation*: `<checkpoint>/evaluations/<name>/` holding `predictions.jsonl.gz`
  and `evaluation.json` (the data identity, counts, accuracy, truncation, notes). The default name is
  the file's stem and the first 8 hex digits of the data's hash, so the same file gets the same name and
  another file another name; a name already holding other data or other results is refused.

The app lists named evaluations with `find_named_evaluations`, apart from the recorded splits
(`store.predictions.find_prediction_files` only looks at the folder's own `predictions_*` files).
"""
from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from nlivis.store.files import (
    atomic_write_json,
    sanitized_name,
    sha256_file,
    write_failure,
)
from nlivis.store.predictions import (
    Prediction,
    find_prediction_files,
    read_predictions,
    write_predictions,
)


class EvaluationStoreError(ValueError):
    """A named evaluation that cannot be written (a name holding other results, a full disk); the
    message says what happened and that nothing was left behind."""

EVALUATIONS_FOLDER = "evaluations"


EVALUATION_RECORD = "evaluation.json"


EVALUATION_PREDICTIONS = "predictions.jsonl.gz"


EVALUATION_FORMAT = "nlivis-evaluation"


NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,79}$")
"""Evaluation names: a folder name on every system (letters, digits, . _ -; at most 80 characters)."""


SAME_PROBABILITY_TOLERANCE = 1e-3
"""Two results are the same when every pair's predicted label matches and its probabilities differ by at
most this. Stored probabilities are rounded to 1e-4, and batching and thread counts move the last digits:
re-evaluating the shipped gcnn-snli-small on SNLI dev gives every label as recorded, probabilities within
5e-4."""


@dataclass(frozen=True)
class DataIdentity:
    """The data an evaluation saw: each file's path (resolved) and sha256."""

    files: tuple[tuple[str, str], ...]

    @property
    def digest(self) -> str:
        """sha256 over the files' hashes in order (the path does not enter: a moved file is the same data)."""
        return hashlib.sha256("\n".join(sha for _, sha in self.files).encode()).hexdigest()

    def to_dict(self) -> dict[str, Any]:
        return {"digest": self.digest, "files": [{"path": path, "sha256": sha} for path, sha in self.files]}




def data_identity(paths: Sequence[str | Path]) -> DataIdentity:
    return DataIdentity(tuple((str(Path(p).resolve()), sha256_file(p)) for p in paths))


@dataclass
class NamedEvaluation:
    """One folder under `<checkpoint>/evaluations/`."""

    name: str
    folder: Path
    record: dict[str, Any]

    @property
    def predictions_file(self) -> Path:
        return self.folder / EVALUATION_PREDICTIONS

    @property
    def data_digest(self) -> str:
        return str(self.record.get("data", {}).get("digest", ""))

    def describe(self) -> str:
        files = ", ".join(Path(f.get("path", "?")).name for f in self.record.get("data", {}).get("files", []))
        accuracy = self.record.get("accuracy")
        shown = "n/a" if accuracy is None else f"{accuracy:.1%}"
        return f"{self.name}: {files} ({self.record.get('count', '?')} pairs, accuracy {shown})"


@dataclass
class StoredEvaluation:
    """Where `store_evaluation` put a result (or found it already), and what it says about that."""

    written: bool
    predictions_file: Path
    message: str
    name: str | None = None


def evaluations_root(checkpoint_folder: str | Path) -> Path:
    return Path(checkpoint_folder) / EVALUATIONS_FOLDER


def check_evaluation_name(name: str) -> str:
    if not NAME_PATTERN.match(name or ""):
        raise ValueError(f"evaluation name {name!r}: use 1-80 letters, digits, '.', '_' or '-', starting with a "
                         "letter or digit")
    return name


def default_evaluation_name(identity: DataIdentity, data_name: str | None = None) -> str:
    """`<data name>-<8 hex digits of the data hash>`, e.g. `snli_dev-1b2c3d4e` (a split key) or
    `ANLI_analysis_r1_dev-3f2a9c1e` (a challenge set's name); without a name, the first file's stem."""
    if not data_name:
        first = Path(identity.files[0][0]).name if identity.files else "data"
        stem = first[: -len(".gz")] if first.endswith(".gz") else first
        data_name = stem.rsplit(".", 1)[0] if "." in stem else stem
    return f"{sanitized_name(data_name)}-{identity.digest[:8]}"


def find_named_evaluations(checkpoint_folder: str | Path,
                           problems: list[str] | None = None) -> dict[str, NamedEvaluation]:
    """name → NamedEvaluation for every readable `evaluations/<name>/` of a checkpoint, sorted by name.
    Unreadable ones are skipped; their problem is appended to `problems` when given."""
    root = evaluations_root(checkpoint_folder)
    found: dict[str, NamedEvaluation] = {}
    if not root.is_dir():
        return found
    for folder in sorted(root.iterdir()):
        if folder.name.startswith(".") or not folder.is_dir():
            continue
        try:
            record = json.loads((folder / EVALUATION_RECORD).read_text(encoding="utf-8"))
            if not isinstance(record, dict) or record.get("format") != EVALUATION_FORMAT:
                raise ValueError(f"not an {EVALUATION_FORMAT} record")
            if not (folder / EVALUATION_PREDICTIONS).is_file():
                raise ValueError(f"{EVALUATION_PREDICTIONS} is missing")
        except (OSError, ValueError) as error:
            if problems is not None:
                problems.append(f"{folder}: {error}")
            continue
        found[folder.name] = NamedEvaluation(folder.name, folder, record)
    return found


def prediction_files(checkpoint_folder: str | Path) -> dict[str, Path]:
    """Split key → predictions file of a checkpoint folder: those written with the checkpoint (e.g.
    "snli_dev"), then the named evaluations of other protocol splits. A recorded split always wins over a
    named evaluation of the same split, so what the checkpoint recorded is what the app states."""
    files = find_prediction_files(checkpoint_folder)
    for evaluation in find_named_evaluations(checkpoint_folder).values():
        key = evaluation.record.get("split_key")
        if key and key not in files:
            files[key] = evaluation.predictions_file
    return files


def as_predictions(rows: Sequence[Prediction | Mapping[str, Any]]) -> list[Prediction]:
    return [row if isinstance(row, Prediction) else
            Prediction(str(row["id"]), row["gold"], row["predicted"], tuple(float(p) for p in row["probs"]))
            for row in rows]


def differing_pairs(old: Sequence[Prediction], new: Sequence[Prediction]) -> int | None:
    """How many pairs got another label or probabilities further apart than the tolerance; None when the
    two are not the same pairs (ids and gold labels in the same order)."""
    if [(p.id, p.gold) for p in old] != [(p.id, p.gold) for p in new]:
        return None
    return sum(a.predicted != b.predicted or len(a.probs) != len(b.probs)
               or any(abs(x - y) > SAME_PROBABILITY_TOLERANCE for x, y in zip(a.probs, b.probs))
               for a, b in zip(old, new))


def store_evaluation(checkpoint_folder: str | Path, rows: Sequence[Prediction | Mapping[str, Any]],
                     identity: DataIdentity, record: Mapping[str, Any], *, split_key: str | None = None,
                     name: str | None = None, data_name: str | None = None) -> StoredEvaluation:
    """Keep an evaluation's predictions without touching any recorded file (see the module docstring).

    `record` (counts, accuracy, truncation, notes …) goes into evaluation.json with the data identity.
    Raises ValueError when `name` already holds another data's or other results.
    """
    folder = Path(checkpoint_folder)
    predictions = as_predictions(rows)
    note = ""
    if name is None and split_key is not None:
        recorded = find_prediction_files(folder).get(split_key)
        if recorded is not None:
            differing = differing_pairs(read_predictions(recorded), predictions)
            if differing == 0:
                return StoredEvaluation(False, recorded, f"same results as the recorded {recorded.name}; nothing written")
            note = (f"these are not the pairs of the recorded {recorded.name}" if differing is None else
                    f"{differing} pair(s) differ from the recorded {recorded.name}")
            note += ", which is kept unchanged"
    name = check_evaluation_name(name) if name is not None else default_evaluation_name(identity, data_name or split_key)
    target = evaluations_root(folder) / name
    if target.exists():
        existing = find_named_evaluations(folder).get(name)
        if existing is not None and existing.data_digest == identity.digest:
            if differing_pairs(read_predictions(existing.predictions_file), predictions) == 0:
                return StoredEvaluation(False, existing.predictions_file,
                                        f"same results as the named evaluation {name!r}; nothing written", name)
        held = existing.describe() if existing is not None else "an unreadable evaluation"
        raise EvaluationStoreError(f"{target} already holds {held}, not these results; give another --name "
                                   "(nothing was written)")
    full_record = {"format": EVALUATION_FORMAT, "format_version": 1, "name": name, "checkpoint": folder.name,
                   "data": identity.to_dict(), "split_key": split_key,
                   "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **record}
    building = None
    try:
        evaluations_root(folder).mkdir(parents=True, exist_ok=True)
        building = Path(tempfile.mkdtemp(prefix=f".{name}.partial-", dir=evaluations_root(folder)))
        os.chmod(building, 0o755)
        write_predictions(building / EVALUATION_PREDICTIONS, predictions)
        atomic_write_json(building / EVALUATION_RECORD, full_record)
        os.rename(building, target)  # fails rather than replace a folder that appeared meanwhile
    except OSError as error:
        if building is not None:
            shutil.rmtree(building, ignore_errors=True)
        if target.is_dir() and error.errno in (errno.ENOTEMPTY, errno.EEXIST):
            return _after_lost_race(folder, name, identity, predictions)
        raise EvaluationStoreError(f"{write_failure(error, building or target)}; the partial evaluation was "
                                   "removed and nothing else was written") from error
    except BaseException:
        if building is not None:
            shutil.rmtree(building, ignore_errors=True)
        raise
    message = f"predictions written to {target / EVALUATION_PREDICTIONS} (named evaluation {name!r})"
    return StoredEvaluation(True, target / EVALUATION_PREDICTIONS, f"{note}; {message}" if note else message, name)


def _after_lost_race(folder: Path, name: str, identity: DataIdentity,
                     predictions: Sequence[Prediction]) -> StoredEvaluation:
    """Another process wrote the same named evaluation between our check and our rename: our partial copy
    is gone; what it wrote is kept when it holds the same results, else the name is refused."""
    winner = find_named_evaluations(folder).get(name)
    if winner is not None and winner.data_digest == identity.digest \
            and differing_pairs(read_predictions(winner.predictions_file), predictions) == 0:
        return StoredEvaluation(False, winner.predictions_file, f"another run wrote the same results as named "
                                f"evaluation {name!r} at the same time; nothing more written", name)
    held = winner.describe() if winner is not None else "an evaluation being written"
    raise EvaluationStoreError(f"{evaluations_root(folder) / name} was written by another run meanwhile and holds "
                               f"{held}, not these results; give another --name (nothing was written)")


def read_named_predictions(evaluation: NamedEvaluation) -> list[Prediction]:
    return read_predictions(evaluation.predictions_file)
