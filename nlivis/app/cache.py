"""Typed, cached loaders: checkpoints, models, dataset splits, one pair read by a model, predictions, tags,
samples analysed with spaCy, gate statistics, attributions, challenge files and projections.

Everything is cached in the server process (`st.cache_resource`, never pickled), keyed by the folder or file
and its modification time, so a retrained checkpoint or a changed file is read again. Functions return
(value, None) or (empty, why not), so a component shows a message instead of failing. Modules that import
torch are imported inside the functions that need them: Home lists checkpoints without torch (a cold start
then takes about a second instead of three).
"""
from __future__ import annotations

import logging
import os
import random
import threading
import warnings
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

import pandas as pd
import streamlit as st

from nlivis.app import paths, state
from nlivis.data.challenge import read_challenge_files
from nlivis.data.protocols import PROTOCOLS, SplitRef, all_protocol_refs, find_split_file, read_split, split_key
from nlivis.data.records import Pair
from nlivis.data.split_choice import default_split, split_label, training_splits
from nlivis.models.families import family_rank
from nlivis.features.dataset import analyse_pairs
from nlivis.store.checkpoints import CheckpointInfo, find_checkpoints
from nlivis.store.evaluations import find_named_evaluations
from nlivis.store.files import cache_root
from nlivis.store.predictions import Prediction, find_prediction_files, read_predictions
from nlivis.training.run_folder import live_lock
from nlivis.training.runs import read_run
from nlivis.viz.common import model_colours

if TYPE_CHECKING:
    from nlivis.inference import LoadedCheckpoint
    from nlivis.models.trace import Trace


def checkpoint_stamp(path: str | Path) -> float:
    """Latest modification time among a folder's files: part of every cache key, so a retrained checkpoint reloads."""
    path = Path(path)
    try:
        return max((p.stat().st_mtime for p in path.iterdir() if p.is_file()), default=path.stat().st_mtime)
    except OSError:
        return 0.0


def _file_stamp(path: str | Path) -> float:
    try:
        return Path(path).stat().st_mtime
    except OSError:
        return 0.0


# ---------------------------------------------------------------- checkpoints

@dataclass
class FoundCheckpoints:
    """What a scan found: loadable checkpoints, broken folders with their problem, roots that do not exist."""

    good: list[CheckpointInfo] = field(default_factory=list)
    broken: list[tuple[str, str]] = field(default_factory=list)
    missing_roots: list[str] = field(default_factory=list)


def _root_stamp(root: Path) -> tuple:
    """What a root's listing depends on: its checkpoint folders and their files' modification times."""
    try:
        return tuple(sorted((child.name, checkpoint_stamp(child)) for child in root.iterdir() if child.is_dir()))
    except OSError:
        return ()


@st.cache_resource(max_entries=16, show_spinner=False)
def _scan_root(root: str, stamp: tuple) -> tuple[list[CheckpointInfo], list[tuple[str, str]]]:
    broken: list[Any] = []
    good = find_checkpoints(Path(root), broken=broken)
    problems = []
    for error in broken:
        folder = Path(getattr(error, "folder", root))
        problem = getattr(error, "problem", str(error))
        run = read_run(folder)
        holder = live_lock(folder)
        if run is not None and run.running:
            problem = f"training in progress (pid {run.pid}); it appears here when the run finishes"
        elif holder is not None:
            problem = f"training in progress ({holder.describe()}); it appears here when the run finishes"
        problems.append((str(folder), problem))
    return good, problems


def scan_checkpoints(roots: Sequence[Path] | None = None) -> FoundCheckpoints:
    """Every complete checkpoint under the roots (default: `paths.checkpoint_roots()`); folders that cannot be
    used are listed with their problem, and so is a checkpoint whose name an earlier root already has (a name is
    what URLs and pages use; the first root's folder is the one loaded). Cached per root until a checkpoint
    folder in it changes."""
    found = FoundCheckpoints()
    first: dict[str, Path] = {}
    for root in roots if roots is not None else paths.checkpoint_roots():
        root = Path(root)
        if not root.is_dir():
            found.missing_roots.append(str(root))
            continue
        good, broken = _scan_root(str(root), _root_stamp(root))
        for info in good:
            if info.name in first:
                found.broken.append((str(info.path), f"same name as {first[info.name]}, which is used (the first "
                                                     "checkpoint folder listed wins)"))
            else:
                first[info.name] = Path(info.path)
                found.good.append(info)
        found.broken.extend(broken)
    return found


DEFAULT_PROTOCOL = "snli-small"


def default_model_names(infos: Sequence[CheckpointInfo]) -> list[str]:
    """What a new session loads: per model family, its full config (no ablation) trained under snli-small with
    seed 1 — the five shipped models — in the families' display order (`models.families`). Without any snli-small checkpoint, the full-config
    checkpoints of the protocol that has most of them."""
    full = [info for info in infos if info.config_name == info.model and (info.seed in (None, 1))]
    protocols = [info.protocol for info in full]
    if not protocols:
        return []
    chosen_protocol = DEFAULT_PROTOCOL if DEFAULT_PROTOCOL in protocols else max(set(protocols), key=protocols.count)
    picked: dict[str, CheckpointInfo] = {}
    for info in full:
        if info.protocol == chosen_protocol:
            picked.setdefault(info.model, info)
    order = sorted(picked, key=lambda m: (family_rank(m), m))
    return [picked[model].name for model in order]


@st.cache_resource(show_spinner="loading checkpoint …", max_entries=32)
def _load_cached(path: str, stamp: float) -> "LoadedCheckpoint":
    from nlivis.inference import load_checkpoint

    loaded = load_checkpoint(Path(path))
    loaded.model.eval()
    return loaded


def load_model(path: str | Path) -> tuple["LoadedCheckpoint | None", str | None]:
    """(LoadedCheckpoint, None) or (None, the reason it could not load). Loads once per process and folder state."""
    path = Path(path)
    try:
        return _load_cached(str(path), checkpoint_stamp(path)), None
    except Exception as error:  # a broken folder must show as a message, whatever the failure
        return None, f"{path}: {error}"


@dataclass(frozen=True)
class Model:
    """A loaded checkpoint as every page shows it: its folder name (the one short label, also its name in
    URLs), its colour (the same on every page) and what its trace can feed (its declared entry types)."""

    name: str
    path: str
    checkpoint: Any
    colour: str

    @property
    def family(self) -> str:
        return str(self.checkpoint.info.model)

    @property
    def protocol(self) -> str | None:
        return getattr(self.checkpoint.info, "protocol", None)

    @property
    def labels(self) -> list[str]:
        return list(self.checkpoint.labels)

    @property
    def trace_types(self) -> frozenset[type]:
        """The trace entry types this model emits, as configured (`model.trace_types()`): what views can draw."""
        return frozenset(self.checkpoint.model.trace_types())


def chosen_model_names() -> list[str]:
    """The checkpoints chosen to load (state's model names), without loading them; a session that never chose
    gets the default models (`default_model_names`)."""
    if not state.models_chosen():
        state.set_model_names(default_model_names(scan_checkpoints().good))
    return state.model_names()


def loaded_models() -> tuple[list[Model], list[str]]:
    """The chosen checkpoints (state's model names) loaded, in the order chosen, and the errors of those that
    failed. A session that never chose loads the default models (`default_model_names`)."""
    loaded: list[tuple[str, str, Any]] = []
    errors: list[str] = []
    for name in chosen_model_names():
        folder = paths.find_checkpoint_folder(name)
        if folder is None:
            errors.append(f"{name}: no checkpoint folder of that name in {', '.join(map(str, paths.checkpoint_roots()))}")
            continue
        checkpoint, error = load_model(folder)
        if error:
            errors.append(error)
        else:
            loaded.append((name, str(folder), checkpoint))
    colours = model_colours([(name, str(checkpoint.info.model)) for name, _, checkpoint in loaded])
    return [Model(name, path, checkpoint, colours[name]) for name, path, checkpoint in loaded], errors


def known_model_names(names: list[str]) -> tuple[list[str], list[str]]:
    """(names of checkpoint folders that exist, names that do not): the URL check for `state.begin`."""
    found = [name for name in names if paths.find_checkpoint_folder(name) is not None]
    return found, [name for name in names if name not in found]


# ---------------------------------------------------------------- data splits

def local_splits() -> dict[str, SplitRef]:
    """Split key (e.g. "snli_dev") → SplitRef for every split of the reduced protocols found under the data
    root; empty when there is no data folder."""
    root = paths.data_root()
    if root is None:
        return {}
    return _local_splits_cached(str(root), _file_stamp(root))


@st.cache_resource(max_entries=4, show_spinner=False)
def _local_splits_cached(root: str, stamp: float) -> dict[str, SplitRef]:
    found: dict[str, SplitRef] = {}
    for protocol in PROTOCOLS.values():
        if protocol.small:
            for ref in all_protocol_refs(protocol):
                if find_split_file(ref, root) is not None:
                    found.setdefault(split_key(ref), ref)
    return found


@st.cache_resource(show_spinner="reading the split …", max_entries=8)
def _read_split_cached(ref: SplitRef, root: str) -> Any:
    return read_split(ref, root)


def split_pairs(key: str) -> tuple[list[Pair], str | None]:
    """(the pairs of local split `key` in row order, None), or ([], why it could not be read)."""
    ref, root = local_splits().get(key), paths.data_root()
    if ref is None or root is None:
        return [], f"split {key!r} is not in the data folder ({root or 'none found'})"
    try:
        return list(_read_split_cached(ref, str(root)).pairs), None
    except (OSError, ValueError) as error:
        return [], str(error)


@st.cache_resource(show_spinner=False, max_entries=8)
def _rows_by_id_cached(ref: SplitRef, root: str) -> dict[str, int]:
    return {pair.id: row for row, pair in enumerate(_read_split_cached(ref, root).pairs)}


def split_rows(key: str) -> dict[str, int]:
    """Pair id → 0-based row of local split `key` (empty when it is not local or cannot be read): prediction
    files and tags name pairs by id (SNLI's 1-based line number, Quora's pair id), the app by row."""
    ref, root = local_splits().get(key), paths.data_root()
    if ref is None or root is None:
        return {}
    try:
        return _rows_by_id_cached(ref, str(root))
    except (OSError, ValueError):
        return {}


def split_size(key: str) -> int | None:
    """Pairs in a local split, or None when it is not local."""
    pairs, error = split_pairs(key)
    return None if error else len(pairs)


def split_choice(models: Sequence[Model], available: Sequence[str]) -> tuple[str | None, dict[str, list[str]]]:
    """(the split a view of `models` starts on among `available`, split key → models trained on it)."""
    protocols = [(m.name, m.protocol) for m in models]
    return default_split(protocols, list(available)), training_splits(protocols)


def describe_split(key: str, trained: dict[str, list[str]]) -> str:
    return split_label(key, trained)


@dataclass(frozen=True)
class ShownPair:
    """The pair as pages show it: text, gold label, and where it is (split and row, pair id, genre)."""

    premise: str
    hypothesis: str
    gold: str | None = None
    split: str | None = None
    row: int | None = None
    id: str | None = None
    genre: str | None = None


def resolve_pair(ref: state.PairRef) -> tuple[ShownPair | None, str | None]:
    """(the pair `ref` names, None), or (None, why there is no such pair: no split, no row)."""
    if not ref.is_row:
        return ShownPair(ref.premise, ref.hypothesis, ref.gold), None
    pairs, error = split_pairs(str(ref.split))
    if error:
        return None, error
    if not 0 <= int(ref.row) < len(pairs):
        return None, f"{ref.split} has rows 0–{len(pairs) - 1}; there is no row {ref.row}"
    chosen = pairs[int(ref.row)]
    return ShownPair(chosen.premise, chosen.hypothesis, chosen.label, ref.split, int(ref.row), chosen.id,
                     chosen.genre), None


def pair_problem(ref: state.PairRef) -> str | None:
    """Why a row pair from a URL cannot be shown, or None (the check `state.begin` runs)."""
    return resolve_pair(ref)[1]


STATE_CHECKS = state.Checks(known_models=known_model_names, pair_problem=pair_problem)
"""What `state.begin` checks a URL against: checkpoint folders and local splits."""


# ---------------------------------------------------------------- one pair read by one model

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
    notices: list[str] = field(default_factory=list)
    """What the user should know about how the pair was read (cut-offs, unknown words)."""

    @property
    def predicted(self) -> str:
        return self.labels[max(range(len(self.probs)), key=self.probs.__getitem__)]


@st.cache_resource(max_entries=256, show_spinner=False)
def _read_pair_cached(name: str, path: str, stamp: float, premise: str, hypothesis: str) -> PairReading:
    from nlivis.inference import predict_pair

    loaded = _load_cached(path, stamp)
    prediction = predict_pair(loaded, premise, hypothesis, trace=True)
    labels = list(loaded.labels)
    return PairReading(name, premise, hypothesis, list(prediction.premise_tokens), list(prediction.hypothesis_tokens),
                       labels, [float(prediction.probabilities[label]) for label in labels], prediction.trace.detach(),
                       list(prediction.notices))


def read_pair(model: Model, premise: str, hypothesis: str) -> tuple[PairReading | None, str | None]:
    """(the model's reading, None) or (None, why it could not read the pair, e.g. an empty sentence)."""
    premise, _ = state.clean_sentence(premise)
    hypothesis, _ = state.clean_sentence(hypothesis)
    try:
        return _read_pair_cached(model.name, model.path, checkpoint_stamp(model.path), premise, hypothesis), None
    except ValueError as error:
        return None, str(error)
    except Exception as error:  # a model failing on one input must not take the page down
        return None, f"{model.name} could not read this pair ({type(error).__name__}: {error})"


# ---------------------------------------------------------------- samples of a split

def _sample(pairs: Sequence[Pair], size: int, seed: int) -> list[Pair]:
    chosen = sorted(random.Random(seed).sample(range(len(pairs)), min(size, len(pairs))))
    return [pairs[i] for i in chosen]


@st.cache_resource(max_entries=8, show_spinner="analysing a sample of the split with spaCy …")
def _analysed_sample_cached(ref: SplitRef, root: str, size: int, seed: int) -> list[Any]:
    return analyse_pairs(_sample(list(_read_split_cached(ref, root).pairs), size, seed), progress=False)


def analysed_sample(key: str, size: int, seed: int = 0) -> tuple[list[Any], str | None]:
    """A fixed random sample (by seed) of `size` pairs of a local split, analysed with spaCy (cached)."""
    ref, root = local_splits().get(key), paths.data_root()
    if ref is None or root is None:
        return [], f"split {key!r} is not in the data folder ({root or 'none found'})"
    try:
        return _analysed_sample_cached(ref, str(root), int(size), int(seed)), None
    except (OSError, ValueError) as error:
        return [], str(error)


@st.cache_resource(max_entries=16, show_spinner=False)
def _gate_statistics_cached(name: str, path: str, stamp: float, ref: SplitRef, root: str, size: int) -> pd.DataFrame:
    from nlivis.analysis.gates import gate_summary

    loaded = _load_cached(path, stamp)
    items = _analysed_sample_cached(ref, root, size, 0)
    featurizer = loaded.featurizer
    batches = [featurizer.encode(items[i:i + 32]) for i in range(0, len(items), 32)]
    return gate_summary(loaded.model, batches, name)


def gate_statistics(model: Model, key: str, size: int) -> tuple[pd.DataFrame, str | None]:
    """Mean and spread of each of the model's gates over the real tokens of a sample of split `key`."""
    ref, root = local_splits().get(key), paths.data_root()
    if ref is None or root is None:
        return pd.DataFrame(), f"split {key!r} is not in the data folder ({root or 'none found'})"
    try:
        return _gate_statistics_cached(model.name, model.path, checkpoint_stamp(model.path), ref, str(root), int(size)), None
    except (OSError, ValueError) as error:
        return pd.DataFrame(), str(error)


# ---------------------------------------------------------------- predictions

def prediction_files(folder: str | Path) -> dict[str, Path]:
    """Split key → predictions file of a checkpoint folder: those written with the checkpoint (e.g.
    "snli_dev"), then the named evaluations of other protocol splits. A recorded split always wins over a
    named evaluation of the same split, so what the checkpoint recorded is what the app states."""
    files = find_prediction_files(folder)
    for evaluation in find_named_evaluations(folder).values():
        key = evaluation.record.get("split_key")
        if key and key not in files:
            files[key] = evaluation.predictions_file
    return files


@st.cache_resource(max_entries=256, show_spinner=False)
def _predictions_cached(path: str, stamp: float) -> list[Prediction]:
    return read_predictions(path)


def checkpoint_predictions(folder: str | Path, key: str) -> tuple[list[Prediction], str | None]:
    """(predictions, None) for one split of a checkpoint folder (its weights are not loaded), or ([], why not)."""
    path = prediction_files(folder).get(key)
    if path is None:
        return [], f"{Path(folder).name} has no predictions for {key}"
    try:
        return _predictions_cached(str(path), path.stat().st_mtime), None
    except (OSError, ValueError) as error:
        return [], str(error)


def variant_records() -> tuple[list[Any], list[str]]:
    """A VariantRecord (nlivis.analysis.ablations) for every complete checkpoint found, and the folders whose
    JSON files could not be read (with why)."""
    return _variant_records_cached(tuple((str(info.path), checkpoint_stamp(info.path)) for info in scan_checkpoints().good))


@st.cache_resource(max_entries=4, show_spinner=False)
def _variant_records_cached(folders: tuple[tuple[str, float], ...]) -> tuple[list[Any], list[str]]:
    from nlivis.analysis.ablations import read_variant

    records, problems = [], []
    for folder, _ in folders:
        try:
            records.append(read_variant(folder))
        except ValueError as error:
            problems.append(str(error))
    return records, problems


# ---------------------------------------------------------------- results computed from the above

@st.cache_resource(max_entries=128, show_spinner=False)
def _memo(kind: str, key: tuple, _compute: Callable[[], Any]) -> Any:
    return _compute()


def memo(kind: str, key: tuple, compute: Callable[[], Any]) -> Any:
    """`compute()` once per (kind, key) in this process — key names the inputs and their versions (folders and
    file modification times) — so a rerun that shows the same numbers does not compute them again (the
    bootstrap intervals of the Ablations page took a second per rerun). Results are shared: never modify them."""
    return _memo(kind, key, compute)


def predictions_stamp(folder: str | Path, key: str) -> float:
    """The modification time of a checkpoint folder's predictions for split `key` (0 when there are none)."""
    path = prediction_files(folder).get(key)
    return _file_stamp(path) if path is not None else 0.0


# ---------------------------------------------------------------- annotation tags

@st.cache_resource(max_entries=4, show_spinner=False)
def _gold_tags_cached(path: str, stamp: float) -> dict[str, frozenset[str]]:
    from nlivis.analysis.tags import read_tag_file

    return read_tag_file(path)


def gold_tags(key: str) -> tuple[dict[str, frozenset[str]], str | None, str | None]:
    """(pair id → gold tags, the file they come from, an error) for local split `key`; ({}, None, None) when
    the split has no published gold tags in the data folder."""
    from nlivis.analysis.tags import TagFileError
    from nlivis.data.protocols import gold_tag_file

    ref, root = local_splits().get(key), paths.data_root()
    if ref is None or root is None:
        return {}, None, None
    path = gold_tag_file(ref, root)
    if path is None:
        return {}, None, None
    try:
        return _gold_tags_cached(str(path), _file_stamp(path)), str(path), None
    except (OSError, TagFileError) as error:
        return {}, str(path), str(error)


@st.cache_resource(max_entries=2, show_spinner=False)
def _taxinli_cached(path: str, stamp: float) -> Any:
    from nlivis.data.taxonomies import read_taxinli

    return read_taxinli(path)


def taxinli() -> tuple[Any | None, str | None]:
    """(TaxiNLI's file under the data folder, read, None), (None, why it cannot be read), or (None, None) when
    absent."""
    from nlivis.data.records import DataFormatError
    from nlivis.data.taxonomies import find_taxinli_file

    root = paths.data_root()
    path = None if root is None else find_taxinli_file(root)
    if path is None:
        return None, None
    try:
        return _taxinli_cached(str(path), _file_stamp(path)), None
    except (OSError, DataFormatError) as error:
        return None, str(error)


def pair_taxonomy(pair_id: str | None, premise: str, hypothesis: str) -> dict | None:
    """What TaxiNLI says about one pair (`breakdown.pair_taxonomy`), or None."""
    from nlivis.analysis.breakdown import pair_taxonomy as find

    taxonomy, _ = taxinli()
    return None if taxonomy is None else find(taxonomy.rows, pair_id, premise, hypothesis)


@dataclass
class TaggedSample:
    """Automatic annotation tags for a sample of a split's pairs (pair id → tags), and the tags the rules
    cannot decide here (tag → why)."""

    tags: dict[str, frozenset[str]]
    unavailable: dict[str, str]
    size: int


ALL_PAIRS = 0
"""`tagged_sample(key, ALL_PAIRS)` tags every pair of the split (kept on disk under the cache root)."""


@st.cache_resource(max_entries=8, show_spinner="tagging pairs (spaCy parse) …")
def _tagged_sample_cached(ref: SplitRef, root: str, size: int, seed: int) -> TaggedSample:
    from nlivis.analysis.tags import cached_tag_pairs, unavailable_tags

    pairs = list(_read_split_cached(ref, root).pairs)
    sample = pairs if size == ALL_PAIRS or size >= len(pairs) else _sample(pairs, size, seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the missing-WordNet warning is shown through `unavailable`
        tags = cached_tag_pairs(sample, cache_dir=cache_root() / "tags")
    return TaggedSample(dict(tags), unavailable_tags(), len(sample))


def tagged_sample(key: str, size: int, seed: int = 0) -> tuple[TaggedSample | None, str | None]:
    """Automatic tags for a fixed random sample of `size` pairs of a local split (ALL_PAIRS: every pair),
    cached in memory and on disk, or (None, why there are none)."""
    ref, root = local_splits().get(key), paths.data_root()
    if ref is None or root is None:
        return None, f"the pairs of {key} are not in the data folder ({root or 'none found'}), so they cannot be tagged"
    try:
        return _tagged_sample_cached(ref, str(root), int(size), int(seed)), None
    except (OSError, ValueError) as error:
        return None, str(error)


# ---------------------------------------------------------------- tokens of a split, as each model reads them

class _NotAnalysedYet(Exception):
    """The split has no cached analyses on this machine yet (not cached: asked again next time)."""



@st.cache_resource(max_entries=8, show_spinner="reading the split's cached analyses …")
def _split_tokens_cached(ref: SplitRef, root: str, analyse: bool) -> dict[str, tuple[list[str], list[str]]]:
    from nlivis.features.cache import AnalysisCache, texts_digest
    from nlivis.features.dataset import analyse_pairs, split_cache_key

    result = _read_split_cached(ref, root)
    pairs = result.pairs
    if analyse:
        items = analyse_pairs(pairs, cache_key=split_cache_key(ref, result), progress=False)
        return {item.pair.id: (list(item.premise.tokens), list(item.hypothesis.tokens)) for item in items}
    rows = AnalysisCache(None).read(split_cache_key(ref, result), texts_digest((p.id, p.premise, p.hypothesis) for p in pairs),
                                    len(pairs))
    if rows is None:
        raise _NotAnalysedYet(str(ref))
    return {pair.id: (list(a.tokens), list(b.tokens)) for pair, (a, b) in zip(pairs, rows)}


def split_tokens(key: str, analyse: bool = False) -> dict[str, tuple[list[str], list[str]]] | None:
    """Pair id → (premise tokens, hypothesis tokens) of split `key` from the feature cache (None when the split
    was never analysed here); `analyse` runs spaCy over it first (once; kept in the feature cache)."""
    ref, root = local_splits().get(key), paths.data_root()
    if ref is None or root is None:
        return None
    try:
        return _split_tokens_cached(ref, str(root), bool(analyse))
    except (_NotAnalysedYet, OSError, ValueError):
        return None


@st.cache_resource(max_entries=16, show_spinner=False)
def _token_counts_cached(name: str, path: str, stamp: float, ref: SplitRef, root: str) -> dict[str, tuple[int, int]]:
    from nlivis.analysis.pair_lists import token_counts

    return token_counts(_split_tokens_cached(ref, root, False), _load_cached(path, stamp).featurizer.vocab)


def token_counts(model: Model, key: str) -> dict[str, tuple[int, int]] | None:
    """Pair id → (tokens, tokens `model` reads as unknown) over split `key`, or None when the split's analyses
    are not in the feature cache."""
    ref, root = local_splits().get(key), paths.data_root()
    if ref is None or root is None:
        return None
    try:
        return _token_counts_cached(model.name, model.path, checkpoint_stamp(model.path), ref, str(root))
    except (_NotAnalysedYet, OSError, ValueError):
        return None


# ---------------------------------------------------------------- token cut-offs

@st.cache_resource(max_entries=64, show_spinner=False)
def _split_truncation_cached(path: str, stamp: float, ref: SplitRef, root: str) -> tuple[str, int]:
    from nlivis.workflows.evaluate import cached_split_truncation

    count = cached_split_truncation(_load_cached(path, stamp).featurizer, ref, root)
    if count is None:
        raise _NotAnalysedYet(str(ref))
    return count.describe(), count.pairs


def split_truncation(model: Model, key: str) -> tuple[bool, str, int]:
    """(known, sentence, pairs cut) for how many pairs of split `key` the model's token cut-offs shorten, from
    the feature cache (known is False when the split was never analysed on this machine)."""
    ref, root = local_splits().get(key), paths.data_root()
    if ref is None or root is None:
        return False, "", 0
    try:
        return (True, *_split_truncation_cached(model.path, checkpoint_stamp(model.path), ref, str(root)))
    except (_NotAnalysedYet, OSError, ValueError):
        return False, "", 0


def sample_truncation(model: Model, items: Sequence[Any]) -> tuple[str, int]:
    """(sentence, pairs cut) for the analysed sample `items`: one pass over token counts, no spaCy run."""
    from nlivis.analysis.evaluation import count_truncated

    count = count_truncated(model.checkpoint.featurizer, items)
    return count.describe(), count.pairs


# ---------------------------------------------------------------- attribution

@st.cache_resource(max_entries=64, show_spinner=False)
def _explained(path: str, stamp: float, premise: str, hypothesis: str, methods: tuple[str, ...],
               target: str | None) -> dict[str, Any]:
    from nlivis.workflows.explain import ExplainOptions
    from nlivis.workflows.explain import explain as explained

    loaded = _load_cached(path, stamp)
    options = ExplainOptions(methods=methods, target=None if target is None else list(loaded.labels).index(target))
    return explained(loaded, premise, hypothesis, options).scores


def explain(model: Model, premise: str, hypothesis: str, methods: Sequence[str],
            target: str | None = None) -> tuple[dict[str, Any] | None, str | None]:
    """({method: TokenScores}, None), or (None, why the model could not explain the pair). `target` is a label
    of the model (None: the predicted class)."""
    if target is not None and target not in model.labels:
        return None, f"{model.name} has no class {target!r} (its classes: {', '.join(model.labels)})"
    try:
        return _explained(model.path, checkpoint_stamp(model.path), premise, hypothesis, tuple(methods), target), None
    except ValueError as error:
        return None, str(error)
    except Exception as error:  # one model failing must not take the page down
        return None, f"{model.name} could not explain this pair ({type(error).__name__}: {error})"


def split_faithfulness(model: Model, items: Sequence[Any], split: str, seed: int, methods: Sequence[str],
                       highlights_file: Path | None, on_method: Callable[[str], None] | None = None) -> dict[str, Any]:
    """`summarize` output (with per-pair distributions) for `items`, every method cached on disk by checkpoint,
    split, sample and method (the same cache and workflow as `python -m nlivis faithfulness`)."""
    from nlivis.workflows.faithfulness import FaithfulnessOptions
    from nlivis.workflows.faithfulness import split_faithfulness as computed

    options = FaithfulnessOptions(sample=None, seed=seed, methods=tuple(methods))
    return computed(model.checkpoint, items, split, options, highlights_file, on_method=on_method,
                    keep_distributions=True).summary


# ---------------------------------------------------------------- challenge files

@st.cache_resource(max_entries=8, show_spinner="reading the challenge file …")
def _read_challenge_cached(files: tuple[str, ...], stamps: tuple[float, ...]) -> Any:
    return read_challenge_files(list(files))


def read_challenge(files: Sequence[Path]) -> tuple[Any | None, str | None]:
    """(challenge set, None) or (None, why it cannot be read: file and line)."""
    try:
        return _read_challenge_cached(tuple(str(p) for p in files), tuple(_file_stamp(p) for p in files)), None
    except (OSError, ValueError) as error:
        return None, str(error)


def earlier_evaluations(models: Sequence[Model]) -> dict[str, list[Path]]:
    """"<description> — model" → the files of each named evaluation of the models whose files are still there
    (named evaluations of recorded splits are left out: those are the splits)."""
    from nlivis.workflows.evaluate import evaluated_files

    return {f"{description} — {model.name}": files
            for model in models for description, files in evaluated_files(model.path).items()}


def challenge_predictions(model: Model, challenge: Any, compute: bool = False) -> tuple[list[Prediction], Any, str | None]:
    """(predictions, the named evaluation they come from, None) of `model` on a challenge set — ([], None, None)
    when it was not evaluated yet and `compute` is False — or ([], None, why it failed)."""
    from nlivis.workflows.evaluate import challenge_predictions as stored_or_computed

    try:
        found, evaluation = stored_or_computed(model.checkpoint, challenge, compute=compute)
    except ValueError as problem:
        return [], None, str(problem)
    return found, evaluation, None


# ---------------------------------------------------------------- projections

def projection(model: Model, key: str, size: int, method: str,
               progress: Callable[[str, float | None], None] | None = None) -> tuple[Any | None, list[Any], str | None]:
    """(projected pairs, the analysed sample, None) of a sample of split `key` by `model` (vectors, predictions
    and the 2-D layout cached on disk under the cache root), or (None, [], why not)."""
    from nlivis.analysis.projection import ProjectionError, pooled_outputs, projected_pairs

    items, error = analysed_sample(key, size)
    if error:
        return None, [], error
    if not items:
        return None, [], f"{key} has no pairs"
    try:
        projected = projected_pairs(model.path, f"{key}-sample{size}", lambda: pooled_outputs(model.checkpoint, items),
                                    method=method, ids=[item.pair.id for item in items], progress=progress)
    except (ProjectionError, ValueError) as problem:
        return None, items, f"{model.name}: {problem}"
    return projected, items, None


def projection_frame(model: Model, split: str, size: int, method: str, colour: str, tag: str | None,
                     compute: bool = True, progress=None) -> tuple[pd.DataFrame | None, str | None]:
    """The projected sample as a table — id, x, y, sentences, gold, prediction, genre, correctness, split, row,
    and `colour` (the value of the chosen colouring) — or (None, why not). Without `compute`, only what is
    cached on disk is used."""
    if not compute and not projection_cached(model, split, size, method):
        return None, f"{model.name}'s {method.upper()} projection of {size} pairs of {split} is not computed yet"
    projected, items, error = projection(model, split, size, method, progress)
    if projected is None:
        return None, error
    ids = [item.pair.id for item in items]
    predicted = [model.labels[i] for i in projected.probabilities.argmax(axis=1)]
    frame = pd.DataFrame({
        "id": [str(i) for i in ids], "x": projected.coordinates[:, 0], "y": projected.coordinates[:, 1],
        "premise": [item.pair.premise for item in items], "hypothesis": [item.pair.hypothesis for item in items],
        "gold": [item.pair.label or "(none)" for item in items], "prediction": predicted,
        "genre": [item.pair.genre or "(none)" for item in items]})
    frame["correctness"] = ["right" if g == p else "wrong" if g != "(none)" else "(no gold)"
                            for g, p in zip(frame["gold"], frame["prediction"])]
    rows = split_rows(split)
    frame["split"], frame["row"] = split, [rows.get(pid, -1) for pid in frame["id"]]
    if colour == "tag":
        tagged, tag_error = tagged_sample(split, size)
        if tagged is None:
            return None, tag_error
        frame["tag"] = [tag if tag and tag in tagged.tags.get(pid, ()) else "other" for pid in frame["id"]]
    frame["colour"] = frame[colour] if colour in frame else ""
    return frame, None


def projection_cached(model: Model, key: str, size: int, method: str) -> bool:
    """Whether this projection is already on disk (no progress bar is needed)."""
    from nlivis.analysis.projection import is_cached

    return is_cached(model.path, f"{key}-sample{size}", method)


# ---------------------------------------------------------------- work done in the background

_BACKGROUND = ThreadPoolExecutor(max_workers=1, thread_name_prefix="nlivis-background")
_JOBS: dict[tuple, Future] = {}
_JOBS_LOCK = threading.Lock()
WARM_UP_ENV = "NLIVIS_WARM_UP"
"""Set to 0 to turn off the background warm-up (the tests do: each starts its own app)."""


def in_background(key: tuple, work: Callable[[], Any]) -> Future:
    """Run `work` once per `key` in this process's one background thread (jobs queue up, so they never compete
    with each other for the two cores, only with the pages); later calls get the same future."""
    with _JOBS_LOCK:
        job = _JOBS.get(key)
        if job is None:
            job = _JOBS[key] = _BACKGROUND.submit(work)
            if len(_JOBS) > 512:  # forget finished jobs; results live in the caches they filled
                for old in [k for k, j in _JOBS.items() if j.done() and k != key][:256]:
                    del _JOBS[old]
        return job


def warm_up() -> None:
    """Once per server process, in the background: import torch and load the default models, spaCy's pipelines
    and WordNet — what the first page a user opens would otherwise wait for (WordNet and the dependency parser
    that the annotation tags need took 25 s on a busy 2-core machine). Pages never wait for it."""
    if os.environ.get(WARM_UP_ENV, "1") == "0":
        return
    # the cached loaders it calls have no script context in that thread: Streamlit would log that at every call
    logging.getLogger("streamlit.runtime.scriptrunner_utils.script_run_context").setLevel(logging.ERROR)
    names = default_model_names(scan_checkpoints().good)
    folders = [folder for folder in map(paths.find_checkpoint_folder, names) if folder is not None]

    def work() -> None:
        for folder in folders:
            load_model(folder)
        from nlivis.features.sentences import analyse_text_pair

        analyse_text_pair(state.DEFAULT_PAIR.premise, state.DEFAULT_PAIR.hypothesis)
        automatic_tags_now(state.DEFAULT_PAIR.premise, state.DEFAULT_PAIR.hypothesis)

    in_background(("warm up",), work)


# ---------------------------------------------------------------- one pair's tags

_TAGS: dict[tuple[str, str], tuple[frozenset[str], dict[str, str]]] = {}
_TAGGER_LOCK = threading.Lock()
"""One pair is parsed at a time: the page's thread and the background thread share spaCy's pipeline."""


def automatic_tags_now(premise: str, hypothesis: str) -> tuple[frozenset[str], dict[str, str]]:
    """(the automatic annotation tags of one pair, tags the rules cannot decide here with why); spaCy's parser
    and WordNet load the first time (many seconds), then a pair takes milliseconds. Kept per pair."""
    from nlivis.analysis.tags import tag_pairs, unavailable_tags

    key = (premise, hypothesis)
    with _TAGGER_LOCK:
        if key in _TAGS:
            return _TAGS[key]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the missing-WordNet warning is returned as `unavailable`
            tags = tag_pairs([Pair(id="shown", premise=premise, hypothesis=hypothesis)])
        if len(_TAGS) > 1024:
            _TAGS.clear()
        _TAGS[key] = (tags["shown"], unavailable_tags())
        return _TAGS[key]


def automatic_tags(premise: str, hypothesis: str) -> tuple[frozenset[str], dict[str, str]] | None:
    """The pair's automatic tags, or None while the tagger (spaCy's parser and WordNet) is still loading: then they
    are computed in the background, and the next run of the page shows them. Once the tagger is loaded, a pair
    takes milliseconds and is tagged on the spot."""
    key = (premise, hypothesis)
    if key in _TAGS or _tagger_loaded():
        try:
            return automatic_tags_now(premise, hypothesis)
        except (OSError, ValueError, RuntimeError):
            return frozenset(), {}
    in_background(("tags",) + key, lambda: automatic_tags_now(premise, hypothesis))
    return None


def _tagger_loaded() -> bool:
    """Whether a pair was tagged in this process (the parser and WordNet are then in memory)."""
    return bool(_TAGS)


# ---------------------------------------------------------------- data maps (training dynamics)

@st.cache_resource(max_entries=16, show_spinner="reading the training dynamics …")
def _data_map_cached(folder: str, stamp: float, thresholds: tuple[float, float, float]) -> Any:
    from nlivis.analysis.datamap import Thresholds, data_map
    from nlivis.store.dynamics import read_dynamics

    return data_map(read_dynamics(folder), Thresholds(*thresholds))


def data_map(name: str, thresholds: tuple[float, float, float]) -> tuple[Any | None, str | None]:
    """(the DataMap of checkpoint `name` under `thresholds` = (ambiguous variability, easy confidence, hard
    confidence), None), or (None, why there is none: no such folder, no dynamics recorded, a damaged file)."""
    from nlivis.store.checkpoints import DYNAMICS_FILE, CheckpointError

    folder = paths.find_checkpoint_folder(name)
    if folder is None:
        return None, f"no checkpoint folder named {name}"
    try:
        return _data_map_cached(str(folder), _file_stamp(folder / DYNAMICS_FILE), tuple(thresholds)), None
    except (CheckpointError, ValueError) as error:
        return None, str(error)


def has_dynamics(name: str) -> bool:
    from nlivis.store.checkpoints import DYNAMICS_FILE

    folder = paths.find_checkpoint_folder(name)
    return folder is not None and (folder / DYNAMICS_FILE).is_file()


def training_lengths(key: str) -> dict[str, int]:
    """Pair id → tokens in premise + hypothesis (whitespace-separated: the shipped SNLI files are tokenised) of
    local split `key`; empty when it is not local."""
    pairs, error = split_pairs(key)
    if error:
        return {}
    return memo("lengths", (key, str(paths.data_root())),
                lambda: {p.id: len(p.premise.split()) + len(p.hypothesis.split()) for p in pairs})


@st.cache_resource(max_entries=4, show_spinner="reading the training split's analyses (spaCy, once per split) …")
def _analysed_split_cached(ref: SplitRef, root: str) -> dict[str, Any]:
    from nlivis.features.dataset import analyse_pairs, split_cache_key

    result = _read_split_cached(ref, root)
    return {item.pair.id: item for item in analyse_pairs(result.pairs, cache_key=split_cache_key(ref, result), progress=False)}


@st.cache_resource(max_entries=32, show_spinner="predicting the listed training pairs …")
def _training_predictions_cached(path: str, stamp: float, ref: SplitRef, root: str, ids: tuple[str, ...]) -> dict[str, str]:
    from nlivis.inference import predict_probabilities

    loaded = _load_cached(path, stamp)
    analysed = _analysed_split_cached(ref, root)  # the split's analyses, as its training run cached them on disk
    items = [analysed[pid] for pid in ids if pid in analysed]
    if not items:
        return {}
    probabilities = predict_probabilities(loaded.model, loaded.featurizer, items, 256, next(loaded.model.parameters()).device)
    labels = list(loaded.labels)
    return {item.pair.id: labels[int(p)] for item, p in zip(items, probabilities.argmax(dim=-1).tolist())}


def training_predictions(name: str, key: str, ids: Sequence[str]) -> tuple[dict[str, str], str | None]:
    """(pair id → the label checkpoint `name` predicts now, None) for the pairs `ids` of local split `key` (the
    model is run on them once per checkpoint state and id set), or ({}, why not)."""
    ref, root = local_splits().get(key), paths.data_root()
    if ref is None or root is None:
        return {}, f"split {key!r} is not in the data folder ({root or 'none found'})"
    folder = paths.find_checkpoint_folder(name)
    if folder is None:
        return {}, f"no checkpoint folder named {name}"
    try:
        return _training_predictions_cached(str(folder), checkpoint_stamp(folder), ref, str(root), tuple(sorted(ids))), None
    except Exception as error:  # a model failing must not take the page down
        return {}, f"{name} could not predict these pairs ({type(error).__name__}: {error})"


# ---------------------------------------------------------------- edits of one pair, behavioural tests

def _checkpoints_key(models: Sequence[Model]) -> tuple[tuple[str, str, float], ...]:
    """(name, folder, stamp) per model: what an edit run or a probe run of these models is keyed by."""
    return tuple((m.name, m.path, checkpoint_stamp(m.path)) for m in models)


def _renamed(run: Any, names: Sequence[str]) -> Any:
    """An `EditRun` whose per-model dicts are keyed by the app's model names (the folder names a URL carries)."""
    from dataclasses import replace

    new = dict(zip(run.names, names))
    outcomes = [replace(o, probabilities={new[k]: v for k, v in o.probabilities.items()},
                        flipped={new[k]: v for k, v in o.flipped.items()},
                        meets_expectation={new[k]: v for k, v in o.meets_expectation.items()}) for o in run.outcomes]
    return replace(run, names=list(names), original={new[k]: v for k, v in run.original.items()}, outcomes=outcomes)


@st.cache_resource(max_entries=32, show_spinner=False)
def _edit_run_cached(key: tuple[tuple[str, str, float], ...], premise: str, hypothesis: str, label: str | None,
                     own: tuple[str, str] | None) -> Any:
    from nlivis.analysis.edit_runs import run_edits
    from nlivis.analysis.edits import user_edit

    loaded = [_load_cached(path, stamp) for _, path, stamp in key]
    with _TAGGER_LOCK:  # spaCy's parser is shared with the background tagger
        if own is None:
            run = run_edits(loaded, premise, hypothesis, label)
        else:
            run = run_edits(loaded, premise, hypothesis, label, kinds=(),
                            extra=[user_edit(premise, hypothesis, *own)])
    return _renamed(run, [name for name, _, _ in key])


def edit_run(models: Sequence[Model], premise: str, hypothesis: str, label: str | None,
             own: tuple[str, str] | None = None) -> tuple[Any | None, str | None]:
    """(`EditRun`: every proposed edit of the pair — or, with `own`, only the user's own edited pair — predicted
    by every model in batches, None) or (None, why not: models of two tasks, a label the task does not have …).
    `label` is the pair's gold label (the edits' expectations follow from it), or None."""
    if not models:
        return None, "no model is loaded"
    try:
        return _edit_run_cached(_checkpoints_key(models), premise, hypothesis, label, own), None
    except ValueError as error:
        return None, str(error)
    except Exception as error:  # WordNet or spaCy missing, a model failing: a message, not a broken page
        return None, f"the edits could not be computed ({type(error).__name__}: {error})"


_PROBE_RESULTS: dict[tuple, dict] = {}
_PROBE_LOCK = threading.Lock()
PROBE_SEED = 1
"""The suite's seed in the app (the CLI's default), so the app's table is `probe … --seed 1`'s."""


def probe_key(models: Sequence[Model], per_test: int) -> tuple:
    return _checkpoints_key(models), int(per_test), PROBE_SEED, str(paths.data_root())


def probe_results(models: Sequence[Model], per_test: int, compute: bool = False,
                  progress: Callable[[str], None] | None = None) -> tuple[dict | None, str | None]:
    """(the `probe --json` record of the behavioural suite of the models' task, run on every model, None) —
    kept in this server process per models, cases per test and data folder — or (None, why not: not run yet
    when `compute` is False, models of two tasks, a failure). The suite itself is cached on disk."""
    key = probe_key(models, per_test)
    if key in _PROBE_RESULTS:
        return _PROBE_RESULTS[key], None
    if not compute:
        return None, "the suite has not been run on these models in this server yet"
    from nlivis.analysis.edit_runs import protocol_notes, task_of
    from nlivis.analysis.probes import ProbeResult, load_suite, probe_record, run_probes, training_overlap

    say = progress or (lambda message: None)
    loaded = [m.checkpoint for m in models]
    names = [m.name for m in models]
    root = paths.data_root()
    try:
        suite = task_of(loaded)
        with _PROBE_LOCK, _TAGGER_LOCK:  # one suite at a time; spaCy's parser is shared with the tagger
            if key in _PROBE_RESULTS:
                return _PROBE_RESULTS[key], None
            tests = load_suite(suite, root, per_test, PROBE_SEED, None, say)
            outcomes = run_probes(loaded, tests, names, None, say)
            overlap = {name: training_overlap(item, tests, root) for name, item in zip(names, loaded)}
            record = probe_record(ProbeResult(tests, tuple(loaded[0].labels), names, outcomes, overlap), suite,
                                  PROBE_SEED, per_test, protocol_notes(loaded, names))
            if len(_PROBE_RESULTS) > 16:
                _PROBE_RESULTS.clear()
            _PROBE_RESULTS[key] = record
        return record, None
    except ValueError as error:
        return None, str(error)
    except Exception as error:  # WordNet or spaCy missing, a dev file unreadable: a message, not a broken page
        return None, f"the suite could not be run ({type(error).__name__}: {error})"
