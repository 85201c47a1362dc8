"""What the app prepares ahead for the behavioural suite: the settings the Behavioural tests tab runs it with
(`probe_options`), and the suite built and kept on disk by the warm-up before anyone asks (`keep_probe_suite`)."""
from __future__ import annotations

from typing import Any, Sequence

from nlivis.analysis.edit_runs import task_of
from nlivis.analysis.probes import DEFAULT_CASES_PER_TEST
from nlivis.app import background, paths
from nlivis.workflows.specs import ProbeOptions

PROBE_SEED = 1
"""The suite's seed in the app (the CLI's default), so the app's table is `probe … --seed 1`'s."""


def probe_options(models: Sequence[Any], per_test: int) -> ProbeOptions:
    """The suite the app runs on `models` (chosen or loaded: anything with `labels`): their task's, editing the
    data root's dev pairs, seed `PROBE_SEED` — the tab's runs and the warm-up's build alike, so the suite the
    warm-up keeps is the one the tab reads."""
    root = paths.data_root()
    return ProbeOptions(task_of(models), None if root is None else str(root), int(per_test), PROBE_SEED)


def keep_probe_suite(loaded: Sequence[tuple[Any, str | None]]) -> None:
    """Build the behavioural suite the Behavioural tests tab runs on these models (the warm-up's: what
    `load_model` answered for each) with the default cases per test, and keep it on disk, if it is not kept
    already: the tab's first run then only predicts (building it is ~10 CPU s of spaCy parses and WordNet lookups,
    half the first run). Holds spaCy's lock as a run does, and lets go of it at every step of the build while a
    page runs (`background.pause_for_pages`): a click on Run meanwhile either waits for the step under way or,
    when the build paused, builds the suite itself. Work queued for the background thread meanwhile (a list's
    next pair read ahead) waits for the build: only after a launch on a machine that never kept the suite, as a
    later launch reads it back in a second. Nothing to build without a data root (template tests only) or with no
    model loaded."""
    models = [checkpoint for checkpoint, _ in loaded if checkpoint is not None]
    if not models or paths.data_root() is None:
        return
    from nlivis.workflows.probes import load_suite  # deferred: it imports torch, which a page may not need yet

    options = probe_options(models, DEFAULT_CASES_PER_TEST)
    with background.TAGGER_LOCK:
        load_suite(options.suite, options.data_dir, options.per_test, options.seed, options.cache_dir,
                   lambda message: background.pause_for_pages(background.TAGGER_LOCK))
