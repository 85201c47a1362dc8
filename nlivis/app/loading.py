"""Cached loading: the checkpoint scan, models, dataset splits, predictions, tagged and analysed samples.

Models load once per process (`st.cache_resource`, keyed by folder and its modification time so a
retrained folder reloads); everything is kept in memory as a resource, never pickled. Functions return
(value, None) or (empty, why not), so pages show a message instead of failing.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import streamlit as st

from nlivis.app.paths import checkpoint_roots, data_root
from nlivis.app.selection import selected_paths
from nlivis.training.run_folder import live_lock
from nlivis.training.runs import read_run


MAX_SENTENCE_CHARS = 2000
"""Longer typed sentences are cut (with a note) before analysis; models cut tokens further."""


# ---------------------------------------------------------------- checkpoints

@dataclass
class FoundCheckpoints:
    """What a scan found: loadable checkpoints (CheckpointInfo) and broken folders with their error."""

    good: list[Any] = field(default_factory=list)
    broken: list[tuple[str, str]] = field(default_factory=list)
    missing_roots: list[str] = field(default_factory=list)


def scan_checkpoints(roots: Sequence[Path] | None = None) -> FoundCheckpoints:
    """Every complete checkpoint under the roots; folders that cannot be used are listed with their error."""
    from nlivis.store.checkpoints import find_checkpoints

    found = FoundCheckpoints()
    for root in roots if roots is not None else checkpoint_roots():
        if not Path(root).is_dir():
            found.missing_roots.append(str(root))
            continue
        broken: list[Any] = []
        found.good.extend(find_checkpoints(Path(root), broken=broken))
        for error in broken:
            folder = Path(getattr(error, "folder", root))
            problem = getattr(error, "problem", str(error))
            run = read_run(folder)
            holder = live_lock(folder)
            if run is not None and run.running:
                problem = f"training in progress (pid {run.pid}); it appears here when the run finishes"
            elif holder is not None:
                problem = f"training in progress ({holder.describe()}); it appears here when the run finishes"
            found.broken.append((str(folder), problem))
    return found


PAPER_COLUMN = "paper reports (full data)"
"""The Home table's column with the paper's own number for the row a checkpoint's config reproduces."""


def checkpoint_row(info: Any) -> dict[str, Any]:
    """One row of the Home table: what a checkpoint is, how it was trained and how well it did, and beside
    our accuracy what the paper reports for the same model on the same dataset (its full training data)."""
    from nlivis.analysis.paper_tables import paper_reference

    accuracy = info.dev_accuracy
    reference = paper_reference(info.config_name, info.protocol)
    return {
        "checkpoint": info.name,
        "model": info.model,
        "config": info.config_name,
        "protocol": info.protocol,
        "size": info.size,
        "embeddings": info.embedding_source,
        "dev accuracy": f"{accuracy:.2%}" if isinstance(accuracy, (int, float)) else "—",
        PAPER_COLUMN: f"{reference.accuracy:.1f}% ({reference.where})" if reference else "—",
        "selected on": info.select_split,
        "parameters": f"{info.parameters:,}" if isinstance(info.parameters, int) else "—",
        "folder": str(info.path),
    }


def _folder_stamp(path: Path) -> float:
    """Latest modification time among the folder's files: a retrained checkpoint reloads."""
    try:
        return max((p.stat().st_mtime for p in path.iterdir() if p.is_file()), default=path.stat().st_mtime)
    except OSError:
        return 0.0


@st.cache_resource(show_spinner="loading checkpoint …", max_entries=32)
def _load_cached(path: str, stamp: float) -> Any:
    from nlivis.inference import load_checkpoint

    loaded = load_checkpoint(Path(path))
    loaded.model.eval()
    return loaded


def load_model(path: str | Path) -> tuple[Any | None, str | None]:
    """(LoadedCheckpoint, None) or (None, the reason it could not load). Loads once per process."""
    path = Path(path)
    try:
        return _load_cached(str(path), _folder_stamp(path)), None
    except Exception as error:  # a broken folder must show as a message, whatever the failure
        return None, f"{path}: {error}"


@dataclass
class LoadedModel:
    """A loaded checkpoint with the short label pages show for it."""

    label: str
    path: str
    checkpoint: Any

    @property
    def model(self):
        return self.checkpoint.model

    @property
    def labels(self) -> list[str]:
        return list(self.checkpoint.labels)


def loaded_models() -> tuple[list[LoadedModel], list[str]]:
    """The selected checkpoints, loaded (cached), and the errors of those that failed."""
    models: list[LoadedModel] = []
    errors: list[str] = []
    for path in selected_paths():
        loaded, error = load_model(path)
        if error:
            errors.append(error)
        else:
            models.append(LoadedModel(label=checkpoint_label(path, loaded), path=path, checkpoint=loaded))
    return models, errors


def checkpoint_label(path: str | Path, described: Any | None = None) -> str:
    """'diin · snli-small · diin-shipped': model, protocol and folder name (from a CheckpointInfo or
    a LoadedCheckpoint; the folder name alone without either)."""
    info = getattr(described, "info", described)
    parts = (getattr(info, "model", None), getattr(info, "protocol", None), Path(path).name)
    return " · ".join(str(p) for p in parts if p)


# ---------------------------------------------------------------- data splits

def local_splits() -> dict[str, Any]:
    """Split key (e.g. "snli_dev") → SplitRef for every split of the reduced protocols found under the
    data root; empty when there is no data folder."""
    root = data_root()
    if root is None:
        return {}
    from nlivis.data.protocols import PROTOCOLS, all_protocol_refs, find_split_file, split_key

    found: dict[str, Any] = {}
    for protocol in PROTOCOLS.values():
        if not protocol.small:
            continue
        for ref in all_protocol_refs(protocol):
            if find_split_file(ref, root) is not None:
                found.setdefault(split_key(ref), ref)
    return found


@st.cache_resource(show_spinner="reading the split …", max_entries=8)
def _read_split_cached(ref: Any, root: str) -> Any:
    from nlivis.data.protocols import read_split

    return read_split(ref, root)


def read_local_split(key: str) -> tuple[list[Any], str | None]:
    """(pairs, None) for a split found by `local_splits`, or ([], why it could not be read).
    Cached as a resource (kept in memory, never pickled)."""
    splits = local_splits()
    root = data_root()
    if key not in splits or root is None:
        return [], f"split {key!r} is not in the data folder ({root})"
    try:
        return list(_read_split_cached(splits[key], str(root)).pairs), None
    except (OSError, ValueError) as error:
        return [], str(error)


@st.cache_resource(show_spinner=False, max_entries=8)
def _rows_by_id_cached(ref: Any, root: str) -> dict[str, int]:
    return {pair.id: row for row, pair in enumerate(_read_split_cached(ref, root).pairs)}


def split_rows(key: str) -> dict[str, int]:
    """Pair id → 0-based row of local split `key` (empty when it is not local or cannot be read): prediction
    files and tags name pairs by id (SNLI's 1-based line number, Quora's pair id), the app by row."""
    splits = local_splits()
    root = data_root()
    if key not in splits or root is None:
        return {}
    try:
        return _rows_by_id_cached(splits[key], str(root))
    except (OSError, ValueError):
        return {}


# ---------------------------------------------------------------- one pair through the models

def clean_sentence(text: str) -> tuple[str, str | None]:
    """Strip and cut a typed sentence; returns (text, a note when it was cut)."""
    text = " ".join((text or "").split())
    if len(text) > MAX_SENTENCE_CHARS:
        return text[:MAX_SENTENCE_CHARS], f"the sentence was cut to its first {MAX_SENTENCE_CHARS} characters"
    return text, None


@dataclass
class PairResult:
    """One model's reading of one pair: tokens as the model saw them, probabilities and the trace."""

    model_label: str
    premise: str
    hypothesis: str
    premise_tokens: list[str]
    hypothesis_tokens: list[str]
    labels: list[str]
    probs: list[float]
    trace: Any
    notices: list[str] = field(default_factory=list)
    """What the user should know about how the pair was read (cut-offs, unknown words)."""

    @property
    def predicted(self) -> str:
        return self.labels[max(range(len(self.probs)), key=self.probs.__getitem__)]


@st.cache_resource(max_entries=256, show_spinner=False)
def _analyse_cached(path: str, stamp: float, premise: str, hypothesis: str) -> PairResult:
    from nlivis.inference import predict_pair as predict_pairs

    loaded = _load_cached(path, stamp)
    prediction = predict_pairs(loaded, premise, hypothesis, trace=True)
    labels = list(loaded.labels)
    return PairResult(checkpoint_label(path, loaded), premise, hypothesis, list(prediction.premise_tokens),
                      list(prediction.hypothesis_tokens), labels, [float(prediction.probabilities[l]) for l in labels],
                      prediction.trace.detach(), list(prediction.notices))


def analyse_pair(model: LoadedModel, premise: str, hypothesis: str) -> tuple[PairResult | None, str | None]:
    """(result, None) or (None, why the model could not read the pair), e.g. an empty sentence."""
    premise, _ = clean_sentence(premise)
    hypothesis, _ = clean_sentence(hypothesis)
    try:
        return _analyse_cached(model.path, _folder_stamp(Path(model.path)), premise, hypothesis), None
    except ValueError as error:
        return None, str(error)
    except Exception as error:  # a model failing on one input must not take the page down
        return None, f"{model.label} could not read this pair ({type(error).__name__}: {error})"


@st.cache_resource(max_entries=8, show_spinner="analysing a sample of the split with spaCy …")
def _analysed_sample_cached(ref: Any, root: str, size: int, seed: int) -> list[Any]:
    import random

    from nlivis.features.dataset import analyze_pairs

    pairs = list(_read_split_cached(ref, root).pairs)
    chosen = sorted(random.Random(seed).sample(range(len(pairs)), min(size, len(pairs))))
    return analyze_pairs([pairs[i] for i in chosen], progress=False)


def analysed_sample(key: str, size: int, seed: int = 0) -> tuple[list[Any], str | None]:
    """A fixed random sample (by seed) of `size` pairs of a local split, analysed with spaCy (cached)."""
    splits = local_splits()
    root = data_root()
    if key not in splits or root is None:
        return [], f"split {key!r} is not in the data folder ({root})"
    try:
        return _analysed_sample_cached(splits[key], str(root), int(size), int(seed)), None
    except (OSError, ValueError) as error:
        return [], str(error)


def encoded_batches(model: LoadedModel, items: Sequence[Any], batch_size: int = 32) -> list[Any]:
    """The items as the model's featurizer encodes them, in batches of `batch_size`."""
    featurizer = model.checkpoint.featurizer
    return [featurizer.encode(items[i:i + batch_size]) for i in range(0, len(items), batch_size)]


# ---------------------------------------------------------------- predictions and tags for error analysis

def prediction_files(folder: str | Path) -> dict[str, Path]:
    """Split key → predictions file of a checkpoint folder: those written with the checkpoint (e.g.
    "snli_dev"), then the named evaluations of other protocol splits (`python -m nlivis evaluate CK
    --dataset mnli-small --split mnli_dev_matched` on a checkpoint that did not record it). A recorded
    split always wins over a named evaluation of the same split, so what the checkpoint recorded is what
    the app states."""
    from nlivis.store.predictions import find_prediction_files
    from nlivis.store.evaluations import find_named_evaluations

    files = find_prediction_files(folder)
    for evaluation in find_named_evaluations(folder).values():
        key = evaluation.record.get("split_key")
        if key and key not in files:
            files[key] = evaluation.predictions_file
    return files


def prediction_splits(model: LoadedModel) -> dict[str, Path]:
    """`prediction_files` of a loaded model's checkpoint."""
    return prediction_files(model.path)


@st.cache_resource(max_entries=256, show_spinner=False)
def _predictions_cached(path: str, stamp: float) -> list[Any]:
    from nlivis.store.predictions import read_predictions

    return read_predictions(path)


def checkpoint_predictions(folder: str | Path, key: str) -> tuple[list[Any], str | None]:
    """(predictions, None) for one split of a checkpoint folder (its weights are not loaded), or ([], why not)."""
    path = prediction_files(folder).get(key)
    if path is None:
        return [], f"{Path(folder).name} has no predictions for {key}"
    try:
        return _predictions_cached(str(path), path.stat().st_mtime), None
    except (OSError, ValueError) as error:
        return [], str(error)


def model_predictions(model: LoadedModel, key: str) -> tuple[list[Any], str | None]:
    """(predictions, None) for one split, or ([], why they cannot be read)."""
    return checkpoint_predictions(model.path, key)


# ---------------------------------------------------------------- ablations (checkpoints of one family)

def variant_records() -> tuple[list[Any], list[str]]:
    """A VariantRecord (nlivis.analysis.ablations) for every complete checkpoint found, and the folders
    whose JSON files could not be read (with why)."""
    from nlivis.analysis.ablations import read_variant

    records, problems = [], []
    for info in scan_checkpoints().good:
        try:
            records.append(read_variant(info.path))
        except ValueError as error:
            problems.append(str(error))
    return records, problems


def family_predictions(members: Sequence[Any], reference: Any, split: str) -> tuple[list[Any], dict[str, list[Any]], list[str]]:
    """(the reference's predictions on `split`, {other member: its predictions}, problems): members without
    predictions for the split are left out; unreadable files are problems, as is a reference without them."""
    reference_predictions, error = checkpoint_predictions(reference.folder, split)
    problems = [error] if error else []
    variants: dict[str, list[Any]] = {}
    for member in members:
        if member.name == reference.name or split not in member.prediction_splits:
            continue
        predictions, member_error = checkpoint_predictions(member.folder, split)
        if member_error:
            problems.append(member_error)
        else:
            variants[member.name] = predictions
    return reference_predictions, variants, problems


def measure_seed_noise(seeds: Sequence[Any], split: str) -> tuple[Any | None, str | None]:
    """(SeedNoise over every seed of the full model with predictions on `split`, None), or (None, why it cannot
    be measured: one seed only, no predictions for the split, or predictions that are not of the same split)."""
    from nlivis.analysis.ablations import seed_noise

    if len(seeds) < 2:
        return None, "one seed only"
    found = []
    for seed in seeds:
        predictions, error = checkpoint_predictions(seed.folder, split)
        if error:
            return None, error
        found.append(predictions)
    try:
        return seed_noise(*found, names=[seed.name for seed in seeds]), None
    except ValueError as error:
        return None, f"{', '.join(seed.name for seed in seeds)}: {error}"


@dataclass
class TaggedSample:
    """Automatic annotation tags for a sample of a split's pairs (pair id → tags) and the pairs by id."""

    tags: dict[str, frozenset[str]]
    pairs: dict[str, Any]
    unavailable: dict[str, str]


@st.cache_resource(max_entries=8, show_spinner="tagging pairs (spaCy parse) …")
def _tagged_sample_cached(ref: Any, root: str, size: int, seed: int) -> TaggedSample:
    import random
    import warnings

    from nlivis.analysis.tags import tag_pairs, unavailable_tags

    pairs = list(_read_split_cached(ref, root).pairs)
    chosen = sorted(random.Random(seed).sample(range(len(pairs)), min(size, len(pairs))))
    sample = [pairs[i] for i in chosen]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the missing-WordNet warning is shown through `unavailable`
        tags = tag_pairs(sample)
    return TaggedSample(dict(tags), {p.id: p for p in pairs}, unavailable_tags())


def tagged_sample(key: str, size: int, seed: int = 0) -> tuple[TaggedSample | None, str | None]:
    """Tags for a fixed random sample of `size` pairs of a local split (cached), or why there are none."""
    splits = local_splits()
    root = data_root()
    if key not in splits or root is None:
        return None, f"the pairs of {key} are not in the data folder ({root or 'none found'}), so they cannot be tagged"
    try:
        return _tagged_sample_cached(splits[key], str(root), int(size), int(seed)), None
    except (OSError, ValueError) as error:
        return None, str(error)


def split_size(key: str) -> int | None:
    """Pairs in a local split, or None when it is not local."""
    pairs, error = read_local_split(key)
    return None if error else len(pairs)


# ---------------------------------------------------------------- which split a model was trained, selected and reported on

def _protocol_of(model: LoadedModel) -> Any | None:
    from nlivis.data.protocols import get_protocol

    name = getattr(getattr(model.checkpoint, "info", None), "protocol", None)
    try:
        return get_protocol(str(name)) if name else None
    except (ValueError, KeyError):
        return None


def training_splits(models: Sequence[LoadedModel]) -> dict[str, list[str]]:
    """Split key → the loaded models trained on it (their pairs were seen in training, so they say little)."""
    from nlivis.data.protocols import split_key

    trained: dict[str, list[str]] = {}
    for model in models:
        protocol = _protocol_of(model)
        for ref in protocol.train if protocol is not None else ():
            trained.setdefault(split_key(ref), []).append(Path(model.path).name)
    return trained


def default_split(models: Sequence[LoadedModel], available: Sequence[str]) -> str | None:
    """The split a picker starts on: the first model's select split, then its report splits, then any available
    split no loaded model trained on; a training split only when nothing else is available."""
    from nlivis.data.protocols import split_key

    trained = training_splits(models)
    for model in models:
        protocol = _protocol_of(model)
        if protocol is None:
            continue
        for ref in (protocol.select, *protocol.report):
            if split_key(ref) in available and split_key(ref) not in trained:
                return split_key(ref)
    return next((key for key in available if key not in trained), available[0] if available else None)


def split_label(key: str, trained: dict[str, list[str]]) -> str:
    """A split's name in a picker, saying so when a loaded model was trained on it."""
    return f"{key} (training split of {', '.join(trained[key])})" if key in trained else key
