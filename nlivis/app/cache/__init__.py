"""The app's cached layer: typed `st.cache_resource` wrappers over what `nlivis` reads and computes — this module holds
checkpoints and the loaded models, local dataset splits and the pair a page shows, one pair read by a model (kept on
disk too) and stored predictions; `cache.challenge` challenge files and predictions on them; `cache.models` the
chosen models as a page gets them (loaded, or described by their config.json); `cache.samples` what is computed over
a split's pairs (samples analysed with spaCy, gate statistics, annotation tags, tokens and cut-offs, projections,
faithfulness), `cache.analyses` the analyses of chosen models (attributions, data maps, edit runs, behavioural
suites), `cache.suites` the behavioural suite built ahead by the warm-up, and `cache.figures` the figures a page
shows again at every rerun (a pair's overview, gate strips and alignments, a predictions file's confusion matrix);
`cache.run_memo` what one run of a page reads once (the checkpoint folders' stamps).

Everything is cached in the server process (`st.cache_resource`, never pickled), keyed by the folder or file and its
modification time, so a retrained checkpoint or a changed file is read again. Functions return (value, None) or
(empty, why not), so a component shows a message instead of failing. The work itself is below: use cases in
`nlivis.workflows` (checkpoint scans, a pair's reading, samples, edit runs, behavioural suites, projections, data
maps), reading in `nlivis.data` and `nlivis.store`; work done off the page's thread (warm-up, a pair's automatic tags,
the tagger lock) is `app.background`. Modules that import torch are imported inside the functions that need them: Home
lists checkpoints without torch (a cold start then takes about a second instead of three).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

import streamlit as st

from nlivis.analysis.ablations import read_variants
from nlivis.analysis.breakdown import confusion_matrix, per_label_scores
from nlivis.app import paths, state
from nlivis.app.cache.run_memo import folder_stamp_in_run, once_per_run
from nlivis.data import protocols
from nlivis.data.protocols import SplitRef, read_split
from nlivis.data.records import Pair
from nlivis.data.split_choice import default_split, training_splits
from nlivis.features.settings import DescribedCheckpoint
from nlivis.store.checkpoints import CheckpointInfo
from nlivis.store.evaluations import prediction_files
from nlivis.store.files import file_stamp, folder_stamp, subfolders_stamp
from nlivis.store.predictions import Prediction, predictions_frame, read_predictions
from nlivis.workflows import checkpoints, reading
from nlivis.workflows.reading import PairReading

if TYPE_CHECKING:
    from nlivis.inference import LoadedCheckpoint


class NotReady(Exception):
    """What a cached function raises for a result that is not there yet (a split never analysed on this machine,
    a suite not run in this server): an exception is not cached, so the next call asks again."""


# ---------------------------------------------------------------- checkpoints and models

@st.cache_resource(max_entries=16, show_spinner=False)
def _scan_root_cached(root: str, stamp: str) -> tuple[list[CheckpointInfo], list[tuple[str, str]]]:
    return checkpoints.scan_root(Path(root))


def roots_stamps(roots: Sequence[Path]) -> dict[str, tuple[tuple[str, float], ...]]:
    """Each root (as a string) → `subfolders_stamp` of it: every checkpoint folder's name and `folder_stamp`, read
    once per page run (Ablations scanned the folders four times a run: 60 folders, ~5,000 stat calls)."""
    names = tuple(str(Path(root)) for root in roots)
    return once_per_run(("roots stamps", names), lambda: {name: subfolders_stamp(name) for name in names})


def scan_checkpoints(roots: Sequence[Path] | None = None) -> checkpoints.FoundCheckpoints:
    """`workflows.checkpoints.scan_checkpoints` of the roots (default: `paths.checkpoint_roots()`), each root's
    scan cached until a checkpoint folder in it changes (its stamp as one string: Streamlit hashes a tuple by item)."""
    roots = list(roots) if roots is not None else paths.checkpoint_roots()
    stamps = roots_stamps(roots)
    return checkpoints.scan_checkpoints(roots, lambda root: _scan_root_cached(str(root), repr(stamps[str(root)])))


def default_model_folders() -> list[Path]:
    """The checkpoint folders of the default models (what the background warm-up loads)."""
    names = checkpoints.default_model_names(scan_checkpoints().good)
    return [folder for folder in map(paths.find_checkpoint_folder, names) if folder is not None]


@st.cache_resource(show_spinner="loading checkpoint …", max_entries=32)
def load_cached(path: str, stamp: float) -> LoadedCheckpoint:
    """The checkpoint in folder `path` loaded in eval mode, once per `stamp` (`folder_stamp`): the one loader
    every cached function that runs a model shares."""
    from nlivis.inference import load_checkpoint

    loaded = load_checkpoint(Path(path))
    loaded.model.eval()
    return loaded


def load_model(path: str | Path) -> tuple[LoadedCheckpoint | None, str | None]:
    """(LoadedCheckpoint, None) or (None, the reason it could not load). Loads once per process and folder state."""
    path = Path(path)
    try:
        return load_cached(str(path), folder_stamp_in_run(path)), None
    except Exception as error:  # a broken folder must show as a message, whatever the failure
        return None, f"{path}: {error}"


@dataclass(frozen=True)
class Model:
    """A chosen checkpoint as every page shows it: its folder name (the one short label, also its name in
    URLs), its colour (the same on every page), what its config.json says (`described`: family, protocol, labels,
    feature settings) and the checkpoint loaded, where the page loaded it."""

    name: str
    path: str
    checkpoint: Any
    """The `LoadedCheckpoint`, or None where the page needs only what config.json says (`cache.models`)."""
    colour: str
    described: DescribedCheckpoint | None = None
    """Given where the checkpoint is not loaded; a loaded checkpoint's own description otherwise."""
    declared: frozenset[type] | None = None
    """The trace entry types of a checkpoint not loaded, read once when it was chosen (`declared_types`): a view
    asks for them many times a run, and each read stamped the checkpoint's folder (a listing and a stat per file,
    ~10 ms on a loaded disk; a quarter of a warm Pair explorer run)."""

    def __post_init__(self) -> None:
        if self.described is None:
            object.__setattr__(self, "described", self.checkpoint.described)

    @property
    def family(self) -> str:
        return str(self.described.info.model)

    @property
    def protocol(self) -> str | None:
        return self.described.info.protocol

    @property
    def labels(self) -> list[str]:
        return list(self.described.labels)

    @property
    def trace_types(self) -> frozenset[type]:
        """The trace entry types this model emits, as configured (`model.trace_types()`): what views can draw —
        for a checkpoint not loaded, as kept on disk when it was (`declared_types`)."""
        if self.checkpoint is not None:
            return frozenset(self.checkpoint.model.trace_types())
        return self.declared if self.declared is not None else declared_types(self.path)


@st.cache_resource(max_entries=64, show_spinner=False)
def _declared_types_cached(path: str, stamp: float) -> frozenset[type]:
    return reading.declared_types(lambda: load_cached(path, stamp), path)


def declared_types(path: str | Path) -> frozenset[type]:
    """`workflows.reading.declared_types` of the checkpoint folder, once per folder state: read from disk without
    torch when kept, else from the checkpoint loaded."""
    return _declared_types_cached(str(path), folder_stamp_in_run(path))


def chosen_model_names() -> list[str]:
    """The checkpoints chosen to load (state's model names), without loading them; a session that never chose
    gets the default models (`workflows.checkpoints.default_model_names`)."""
    if not state.models_chosen():
        state.set_model_names(checkpoints.default_model_names(scan_checkpoints().good))
    return state.model_names()


def known_model_names(names: list[str]) -> tuple[list[str], list[str]]:
    """(names of checkpoint folders that exist, names that do not): the URL check for `state.begin`."""
    found = [name for name in names if paths.find_checkpoint_folder(name) is not None]
    return found, [name for name in names if name not in found]


# ---------------------------------------------------------------- data splits

def local_splits() -> dict[str, SplitRef]:
    """Split key (e.g. "snli_dev") → SplitRef for every split of the reduced protocols found under the data
    root; empty when there is no data folder."""
    root = paths.data_root()
    return {} if root is None else _local_splits_cached(str(root), file_stamp(root))


@st.cache_resource(max_entries=4, show_spinner=False)
def _local_splits_cached(root: str, stamp: float) -> dict[str, SplitRef]:
    return protocols.local_splits(root)


def local_split(key: str) -> tuple[SplitRef, str] | None:
    """(SplitRef, data root) of local split `key`, or None when it is not in the data folder."""
    ref, root = local_splits().get(key), paths.data_root()
    return None if ref is None or root is None else (ref, str(root))


def not_local(key: str) -> str:
    """Why split `key` cannot be read: it is not in the data folder (or there is none)."""
    return f"split {key!r} is not in the data folder ({paths.data_root() or 'none found'})"


@st.cache_resource(show_spinner="reading the split …", max_entries=8)
def read_split_cached(ref: SplitRef, root: str) -> Any:
    """A local split as `read_split` reads it, once per split and data root."""
    return read_split(ref, root)


def split_pairs(key: str) -> tuple[list[Pair], str | None]:
    """(the pairs of local split `key` in row order, None), or ([], why it could not be read)."""
    local = local_split(key)
    if local is None:
        return [], not_local(key)
    try:
        return list(read_split_cached(*local).pairs), None
    except (OSError, ValueError) as error:
        return [], str(error)


@st.cache_resource(show_spinner=False, max_entries=8)
def _rows_by_id_cached(ref: SplitRef, root: str) -> dict[str, int]:
    return {pair.id: row for row, pair in enumerate(read_split_cached(ref, root).pairs)}


def split_rows(key: str) -> dict[str, int]:
    """Pair id → 0-based row of local split `key` (empty when it is not local or cannot be read): prediction
    files and tags name pairs by id (SNLI's 1-based line number, Quora's pair id), the app by row."""
    local = local_split(key)
    try:
        return {} if local is None else _rows_by_id_cached(*local)
    except (OSError, ValueError):
        return {}


def split_size(key: str) -> int | None:
    """Pairs in a local split, or None when it is not local."""
    pairs, error = split_pairs(key)
    return None if error else len(pairs)


def split_choice(models: Sequence[Model], available: Sequence[str]) -> tuple[str | None, dict[str, list[str]]]:
    """(the split a view of `models` starts on among `available`, split key → models trained on it)."""
    trained_on = [(m.name, m.protocol) for m in models]
    return default_split(trained_on, list(available)), training_splits(trained_on)


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


STATE_CHECKS = state.Checks(known_models=known_model_names, pair_problem=lambda ref: resolve_pair(ref)[1])
"""What `state.begin` checks a URL against: checkpoint folders, and whether a row pair from a URL can be shown."""


# ---------------------------------------------------------------- one pair read by one model

@st.cache_resource(max_entries=256, show_spinner=False)
def read_pair_cached(name: str, path: str, stamp: float, premise: str, hypothesis: str) -> PairReading:
    """The model's reading of a cleaned pair, kept per model folder state (`read_pair` and `cache.figures`) and on
    disk (`workflows.reading.read_pair_kept`): a pair read before, such as the Pair explorer's default pair after a
    launch, is read back without loading the checkpoint or importing torch."""
    return reading.read_pair_kept(lambda: load_cached(path, stamp), path, name, premise, hypothesis)


def read_pair(model: Model, premise: str, hypothesis: str) -> tuple[PairReading | None, str | None]:
    """(the model's reading, None) or (None, why it could not read the pair, e.g. an empty sentence)."""
    premise, _ = state.clean_sentence(premise)
    hypothesis, _ = state.clean_sentence(hypothesis)
    try:
        return read_pair_cached(model.name, model.path, folder_stamp_in_run(model.path), premise, hypothesis), None
    except ValueError as error:
        return None, str(error)
    except Exception as error:  # a model failing on one input must not take the page down
        return None, f"{model.name} could not read this pair ({type(error).__name__}: {error})"


# ---------------------------------------------------------------- predictions

@st.cache_resource(max_entries=256, show_spinner=False)
def _predictions_cached(path: str, stamp: float) -> list[Prediction]:
    return read_predictions(path)


def checkpoint_predictions(folder: str | Path, key: str) -> tuple[list[Prediction], str | None]:
    """(predictions, None) for one split of a checkpoint folder (its weights are not loaded), or ([], why not):
    what it recorded with the checkpoint, else a named evaluation of that split (`store.evaluations.prediction_files`)."""
    path = prediction_files(folder).get(key)
    if path is None:
        return [], f"{Path(folder).name} has no predictions for {key}"
    try:
        return _predictions_cached(str(path), path.stat().st_mtime), None
    except (OSError, ValueError) as error:
        return [], str(error)


@dataclass(frozen=True)
class SplitScores:
    """One checkpoint's recorded predictions of one split as Error analysis's first tab shows them: the table
    (`store.predictions.predictions_frame`), its confusion matrix and per-label scores (None, with `problem`, when
    a label is not among the model's), and the file they come from. Shared between runs and sessions: never
    modify them."""

    path: str
    stamp: float
    labels: tuple[str, ...]
    table: Any
    matrix: Any | None
    per_label: Any | None
    problem: str | None


@st.cache_resource(max_entries=256, show_spinner=False)
def scores_cached(path: str, stamp: float, labels: tuple[str, ...]) -> SplitScores:
    """A predictions file's scores, kept per file state (`split_scores` and `cache.figures`)."""
    table = predictions_frame(_predictions_cached(path, stamp))
    try:
        return SplitScores(path, stamp, labels, table, confusion_matrix(table, labels),
                           per_label_scores(table, labels).round(3), None)
    except ValueError as error:
        return SplitScores(path, stamp, labels, table, None, None, str(error))


def split_scores(folder: str | Path, key: str, labels: Sequence[str]) -> tuple[SplitScores | None, str | None]:
    """(SplitScores, None) of a checkpoint folder's predictions for split `key`, computed once per file state
    (the table, matrix and scores took ~0.3 s of CPU of every Error analysis run for five models), or (None,
    why not), as `checkpoint_predictions`."""
    path = prediction_files(folder).get(key)
    if path is None:
        return None, f"{Path(folder).name} has no predictions for {key}"
    try:
        return scores_cached(str(path), path.stat().st_mtime, tuple(labels)), None
    except (OSError, ValueError) as error:
        return None, str(error)


def predictions_stamp(folder: str | Path, key: str) -> float:
    """The modification time of a checkpoint folder's predictions for split `key` (0 when there are none)."""
    path = prediction_files(folder).get(key)
    return file_stamp(path) if path is not None else 0.0


def variant_records() -> tuple[list[Any], list[str]]:
    """A VariantRecord (nlivis.analysis.ablations) for every complete checkpoint found, and the folders whose
    JSON files could not be read (with why), read once per page run (Ablations asks for them twice in a run)."""
    return once_per_run(("variant records",), _current_variant_records)


def _current_variant_records() -> tuple[list[Any], list[str]]:
    roots = paths.checkpoint_roots()
    stamps = {str(Path(root) / name): stamp for root, folders in roots_stamps(roots).items() for name, stamp in folders}
    folders = tuple((str(info.path), stamps.get(str(info.path)) or folder_stamp_in_run(info.path))
                    for info in scan_checkpoints(roots).good)
    return _variant_records_cached(repr(folders), tuple(folder for folder, _ in folders))


@st.cache_resource(max_entries=4, show_spinner=False)
def _variant_records_cached(stamps: str, _folders: tuple[str, ...]) -> tuple[list[Any], list[str]]:
    return read_variants(list(_folders))


@st.cache_resource(max_entries=128, show_spinner=False)
def _memo(kind: str, key: tuple, _compute: Callable[[], Any]) -> Any:
    return _compute()


def memo(kind: str, key: tuple, compute: Callable[[], Any]) -> Any:
    """`compute()` once per (kind, key) in this process — key names the inputs and their versions (folders and
    file modification times) — so a rerun that shows the same numbers does not compute them again (the
    bootstrap intervals of the Ablations page took a second per rerun). Results are shared: never modify them."""
    return _memo(kind, key, compute)

