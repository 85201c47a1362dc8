"""The app's background work (nlivis.app.background): one job per key, and a cached computation's progress
passed on from its worker thread to the page's thread in order, its result or error coming back."""
from __future__ import annotations

import threading

import pytest

from nlivis.app import background


def test_a_key_runs_its_work_once_and_later_calls_get_the_same_job():
    calls = []
    first = background.in_background(("test", "once"), lambda: calls.append(1) or "done")
    again = background.in_background(("test", "once"), lambda: calls.append(2) or "other")
    assert again is first and first.result(timeout=30) == "done" and calls == [1]


def test_reporting_passes_every_message_on_in_this_thread_and_returns_the_result():
    heard: list[tuple[str, bool]] = []
    here = threading.current_thread()

    def work(say):
        assert threading.current_thread() is not here  # the work runs elsewhere: no st call in it
        for step in ("spaCy", "model 1", "model 2"):
            say(step)
        return 42

    result = background.reporting(work, lambda message: heard.append((message, threading.current_thread() is here)))
    assert result == 42 and heard == [("spaCy", True), ("model 1", True), ("model 2", True)]


def test_reporting_raises_what_the_work_raised():
    def work(say):
        say("starting")
        raise ValueError("models of two tasks")

    with pytest.raises(ValueError, match="two tasks"):
        background.reporting(work, lambda message: None)


def test_the_warm_up_waits_while_a_page_runs_and_goes_on_once_pages_are_idle(monkeypatch):
    monkeypatch.setattr(background, "QUIET_S", 0.01)
    went_on = threading.Event()
    waiter = threading.Thread(target=lambda: (background.when_pages_idle(), went_on.set()))
    with background.page_running():
        waiter.start()
        assert not went_on.wait(0.2)  # a page runs: the warm-up's next step has not started
    waiter.join(timeout=30)
    assert went_on.is_set()


def test_work_ahead_waits_for_idle_pages_and_is_off_with_the_warm_up(monkeypatch):
    monkeypatch.setattr(background, "QUIET_S", 0.01)
    monkeypatch.setenv(background.WARM_UP_ENV, "0")
    background.ahead(("test", "ahead", "off"), lambda: None)
    assert ("test", "ahead", "off") not in background._JOBS  # nothing submitted
    monkeypatch.setenv(background.WARM_UP_ENV, "1")
    ran = threading.Event()
    with background.page_running():
        background.ahead(("test", "ahead", "on"), ran.set)
        assert not ran.wait(0.2)  # a page runs: the work waits
    assert ran.wait(30)


def test_the_warm_up_loads_spacys_feature_pipeline_even_when_the_default_pair_is_read_from_disk(monkeypatch):
    # the default pair's analyses are kept on disk (features.sentences.kept_pair_path), so analysing it loads no
    # pipeline: the warm-up loads it by name, or the behavioural suite's first run pays the load after the click
    steps: list[str] = []
    monkeypatch.setattr(background, "QUIET_S", 0.01)
    monkeypatch.setattr(background, "WARM_UP_QUIET_S", 0.01)
    monkeypatch.setenv(background.WARM_UP_ENV, "1")
    monkeypatch.setattr(background, "_JOBS", {})
    monkeypatch.setattr(background, "analyse_text_pair", lambda premise, hypothesis: steps.append("pair"))
    monkeypatch.setattr(background, "load_nlp", lambda: steps.append("pipeline"))
    monkeypatch.setattr(background, "automatic_tags_now", lambda premise, hypothesis: steps.append("tags"))
    monkeypatch.setattr(background, "start_converter", lambda: steps.append("converter"))
    background.warm_up(lambda: ["model"], lambda folder: steps.append(f"load {folder}") or f"loaded {folder}",
                       lambda loaded: steps.append(f"prepare {loaded}"))
    background._JOBS[("warm up",)].result(timeout=30)
    assert steps == ["converter", "load model", "pair", "pipeline", "tags", "prepare ['loaded model']"]


def test_work_that_pauses_for_pages_keeps_its_lock_while_pages_are_idle_and_lends_it_while_one_runs(monkeypatch):
    monkeypatch.setattr(background, "WARM_UP_QUIET_S", 0.05)
    monkeypatch.setattr(background, "QUIET_S", 0.05)
    monkeypatch.setattr(background, "_RUNNING", [0, 0.0])
    lock = threading.Lock()
    with lock:
        background.pause_for_pages(lock)  # no page ran: back at once, the lock still held
        assert lock.locked()
    page_had_lock = threading.Event()
    paused = threading.Event()

    def work() -> None:
        with lock:
            paused.set()
            background.pause_for_pages(lock)  # a page runs: the lock is lent until pages are idle again
            assert lock.locked()

    with background.page_running():
        worker = threading.Thread(target=work)
        worker.start()
        assert paused.wait(30)
        assert lock.acquire(timeout=30)  # the page gets spaCy's lock while the work waits
        page_had_lock.set()
        lock.release()
    worker.join(timeout=30)
    assert page_had_lock.is_set() and not worker.is_alive() and not lock.locked()


def test_the_warm_up_keeps_the_very_suite_the_behavioural_tests_tab_reads(monkeypatch, tmp_path):
    # the suite is kept on disk under a key of its settings: built with other settings than the tab's run, the
    # warm-up's work would be wasted and the tab's first run would build it all the same
    from types import SimpleNamespace

    import nlivis.workflows.probes as workflow
    from nlivis.analysis.edit_runs import TASK_LABELS
    from nlivis.analysis.probes import DEFAULT_CASES_PER_TEST
    from nlivis.app import paths
    from nlivis.app.cache import suites

    built, paused = [], []
    monkeypatch.setattr(paths, "data_root", lambda: tmp_path)
    monkeypatch.setattr(workflow, "load_suite", lambda *settings: (built.append(settings[:5]), settings[5]("step")))
    monkeypatch.setattr(background, "pause_for_pages", lambda lock: paused.append(lock.locked()))
    checkpoint = SimpleNamespace(labels=list(TASK_LABELS["nli"]))
    suites.keep_probe_suite([(checkpoint, None), (None, "a broken folder")])
    tab = suites.probe_options([checkpoint], DEFAULT_CASES_PER_TEST)
    assert built == [(tab.suite, tab.data_dir, tab.per_test, tab.seed, tab.cache_dir)] and tab.suite == "nli"
    assert (tab.data_dir, tab.per_test, tab.seed) == (str(tmp_path), DEFAULT_CASES_PER_TEST, suites.PROBE_SEED)
    assert paused == [True]  # each step of the build offers spaCy's lock to a page that runs
    assert not background.TAGGER_LOCK.locked()

    monkeypatch.setattr(paths, "data_root", lambda: None)  # no dev pairs to edit: nothing worth building ahead
    suites.keep_probe_suite([(checkpoint, None)])
    assert len(built) == 1
