"""Cached for one run of a page: what a run would otherwise read from the disk several times (the checkpoint
folders' stamps: Ablations scanned the folders four times a run). Kept only while the run lasts, so the next run
looks at the files again."""
from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Callable, Iterator

from nlivis.store.files import folder_stamp

_THIS_RUN: ContextVar[dict | None] = ContextVar("nlivis_this_run", default=None)


@contextmanager
def one_run() -> Iterator[None]:
    """Around one run of a page (`frame.page`): what `once_per_run` computes is computed once in it and forgotten
    when the run ends (completed, stopped or interrupted)."""
    token = _THIS_RUN.set({})
    try:
        yield
    finally:
        _THIS_RUN.reset(token)


def once_per_run(key: tuple, compute: Callable[[], Any]) -> Any:
    """`compute()` once per `key` in this page run (`one_run`); outside a page run (the background thread, a test
    calling a cache function) every call computes it."""
    memo = _THIS_RUN.get()
    if memo is None:
        return compute()
    if key not in memo:
        memo[key] = compute()
    return memo[key]


def folder_stamp_in_run(path: str | Path) -> float:
    """`store.files.folder_stamp` of a checkpoint folder, read once per page run: a run keys a dozen caches by each
    loaded checkpoint's stamp (weights, descriptions, readings, figures), and every reading stats each file of the
    folder, which on a slow disk (this project's test machines: ~0.5 ms a stat) cost the Pair explorer ~0.1 s a run."""
    return once_per_run(("folder stamp", str(path)), lambda: folder_stamp(path))
