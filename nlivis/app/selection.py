"""The one current selection every page shares, kept in `st.session_state` and in the URL.

What is selected: the loaded checkpoints, the current pair (a row of a dataset split, or typed text) and
the compared variant. Session state carries it across page changes; the URL (`st.query_params`) carries it
across a reload, a bookmark or a shared link. The parameters, the same on every page:

    models      checkpoint folder names, comma-separated (`esan-snli-small,gcnn-snli-small`)
    split       a local split key (`snli_dev`)
    pair        a 0-based row of `split` — the one numbering of pairs everywhere in the app
    premise,
    hypothesis  a typed pair (instead of split and pair)
    variant     the checkpoint folder name the Ablations page compares the others with

Every page calls `follow_url()` right after `st.set_page_config`: parameters that differ from what this
page last wrote (a link, a reload, `open_pair`) replace the session's selection; then the whole selection
is written back (the sidebar's page links drop the parameters). The setters below write both at once.

Click-through (see also `widgets.pair_table`): `open_pair(split, row)` switches to the Pair explorer showing
that row with the same models; `pair_link_params(split, row)` gives the parameters for an `st.page_link`.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

import streamlit as st

if TYPE_CHECKING:
    from nlivis.app.loading import PairResult

PAIR_EXPLORER = "pages/2_Pair_explorer.py"
"""The page `open_pair` switches to."""

MODELS, SPLIT, PAIR, PREMISE, HYPOTHESIS, VARIANT = "models", "split", "pair", "premise", "hypothesis", "variant"
URL_PARAMETERS = (MODELS, SPLIT, PAIR, PREMISE, HYPOTHESIS, VARIANT)
"""The query parameters the app owns; other parameters in the URL are left alone."""

TYPED = "typed"
"""`pair["source"]` of a typed pair; otherwise the source is the split key."""

_SELECTED = "nlivis_selected_checkpoints"
_PAIR = "nlivis_current_pair"
_PAIR_VERSION = "nlivis_pair_version"
_RESULTS = "nlivis_pair_results"
_VARIANT = "nlivis_variant"
_URL_WRITTEN = "nlivis_url_written"
DEFAULT_PAIR = {"premise": "A man is playing a guitar on a stage .", "hypothesis": "A person is making music .",
                "gold": None, "source": TYPED}
"""The pair a page starts with before the user types or picks one."""


# ---------------------------------------------------------------- loaded checkpoints

def selected_paths() -> list[str]:
    """Checkpoint folders the user chose to load (kept across pages)."""
    return list(st.session_state.get(_SELECTED, []))


def set_selected_paths(paths: Iterable[str]) -> None:
    st.session_state[_SELECTED] = list(dict.fromkeys(str(p) for p in paths))
    write_url()


def find_checkpoint_folder(name: str) -> Path | None:
    """The folder called `name` in the first checkpoint root that has one (URL names are folder names)."""
    from nlivis.app.paths import checkpoint_roots

    if not name or "/" in name or "\\" in name or name in {".", ".."}:
        return None
    return next((root / name for root in checkpoint_roots() if (root / name).is_dir()), None)


# ---------------------------------------------------------------- the current pair

def current_pair() -> dict[str, Any]:
    """The pair the user last analysed on any page: premise, hypothesis, gold label or None, source (a split
    key or "typed"), and for a split row its `number` (0-based row), `id` and `genre`."""
    return dict(st.session_state.get(_PAIR, DEFAULT_PAIR))


def pair_version() -> int:
    """Grows each time the pair is set; a pair form re-reads the pair when it saw an older version."""
    return int(st.session_state.get(_PAIR_VERSION, 0))


def set_current_pair(pair: dict[str, Any]) -> None:
    """Make `pair` the one every page analyses next (session and URL)."""
    st.session_state[_PAIR] = dict(pair)
    st.session_state[_PAIR_VERSION] = pair_version() + 1
    write_url()


def split_row_pair(split: str, row: int) -> tuple[dict[str, Any] | None, str | None]:
    """(the pair dict of row `row` of local split `split`, None), or (None, why there is no such row)."""
    from nlivis.app.loading import read_local_split

    pairs, error = read_local_split(split)
    if error:
        return None, error
    if not 0 <= row < len(pairs):
        return None, f"{split} has rows 0–{len(pairs) - 1}; there is no row {row}"
    chosen = pairs[row]
    return {"premise": chosen.premise, "hypothesis": chosen.hypothesis, "gold": chosen.label, "source": split,
            "number": row, "id": chosen.id, "genre": chosen.genre}, None


def remember_results(results: dict[str, PairResult]) -> dict[str, PairResult] | None:
    """Keep the last two distinct analysed pairs' results; returns the previous pair's results (or None)."""
    history: list[dict[str, PairResult]] = st.session_state.get(_RESULTS, [])
    key = lambda rs: next(((r.premise, r.hypothesis) for r in rs.values()), None)  # noqa: E731
    if history and key(history[-1]) == key(results):
        history[-1] = results
    else:
        history = (history + [results])[-2:]
    st.session_state[_RESULTS] = history
    return history[0] if len(history) == 2 else None


# ---------------------------------------------------------------- the compared variant

def current_variant() -> str | None:
    """The checkpoint folder name the Ablations page compares the others with, when one was chosen."""
    return st.session_state.get(_VARIANT)


def set_variant(name: str | None) -> None:
    st.session_state[_VARIANT] = name
    write_url()


# ---------------------------------------------------------------- the URL

def url_parameters() -> dict[str, str]:
    """The selection as query parameters (only those that are set)."""
    params: dict[str, str] = {}
    names = [Path(p).name for p in selected_paths()]
    if names:
        params[MODELS] = ",".join(names)
    pair = st.session_state.get(_PAIR)
    if pair is not None:
        if pair.get("source", TYPED) != TYPED and pair.get("number") is not None:
            params[SPLIT] = str(pair["source"])
            params[PAIR] = str(int(pair["number"]))
        else:  # as the models read it: whitespace collapsed, cut to MAX_SENTENCE_CHARS (a URL stays short)
            from nlivis.app.loading import clean_sentence

            params[PREMISE] = clean_sentence(str(pair.get("premise", "")))[0]
            params[HYPOTHESIS] = clean_sentence(str(pair.get("hypothesis", "")))[0]
    variant = current_variant()
    if variant:
        params[VARIANT] = variant
    return params


def write_url() -> None:
    """Put the selection into the URL, leaving parameters the app does not own alone."""
    params = url_parameters()
    for name in URL_PARAMETERS:
        if name in params:
            if st.query_params.get(name) != params[name]:
                st.query_params[name] = params[name]
        elif name in st.query_params:
            del st.query_params[name]
    st.session_state[_URL_WRITTEN] = params


def _url_now() -> dict[str, str]:
    return {name: st.query_params[name] for name in URL_PARAMETERS if name in st.query_params}


def follow_url() -> list[str]:
    """Call first on every page: a URL that differs from what the app last wrote (a link, a reload, a
    click-through) replaces the parts of the selection it names; then the selection is written back.
    Returns (and shows as warnings) what in the URL could not be followed; the rest is followed."""
    given = _url_now()
    problems: list[str] = []
    if given and given != st.session_state.get(_URL_WRITTEN):
        problems = _apply(given)
    for problem in problems:
        st.warning(problem)
    write_url()
    return problems


def _apply(given: dict[str, str]) -> list[str]:
    """Take over the parameters in `given`; returns what could not be taken over, with why."""
    problems: list[str] = []
    if MODELS in given:
        names = [n.strip() for n in given[MODELS].split(",") if n.strip()]
        found, unknown = [], []
        for name in names:
            folder = find_checkpoint_folder(name)
            (found if folder is not None else unknown).append(str(folder) if folder else name)
        if unknown:
            problems.append(f"The link names checkpoint(s) {', '.join(unknown)} that are not in the checkpoint folders; "
                            + ("the others are loaded." if found else "no model from the link is loaded."))
        if found or not unknown:
            st.session_state[_SELECTED] = list(dict.fromkeys(found))
    pair: dict[str, Any] | None = None
    if PAIR in given or SPLIT in given:
        split = given.get(SPLIT) or current_pair().get("source")
        row_text = given.get(PAIR, "0")
        if not row_text.isdigit():
            problems.append(f"pair={row_text!r} in the link is not a row number (0-based)")
        elif not split or split == TYPED:
            problems.append("the link gives a pair row but no split")
        else:
            pair, error = split_row_pair(str(split), int(row_text))
            if error:
                problems.append(f"The link's pair cannot be shown: {error}")
    elif PREMISE in given or HYPOTHESIS in given:
        pair = {"premise": given.get(PREMISE, ""), "hypothesis": given.get(HYPOTHESIS, ""), "gold": None, "source": TYPED}
    if pair is not None and pair != st.session_state.get(_PAIR):
        st.session_state[_PAIR] = pair
        st.session_state[_PAIR_VERSION] = pair_version() + 1
    if VARIANT in given:
        st.session_state[_VARIANT] = given[VARIANT] or None
    return problems


# ---------------------------------------------------------------- click-through

def pair_link_params(split: str, row: int) -> dict[str, str]:
    """Query parameters that open row `row` of `split` with the models loaded now."""
    params = {SPLIT: str(split), PAIR: str(int(row))}
    names = [Path(p).name for p in selected_paths()]
    if names:
        params[MODELS] = ",".join(names)
    variant = current_variant()
    if variant:
        params[VARIANT] = variant
    return params


def open_pair(split: str, row: int, models: Iterable[str] | None = None) -> None:
    """Switch to the Pair explorer showing row `row` (0-based) of `split`, with the models loaded now (or the
    checkpoint folders `models`, by path or folder name). The browser's Back returns to the page before."""
    params = pair_link_params(split, row)
    if models is not None:
        params[MODELS] = ",".join(Path(str(m)).name for m in models)
    st.switch_page(PAIR_EXPLORER, query_params=params)
