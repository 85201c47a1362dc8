"""Evaluations that never overwrite: recorded splits, named evaluations, and what was cut or left out.

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
(`analysis.predictions.find_prediction_files` only looks at the folder's own `predictions_*` files).
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Sequence

if TYPE_CHECKING:  # torch is imported where a tensor is checked, so listing evaluations (the app) stays torch-free
    import torch

from nlivis.analysis.predictions import (Prediction, find_prediction_files, read_predictions,
                                         write_predictions)

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


# ------------------------------------------------------------------------------------ checks on inputs

def check_finite(probabilities: torch.Tensor, checkpoint: str | Path) -> torch.Tensor:
    """`probabilities` unchanged, or a ValueError naming the checkpoint when any is NaN or infinite (a
    model with corrupt weights must not report a label)."""
    import torch

    bad = ~torch.isfinite(probabilities).all(dim=-1)
    if bool(bad.any()):
        raise ValueError(f"checkpoint {checkpoint}: the model gave non-finite outputs (NaN or infinity) for "
                         f"{int(bad.sum())} of {bad.numel()} pair(s); its weights are probably corrupt "
                         "(retrain it or restore the folder)")
    return probabilities


def check_gold_labels(pairs: Sequence[Any], labels: Sequence[str], source: str) -> None:
    """Before any analysis: every gold label must be one the model (or its mapping) can answer. The error
    names the file and the first line of each unknown label."""
    first_line: dict[str, Any] = {}
    for pair in pairs:
        if pair.label is not None and pair.label not in labels and pair.label not in first_line:
            first_line[pair.label] = pair.line
    if first_line:
        where = ", ".join(f"{label!r} (first on line {line})" for label, line in first_line.items())
        raise ValueError(f"{source}: gold labels {where} are not among this checkpoint's labels {list(labels)}; "
                         "nothing was analysed")


def check_pairs(pairs: Sequence[Any], source: str, dropped_no_gold: int = 0) -> None:
    """A ValueError naming the source when there is nothing to evaluate."""
    if not pairs:
        extra = f" ({dropped_no_gold} pair(s) have gold label '-' and were left out)" if dropped_no_gold else ""
        raise ValueError(f"{source}: no pairs to evaluate{extra}")


# ------------------------------------------------------------------------------------------ truncation

@dataclass(frozen=True)
class TruncationCount:
    """How many pairs the model's token cut-offs shortened (the shipped models read ≤ 32 tokens a side)."""

    pairs: int
    premises: int
    hypotheses: int
    total: int
    max_premise_len: int
    max_hypothesis_len: int

    def describe(self) -> str:
        """One sentence for the user; "" when nothing was cut."""
        if not self.pairs:
            return ""
        return (f"{self.pairs:,} of {self.total:,} pairs were cut to the model's {self.max_premise_len} premise / "
                f"{self.max_hypothesis_len} hypothesis tokens ({self.premises:,} premises, "
                f"{self.hypotheses:,} hypotheses); the words after the cut were not read")

    def to_dict(self) -> dict[str, int]:
        return {"pairs": self.pairs, "premises": self.premises, "hypotheses": self.hypotheses,
                "total": self.total, "max_premise_len": self.max_premise_len,
                "max_hypothesis_len": self.max_hypothesis_len}


def count_truncated(featurizer: Any, items: Sequence[Any]) -> TruncationCount:
    """Count the analysed pairs (`AnalyzedPair`) that `featurizer`'s cut-offs shorten; the app calls this
    for a split as the CLI does."""
    premises = hypotheses = pairs = 0
    for item in items:
        cut = featurizer.truncation(item.premise, item.hypothesis)
        premise_cut, hypothesis_cut = cut.premise_kept < cut.premise_tokens, cut.hypothesis_kept < cut.hypothesis_tokens
        premises += premise_cut
        hypotheses += hypothesis_cut
        pairs += premise_cut or hypothesis_cut
    settings = featurizer.settings
    return TruncationCount(pairs, premises, hypotheses, len(items), settings.max_premise_len,
                           settings.max_hypothesis_len)


# --------------------------------------------------------------------------------------- data identity

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


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def data_identity(paths: Sequence[str | Path]) -> DataIdentity:
    return DataIdentity(tuple((str(Path(p).resolve()), _sha256(Path(p))) for p in paths))


# ----------------------------------------------------------------------------------- named evaluations

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
    from nlivis.data.challenge import sanitized_name

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


def named_evaluation_for(checkpoint_folder: str | Path, identity: DataIdentity) -> NamedEvaluation | None:
    """The checkpoint's named evaluation of exactly this data, if one exists (the app reuses it)."""
    return next((e for e in find_named_evaluations(checkpoint_folder).values()
                 if e.data_digest == identity.digest), None)


def _as_predictions(rows: Sequence[Prediction | Mapping[str, Any]]) -> list[Prediction]:
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
    predictions = _as_predictions(rows)
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
        raise ValueError(f"{target} already holds {held}, not these results; give another --name "
                         "(nothing was written)")
    full_record = {"format": EVALUATION_FORMAT, "format_version": 1, "name": name, "checkpoint": folder.name,
                   "data": identity.to_dict(), "split_key": split_key,
                   "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **record}
    building = evaluations_root(folder) / f".{name}.partial-{os.getpid()}"
    if building.exists():
        shutil.rmtree(building)
    building.mkdir(parents=True)
    try:
        write_predictions(building / EVALUATION_PREDICTIONS, predictions)
        (building / EVALUATION_RECORD).write_text(json.dumps(full_record, indent=1, ensure_ascii=False) + "\n",
                                                  encoding="utf-8")
        os.rename(building, target)  # fails rather than replace a folder that appeared meanwhile
    except BaseException:
        shutil.rmtree(building, ignore_errors=True)
        raise
    message = f"predictions written to {target / EVALUATION_PREDICTIONS} (named evaluation {name!r})"
    return StoredEvaluation(True, target / EVALUATION_PREDICTIONS, f"{note}; {message}" if note else message, name)


def read_named_predictions(evaluation: NamedEvaluation) -> list[Prediction]:
    return read_predictions(evaluation.predictions_file)


# -------------------------------------------------------------------------------- predicting, labels

BINARY_MAPPING_NOTE = ("the model's 3-way answer is mapped to the file's 2-way labels as HANS does: a predicted "
                       "neutral or contradiction counts as non-entailment (p(non-entailment) = p(neutral) + "
                       "p(contradiction))")


@dataclass
class Scored:
    """Prediction rows in the file's label set, and what mapping (if any) got them there."""

    rows: list[dict[str, Any]]
    labels: tuple[str, ...]
    mapping_note: str = ""
    notes: list[str] = field(default_factory=list)


def rows_in_label_set(rows: list[dict[str, Any]], model_labels: Sequence[str],
                      file_labels: Sequence[str]) -> Scored:
    """Rows as they are when the file uses the model's labels; for a 2-way entailment/non-entailment file
    and a 3-way NLI model, the predicted label and the probabilities folded to 2-way (see
    `BINARY_MAPPING_NOTE`)."""
    from nlivis.data.challenge import BINARY_LABELS
    from nlivis.data.records import NLI_LABELS

    if tuple(file_labels) == BINARY_LABELS and tuple(model_labels) == NLI_LABELS:
        folded = []
        for row in rows:
            probs = dict(zip(model_labels, row["probs"]))
            binary = [probs["entailment"], probs["neutral"] + probs["contradiction"]]
            predicted = BINARY_LABELS[0] if row["predicted"] == "entailment" else BINARY_LABELS[1]
            folded.append({**row, "predicted": predicted, "probs": binary})
        return Scored(folded, BINARY_LABELS, BINARY_MAPPING_NOTE)
    return Scored(rows, tuple(model_labels))


def score(scored: Scored) -> Any:
    """The classification report over the labelled rows of `scored`."""
    from nlivis.training.metrics import classification_report

    index = {label: i for i, label in enumerate(scored.labels)}
    labelled = [row for row in scored.rows if row["gold"] is not None]
    return classification_report([index[row["gold"]] for row in labelled],
                                 [index[row["predicted"]] for row in labelled], scored.labels)


# ------------------------------------------------------------------------------ a protocol's split

def read_split_checked(ref: Any, data_dir: str | Path, labels: Sequence[str] | None) -> Any:
    """Read a split and check it (pairs present, gold labels known to the model) before any spaCy work.
    With `labels` None the label check is left to the caller (`check_split_labels`), so a split can be
    read and checked before the checkpoint is loaded."""
    from nlivis.data.protocols import find_split_file, read_split

    result = read_split(ref, data_dir)
    source = str(find_split_file(ref, data_dir) or result.path)
    check_pairs(result.pairs, source, result.dropped_no_gold)
    if labels is not None:
        check_gold_labels(result.pairs, labels, source)
    return result


def check_split_labels(ref: Any, data_dir: str | Path, result: Any, labels: Sequence[str]) -> None:
    """`check_gold_labels` for a split read by `read_split_checked(..., labels=None)`."""
    from nlivis.data.protocols import find_split_file

    check_gold_labels(result.pairs, labels, str(find_split_file(ref, data_dir) or result.path))


def analyze_split(ref: Any, result: Any, cache_dir: str | Path | None, progress: bool = True) -> list[Any]:
    """The split's pairs analysed through the feature cache (keyed by split and file content)."""
    from nlivis.features.dataset import analyze_pairs, split_cache_key

    return analyze_pairs(result.pairs, cache_dir=cache_dir, cache_key=split_cache_key(ref, result), progress=progress)


def split_source_files(result: Any) -> list[Path]:
    """Every file a split was read from (three for a line-aligned split): what its data identity hashes."""
    from nlivis.features.dataset import _source_files

    return _source_files(result)


def evaluation_record(report: Any, read: Any, truncation: TruncationCount, unlabelled: int,
                      **extra: Any) -> dict[str, Any]:
    """What evaluation.json keeps besides the data identity."""
    return {"count": report.count, "accuracy": report.accuracy, "unlabelled": unlabelled,
            "dropped_no_gold": read.dropped_no_gold, "ambiguous_ids": len(read.ambiguous_ids),
            "truncated": truncation.to_dict(), **extra}


# --------------------------------------------------------------------------------- a challenge file

@dataclass
class FileEvaluation:
    """`evaluate_file`'s result: the challenge set, the rows in its label set, the report, what was cut,
    and where the predictions are kept."""

    challenge: Any
    scored: Scored
    report: Any
    truncation: TruncationCount
    stored: StoredEvaluation | None
    identity: DataIdentity

    def predictions(self) -> list[Prediction]:
        return _as_predictions(self.scored.rows)

    def notes(self) -> list[str]:
        notes = list(self.challenge.notes)
        if self.scored.mapping_note:
            notes.append(self.scored.mapping_note)
        if self.truncation.pairs:
            notes.append(self.truncation.describe())
        return notes


def read_challenge_checked(paths: Sequence[str | Path], model_labels: Sequence[str]) -> Any:
    """Read challenge files and check that the model can answer their labels, before any spaCy work."""
    from nlivis.data.challenge import BINARY_LABELS, read_challenge_files
    from nlivis.data.records import NLI_LABELS

    challenge = read_challenge_files(paths)
    answerable = tuple(model_labels)
    if challenge.labels == BINARY_LABELS and tuple(model_labels) == NLI_LABELS:
        answerable = BINARY_LABELS
    check_gold_labels(challenge.pairs, answerable, challenge.result.path)
    return challenge


def evaluate_file(loaded: Any, paths: Sequence[str | Path], *, group_by: str | None = None,
                  name: str | None = None, cache_dir: str | Path | None = None, progress: bool = True,
                  store: bool = True, challenge: Any = None) -> tuple[FileEvaluation, Any]:
    """Evaluate a checkpoint on challenge files: read and check everything (labels, the group-by field)
    first, then analyse (cached), predict, score, and keep the predictions as a named evaluation (unless
    `store` is False). Returns the evaluation and the `accuracy_by_group` table (None without `group_by`)."""
    from nlivis.analysis.challenge import accuracy_by_group
    from nlivis.data.challenge import sanitized_name
    from nlivis.features.dataset import analyze_pairs
    from nlivis.training.trainer import predict_probabilities, prediction_rows

    challenge = challenge or read_challenge_checked(paths, loaded.labels)
    groups = challenge.groups(group_by) if group_by else None
    identity = data_identity(challenge.source_files())
    items = analyze_pairs(challenge.pairs, cache_dir=cache_dir, progress=progress,
                          cache_key=f"challenge-{sanitized_name(challenge.name)}-{identity.digest[:16]}")
    device = next(loaded.model.parameters()).device
    unlabelled = items if tuple(challenge.labels) == tuple(loaded.labels) else [  # 2-way gold: not the model's
        replace(item, pair=replace(item.pair, label=None)) for item in items]
    probabilities = check_finite(predict_probabilities(loaded.model, loaded.featurizer, unlabelled, 128, device),
                                 loaded.path)
    scored = rows_in_label_set(prediction_rows(items, probabilities, loaded.labels), loaded.labels, challenge.labels)
    report = score(scored)
    truncation = count_truncated(loaded.featurizer, items)
    evaluation = FileEvaluation(challenge, scored, report, truncation, None, identity)
    if store:
        unlabelled = sum(row["gold"] is None for row in scored.rows)
        record = evaluation_record(report, challenge.result, truncation, unlabelled, group_by=group_by,
                                   labels=list(scored.labels), label_mapping=scored.mapping_note or None,
                                   notes=evaluation.notes())
        evaluation.stored = store_evaluation(loaded.path, scored.rows, identity, record, name=name,
                                             data_name=challenge.name)
    table = accuracy_by_group(evaluation.predictions(), groups, overall=True) if groups is not None else None
    return evaluation, table


def evaluate_file_command(args: Any, loaded: Any) -> int:
    """`evaluate CHECKPOINT --file PATH [--file PATH …] [--group-by FIELD] [--name NAME] [--json]`."""
    from nlivis.data.text import shown

    if args.dataset or args.split:
        raise ValueError("give either --file or --dataset/--split/--data-dir, not both")
    if args.by_tag or args.tags_file:
        raise ValueError("--by-tag/--tags-file work on a protocol's split; with --file use --group-by FIELD")
    challenge = read_challenge_checked(args.file, loaded.labels)
    if args.group_by:
        challenge.groups(args.group_by)  # an unknown field fails here, before spaCy
    evaluation, table = evaluate_file(loaded, args.file, group_by=args.group_by, name=args.name,
                                      cache_dir=args.cache_dir, challenge=challenge)
    stored = evaluation.stored
    if args.json:
        output = {"checkpoint": str(loaded.path), "files": [str(p) for p in evaluation.challenge.files],
                  "data": evaluation.identity.to_dict(), **evaluation.report.to_dict(),
                  "labels": list(evaluation.scored.labels), "label_mapping": evaluation.scored.mapping_note or None,
                  "unlabelled": sum(row["gold"] is None for row in evaluation.scored.rows),
                  "dropped_no_gold": evaluation.challenge.result.dropped_no_gold,
                  "truncated": evaluation.truncation.to_dict(), "notes": evaluation.notes(),
                  "name": stored.name, "predictions_file": str(stored.predictions_file), "written": stored.written,
                  "message": stored.message}
        if table is not None:
            from nlivis.analysis.challenge import OVERALL_GROUP

            records = json.loads(table.to_json(orient="records"))
            output["group_by"] = args.group_by
            output["by_group"] = [r for r in records if r["group"] != OVERALL_GROUP]
            output["overall"] = next((r for r in records if r["group"] == OVERALL_GROUP), None)
        print(json.dumps(output, indent=1))
        return 0
    print(f"checkpoint {loaded.path} on {', '.join(map(str, evaluation.challenge.files))}")
    print(evaluation.report.format_table())
    for note in evaluation.notes():
        print(f"\nnote: {shown(note)}")
    if table is not None:
        print(f"\naccuracy by {args.group_by} (95% Wilson intervals; a pair counts in each of its values):")
        print(table.to_string(index=False, float_format=lambda x: f"{x:.3f}"))
    print(f"\n{stored.message}")
    return 0


# ------------------------------------------------------------------------------------- for the app

def cached_split_truncation(featurizer: Any, ref: Any, data_root: str | Path,
                            cache_dir: str | Path | None = None) -> TruncationCount | None:
    """How many pairs of a protocol split the model's cut-offs shorten, from the feature cache only (None
    when the split was never analysed here: `prepare` or `evaluate` fill the cache). No spaCy runs, so a
    page can show it next to every split cheaply."""
    from nlivis.data.protocols import read_split
    from nlivis.features.cache import AnalysisCache, texts_digest
    from nlivis.features.dataset import AnalyzedPair, split_cache_key

    result = read_split(ref, data_root)
    pairs = result.pairs
    rows = AnalysisCache(cache_dir).read(split_cache_key(ref, result),
                                         texts_digest((p.id, p.premise, p.hypothesis) for p in pairs), len(pairs))
    if rows is None:
        return None
    return count_truncated(featurizer, [AnalyzedPair(p, a, b) for p, (a, b) in zip(pairs, rows)])


def challenge_predictions(loaded: Any, challenge: Any, cache_dir: str | Path | None = None,
                          compute: bool = True) -> tuple[list[Prediction], NamedEvaluation | None]:
    """A checkpoint's predictions on a challenge set for the app: its named evaluation of exactly this data
    when there is one, else (with `compute`) evaluated now and kept as a named evaluation, as the CLI does.
    ([], None) when not evaluated yet and `compute` is False."""
    identity = data_identity(challenge.source_files())
    existing = named_evaluation_for(loaded.path, identity)
    if existing is None and compute:
        evaluate_file(loaded, challenge.files, challenge=challenge, cache_dir=cache_dir, progress=False)
        existing = named_evaluation_for(loaded.path, identity)
    if existing is None:
        return [], None
    return read_named_predictions(existing), existing
