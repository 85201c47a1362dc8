"""Work the app does off the page's thread: one background thread per server process (jobs queue up, so they
never compete with each other for the two cores, only with the pages), the warm-up that loads what a page
would otherwise wait for — each of its steps only while no page runs — and one pair's automatic annotation
tags, computed there while spaCy's parser and WordNet load.

`TAGGER_LOCK` serialises every use of spaCy's shared pipeline: the page's thread, this thread, and the cached
edit and probe runs (`app.cache`) all parse through it.
"""
from __future__ import annotations

import logging
import os
import queue
import threading
import time
import warnings
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import streamlit as st

from nlivis.analysis.tags import tag_pairs, unavailable_tags
from nlivis.app import state
from nlivis.data.records import Pair
from nlivis.features.sentences import analyse_text_pair
from nlivis.features.spacy_pipeline import load_nlp
from nlivis.viz.vega.export import start_converter

_BACKGROUND = ThreadPoolExecutor(max_workers=1, thread_name_prefix="nlivis-background")
_JOBS: dict[tuple, Future] = {}
"""The job of each key (not a cache of results: those live in the caches the jobs fill)."""
_JOBS_LOCK = threading.Lock()
WARM_UP_ENV = "NLIVIS_WARM_UP"
"""Set to 0 to turn off the background warm-up (the tests do: each starts its own app)."""
TAGGER_LOCK = threading.Lock()
"""One pair is parsed at a time: the page's thread and the background thread share spaCy's pipeline."""
REPORT_TICK_S = 0.2
"""How often `reporting` looks whether its work finished."""
TAGGER_READY = threading.Event()
"""Set once a pair was tagged in this process: the parser and WordNet are then in memory."""
QUIET_S = 0.5
"""How long after the last page run ended work ahead (`ahead`: a fraction of a second of it) waits to start."""
WARM_UP_QUIET_S = 2.0
"""How long after the last page run ended a warm-up step (seconds of loading each) waits to start: the browser
draws the page it just got — plotly's setup and the charts, 1.5-3 s of a core — before the warm-up takes the
other one."""
_PAGES = threading.Condition()
_RUNNING: list[float] = [0, 0.0]
"""[page runs in progress in this process, when the last one ended (time.monotonic)], guarded by `_PAGES`."""


@contextmanager
def page_running() -> Iterator[None]:
    """Around a page's run: while any page runs, the warm-up's next step waits (`when_pages_idle`)."""
    with _PAGES:
        _RUNNING[0] += 1
    try:
        yield
    finally:
        with _PAGES:
            _RUNNING[0] -= 1
            _RUNNING[1] = time.monotonic()
            _PAGES.notify_all()


def when_pages_idle(quiet_s: float | None = None) -> None:
    """Return once no page has run for `quiet_s` (default `QUIET_S`). A server runs pages and this process's
    Python work one at a time (the interpreter's lock), so a warm-up step beside a page's run delays that page by
    its whole length: loading spaCy's parser and WordNet (5–8 s of CPU) beside the first page after a launch,
    which needs neither, made it that much later (py-spy on the server, bench/RESULTS.md issue 30, session 23)."""
    with _PAGES:
        while True:
            _PAGES.wait_for(lambda: _RUNNING[0] == 0)
            left = _RUNNING[1] + (QUIET_S if quiet_s is None else quiet_s) - time.monotonic()
            if left <= 0:
                return
            _PAGES.wait(left)


def in_background(key: tuple, work: Callable[[], Any]) -> Future:
    """Run `work` once per `key` in this process's one background thread; later calls get the same future."""
    with _JOBS_LOCK:
        job = _JOBS.get(key)
        if job is None:
            job = _JOBS[key] = _BACKGROUND.submit(work)
            if len(_JOBS) > 512:  # forget finished jobs; results live in the caches they filled
                for old in [k for k, j in _JOBS.items() if j.done() and k != key][:256]:
                    del _JOBS[old]
        return job


def ahead(key: tuple, work: Callable[[], Any]) -> None:
    """Run `work` once per `key` in the background thread, once no page has run for `QUIET_S`
    (`when_pages_idle`): what the reader will likely ask for next (the next pair of a list), computed while they
    read this one and kept in the caches `work` fills. Off with the warm-up (`WARM_UP_ENV`); a failure is dropped:
    the page computes what is missing when it is asked."""
    if os.environ.get(WARM_UP_ENV, "1") == "0":
        return
    logging.getLogger("streamlit.runtime.scriptrunner_utils.script_run_context").setLevel(logging.ERROR)

    def when_idle() -> None:
        when_pages_idle()
        work()

    in_background(key, when_idle)


def reporting(work: Callable[[Callable[[str], None]], Any], progress: Callable[[str], None]) -> Any:
    """`work(say)` run in a worker thread while this thread passes each message `say` got on to `progress`: a
    cached function's work can then report progress to the page without an st call inside it (Streamlit
    replays such calls at every cache hit). Returns what `work` returned; raises what it raised."""
    messages: queue.SimpleQueue[str] = queue.SimpleQueue()
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="nlivis-reporting") as pool:
        job = pool.submit(work, messages.put)
        while not (job.done() and messages.empty()):
            try:
                progress(messages.get(timeout=REPORT_TICK_S))
            except queue.Empty:
                continue
    return job.result()


def pause_for_pages(lock: threading.Lock) -> None:
    """Inside long background work holding `lock` (spaCy's, `TAGGER_LOCK`): let go of the lock — a page may need
    it — until no page has run for `WARM_UP_QUIET_S` (at once when none has), then hold it again. Each stretch of
    work between two pauses then delays a page that starts during it by that stretch only."""
    lock.release()
    try:
        when_pages_idle(WARM_UP_QUIET_S)
    finally:
        lock.acquire()


def warm_up(folders: Callable[[], Sequence[Path]], load: Callable[[Path], Any],
            prepare: Callable[[list[Any]], None] = lambda loaded: None) -> None:
    """Once per server process, in the background: start the figure converter (`start_converter`: until then
    pages draw their figures with Vega-Lite in the browser), import torch and `load` the default models'
    `folders()`, spaCy's pipelines and WordNet — what the next page a user opens would otherwise wait for
    (WordNet and the dependency parser that the annotation tags need took 25 s on a busy 2-core machine). Pages
    never wait, and the folders are looked up in that background work, not on every run of every page that calls
    this. Each of those steps starts only once no page has run for `WARM_UP_QUIET_S` (`when_pages_idle`): the
    first page after a launch loads what it needs itself, alone, the browser draws it, and the rest loads while
    its reader reads. spaCy's token-feature pipeline is loaded by name: the default pair's analyses are kept on
    disk, so analysing it no longer loads it, and the behavioural suite's first run paid that load (~1 CPU s)
    after the click. Last, `prepare(what load returned for each folder)`: longer work that pauses for pages itself
    (`pause_for_pages`), such as the behavioural suite built and kept on disk before anyone asks for it."""
    if os.environ.get(WARM_UP_ENV, "1") == "0":
        return
    # the cached loaders it calls have no script context in that thread: Streamlit would log that at every call
    logging.getLogger("streamlit.runtime.scriptrunner_utils.script_run_context").setLevel(logging.ERROR)

    def work() -> None:
        when_pages_idle(WARM_UP_QUIET_S)
        start_converter()
        loaded = []
        for folder in folders():
            when_pages_idle(WARM_UP_QUIET_S)
            loaded.append(load(folder))
        when_pages_idle(WARM_UP_QUIET_S)
        analyse_text_pair(state.DEFAULT_PAIR.premise, state.DEFAULT_PAIR.hypothesis)
        when_pages_idle(WARM_UP_QUIET_S)
        load_nlp()  # the pair's analyses may come from disk without it; a new pair, edits and the suite need it
        when_pages_idle(WARM_UP_QUIET_S)
        automatic_tags_now(state.DEFAULT_PAIR.premise, state.DEFAULT_PAIR.hypothesis)
        when_pages_idle(WARM_UP_QUIET_S)
        prepare(loaded)

    in_background(("warm up",), work)


@st.cache_resource(max_entries=1024, show_spinner=False)
def automatic_tags_now(premise: str, hypothesis: str) -> tuple[frozenset[str], dict[str, str]]:
    """(the automatic annotation tags of one pair, tags the rules cannot decide here with why); spaCy's parser
    and WordNet load the first time (many seconds), then a pair takes milliseconds. Kept per pair."""
    with TAGGER_LOCK:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the missing-WordNet warning is returned as `unavailable`
            tags = tag_pairs([Pair(id="shown", premise=premise, hypothesis=hypothesis)])
        TAGGER_READY.set()
        return tags["shown"], unavailable_tags()


def automatic_tags(premise: str, hypothesis: str) -> tuple[frozenset[str], dict[str, str]] | None:
    """The pair's automatic tags, or None while the tagger (spaCy's parser and WordNet) is still loading: then they
    are computed in the background, and the next run of the page shows them. Once the tagger is loaded, a pair
    takes milliseconds and is tagged on the spot."""
    if TAGGER_READY.is_set():
        try:
            return automatic_tags_now(premise, hypothesis)
        except (OSError, ValueError, RuntimeError):
            return frozenset(), {}
    in_background(("tags", premise, hypothesis), lambda: automatic_tags_now(premise, hypothesis))
    return None
