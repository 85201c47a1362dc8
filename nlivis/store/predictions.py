"""Predictions files: one JSON object per line, {"id", "gold", "predicted", "probs"}, never sentences.

A checkpoint folder keeps one file per evaluated split, `predictions_<split_key>.jsonl.gz` (gzip: a
10k-pair split is 0.12 MB instead of 0.88 MB, which is what lets the shipped set stay under its size
budget; plain `.jsonl` files, as older checkpoints or hand-made ones have, are read too). The error
analysis joins them with annotation tags and genres by pair id. Reading checks every line and names
file and line on any problem.
"""
from __future__ import annotations

import gzip
import io
import json
import math
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

import pandas as pd

from nlivis.store.files import atomic_write_bytes

PREDICTIONS_PREFIX = "predictions_"
PREDICTIONS_SUFFIX = ".jsonl.gz"
"""What `write_predictions` writes in a checkpoint folder."""
PLAIN_SUFFIX = ".jsonl"
"""Also read: uncompressed predictions files."""
PROBABILITY_DECIMALS = 4
"""Probabilities are stored rounded to this many decimals (1e-4 is far below any difference the views show)."""


class PredictionsFileError(ValueError):
    """A predictions file or line that cannot be used; the message names file and line."""


@dataclass(frozen=True)
class Prediction:
    """One model's answer for one pair. `probs` follow the checkpoint's label order; `gold` is None
    for unlabelled pairs."""

    id: str
    gold: str | None
    predicted: str
    probs: tuple[float, ...]

    @property
    def correct(self) -> bool | None:
        return None if self.gold is None else self.predicted == self.gold

    @property
    def confidence(self) -> float:
        """The highest class probability (the one behind `predicted`)."""
        return max(self.probs) if self.probs else math.nan


def predictions_path(folder: str | Path, split_key: str) -> Path:
    return Path(folder) / f"{PREDICTIONS_PREFIX}{split_key}{PREDICTIONS_SUFFIX}"


def find_prediction_files(folder: str | Path) -> dict[str, Path]:
    """split key → predictions file in a checkpoint folder, sorted by split key (the gzip file where a
    split has both forms)."""
    found: dict[str, Path] = {}
    for suffix in (PLAIN_SUFFIX, PREDICTIONS_SUFFIX):  # gzip second: it wins
        for path in Path(folder).glob(f"{PREDICTIONS_PREFIX}*{suffix}"):
            found[path.name[len(PREDICTIONS_PREFIX):-len(suffix)]] = path
    return dict(sorted(found.items()))


def _parse_line(record: Any, where: Callable[[], str]) -> Prediction:
    """One record as a `Prediction`; `where` names the line, formatted only for a message (a file has
    thousands of lines and almost never an error)."""
    if not isinstance(record, dict):
        raise PredictionsFileError(f"{where()}: expected a JSON object, got {type(record).__name__}")
    try:
        pair_id, gold, predicted, probs = record["id"], record["gold"], record["predicted"], record["probs"]
    except KeyError:
        missing = [key for key in ("id", "gold", "predicted", "probs") if key not in record]
        raise PredictionsFileError(f"{where()}: missing key(s) {', '.join(missing)}") from None
    if not isinstance(pair_id, (str, int)) or isinstance(pair_id, bool):
        raise PredictionsFileError(f"{where()}: id must be a string or integer, got {pair_id!r}")
    if gold is not None and not isinstance(gold, str):
        raise PredictionsFileError(f"{where()}: gold must be a label name or null, got {gold!r}")
    if not isinstance(predicted, str):
        raise PredictionsFileError(f"{where()}: predicted must be a label name, got {predicted!r}")
    if not _plain_probabilities(probs):
        _check_probabilities(probs, where)
    return Prediction(str(pair_id), gold, predicted, tuple(map(float, probs)))


def _plain_probabilities(probs: Any) -> bool:
    """True for what JSON gives almost always: a non-empty list of plain ints and floats, none NaN, all in
    [0, 1] up to rounding. False sends the list through `_check_probabilities`, which accepts or names the
    problem (so number subclasses such as numpy's floats are judged there)."""
    if type(probs) is not list or not probs or not {type(p) for p in probs} <= {int, float}:
        return False
    # min and max skip a NaN; once every other value is in range, the sum is NaN exactly when one is NaN
    return -1e-6 <= min(probs) and max(probs) <= 1 + 1e-6 and not math.isnan(sum(probs))


def _check_probabilities(probs: Any, where: Callable[[], str]) -> None:
    if (not isinstance(probs, list) or not probs
            or not all(isinstance(p, (int, float)) and not isinstance(p, bool) for p in probs)):
        raise PredictionsFileError(f"{where()}: probs must be a non-empty list of numbers, got {probs!r:.80}")
    if not all(math.isfinite(p) and -1e-6 <= p <= 1 + 1e-6 for p in probs):
        raise PredictionsFileError(f"{where()}: probs must lie in [0, 1], got {probs!r:.80}")


_scan_value = json.JSONDecoder().scan_once  # the C scanner `json.loads` runs, without its per-call wrapping
_JSON_WHITESPACE = " \t\n\r"


def _json_line(line: str) -> Any:
    """`json.loads(line)`, a third faster on a line that holds one JSON value from its first character; any
    other line goes through `json.loads` itself, so errors (and their messages) are its own."""
    try:
        value, end = _scan_value(line, 0)
    except (StopIteration, ValueError):
        return json.loads(line)
    return json.loads(line) if line[end:].strip(_JSON_WHITESPACE) else value


def read_predictions(path: str | Path) -> list[Prediction]:
    """All predictions of a file in file order; ids must be unique and all probs the same length."""
    path = Path(path)
    try:
        raw = path.read_bytes()
        if path.suffix == ".gz":
            raw = gzip.decompress(raw)
    except OSError as error:  # includes gzip.BadGzipFile (not gzip at all)
        raise PredictionsFileError(f"{path}: cannot read predictions ({getattr(error, 'strerror', None) or error})") from error
    except (EOFError, zlib.error) as error:
        raise PredictionsFileError(f"{path}: cannot read predictions (the gzip data is truncated or corrupt: {error})") from error
    predictions: list[Prediction] = []
    seen: dict[str, int] = {}
    with io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8") as handle:
        try:
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                def where(number: int = number) -> str:
                    return f"{path}, line {number}"
                try:
                    record = _json_line(line)
                except json.JSONDecodeError as error:
                    raise PredictionsFileError(f"{where()}: invalid JSON ({error.msg})") from error
                prediction = _parse_line(record, where)
                if prediction.id in seen:
                    raise PredictionsFileError(
                        f"{where()}: pair id {prediction.id!r} already on line {seen[prediction.id]}")
                if predictions and len(prediction.probs) != len(predictions[0].probs):
                    raise PredictionsFileError(
                        f"{where()}: {len(prediction.probs)} probabilities, line 1 of the file has "
                        f"{len(predictions[0].probs)}")
                seen[prediction.id] = number
                predictions.append(prediction)
        except UnicodeDecodeError as error:
            raise PredictionsFileError(f"{path}: not UTF-8 text ({error.reason})") from error
    return predictions


def _as_prediction(item: Prediction | Mapping[str, Any]) -> Prediction:
    if isinstance(item, Prediction):
        return item
    return _parse_line(dict(item), lambda: "prediction to write")


def write_predictions(path: str | Path, predictions: Iterable[Prediction | Mapping[str, Any]]) -> Path:
    """Write a predictions file atomically (temporary sibling, fsync, then rename): one compact JSON
    object per line, probabilities to `PROBABILITY_DECIMALS`, gzip-compressed when the name ends in
    `.gz` (with a zero timestamp, so the same predictions give the same bytes). Writing
    `predictions_<split>.jsonl.gz` removes a plain `predictions_<split>.jsonl` beside it, which would
    otherwise hold stale rows for the same split."""
    path = Path(path)
    lines = []
    for item in predictions:
        prediction = _as_prediction(item)
        lines.append(json.dumps({"id": prediction.id, "gold": prediction.gold, "predicted": prediction.predicted,
                                 "probs": [round(p, PROBABILITY_DECIMALS) for p in prediction.probs]},
                                separators=(",", ":")) + "\n")
    data = "".join(lines).encode("utf-8")
    if path.suffix == ".gz":
        data = gzip.compress(data, compresslevel=9, mtime=0)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(path, data)
    if path.name.endswith(PREDICTIONS_SUFFIX):
        path.with_name(path.name[:-len(PREDICTIONS_SUFFIX)] + PLAIN_SUFFIX).unlink(missing_ok=True)
    return path


def predictions_frame(predictions: Sequence[Prediction] | pd.DataFrame) -> pd.DataFrame:
    """A DataFrame with columns id, gold, predicted, correct, confidence (and probs), one row per pair.

    A DataFrame passed in is checked for those columns and returned as is.
    """
    if isinstance(predictions, pd.DataFrame):
        needed = {"id", "gold", "predicted", "correct"}
        if not needed <= set(predictions.columns):
            raise ValueError(f"predictions table lacks column(s) {sorted(needed - set(predictions.columns))}")
        return predictions
    return pd.DataFrame({
        "id": [p.id for p in predictions],
        "gold": [p.gold for p in predictions],
        "predicted": [p.predicted for p in predictions],
        "correct": [p.correct for p in predictions],
        "confidence": [p.confidence for p in predictions],
        "probs": [p.probs for p in predictions],
    }, columns=["id", "gold", "predicted", "correct", "confidence", "probs"])
