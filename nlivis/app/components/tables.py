"""A table of a few lines — one per model or per variant — drawn as a plain table, not a data grid.

A data grid (st.dataframe) is worth its cost for long lists (sorting, scrolling, a click on a line); a table of five
lines needs neither, and the first grid on a page cost a new tab 0.2-0.3 s of its main thread (the grid's code and
its canvas: session 31's profile of Ablations and Error analysis opened by URL). The numbers keep the formats the
grid's column settings gave them, and a missing number shows as a dash, never "None"."""
from __future__ import annotations

from typing import Any, Mapping, Sequence

import pandas as pd
import streamlit as st
from pandas.io.formats.style import Styler

PERCENT = "{:.2%}"
"""A 0-1 column as a percentage (what st.column_config.NumberColumn(format="percent") showed)."""
P_VALUE = "{:.1e}"
"""A p-value in scientific notation: 1.5e-18, not 0.0000000000000000015."""
WHOLE = "{:,.0f}"
"""A count with thousands separated."""
MISSING = "—"


def small_table(table: pd.DataFrame, formats: Mapping[str, str] = {}, percent: Sequence[str] = (),
                where: Any = st) -> None:
    """`table` as a plain table without its index (`styled`)."""
    where.table(styled(table, formats, percent), hide_index=True)


def styled(table: pd.DataFrame, formats: Mapping[str, str] = {}, percent: Sequence[str] = ()) -> Styler:
    """`table` with `percent` columns as percentages, each of `formats`' columns in its format (a `str.format`
    pattern) and missing values as a dash; columns named but absent are ignored."""
    shown = {column: PERCENT for column in percent}
    shown.update(formats)
    return table.style.format(na_rep=MISSING).format(
        {column: pattern for column, pattern in shown.items() if column in table.columns}, na_rep=MISSING)
