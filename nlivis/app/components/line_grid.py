"""A data grid whose line a click anywhere on chooses — for tables whose line stands for a number or a group (a
tag's accuracy, a line of the before → after report), not for lists of pairs (`pair_list` draws those).

Streamlit's grid selects a cell on a click on a cell, and a row only on its checkbox at the left; a reader clicks
the line. Both selections on at once make any click choose a line."""
from __future__ import annotations

from typing import Any

LINE_CLICKS = ("single-row", "single-cell")
"""`st.dataframe(selection_mode=...)` for a table whose line a click on any of its cells (a cell selection) or on
its checkbox (a row selection) chooses."""


def clicked_line(event: Any) -> tuple[int | None, Any]:
    """(the line, 0-based, that a click on a LINE_CLICKS table chose — None when nothing is selected —, the whole
    selection, which tells one click from the next)."""
    selection = getattr(event, "selection", None)
    rows = list(getattr(selection, "rows", []) or [])
    cells = [list(cell) for cell in getattr(selection, "cells", []) or []]
    line = int(rows[0]) if rows else int(cells[0][0]) if cells else None
    return line, [rows, cells]
