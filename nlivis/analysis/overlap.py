"""Is this evaluation held out? Count the pairs and sentences that also occur in a checkpoint's training split.

A challenge set or a probe built from sentences a model was trained on does not test generalisation: the
shipped snli-small models train on SNLI *test*, so SNLI-hard and counterfactually-augmented NLI's test split
(both made from SNLI test) are not held out for them. `training_overlap` reads the training splits the
checkpoint's config.json records (`dataset.protocol`, `dataset.train`) from a data root the user gives, and
counts, after `normalised`: the pairs found there (premise and hypothesis together, in either order), and the
premises and the hypotheses found among all training sentences (either side). When the training data cannot
be read the result says why — "not checked" — and never counts 0.

`evaluate --file` and `probe` both report it; the app can call `training_overlap` with the same arguments.
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping, Sequence

from nlivis.data.protocols import find_split_file, get_protocol, read_split, split_key

NOT_CHECKED = "not checked"


def normalised(text: str) -> str:
    """Lowercase letters and digits, single spaces: "A man ." and "a man." are the same sentence."""
    text = unicodedata.normalize("NFKC", text).lower()
    return " ".join(re.sub(r"[^\w\s]", " ", text).split())


@dataclass(frozen=True)
class TrainingOverlap:
    """How many of `total` pairs (and their premises, hypotheses) occur in the training split `split`; the
    counts are None and `reason` says why when the split could not be read (`checked` False)."""

    checked: bool
    total: int
    pairs: int | None = None
    premises: int | None = None
    hypotheses: int | None = None
    split: str | None = None
    reason: str | None = None
    note: str | None = None
    """Something to know about a count made (the training split read here differs in size from the one the
    checkpoint recorded)."""

    def to_dict(self) -> dict[str, Any]:
        return {"checked": self.checked, "split": self.split, "total": self.total, "pairs": self.pairs,
                "premises": self.premises, "hypotheses": self.hypotheses, "reason": self.reason, "note": self.note}

    def describe(self) -> str:
        """One line for a table: the counts, or why there are none."""
        if not self.checked:
            return f"training overlap {NOT_CHECKED}: {self.reason}"
        line = (f"training overlap: {self.pairs:,} of {self.total:,} pairs, {self.premises:,} premises and "
                f"{self.hypotheses:,} hypotheses occur in the checkpoint's training split {self.split} "
                "(normalised text)")
        return line + (f"; {self.note}" if self.note else "")


@dataclass(frozen=True)
class TrainingTexts:
    """The normalised sentences and pairs of a checkpoint's training splits."""

    split: str
    size: int
    sentences: frozenset[str]
    pairs: frozenset[tuple[str, str]]


class TrainingDataMissing(Exception):
    """The training split cannot be read; the message says why, for `TrainingOverlap.reason`."""


def training_texts(config: Mapping[str, Any], data_dir: str | Path | None) -> TrainingTexts:
    """The training splits recorded in a checkpoint's config, read from `data_dir` (a protocol's data root,
    e.g. ../shared/data for the -small protocols). TrainingDataMissing says why when they cannot be read."""
    dataset = config.get("dataset") or {}
    recorded = tuple(sorted(set(dataset.get("train") or [])))
    if not dataset.get("protocol") or not recorded:
        raise TrainingDataMissing("the checkpoint's config.json records no training protocol and split")
    try:
        protocol = get_protocol(str(dataset["protocol"]))
    except ValueError as error:
        raise TrainingDataMissing(str(error)) from None
    refs = [ref for ref in protocol.train if split_key(ref) in recorded]
    unknown = sorted(set(recorded) - {split_key(ref) for ref in refs})
    if unknown:
        raise TrainingDataMissing(f"protocol {protocol.name!r} has no training split {', '.join(unknown)}")
    if data_dir is None:
        raise TrainingDataMissing(f"training data not found: give the data root holding {' + '.join(recorded)} "
                                  "(--data-dir)")
    files = []
    for ref in refs:
        path = find_split_file(ref, data_dir)
        if path is None:
            raise TrainingDataMissing(f"training data not found: no {split_key(ref)} file under "
                                      f"{Path(data_dir) / ref.subdir}")
        files.append(path)
    stamps = tuple((str(path), path.stat().st_mtime_ns, path.stat().st_size) for path in files)
    try:
        return _read_training_texts(protocol.name, tuple(split_key(ref) for ref in refs), str(data_dir), stamps)
    except (ValueError, OSError) as error:  # InputError is a ValueError
        raise TrainingDataMissing(f"training data unreadable: {error}") from None


@lru_cache(maxsize=8)
def _read_training_texts(protocol_name: str, keys: tuple[str, ...], data_dir: str,
                         stamps: tuple[tuple[str, int, int], ...]) -> TrainingTexts:
    """Read once per protocol, data root and file state (`stamps`: a changed file is read again)."""
    refs = [ref for ref in get_protocol(protocol_name).train if split_key(ref) in keys]
    training = [pair for ref in refs for pair in read_split(ref, data_dir).pairs]
    return TrainingTexts(" + ".join(keys), len(training),
                         frozenset(normalised(text) for pair in training for text in (pair.premise, pair.hypothesis)),
                         frozenset((normalised(p.premise), normalised(p.hypothesis)) for p in training))


def training_overlap(config: Mapping[str, Any], pairs: Sequence[tuple[str, str]],
                     data_dir: str | Path | None) -> TrainingOverlap:
    """How many of `pairs` (premise, hypothesis) occur in the training split `config` records, read from
    `data_dir`: pairs (both sentences, either order), premises and hypotheses (each against every training
    sentence), all after `normalised`. Not checked, with the reason, when the split cannot be read."""
    try:
        training = training_texts(config, data_dir)
    except TrainingDataMissing as error:
        return TrainingOverlap(False, len(pairs), reason=str(error))
    premises = [normalised(premise) for premise, _ in pairs]
    hypotheses = [normalised(hypothesis) for _, hypothesis in pairs]
    recorded = (config.get("dataset") or {}).get("train_pairs")
    note = None
    if isinstance(recorded, int) and recorded != training.size:
        note = (f"the training split read from {data_dir} has {training.size:,} pairs, the checkpoint recorded "
                f"{recorded:,}: counted against the data found")
    return TrainingOverlap(
        True, len(pairs),
        pairs=sum((p, h) in training.pairs or (h, p) in training.pairs for p, h in zip(premises, hypotheses)),
        premises=sum(p in training.sentences for p in premises),
        hypotheses=sum(h in training.sentences for h in hypotheses),
        split=training.split, note=note)
