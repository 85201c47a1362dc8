"""The parts of the "over a dataset split" views (Gates, Attribution, Projection): a split and a sample size kept
in the view, a compute button whose result stays in the view (a link or Back shows it again, from the cache),
and how many pairs the models' token cut-offs shorten."""
from __future__ import annotations

from typing import Any, Sequence

import streamlit as st

from nlivis.app import cache, state
from nlivis.app.cache import samples as cached_samples
from nlivis.app.components import controls
from nlivis.app.text import md
from nlivis.data.split_choice import split_label


def split_and_size(page: str, models: Sequence[cache.Model], view: str, default_size: int, maximum: int, step: int,
                   minimum: int | None = None, split_name: str = "over", where: Any = st) -> tuple[str, int] | None:
    """(split, sample size) chosen in the view (`over=…&size=…`), starting on the models' own split; None (with
    a message) when there is no local split."""
    splits = list(cache.local_splits())
    if not splits:
        where.info(f"No dataset split found: set a data folder on the Home page to see {view}.")
        return None
    start, trained = cache.split_choice(models, splits)
    left, right = where.columns([2, 1])
    split = controls.select(page, split_name, "Split", splits, start, where=left,
                            format_func=lambda key: split_label(key, trained))
    total = cache.split_size(split) or default_size
    low = minimum if minimum is not None else step
    size = controls.number(page, "size", "Sample size (pairs, random with a fixed seed)", min(default_size, max(low, total)),
                           low, max(low, min(maximum, total)), where=right, slider=True, step=step)
    return split, size


def computed(page: str, label: str, what: str, signature: str, name: str = "computed") -> bool:
    """A button that starts a computation over a split; once pressed, `computed=<signature>` (e.g. the split
    and sample size) keeps the result in the view — shown again, from the cache, after a link or Back — until
    the signature changes (another split or size), which asks for the button again."""
    done, _ = state.value(page, name, "")
    state.forced(page, name)
    if st.button(label, key=f"{page}_{name}_button", help=what):
        done = signature
    done = done if done == signature else ""
    state.remember(page, name, done, "")
    return bool(done)


def sample_truncation(models: Sequence[cache.Model], items: Sequence[Any], split: str) -> None:
    """One caption per distinct truncation sentence over an analysed sample of `split`, naming its models."""
    said: dict[str, list[str]] = {}
    for model in models:
        text, pairs = cached_samples.sample_truncation(model, items)
        if pairs:
            said.setdefault(text, []).append(model.name)
    for text, names in said.items():
        st.caption(f"{md(', '.join(names))} on this sample of {md(split)}: {md(text)}.")


def split_truncation(models: Sequence[cache.Model], split: str) -> None:
    """One caption per distinct truncation sentence over all of `split` (from the feature cache, no spaCy run),
    or a hint when the split was never analysed on this machine."""
    said: dict[str, list[str]] = {}
    unknown = []
    for model in models:
        known, text, pairs = cached_samples.split_truncation(model, split)
        if not known:
            unknown.append(model.name)
        elif pairs:
            said.setdefault(text, []).append(model.name)
    for text, names in said.items():
        st.caption(f"{md(', '.join(names))} on {md(split)}: {md(text)}.")
    if unknown and len(unknown) == len(models):
        st.caption(f"How many pairs of {md(split)} the models' token cut-offs shorten is shown once the split has been "
                   "analysed here (`python -m nlivis prepare` or `evaluate`).")
