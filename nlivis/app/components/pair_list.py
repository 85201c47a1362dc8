"""A list of pairs behind a number, as a paged table: the reader picks an order and a page, and a click on a
line opens that pair in the Pair explorer, carrying the list (so the explorer can say where the pair came from
and step through the same list with Previous / Next). Pages give the list as a `state.ListRef`; the rows come
from `lists.resolve`, the same code the explorer uses.

The table is a small component of its own (Streamlit's components v2: no iframe, the page's own DOM), not a data
grid: a click anywhere on a line, or Enter on it, opens its pair, where a grid's click selects a cell; and a new
tab does not load the grid's code for it: the Data map's grid alone held its map back ~0.4 s, the list now costs it
nothing measurable (bench/RESULTS.md, sessions 33 and 34). The server writes every cell's text (`cell_text`); the
browser puts it in the table as text, never as markup."""
from __future__ import annotations

import math
from functools import cache, partial
from numbers import Integral, Real
from typing import Any, Sequence

import numpy as np
import pandas as pd
import streamlit as st

from nlivis.analysis.pair_lists import SORTS
from nlivis.app import state
from nlivis.app.components import controls, figures, lists
from nlivis.app.components.frame import EXPLORER
from nlivis.app.text import MISSING, is_missing, md

PAGE_SIZE = 50
"""Lines per page of a pair list: enough to scan, few enough to draw at once."""


def cell_text(value: Any) -> str:
    """What a list's cell says: a missing value as `MISSING` (as in the Markdown tables), a truth value as yes / no,
    a fraction to three decimals, a whole number as it is (a row id takes no thousands separator), a list of tags
    joined by commas."""
    if isinstance(value, (list, tuple, np.ndarray)):
        return ", ".join(cell_text(item) for item in value)
    if is_missing(value):
        return MISSING
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, Integral):
        return str(int(value))
    if isinstance(value, Real):
        return f"{float(value):.3f}"
    return str(value)


def table_data(frame: pd.DataFrame, current: int | None = None) -> dict[str, Any]:
    """What the browser's half draws: the column names, each line's cells as text (`cell_text`), which columns
    hold numbers (right-aligned), and the line to mark and scroll to (`current`, 0-based, or None)."""
    numeric = [bool(pd.api.types.is_numeric_dtype(frame[column])) and not pd.api.types.is_bool_dtype(frame[column])
               for column in frame.columns]
    return {"columns": [str(column) for column in frame.columns], "numeric": numeric, "current": current,
            "rows": [[cell_text(value) for value in line] for line in frame.itertuples(index=False)]}


PAIR_TABLE_JS = """
export default function ({ parentElement, data, setTriggerValue }) {
  let box = parentElement.querySelector(".nlivis-pair-table");
  if (!box) {
    box = parentElement.appendChild(document.createElement("div"));
    box.className = "nlivis-pair-table";
  }
  const drawn = JSON.stringify(data);
  if (box.nlivisDrawn !== drawn) {  // a rerun that changed nothing keeps the table, its scroll and focus
    box.nlivisDrawn = drawn;
    const table = document.createElement("table");
    table.setAttribute("aria-label", "Pairs: a click on a line, or Enter on it, opens that pair");
    const head = table.createTHead().insertRow();
    data.columns.forEach((name, i) => {
      const cell = head.appendChild(document.createElement("th"));
      cell.textContent = name;
      if (data.numeric[i]) cell.className = "number";
    });
    const body = table.createTBody();
    data.rows.forEach((cells, line) => {
      const row = body.insertRow();
      row.dataset.line = line;
      row.tabIndex = 0;  // a table's row keeps its role: a screen reader reads its cells
      cells.forEach((text, i) => {
        const cell = row.insertCell();
        cell.textContent = text;
        cell.title = text;
        if (data.numeric[i]) cell.className = "number";
      });
    });
    box.replaceChildren(table);
    const current = body.rows[data.current];
    if (current) {  // back from the pair this line opened: the line marked, and scrolled to inside the box
      current.classList.add("current");
      box.scrollTop = current.offsetTop - (box.clientHeight - current.offsetHeight) / 2;
    }
  }
  const open = row => { if (row) setTriggerValue("open", Number(row.dataset.line)); };
  box.onclick = event => open(event.target.closest("tr[data-line]"));
  box.onkeydown = event => {
    if (event.key !== "Enter") return;
    const row = event.target.closest("tr[data-line]");
    if (row) { event.preventDefault(); open(row); }
  };
}
"""
"""The browser's half: draws the lines as a table of text cells (again only when they changed), each line
focusable, sending its position as the trigger value `open` on a click or Enter."""
PAIR_TABLE_CSS = """
.nlivis-pair-table { position: relative; max-height: 26rem; overflow: auto; font-size: 0.875rem;
                     border: 1px solid var(--st-dataframe-border-color, #e6e9ef);
                     border-radius: var(--st-base-radius, 0.5rem); }
.nlivis-pair-table table { border-collapse: collapse; width: 100%; }
.nlivis-pair-table th { position: sticky; top: 0; z-index: 1; text-align: left; font-weight: 400;
                        background: var(--st-secondary-background-color, #f0f2f6); color: inherit; opacity: 1; }
.nlivis-pair-table th, .nlivis-pair-table td { padding: 0.3rem 0.6rem; white-space: nowrap; max-width: 20rem;
                                               overflow: hidden; text-overflow: ellipsis;
                                               border-bottom: 1px solid var(--st-dataframe-border-color, #e6e9ef); }
.nlivis-pair-table .number { text-align: right; font-variant-numeric: tabular-nums; }
.nlivis-pair-table tbody tr { cursor: pointer; }
.nlivis-pair-table tbody tr:hover, .nlivis-pair-table tbody tr:focus {
  background: var(--st-secondary-background-color, #f0f2f6); outline: none; }
.nlivis-pair-table tbody tr.current td:first-child { box-shadow: inset 3px 0 var(--st-primary-color, #ff4b4b); }
.nlivis-pair-table tbody tr:focus-visible { outline: 2px solid var(--st-primary-color, #ff4b4b); outline-offset: -2px; }
"""
"""A grid's look in the app's theme: a header that stays while the lines scroll, long texts cut with an ellipsis
(the whole text on hover), numbers right-aligned, the line under the pointer or the keyboard shaded, the line a
reader came back from marked at its left edge."""


@cache
def pair_table() -> Any:
    """The component that draws a list's lines, registered once per process."""
    return st.components.v2.component("nlivis_pair_table", js=PAIR_TABLE_JS, css=PAIR_TABLE_CSS, isolate_styles=False)


def clicks_key(table: str) -> str:
    """The session-state key of list table `table`'s component, where its `open` trigger arrives."""
    return f"{table}_lines"


def show(page: str, key: str, ref: state.ListRef, *, columns: Sequence[str] | None = None, sortable: bool = True,
         open_models: Sequence[str] | None = None, page_size: int = PAGE_SIZE, where: Any = st) -> lists.PairList:
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
    back_here = state.arrived() and state.pair_list() == ref  # e.g. Back from the pair this list opened
    came_from = listed.position_of(state.pair_seen()) if back_here else None
    current = came_from - start if came_from is not None and start <= came_from < start + len(shown) else None
    clicked = partial(_line_clicked, table, listed, ref, start, len(shown), open_models)  # a callback gets no arguments
    with where.container(key=table):
        result = pair_table()(data=table_data(shown, current), key=clicks_key(table), on_open_change=clicked)
    where.caption(f":material/touch_app: Pairs {start + 1:,}–{min(start + page_size, total):,} of {total:,}. Click "
                  "anywhere on a line (or press Enter on it) to open that pair in the Pair explorer with "
                  + ("these checkpoints" if open_models else "the loaded models")
                  + "; it steps through this list with Previous / Next, and the browser's Back returns here.")
    for problem in st.session_state.get(_PROBLEM, {}).pop(table, []):
        where.warning(problem)
    if back_here:  # the list in the middle of the window, its line marked (the browser's half)
        state.scroll_into_view(table)
    handled = st.session_state.setdefault(_HANDLED, set())
    acted_on = table in handled
    handled.discard(table)
    picked = opened_line(result, len(shown))
    if picked is not None and not acted_on:  # a click no callback saw (a test sets the component's state)
        handled.add(table)  # the rerun sees the same trigger
        open_position(listed, ref, start + picked, open_models, table)
        st.rerun()
    return listed


def opened_line(result: Any, lines: int) -> int | None:
    """The line (0-based) whose click caused this run, from the component's `result`; None for anything else,
    or a value that names no line of the `lines` shown."""
    line = figures.trigger_value(result, "open")
    if isinstance(line, Integral) and not isinstance(line, bool) and 0 <= line < lines:
        return int(line)
    return None


_PROBLEM = "nlivis_pair_list_problem"
"""A clicked line that cannot be opened: table key → what to say, shown by the run after the click."""
_HANDLED = "nlivis_pair_list_handled"
"""The tables whose click has been acted on: the run after it, which still holds the click's trigger (the page
runs when the pair could not be opened), must not act on it again. A table's entry goes at its next drawing."""


def _line_clicked(table: str, listed: lists.PairList, ref: state.ListRef, start: int, lines: int,
                  open_models: Sequence[str] | None) -> None:
    """The table's callback (run before the next run of the page): a click on one of its `lines` opens its pair."""
    picked = opened_line(st.session_state.get(clicks_key(table)), lines)
    if picked is not None:
        st.session_state.setdefault(_HANDLED, set()).add(table)
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
