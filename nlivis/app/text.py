"""Text from users and files, made safe to show through Streamlit's Markdown (st.markdown, st.caption,
st.warning, st.error, st.info, widget and expander labels).

A value from a URL, a typed sentence, a folder or file name is Markdown to Streamlit: `![x](http://host/x.png)`
would make the browser fetch that host, `[y](http://z)` show a foreign link, `**` or `:red[…]` restyle the page.
`md(value)` backslash-escapes every ASCII punctuation character (CommonMark lets any of them be escaped) and
turns line breaks into spaces, so the value reads as it was given; escapes do not stop Streamlit's GFM
autolinks (they are found in the text after escapes are read: `http\://host` still became a link to the
host), so a zero-width space is put inside `://`, `www.` and after `@`, which no reader sees. Compose messages
as `f"… {md(value)} …"`; a message that is plain text throughout (e.g. from `nlivis.app.state` or an
exception) goes through `md` whole. `code(value)` shows a
value (a path, a config name) as a code span: nothing inside one is Markdown, so it is not escaped (escapes
there would show as backslashes). `short_names` shortens checkpoint names for table
headers. `markdown_table` writes a small table (a line per model, per label) as a Markdown table of such text.
"""
from __future__ import annotations

import re
from numbers import Integral, Number
from os.path import commonprefix
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

_PUNCTUATION = re.compile(r"([!\"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~])")
_AUTOLINK = re.compile(r"://|(?i:www)\.|@.")
"""What GFM turns into a link by itself (a scheme's `://`, `www.`, an e-mail's `@`): a zero-width space goes
before the last character of each."""
_NO_LINK = "\u200b"


def md(value: Any) -> str:
    """`value` as Markdown that renders as the literal text (no links, images, formatting or directives)."""
    text = " ".join(str(value).splitlines()) if value is not None else ""
    text = _AUTOLINK.sub(lambda found: found.group(0)[:-1] + _NO_LINK + found.group(0)[-1], text)
    return _PUNCTUATION.sub(r"\\\1", text)


def short_names(names: Sequence[str]) -> dict[str, str]:
    """Column labels without the suffix every name shares ("gcnn" for "gcnn-snli-small" beside "esan-snli-small"),
    so five models fit in a table's width; the full name goes in the column's tooltip."""
    if len(names) < 2:
        return {name: name for name in names}
    cut = commonprefix([name[::-1] for name in names])[::-1]
    cut = cut[cut.find("-"):] if "-" in cut else ""  # cut at a dash, never inside a name
    shown = {name: name[:len(name) - len(cut)] if cut and name.endswith(cut) else name for name in names}
    return shown if len(set(shown.values())) == len(names) and all(shown.values()) else {name: name for name in names}


def code(value: Any) -> str:
    """`value` as a Markdown code span showing it literally (fenced with more backticks than it holds)."""
    text = " ".join(str(value).splitlines()) if value is not None else ""
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


MISSING = "–"
"""What a table cell shows for a missing value (None, NaN): not Python's `None`."""


def percent_formats(columns: Iterable[str]) -> dict[str, str]:
    """`markdown_table`'s formats showing the given 0–1 columns as percentages with two decimals (one format on
    every page), a difference (a column named "Δ …" or "difference …") with its sign."""
    return {column: "+.2%" if column.startswith(("Δ", "difference")) else ".2%" for column in columns}


def markdown_table(columns: Sequence[str], rows: Iterable[Sequence[Any]], formats: Mapping[str, str] | None = None,
                   marked: Sequence[bool] | None = None, mark: str = "red-background") -> str:
    """A GitHub-flavoured Markdown table (Streamlit's `st.markdown` draws it in the app's look) of `rows` under
    `columns`: every cell's text through `md` (a `|` in a text cannot split a cell), a number by its column's
    format spec in `formats` (".2%", ".3f"; else as Python writes it) and right-aligned, None or NaN as
    `MISSING`; the cells of a row whose `marked` entry is true are coloured with Streamlit's `:mark[…]`.

    Why: a small table as a data grid (`st.dataframe`, `st.table`) costs a new browser tab the grid's code, and on
    Error analysis the confusion matrix's element appeared 0.51–0.69 s after the run with the grids, 0.15–0.24 s
    with Markdown tables (bench/element_appearance.py, bench/RESULTS.md, session 32); Markdown is drawn by code every
    page has already loaded. Meant for tables of a few lines that need no sorting or scrolling."""
    formats = formats or {}
    rows = [list(row) for row in rows]
    if any(len(row) != len(columns) for row in rows):
        raise ValueError(f"every row needs {len(columns)} cells")
    numeric = [bool(rows) and all(_is_number(row[i]) or is_missing(row[i]) for row in rows) for i in range(len(columns))]
    lines = ["| " + " | ".join(_breakable(md(column)) or " " for column in columns) + " |",
             "|" + "|".join("---:" if right else "---" for right in numeric) + "|"]
    for index, row in enumerate(rows):
        cells = [_cell(value, formats.get(column)).strip() for column, value in zip(columns, row)]
        if marked is not None and marked[index]:
            cells = [f":{mark}[{cell}]" if cell else cell for cell in cells]  # no empty directive
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _breakable(header: str) -> str:
    """A column name that may break after its underscores (`mnli_hard_mismatched_test` is one word to the
    browser, and a table of such names ran past the page's edge): a zero-width space after each."""
    return header.replace("\\_", "\\_" + _NO_LINK)


def _is_number(value: Any) -> bool:
    return isinstance(value, Number) and not isinstance(value, bool)


def is_missing(value: Any) -> bool:
    """None, NaN, or pandas' NA or NaT (whose comparisons are themselves missing): a cell that shows `MISSING`."""
    if value is None:
        return True
    try:
        return bool(value != value)
    except TypeError:
        return True


def _cell(value: Any, spec: str | None) -> str:
    """One cell's Markdown: missing as `MISSING`, a truth value as yes / no (not Python's True), a number by `spec`, a whole number with thousands separators,
    anything else as its escaped text."""
    if is_missing(value):
        return MISSING
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if _is_number(value) and spec:
        return md(format(value, spec))
    if isinstance(value, Integral):  # a truth value was said above
        return md(f"{int(value):,}")
    return md(value)
