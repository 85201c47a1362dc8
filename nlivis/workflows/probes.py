"""Behavioural test suites run on loaded checkpoints (`analysis.probes` builds the suites and judges the cases):
the suite read from or kept in the disk cache, every distinct pair predicted once per model, each case decided
per model, and the overlap of dev-built cases with each checkpoint's recorded training split.

`probe_models` is the one path the CLI (`python -m nlivis probe`), the app's Behavioural tests tab and the
notebooks share; its `ProbeRun` says itself as the `probe --json` record.
"""
from __future__ import annotations

import hashlib
import json
import os
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import numpy as np
import torch

from nlivis.analysis import probes as suites
from nlivis.analysis.edit_runs import checkpoint_names, protocol_notes, task_of
from nlivis.analysis.overlap import training_overlap as overlap_of
from nlivis.analysis.probes import (DEFAULT_CASES_PER_TEST, DEV_SPLITS, SUITE_CODE, SUITE_FORMAT, FailingCase,
                                    ModelOutcome, ProbeCase, ProbeResult, ProbeTest, build_suite, decide_cases,
                                    probe_record, reference_of, default_tests, switched_off_tests)
from nlivis.data.protocols import SplitRef, find_split_file, read_split, split_key
from nlivis.features.spacy_pipeline import installed_pipeline_version
from nlivis.store.files import file_digest
from nlivis.features.dataset import split_cache_key
from nlivis.inference import LoadedCheckpoint
from nlivis.store.files import atomic_write_json, cache_root, read_sealed, read_sealed_array, write_sealed_array
from nlivis.features.dataset import analyse_text_pairs
from nlivis.workflows.edits import predict_items
from nlivis.workflows.projection import checkpoint_fingerprint
from nlivis.workflows.protocol import Progress
from nlivis.workflows.reading import prediction_code
from nlivis.workflows.specs import ProbeOptions
from nlivis.workflows.subjects import Checkpoints



def read_dev_pairs(suite: str, data_dir: str | Path) -> tuple[list[tuple[str, object]], list[str]]:
    """(split key, Pair) of the suite's dev splits under `data_dir` (those present; labelled pairs only) and
    each split's cache key (its name and its files' sha256)."""
    pairs, sources = [], []
    for dataset, split, folder in DEV_SPLITS[suite]:
        ref = SplitRef(dataset, split, folder)
        if find_split_file(ref, data_dir) is None:
            continue
        result = read_split(ref, data_dir)
        sources.append(split_cache_key(ref, result))
        pairs += [(split_key(ref), pair) for pair in result.pairs if pair.label is not None]
    return pairs, sources


def suite_cache_path(suite: str, per_test: int, seed: int, sources: Sequence[str],
                     cache_dir: str | Path | None = None) -> Path:
    """Where a built suite is kept: keyed by its settings, the dev files' sha256, the spaCy pipeline and the
    code that builds it."""
    code = file_digest(Path(suites.__file__).with_name(name) for name in SUITE_CODE)
    key = json.dumps([SUITE_FORMAT, suite, per_test, seed, list(sources), installed_pipeline_version(), code])
    return cache_root(cache_dir) / "probes" / f"{suite}-{hashlib.sha256(key.encode()).hexdigest()[:20]}.json"


def _suite_from_json(data: object) -> list[ProbeTest]:
    if not (isinstance(data, dict) and data.get("format") == SUITE_FORMAT and isinstance(data.get("tests"), list)):
        raise ValueError("not a suite file of this version")
    return [ProbeTest(t["capability"], t["name"], t["type"], t["description"],
                      tuple(ProbeCase(**{**c, "original": tuple(c["original"]) if c["original"] else None})
                            for c in t["cases"]), t["generator"])
            for t in data["tests"]]


def load_suite(suite: str, data_dir: str | Path | None = None, per_test: int = DEFAULT_CASES_PER_TEST,
               seed: int = 1, cache_dir: str | Path | None = None,
               progress: Progress = lambda message: None) -> list[ProbeTest]:
    """`build_suite` from the dev splits under `data_dir`, kept in the cache: the same settings, dev files,
    pipeline and code read the suite back instead of parsing dev pairs again. An unreadable cache file is
    rebuilt (with a note on `progress`)."""
    dev, sources = read_dev_pairs(suite, data_dir) if data_dir is not None else ([], [])
    path = suite_cache_path(suite, per_test, seed, sources, cache_dir)
    stored = read_sealed(path)
    if stored is not None:
        try:
            tests = _suite_from_json(json.loads(stored))
            progress(f"probe: suite read from {path}")
            return tests
        except (ValueError, KeyError, TypeError) as error:
            progress(f"probe: cached suite {path} unreadable ({error}); building it again")
    elif path.is_file():
        progress(f"probe: cached suite {path} does not match its seal (damaged, or written before seals); "
                 "building it again")
    tests = build_suite(suite, dev, per_test, seed, progress)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_json(path, {"format": SUITE_FORMAT, "tests": [
            {**asdict(test), "cases": [asdict(case) for case in test.cases]} for test in tests]}, indent=None,
            sealed=True)
    except OSError as error:
        progress(f"probe: could not keep the suite in {path.parent} ({error}); it is used without caching")
    return tests


PREDICTIONS_FORMAT = 1
"""Part of every kept prediction's key: raised when what a prediction of a case holds changes."""


@lru_cache(maxsize=1)
def prediction_code_digest() -> str:
    """The digest of the code a prediction runs (the models and their layers, the featurizer, batching): kept
    predictions are keyed by it, so a changed model or feature never answers from an earlier run. Read once per
    process, when a suite first asks, not at import: the process predicts with the code it imported."""
    return file_digest(prediction_code())


def predictions_path(checkpoint: LoadedCheckpoint, pairs: Sequence[tuple[str, str]],
                     cache_dir: str | Path | None = None) -> Path:
    """Where a checkpoint's class probabilities for a suite's distinct pairs are kept: keyed by its weights and
    config (`checkpoint_fingerprint`), the pairs' texts, the spaCy pipeline that analysed them, the code that
    predicts (`prediction_code_digest`) and the format."""
    key = json.dumps([PREDICTIONS_FORMAT, checkpoint_fingerprint(checkpoint.path), installed_pipeline_version(),
                      prediction_code_digest(), list(pairs)])
    return cache_root(cache_dir) / "probes" / "predictions" / f"{hashlib.sha256(key.encode()).hexdigest()[:24]}.npy"


def run_probes(loaded: Sequence[LoadedCheckpoint], tests: Sequence[ProbeTest], names: Sequence[str],
               cache_dir: str | Path | None = None,
               progress: Progress = lambda message: None) -> list[dict[str, ModelOutcome]]:
    """Predict every distinct pair of the suite (cases and INV / DIR originals) once per model, in batches
    through the feature cache, and decide each case per model. A model's probabilities are kept on disk
    (`predictions_path`): a suite its checkpoint has run before is read back, and spaCy's analyses are read only
    when some model has to predict."""
    pairs = list(dict.fromkeys(pair for test in tests for case in test.cases
                               for pair in ((case.premise, case.hypothesis), reference_of(case)) if pair is not None))
    paths = [predictions_path(checkpoint, pairs, cache_dir) for checkpoint in loaded]
    probabilities = {name: kept for name, checkpoint, path in zip(names, loaded, paths)
                     if (kept := read_sealed_array(path)) is not None and kept.shape == (len(pairs), len(checkpoint.labels))}
    missing = [(name, checkpoint, path) for name, checkpoint, path in zip(names, loaded, paths)
               if name not in probabilities]
    if missing:
        progress(f"probe: spaCy on {len(pairs):,} distinct pairs")
        items = analyse_text_pairs(pairs, cache_dir, disk_cache=True)
        progress(f"probe: predicting {len(pairs):,} pairs with {', '.join(name for name, _, _ in missing)}")
        for (name, _, path), predicted in zip(missing, predict_side_by_side([c for _, c, _ in missing], items)):
            probabilities[name] = predicted
            progress(f"probe: {name} done")
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                write_sealed_array(path, predicted)
            except OSError as error:
                warnings.warn(f"could not keep the suite's predictions in {path.parent} ({error}); they are used "
                              "without keeping them", stacklevel=2)
    row = {pair: i for i, pair in enumerate(pairs)}
    return decide_cases(tests, names, tuple(loaded[0].labels), probabilities, row)


MODELS_AT_ONCE = 2
"""Checkpoints a suite's run predicts at the same time (fewer on a machine with fewer cores)."""


def predict_side_by_side(loaded: Sequence[LoadedCheckpoint], items: Sequence) -> Iterator[np.ndarray]:
    """Each checkpoint's class probabilities for `items` (`predict_items`), yielded in the order of `loaded` as
    they are done: `MODELS_AT_ONCE` checkpoints at a time, each in a thread of its own with one torch thread.
    torch's own threads split every operation of one model and wait at each for all of them: with the app's
    default of two on two cores, while another process held a core, the five shipped models' passes over a suite
    took 368 s of wall and 135 s of CPU, side by side 22–50 s and 13.5–15 s (1-minute load 8–11,
    bench/RESULTS.md, session 22). One torch thread per model also gives byte for byte the probabilities of the
    CLI's `--threads 1`, whatever torch's count, as the kept predictions' key (`predictions_path`) assumes."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    previous = torch.get_num_threads()

    def alone(checkpoint: LoadedCheckpoint) -> np.ndarray:
        torch.set_num_threads(1)  # this worker thread's operations run on it alone
        return predict_items([checkpoint], items)[0]

    torch.set_num_threads(1)
    try:
        with ThreadPoolExecutor(max_workers=max(1, min(MODELS_AT_ONCE, cores, len(loaded))),
                                thread_name_prefix="nlivis-probe") as pool:
            yield from pool.map(alone, loaded)
    finally:
        torch.set_num_threads(previous)


def training_overlap(checkpoint: Any, tests: Sequence[ProbeTest], data_dir: str | Path | None) -> dict:
    """How many dev-built cases share text with the checkpoint's recorded training split
    (`analysis.overlap.training_overlap`: pairs, premises, hypotheses, normalised), with `cases_checked`;
    template cases are not counted. `checked` False with the reason when the split cannot be read."""
    built = [case for test in tests for case in test.cases if case.source != "template"]
    overlap = overlap_of(checkpoint.config, [(case.premise, case.hypothesis) for case in built], data_dir)
    return {**overlap.to_dict(), "cases_checked": len(built)}


@dataclass(frozen=True)
class ProbeRun:
    """A suite run on named checkpoints: the judged cases (`result`) and what the record states beside them."""

    result: ProbeResult
    options: ProbeOptions
    notes: dict[str, str | None]

    def failing(self, test_name: str, model: str) -> list[FailingCase] | None:
        """The failing cases of test `test_name` for `model` (None: no such test or model in this run)."""
        return self.result.failing(test_name, model)

    def record(self) -> dict[str, Any]:
        """The `probe --json` output (`analysis.probes.probe_record`), built once per run (the app shows it at
        every rerun). Shared: never modify it."""
        return self._record

    @cached_property
    def _record(self) -> dict[str, Any]:
        record = probe_record(self.result, self.options.suite, self.options.seed, self.options.per_test, self.notes)
        off = {} if self.options.include_off else switched_off_tests()
        return {**record, "switched_off": {name: reason for name, reason in off.items()
                                           if self.options.suite == "nli"}}


def probe_models(loaded: Sequence[LoadedCheckpoint], options: ProbeOptions, names: Sequence[str] | None = None,
                 progress: Progress = lambda message: None) -> ProbeRun:
    """The suite of `options` built or read back, run on every checkpoint (named `names`, default their folder
    names), with each checkpoint's training overlap; ValueError when the checkpoints are of two tasks or of
    another task than the suite's."""
    task = task_of(loaded)
    if task != options.suite:
        raise ValueError(f"--suite {options.suite} does not fit these checkpoints: they are {task} models")
    names = list(names) if names is not None else checkpoint_names(loaded)
    tests = load_suite(options.suite, options.data_dir, options.per_test, options.seed, options.cache_dir, progress)
    tests = tests if options.include_off else default_tests(tests)
    outcomes = run_probes(loaded, tests, names, options.cache_dir, progress)
    overlap = {name: training_overlap(item, tests, options.data_dir) for name, item in zip(names, loaded)}
    result = ProbeResult(tests, tuple(loaded[0].labels), names, outcomes, overlap)
    return ProbeRun(result, options, protocol_notes(loaded, names))


def data_dir_problem(suite: str, data_dir: str | Path | None, progress: Progress) -> str | None:
    """Why `data_dir` cannot feed the INV / DIR tests (not a folder, or none of the suite's dev splits in it),
    or None; dev splits that are absent while others are present are named through `progress`, since their
    tests are then drawn from the others only."""
    if data_dir is None:
        return None
    if not Path(data_dir).is_dir():
        return f"--data-dir {data_dir} is not a folder; give the data root (as ../shared/data) or leave it out for " \
               "the template (MFT) tests only"
    missing = [f"{dataset} {split} ({folder})" for dataset, split, folder in DEV_SPLITS[suite]
               if find_split_file(SplitRef(dataset, split, folder), data_dir) is None]
    if len(missing) == len(DEV_SPLITS[suite]):
        return (f"--data-dir {data_dir} holds none of the {suite} dev splits the INV / DIR tests edit "
                f"({', '.join(missing)}); give the data root or leave --data-dir out for the template tests only")
    if missing:
        progress(f"probe: not under {data_dir}, so the INV / DIR tests draw from the other dev splits only: "
                 f"{', '.join(missing)}")
    return None


def probes_subject(subject: Checkpoints, options: ProbeOptions, progress: Progress) -> ProbeRun:
    """`probe_models` as the registered probes analysis runs it: the data root checked first and each step said
    on `progress`."""
    problem = data_dir_problem(options.suite, options.data_dir, progress)
    if problem:
        raise ValueError(problem)
    task = task_of(subject.loaded)
    if task != options.suite:
        raise ValueError(f"--suite {options.suite} does not fit these checkpoints: they are {task} models")
    progress(f"probe: building the {options.suite} suite ({options.per_test} cases per test, seed {options.seed})")
    if options.data_dir is None:
        progress("probe: no --data-dir, so only the template (MFT) tests run")
    return probe_models(subject.loaded, options, subject.names, progress)
