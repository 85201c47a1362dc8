"""The current pair on the pages that show one (Pair explorer, DIIN interaction space, Gates, Attribution):
the pair form (type a pair, or pick a split row, then Analyse), what the pair is and why it is here (gold
label, tags, the list it was opened from with Previous / Next, links to the other pair pages), and the one
call that reads it with every loaded model."""
from __future__ import annotations

from typing import Any, Callable, Sequence

import streamlit as st

from nlivis.app import background, cache, paths, state
from nlivis.app.cache import samples as cached_samples
from nlivis.app.components import lists
from nlivis.app.text import md
from nlivis.data.split_choice import split_label
from nlivis.workflows.reading import PairReading

SOURCES = ("type a pair", "pick from a dataset split")


def _sync(key: str, value: Any) -> None:
    """Give widget `key` the pair's value when it has none or the pair changed since it last got one."""
    marker = f"nlivis_synced_{key}"
    version = state.pair_version()
    if key not in st.session_state or st.session_state.get(marker) != version:
        st.session_state[key] = value
        st.session_state[marker] = version


def _mark_synced(*keys: str) -> None:
    for key in keys:
        st.session_state[f"nlivis_synced_{key}"] = state.pair_version()


def picker(page: str, models: Sequence[cache.Model]) -> cache.ShownPair:
    """The pair form; returns the pair to analyse — the last one analysed on any page (shared with them and the
    URL). A half-typed edit is never analysed: the form sends on Analyse. The split picker starts on the
    models' own split (`cache.split_choice`) and marks training splits."""
    ref = state.pair()
    shown, problem = cache.resolve_pair(ref)
    if shown is None:
        st.warning(f"The current pair cannot be shown ({md(problem)}); showing the default pair instead.")
        state.set_pair(state.DEFAULT_PAIR)
        ref, shown = state.DEFAULT_PAIR, cache.resolve_pair(state.DEFAULT_PAIR)[0]
    source_key = f"{page}_pair_source"
    _sync(source_key, SOURCES[1] if ref.is_row else SOURCES[0])
    source = st.radio("Pair", SOURCES, horizontal=True, key=source_key)
    if source == SOURCES[0]:
        premise_key, hypothesis_key = f"{page}_premise", f"{page}_hypothesis"
        _sync(premise_key, shown.premise)
        _sync(hypothesis_key, shown.hypothesis)
        with st.form(f"{page}_pair_form", border=False):
            left, right = st.columns(2)
            premise = left.text_area("Premise", key=premise_key, height=90)
            hypothesis = right.text_area("Hypothesis", key=hypothesis_key, height=90)
            submitted = st.form_submit_button("Analyse", type="primary", key=f"{page}_analyse")
        if submitted and ((premise, hypothesis) != (shown.premise, shown.hypothesis) or ref.is_row):
            state.set_pair(state.PairRef(premise=premise, hypothesis=hypothesis))
            _mark_synced(premise_key, hypothesis_key, source_key)
            return cache.ShownPair(premise, hypothesis)
    else:
        splits = list(cache.local_splits())
        if not splits:
            st.info("No dataset split found: set a data folder on the Home page (layout of ../shared/data) to pick pairs.")
        else:
            start, trained = cache.split_choice(models, splits)
            split_key, row_key = f"{page}_pair_split", f"{page}_pair_row"
            _sync(split_key, ref.split if ref.is_row and ref.split in splits else start)
            _sync(row_key, int(ref.row) if ref.is_row else 0)
            with st.form(f"{page}_row_form", border=False):
                left, right, button = st.columns([3, 2, 1], vertical_alignment="bottom")
                split = left.selectbox("Split", splits, key=split_key,
                                       format_func=lambda key: split_label(key, trained))
                number = right.number_input("Row (0-based)", min_value=0, step=1, key=row_key)
                submitted = button.form_submit_button("Analyse", type="primary", key=f"{page}_analyse_row")
            if submitted:
                picked = state.PairRef(split=split, row=int(number))
                found, problem = cache.resolve_pair(picked)
                if found is None:
                    st.error(md(problem))
                else:
                    state.set_pair(picked)
                    _mark_synced(split_key, row_key, source_key)
                    return found
    return shown


def clean(shown: cache.ShownPair) -> tuple[str, str, list[str]]:
    """(premise, hypothesis, notes about cutting) of a pair, ready for the models."""
    premise, premise_note = state.clean_sentence(shown.premise)
    hypothesis, hypothesis_note = state.clean_sentence(shown.hypothesis)
    return premise, hypothesis, [n for n in (premise_note, hypothesis_note) if n]


def read_all(models: Sequence[cache.Model], shown: cache.ShownPair,
             needs: frozenset[type] | None = None) -> dict[str, PairReading]:
    """Every model's reading of the pair, by model name — the one "analyse this pair with these models" call of
    the pair pages; a model that cannot read it gets an error box. With `needs`, only models that declare one of
    those trace entry types (`Model.trace_types`) are run."""
    premise, hypothesis, _ = clean(shown)
    readings: dict[str, PairReading] = {}
    for model in models:
        if needs is not None and not (model.trace_types & needs):
            continue
        reading, error = cache.read_pair(model, premise, hypothesis)
        if error:
            st.error(f"{md(model.name)}: {md(error)}")
        elif reading is not None:
            readings[model.name] = reading
    return readings


def describe(shown: cache.ShownPair, trained: dict[str, list[str]] | None = None) -> None:
    """The pair's sentences, gold label, and where it is (split row, pair id, genre)."""
    lines = [f"**Premise:** {md(shown.premise)}", f"**Hypothesis:** {md(shown.hypothesis)}"]
    where = []
    if shown.gold:
        where.append(f"**Gold:** {md(shown.gold)}")
    if shown.genre:
        where.append(f"genre {md(shown.genre)}")
    if shown.split is not None:
        where.append(f"row {shown.row} of {md(split_label(shown.split, trained or {}))}"
                     + (f" (pair id {md(shown.id)})" if shown.id is not None else ""))
    if where:
        lines.append(" · ".join(where))
    st.markdown("  \n".join(lines))


def came_from(page: str, ahead: Callable[[cache.ShownPair], None] | None = None) -> None:
    """Where the current pair was opened from (the list's description and its position in it), with Previous /
    Next through that list; nothing for a pair typed or picked by row. `ahead(next pair)`, when given, is
    called with the pair Next would show (the page prepares it in the background)."""
    ref = state.pair_list()
    if ref is None:
        return
    listed = lists.resolve(ref)
    via = lists.VIA.get(ref.get("via", ""), "a list")
    position = listed.position_of(state.pair())
    if position is None:
        st.caption(f":material/format_list_bulleted: Opened from {md(via)}: {md(listed.description)}"
                   + (f" ({md(listed.problem)})" if listed.problem else " (the pair is no longer in it)"))
        return
    total = len(listed.frame)
    text, previous, following = st.columns([6, 1, 1], vertical_alignment="center")
    text.markdown(f":material/format_list_bulleted: Opened from {md(via)}: **{md(listed.description)}** — "
                  f"pair {position + 1:,} of {total:,}")
    previous.button("Previous", key=f"{page}_list_previous", disabled=position == 0, icon=":material/arrow_back:",
                    on_click=_step, args=(listed, ref, position - 1))
    following.button("Next", key=f"{page}_list_next", disabled=position >= total - 1, icon=":material/arrow_forward:",
                     on_click=_step, args=(listed, ref, position + 1))
    if ahead is not None and position < total - 1:
        upcoming, _ = cache.resolve_pair(listed.pair_at(position + 1))
        if upcoming is not None:
            ahead(upcoming)


def _step(listed: lists.PairList, ref: state.ListRef, position: int) -> None:
    """Previous / Next, run as the click's callback (before the page's run): the pair at `position` of the list,
    its URL written at once (`state.step_to`)."""
    state.step_to(listed.pair_at(position), ref)


def links_to_other_pages(current: paths.Page) -> None:
    """Links that open the same pair (and list) in the other pair pages."""
    params = state.pair_link(state.pair(), state.pair_list())
    targets = [page for page in paths.PAIR_PAGES if page != current]
    for column, target in zip(st.columns(len(targets)), targets):
        column.page_link(target.path, label=f"This pair in {target.title}", icon=":material/open_in_new:",
                         query_params=params)


def pair_tags(shown: cache.ShownPair) -> tuple[frozenset[str], tuple[frozenset[str], dict[str, str]] | None]:
    """(gold tags of the pair when its split has published ones, (its automatic tags, tags that cannot be decided
    here) — or None while they are computed in the background)."""
    gold: frozenset[str] = frozenset()
    if shown.split is not None and shown.id is not None:
        gold = cached_samples.gold_tags(shown.split)[0].get(shown.id, frozenset())
    return gold, background.automatic_tags(shown.premise, shown.hypothesis)
