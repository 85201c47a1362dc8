"""Cached: the analyses of chosen models — a pair's attributions, data maps of training dynamics and the labels
checkpoints predict for listed training pairs, edit runs of one pair and the behavioural suite (see
`nlivis.app.cache` for the keying). The runs themselves are `nlivis.workflows`'.
"""
from __future__ import annotations

import hashlib
from functools import partial
from typing import TYPE_CHECKING, Any, Callable, Sequence

import streamlit as st

from nlivis.analysis.datamap import DataMap, Thresholds
from nlivis.analysis.edit_runs import EditOptions, EditRun
from nlivis.app import background, paths
from nlivis.app.cache import Model, NotReady, load_cached, local_split, memo, not_local, read_split_cached, split_pairs
from nlivis.app.cache.samples import analysed_sample
from nlivis.app.cache.suites import probe_options
from nlivis.data.protocols import SplitRef
from nlivis.features.dataset import analyse_pairs, split_cache_key
from nlivis.store.checkpoints import DYNAMICS_FILE, CheckpointError
from nlivis.app.cache.run_memo import folder_stamp_in_run, once_per_run
from nlivis.store.files import file_stamp
from nlivis.workflows.datamap import (AugmentedRun, RemadePairs, augmented_pairs, augmented_run, pair_lengths,
                                      predicted_labels, read_data_map)
from nlivis.workflows.protocol import ANALYSES, SUBJECTS, run_analysis
from nlivis.workflows.subjects import Checkpoints, SplitSample

if TYPE_CHECKING:
    from nlivis.workflows.probes import ProbeRun


# ---------------------------------------------------------------- attribution

@st.cache_resource(max_entries=64, show_spinner=False)
def _explained(path: str, stamp: float, premise: str, hypothesis: str, methods: tuple[str, ...],
               target: str | None) -> dict[str, Any]:
    from nlivis.workflows.explain import ExplainOptions, explain_kept

    loaded = load_cached(path, stamp)
    options = ExplainOptions(methods=methods, target=None if target is None else list(loaded.labels).index(target))
    return explain_kept(loaded, premise, hypothesis, options).scores


def explain(model: Model, premise: str, hypothesis: str, methods: Sequence[str],
            target: str | None = None) -> tuple[dict[str, Any] | None, str | None]:
    """({method: TokenScores}, None), or (None, why the model could not explain the pair). `target` is a label
    of the model (None: the predicted class)."""
    if target is not None and target not in model.labels:
        return None, f"{model.name} has no class {target!r} (its classes: {', '.join(model.labels)})"
    try:
        return _explained(model.path, folder_stamp_in_run(model.path), premise, hypothesis, tuple(methods), target), None
    except ValueError as error:
        return None, str(error)
    except Exception as error:  # one model failing must not take the page down
        return None, f"{model.name} could not explain this pair ({type(error).__name__}: {error})"


# ---------------------------------------------------------------- data maps (training dynamics)

@st.cache_resource(max_entries=16, show_spinner="reading the training dynamics …")
def _data_map_cached(folder: str, stamp: float, thresholds: tuple[float, float, float]) -> DataMap:
    return read_data_map(folder, Thresholds(*thresholds))


def data_map(name: str, thresholds: tuple[float, float, float]) -> tuple[DataMap | None, str | None]:
    """(the DataMap of checkpoint `name` under `thresholds` = (ambiguous variability, easy confidence, hard
    confidence), None), or (None, why there is none: no such folder, no dynamics recorded, a damaged file)."""
    state = data_map_state(name)
    if state is None:
        return None, f"no checkpoint folder named {name}"
    try:
        return _data_map_cached(*state, tuple(thresholds)), None
    except (CheckpointError, ValueError) as error:
        return None, str(error)


def data_map_state(name: str) -> tuple[str, float] | None:
    """(folder, recorded dynamics' modification time) of checkpoint `name`, or None without a folder: what a view
    drawn from its data map is kept under (`memo`), so a retrained checkpoint's map is drawn again. Read once per
    page run: the Data map asks for it per map, per drawing and per list."""
    def read() -> tuple[str, float] | None:
        folder = paths.find_checkpoint_folder(name)
        return None if folder is None else (str(folder), file_stamp(folder / DYNAMICS_FILE))

    return once_per_run(("data map state", name), read)


def checkpoint_state(name: str) -> tuple[str, float] | None:
    """(folder, latest modification time of its files) of checkpoint `name`, or None without a folder: what
    anything a checkpoint's weights or predictions decide is kept under."""
    folder = paths.find_checkpoint_folder(name)
    return None if folder is None else (str(folder), folder_stamp_in_run(folder))


def with_dynamics(names: Sequence[str]) -> list[str]:
    """The checkpoints of `names` whose folder holds recorded training dynamics (the roots read once for all)."""
    roots = paths.checkpoint_roots()
    folders = [paths.find_checkpoint_folder(name, roots) for name in names]
    return [name for name, folder in zip(names, folders) if folder is not None and (folder / DYNAMICS_FILE).is_file()]


def training_lengths(key: str) -> dict[str, int]:
    """Pair id → tokens in premise + hypothesis of local split `key` (`pair_lengths`); empty when it is not local."""
    pairs, error = split_pairs(key)
    return {} if error else memo("lengths", (key, str(paths.data_root())), lambda: pair_lengths(pairs))


@st.cache_resource(max_entries=4, show_spinner="reading the training split's analyses (spaCy, once per split) …")
def _analysed_split_cached(ref: SplitRef, root: str) -> dict[str, Any]:
    result = read_split_cached(ref, root)
    return {item.pair.id: item for item in analyse_pairs(result.pairs, cache_key=split_cache_key(ref, result), progress=False)}


@st.cache_resource(max_entries=32, show_spinner="predicting the listed training pairs …")
def _training_predictions_cached(path: str, stamp: float, ref: SplitRef, root: str, ids: tuple[str, ...]) -> dict[str, str]:
    analysed = _analysed_split_cached(ref, root)  # the split's analyses, as its training run cached them on disk
    return predicted_labels(load_cached(path, stamp), [analysed[pid] for pid in ids if pid in analysed])


def training_predictions(name: str, key: str, ids: Sequence[str]) -> tuple[dict[str, str], str | None]:
    """(pair id → the label checkpoint `name` predicts now, None) for the pairs `ids` of local split `key` (the
    model is run on them once per checkpoint state and id set), or ({}, why not)."""
    local = local_split(key)
    if local is None:
        return {}, not_local(key)
    state = checkpoint_state(name)
    if state is None:
        return {}, f"no checkpoint folder named {name}"
    try:
        return _training_predictions_cached(*state, *local, tuple(sorted(ids))), None
    except Exception as error:  # a model failing must not take the page down
        return {}, f"{name} could not predict these pairs ({type(error).__name__}: {error})"


@st.cache_resource(max_entries=4, show_spinner="reading the run's training pairs …")
def _augmented_run_cached(folder: str, stamp: float, data_root: str) -> AugmentedRun | None:
    return augmented_run(folder, data_root)


@st.cache_resource(max_entries=4, show_spinner="making the augmented pairs' edited text again …")
def _augmented_texts_cached(folder: str, stamp: float, data_root: str) -> RemadePairs | None:
    run = _augmented_run_cached(folder, stamp, data_root)
    return augmented_pairs(run) if run is not None else None


def augmentation_of(name: str) -> tuple[tuple[str, float, str] | None, AugmentedRun | None]:
    """(the cache key of checkpoint `name`'s augmentation, the augmentation), or (None, None) without a folder,
    data or augmentation (or when its training pairs cannot be read)."""
    state, root = checkpoint_state(name), paths.data_root()
    if state is None or root is None:
        return None, None
    key = (*state, str(root))
    try:
        return key, _augmented_run_cached(*key)
    except (OSError, ValueError, KeyError, TypeError):
        return None, None


def augmented_texts(name: str) -> RemadePairs | None:
    """Augmented pair id → its edited pair for checkpoint `name` (those that are the run's own, with a note saying
    how far that could be checked: `workflows.datamap.augmented_pairs`), when its candidate edits are in the cache
    (then making them again takes seconds); None otherwise. The map's chart and its lists open augmented pairs
    with it."""
    key, run = augmentation_of(name)
    if run is None or not run.cached:
        return None
    return _augmented_texts_cached(*key)


def make_augmented_texts(key: tuple[str, float, str]) -> None:
    """Make the edited text of the augmentation `key` names (`augmentation_of`), its candidate edits computed and
    cached on the way (minutes: the edit engine parses every training pair), and forget the run read before."""
    _augmented_texts_cached(*key)
    _augmented_run_cached.clear()


# ---------------------------------------------------------------- edits of one pair, behavioural tests

def _checkpoints_key(models: Sequence[Model]) -> tuple[tuple[str, str, float], ...]:
    """(name, folder, stamp) per model: what an edit run or a probe run of these models is keyed by."""
    return tuple((m.name, m.path, folder_stamp_in_run(m.path)) for m in models)


RUNS_KEPT = 48
"""Analysis runs kept in this server (the oldest goes first): a page's edit runs and suites, any analysis's."""

Sample = tuple[str, int]
"""(split key, pairs): the fixed sample of a local split (`samples.analysed_sample`, seed 0) a run of an analysis
of a split reads."""


@st.cache_resource(show_spinner=False)
def _runs() -> dict[tuple[str, tuple[tuple[str, str, float], ...], Sample | None, str], Any]:
    """(analysis, checkpoints key, sample, `options_digest`) → result: every run of a registered analysis in this
    server, which the one list component (`lists.analysis_list`) reads back from a link."""
    return {}


def options_digest(options: Any) -> str:
    """A short, stable name of an options dataclass (its repr's sha256): what a list link carries as `run`."""
    return hashlib.sha256(repr(options).encode()).hexdigest()[:16]


def _subject(name: str, models: Sequence[Model], sample: Sample | None) -> Any:
    """What analysis `name` runs on in the app: the models (subject "checkpoints"), or the one model and the
    analysed `sample` (subject "split"); ValueError for a subject the app does not run an analysis on."""
    spec = ANALYSES[name]
    loaded = [m.checkpoint for m in models]
    if spec.subject == "checkpoints":
        return Checkpoints(loaded, [m.name for m in models])
    if spec.subject == "split" and sample is not None and len(models) == 1:
        items, error = analysed_sample(*sample)
        if error:
            raise ValueError(error)
        root = paths.data_root()
        return SplitSample(loaded[0], items, sample[0], None if root is None else str(root))
    raise ValueError(f"{name} runs on {SUBJECTS[spec.subject]}: the app runs an analysis on checkpoints, or on one "
                     "checkpoint and a split's sample")


def analysis_run(name: str, models: Sequence[Model], options: Any, sample: Sample | None = None,
                 compute: bool = True, progress: Callable[[str], None] | None = None) -> Any:
    """Registered analysis `name` of `models` (with `sample` for an analysis of a split) with `options`: kept from
    an earlier run in this server, else run now (under the tagger's lock: spaCy's parser is shared with the
    background tagger) — or `NotReady` when `compute` is False."""
    key = (name, _checkpoints_key(models), sample, options_digest(options))
    runs = _runs()
    if key in runs:
        return runs[key]
    if not compute:
        raise NotReady
    subject = _subject(name, models, sample)
    with background.TAGGER_LOCK:
        result = run_analysis(name, subject, options, progress or (lambda message: None))
    runs[key] = result
    while len(runs) > RUNS_KEPT:
        runs.pop(next(iter(runs)))
    return result


def stored_run(name: str, models: Sequence[Model], digest: str, sample: Sample | None = None) -> Any | None:
    """The run of analysis `name` on `models` (and `sample`) whose options have `digest`, if this server has it."""
    return _runs().get((name, _checkpoints_key(models), sample, digest))


def edit_run(models: Sequence[Model], premise: str, hypothesis: str, label: str | None,
             own: tuple[str, str] | None = None) -> tuple[EditRun | None, str | None]:
    """(`EditRun`: every proposed edit of the pair — or, with `own`, only the user's own edited pair — predicted
    by every model in batches, None) or (None, why not: models of two tasks, a label the task does not have …).
    `label` is the pair's gold label (the edits' expectations follow from it), or None."""
    if not models:
        return None, "no model is loaded"
    try:
        return analysis_run("edits", models, EditOptions(premise, hypothesis, label, own=own)), None
    except ValueError as error:
        return None, str(error)
    except Exception as error:  # WordNet or spaCy missing, a model failing: a message, not a broken page
        return None, f"the edits could not be computed ({type(error).__name__}: {error})"


def probe_results(models: Sequence[Model], per_test: int, compute: bool = False,
                  progress: Callable[[str], None] | None = None) -> tuple[ProbeRun | None, str | None]:
    """(the behavioural suite of the models' task run on every model, None) — kept in this server process per
    models, cases per test and data folder — or (None, why not: not run yet when `compute` is False, models of
    two tasks, a failure). The suite itself is cached on disk; `progress` hears each step of a run."""
    try:
        options = probe_options(models, per_test)
        if not compute:
            return analysis_run("probes", models, options, compute=False), None
        work = partial(analysis_run, "probes", models, options, None, True)  # the worker's progress comes last
        return background.reporting(work, progress or (lambda message: None)), None
    except NotReady:
        return None, "the suite has not been run on these models in this server yet"
    except ValueError as error:
        return None, str(error)
    except Exception as error:  # WordNet or spaCy missing, a dev file unreadable: a message, not a broken page
        return None, f"the suite could not be run ({type(error).__name__}: {error})"
