"""A list of pairs behind a number, as a paged table: the reader picks an order and a page, and a click on a
line opens that pair in the Pair explorer, carrying the list (so the explorer can say where the pair came from
and step through the same list with Previous / Next). Pages give the list as a `state.ListRef`; the rows come
from `lists.resolve`, the same code the explorer uses."""
from __future__ import annotations

import math
from functools import partial
from typing import Any, Sequence

import streamlit as st

from nlivis.analysis.pair_lists import SORTS
from nlivis.app import state
from nlivis.app.components import controls, lists
from nlivis.app.components.frame import EXPLORER
from nlivis.app.text import md

PAGE_SIZE = 50
"""Lines per page of a pair list: enough to scan, few enough to draw at once."""
LINE_CLICKS = ("single-row", "single-cell")
"""A table's line opens on a click anywhere on it: on any of its cells (a cell selection) or on its checkbox at
the left (a row selection); with rows alone, a click on a cell would only select the cell."""


def clicked_line(event: Any) -> tuple[int | None, Any]:
    """(the line, 0-based, that a click on a LINE_CLICKS table chose — None when nothing is selected —, the whole
    selection, which tells one click from the next)."""
    selection = getattr(event, "selection", None)
    rows = list(getattr(selection, "rows", []) or [])
    cells = [list(cell) for cell in getattr(selection, "cells", []) or []]
    line = int(rows[0]) if rows else int(cells[0][0]) if cells else None
    return line, [rows, cells]


def show(page: str, key: str, ref: state.ListRef, *, columns: Sequence[str] | None = None, sortable: bool = True,
         open_models: Sequence[str] | None = None, page_size: int = PAGE_SIZE, where: Any = st,
         column_config: dict[str, Any] | None = None) -> lists.PairList:
    """The list `ref` names as a paged table with its order and page kept in the view (`<key>_order`,
    `<key>_page`); a clicked line opens its pair with the loaded models (or the checkpoints `open_models`): the
    click's callback asks for the switch, which the next run makes before the page runs (`frame.page`)."""
    if sortable:
        order = controls.select(page, f"{key}_order", "Order", list(SORTS), "row", where=where)
        ref = ref.with_fields(order=order)
    listed = lists.resolve(ref)
    for note in listed.notes:
        where.caption(md(note))
    if listed.problem and listed.frame.empty:
        where.info(md(listed.problem))
        return listed
    total = len(listed.frame)
    if not total:
        where.info(f"No pair: {md(listed.description)}.")
        return listed
    pages = max(1, math.ceil(total / page_size))
    number = controls.number(page, f"{key}_page", f"Page (of {pages})", 1, 1, pages, where=where) if pages > 1 else 1
    start = (number - 1) * page_size
    shown = listed.frame.iloc[start:start + page_size]
    if columns is not None:
        shown = shown[[c for c in columns if c in shown.columns]]
    table = f"{page}_{key}_table"
    clicked = partial(_line_clicked, table, listed, ref, start, open_models)  # st.dataframe passes a callback no args
    event = where.dataframe(shown, key=table, on_select=clicked, selection_mode=LINE_CLICKS, hide_index=True,
                            width="stretch", column_config=column_config)
    where.caption(f":material/touch_app: Pairs {start + 1:,}–{min(start + page_size, total):,} of {total:,}. Click "
                  "anywhere on a line to open that pair in the Pair explorer with "
                  + ("these checkpoints" if open_models else "the loaded models")
                  + "; it steps through this list with Previous / Next, and the browser's Back returns here.")
    for problem in st.session_state.get(_PROBLEM, {}).pop(table, []):
        where.warning(problem)
    if state.arrived() and state.pair_list() == ref:  # e.g. Back from the pair this list opened: back to the list
        state.scroll_into_view(table)
    picked, selection = clicked_line(event)
    if state.new_event(table, selection) and picked is not None:  # a selection no click made (set in the session)
        open_position(listed, ref, start + picked, open_models, table)
        st.rerun()
    return listed


_PROBLEM = "nlivis_pair_list_problem"
"""A clicked line that cannot be opened: table key → what to say, shown by the run after the click."""


def _line_clicked(table: str, listed: lists.PairList, ref: state.ListRef, start: int,
                  open_models: Sequence[str] | None) -> None:
    """The table's callback (run before the next run of the page): a new click on a line opens its pair."""
    picked, selection = clicked_line(st.session_state.get(table))
    if state.new_event(table, selection) and picked is not None:
        open_position(listed, ref, start + picked, open_models, table)


def open_position(listed: lists.PairList, ref: state.ListRef, position: int, open_models: Sequence[str] | None,
                  table: str) -> None:
    """Open the pair at `position` of a list in the Pair explorer (the list goes with it) at the start of the next
    run (`state.switch_at_next_run`), or say below table `table` why it cannot be opened."""
    if not listed.opens(position):
        split = listed.split or listed.frame.iloc[position].get("split")
        st.session_state.setdefault(_PROBLEM, {}).setdefault(table, []).append(
            f"That pair is not in the local copy of {md(split)}, so it cannot be opened.")
        return
    params = state.pair_link(listed.pair_at(position), ref)
    if open_models:
        params[state.MODELS] = ",".join(open_models)
    state.switch_at_next_run(EXPLORER, params)
