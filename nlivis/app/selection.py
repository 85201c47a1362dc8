"""The one current selection the pages share: which checkpoints are loaded and which pair is looked at.

Kept in `st.session_state` under non-widget keys, so it survives page changes.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable

import streamlit as st

if TYPE_CHECKING:
    from nlivis.app.loading import PairResult

MAX_SENTENCE_CHARS = 2000
"""Longer typed sentences are cut (with a note) before analysis; models cut tokens further."""

_SELECTED = "nlivis_selected_checkpoints"
_PAIR = "nlivis_current_pair"
_RESULTS = "nlivis_pair_results"
DEFAULT_PAIR = {"premise": "A man is playing a guitar on a stage .", "hypothesis": "A person is making music .",
                "gold": None, "source": "typed"}
"""The pair a page starts with before the user types or picks one."""


def selected_paths() -> list[str]:
    """Checkpoint folders the user chose to load (kept across pages)."""
    return list(st.session_state.get(_SELECTED, []))


def set_selected_paths(paths: Iterable[str]) -> None:
    st.session_state[_SELECTED] = list(dict.fromkeys(str(p) for p in paths))


def current_pair() -> dict[str, Any]:
    """The pair the user last entered on any page (premise, hypothesis, gold label or None, source)."""
    return dict(st.session_state.get(_PAIR, DEFAULT_PAIR))


def set_current_pair(pair: dict[str, Any]) -> None:
    """Make `pair` the one every page shows next."""
    st.session_state[_PAIR] = dict(pair)


def remember_results(results: dict[str, PairResult]) -> dict[str, PairResult] | None:
    """Keep the last two distinct pairs' results; returns the previous pair's results (or None)."""
    history: list[dict[str, PairResult]] = st.session_state.get(_RESULTS, [])
    key = lambda rs: next(((r.premise, r.hypothesis) for r in rs.values()), None)  # noqa: E731
    if history and key(history[-1]) == key(results):
        history[-1] = results
    else:
        history = (history + [results])[-2:]
    st.session_state[_RESULTS] = history
    return history[0] if len(history) == 2 else None


def clean_sentence(text: str) -> tuple[str, str | None]:
    """Strip and cut a typed sentence; returns (text, a note when it was cut)."""
    text = " ".join((text or "").split())
    if len(text) > MAX_SENTENCE_CHARS:
        return text[:MAX_SENTENCE_CHARS], f"the sentence was cut to its first {MAX_SENTENCE_CHARS} characters"
    return text, None
