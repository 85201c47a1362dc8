"""Widgets whose value is part of a page's view: kept in the session, written into the URL, and set from a
link or the browser's Back (through `nlivis.app.state`).

Each takes the page's key and a parameter name — `select("errors", "split", "Evaluation split", options)` shows
up in the URL as `split=…` on that page — and returns the value. A value from a link that is not one of the
choices (or not a number, or out of range) is said next to the widget and the default is shown instead.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import streamlit as st

from nlivis.app import state
from nlivis.app.text import md


def _prepare(page: str, name: str, default: Any, fix: Callable[[Any], tuple[Any, str | None]], where: Any) -> str:
    """Give the widget of (page, name) its value before it is drawn: the URL's (once, after a link or Back) or
    the last visit's when it has none yet; `fix(value)` returns (a valid value, why the given one was not)."""
    key = state.widget_key(page, name)
    from_url = state.forced(page, name)
    if from_url or key not in st.session_state:
        value, problem = state.value(page, name, default)
        if problem is None:
            value, problem = fix(value)
        if problem and from_url and state.wanted(page, name) is not None:
            where.warning(md(problem))
        st.session_state[key] = value
    else:
        value, problem = fix(st.session_state[key])
        if problem:
            st.session_state[key] = value
    return key


def _one_of(name: str, options: Sequence[Any], default: Any, describe: Callable[[Any], str] = str):
    def fix(value: Any) -> tuple[Any, str | None]:
        if value in options:
            return value, None
        shown = ", ".join(describe(o) for o in list(options)[:8]) + (" …" if len(options) > 8 else "")
        return default, (f"{name}={value} in the link is not one of the choices here ({shown}); "
                         f"showing {describe(default)}")
    return fix


def _choice_key(page: str, name: str, options: list[Any], default: Any, format_func: Callable[[Any], str] = str,
                where: Any = st) -> tuple[str, Any]:
    """(the session key of the one-of-`options` control (page, name), given its value: `_prepare`; its default,
    `default` when it is one of the options, else the first)."""
    default = default if default in options else options[0]
    return _prepare(page, name, default, _one_of(name, options, default, format_func), where), default


def select(page: str, name: str, label: str, options: Sequence[Any], default: Any = None, *, where: Any = st,
           format_func: Callable[[Any], str] = str, **options_: Any) -> Any:
    """A selectbox over `options` (default: `default`, else the first); None when there are no options."""
    options = list(options)
    if not options:
        return None
    key, default = _choice_key(page, name, options, default, format_func, where)
    chosen = where.selectbox(label, options, key=key, format_func=format_func, **options_)
    state.remember(page, name, chosen, default)
    return chosen


def selected(page: str, name: str, options: Sequence[Any], default: Any = None) -> Any:
    """What `select` would give for (page, name) without drawing its selectbox (in a closed section: a tab renders
    a closed section's widgets all the same): the URL's, the last visit's or `default`, kept in the URL as `select`
    keeps it."""
    key, default = _choice_key(page, name, list(options), default)
    chosen = st.session_state[key]
    state.remember(page, name, chosen, default)
    return chosen


def radio(page: str, name: str, label: str, options: Sequence[Any], default: Any = None, *, where: Any = st,
          format_func: Callable[[Any], str] = str, horizontal: bool = True, always_in_url: bool = False,
          **options_: Any) -> Any:
    """Radio buttons over `options` (default: `default`, else the first). `always_in_url` keeps the choice in the
    URL even when it is the default: for a default that depends on state (what exists now), so a link or Back
    shows the same choice later."""
    options = list(options)
    key, default = _choice_key(page, name, options, default, format_func, where)
    chosen = where.radio(label, options, key=key, format_func=format_func, horizontal=horizontal, **options_)
    state.remember(page, name, chosen, None if always_in_url else default)
    return chosen


def multiselect(page: str, name: str, label: str, options: Sequence[Any], default: Sequence[Any], *, where: Any = st,
                format_func: Callable[[Any], str] = str, **options_: Any) -> list[Any]:
    options = list(options)
    default = [d for d in default if d in options]

    def fix(value: Any) -> tuple[Any, str | None]:
        kept = [v for v in value if v in options]
        if len(kept) == len(value):
            return kept, None
        dropped = [str(v) for v in value if v not in options]
        return kept, f"{name}: {', '.join(dropped)} in the link is not among the choices here; left out"

    key = _prepare(page, name, default, fix, where)
    chosen = where.multiselect(label, options, key=key, format_func=format_func, **options_)
    state.remember(page, name, list(chosen), default)
    return list(chosen)


def toggle(page: str, name: str, label: str, default: bool = False, *, where: Any = st, **options_: Any) -> bool:
    key = _prepare(page, name, bool(default), lambda value: (bool(value), None), where)
    chosen = where.toggle(label, key=key, **options_)
    state.remember(page, name, bool(chosen), bool(default))
    return bool(chosen)


def number(page: str, name: str, label: str, default: int, minimum: int, maximum: int | None = None, *, where: Any = st,
           slider: bool = False, step: int = 1, **options_: Any) -> int:
    """An integer input (or slider) kept within [minimum, maximum]."""
    def fix(value: Any) -> tuple[Any, str | None]:
        value = int(value)
        if value < minimum or (maximum is not None and value > maximum):
            bounded = min(max(value, minimum), maximum if maximum is not None else value)
            return bounded, f"{name}={value} in the link is outside {minimum}–{maximum if maximum is not None else '∞'}; showing {bounded}"
        return value, None

    key = _prepare(page, name, int(default), fix, where)
    if slider:
        chosen = where.slider(label, min_value=minimum, max_value=maximum, step=step, key=key, **options_)
    else:
        chosen = where.number_input(label, min_value=minimum, max_value=maximum, step=step, key=key, **options_)
    state.remember(page, name, int(chosen), int(default))
    return int(chosen)


def text(page: str, name: str, label: str, default: str = "", *, where: Any = st, **options_: Any) -> str:
    key = _prepare(page, name, default, lambda value: (str(value), None), where)
    chosen = where.text_input(label, key=key, **options_)
    state.remember(page, name, chosen, default)
    return chosen


def tabs(page: str, name: str, labels: Sequence[str], default: str | None = None) -> tuple[str, list[Any]]:
    """st.tabs whose open tab is view state (`tab=…` in the URL); returns (the open tab's label, the tab
    containers). Only the open tab needs drawing: its content is computed when it is opened."""
    labels = list(labels)
    default = default if default in labels else labels[0]
    key = _prepare(page, name, default, _one_of(name, labels, default), st)
    containers = st.tabs(labels, key=key, on_change="rerun")
    chosen = st.session_state.get(key, default)
    chosen = chosen if chosen in labels else default
    state.remember(page, name, chosen, default)
    return chosen, list(containers)


def open_sections(page: str, name: str, ids: Sequence[str], default: Sequence[str]) -> dict[str, str]:
    """Session keys for the expanders of `ids` (pass each as `st.expander(..., key=key, on_change="rerun")`),
    opened as the view says (`<name>=id1,id2` in the URL; `default` when it names none). Call
    `remember_sections` with the ids found open afterwards."""
    wanted_open, problem = state.value(page, name, list(default))
    from_url = state.forced(page, name)
    if problem and from_url:
        st.warning(md(problem))
    keys = {}
    for section in ids:
        key = f"{state.widget_key(page, name)}_{section}"
        if from_url or key not in st.session_state:
            st.session_state[key] = section in wanted_open
        keys[section] = key
    return keys


def remember_sections(page: str, name: str, opened: Sequence[str], default: Sequence[str]) -> None:
    state.remember(page, name, list(opened), list(default))


def kept(page: str, name: str, default: Any) -> Any:
    """A view value that no widget shows (a clicked cell, a picked table line): from the URL or the last visit,
    staying in the URL while it is not the default. Set it with `state.remember` when the click happens."""
    value, problem = state.value(page, name, default)
    if state.forced(page, name) and problem:
        st.warning(md(problem))
    state.remember(page, name, value, default)
    return value
