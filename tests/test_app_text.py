"""`text.markdown_table`: what a reader sees is what was given, for any text, and numbers as their column says."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from nlivis.app.text import MISSING, markdown_table
from tests.fixtures.markdown_tables import read_tables

TEXT = st.text(st.one_of(st.characters(blacklist_categories=("Cs", "Cc")), st.sampled_from("|\\*_[]():/@`#<>!\n-")),
               max_size=30)
"""Any text a file or a user gives: Markdown's and tables' own characters, line breaks, any script."""


def shown(text: str) -> str:
    """A cell's text as a reader sees it: line breaks as spaces, the ends trimmed (a table cell's), and no
    zero-width space (`md` puts one inside what would become a link)."""
    return " ".join(text.splitlines()).replace("\u200b", "").strip()


@settings(max_examples=200, deadline=None)
@given(st.lists(TEXT, min_size=1, max_size=4, unique_by=shown).filter(lambda names: all(map(shown, names))),
       st.data())
def test_any_text_reads_back_as_given_in_its_own_cell(columns, data):
    rows = data.draw(st.lists(st.lists(TEXT, min_size=len(columns), max_size=len(columns)), max_size=5))
    marked = data.draw(st.lists(st.booleans(), min_size=len(rows), max_size=len(rows)))
    (table,) = read_tables(markdown_table(columns, rows, marked=marked))
    assert [shown(name) for name in table.columns] == [shown(name) for name in columns]
    assert [[shown(cell) for cell in line] for line in table.itertuples(index=False)] == \
        [[shown(cell) for cell in line] for line in rows]
    assert table.attrs["marked"] == [m and any(map(shown, line)) for m, line in zip(marked, rows)], \
        "a marked line is coloured (a line of empty cells has nothing to colour)"


def test_numbers_by_their_column_format_and_missing_values_as_a_dash():
    text = markdown_table(["model", "count", "accuracy", "p", "note"],
                          [["a", np.int64(9824), np.float32(0.8512), 0.0123456, None],
                           ["b", 3, float("nan"), pd.NA, "x"]],
                          {"accuracy": ".2%", "p": ".3f"})
    (table,) = read_tables(text)
    assert table.to_dict("records") == [
        {"model": "a", "count": "9,824", "accuracy": "85.12%", "p": "0.012", "note": MISSING},
        {"model": "b", "count": "3", "accuracy": MISSING, "p": MISSING, "note": "x"}]
    assert text.splitlines()[1] == "|---|---:|---:|---:|---|", "number columns are right-aligned, text ones not"
    assert "None" not in text and "nan" not in text.lower()


def test_a_long_column_name_may_break_after_its_underscores_and_reads_the_same():
    text = markdown_table(["mnli_hard_mismatched_test", "plain"], [[0.5, 1]], {"mnli_hard_mismatched_test": ".1%"})
    assert text.splitlines()[0].count("_\u200b") == 3, "a break allowed after each underscore of a header"
    assert list(read_tables(text)[0].columns) == ["mnli_hard_mismatched_test", "plain"]


def test_truth_values_read_yes_and_no_whichever_library_made_them():
    (table,) = read_tables(markdown_table(["significant"], [[True], [np.bool_(False)], [np.True_], [None]]))
    assert list(table["significant"]) == ["yes", "no", "yes", MISSING]


def test_a_marked_line_is_coloured_and_the_others_not():
    text = markdown_table(["model", "right?"], [["a", "✓ right"], ["b", "✗ wrong"]], marked=[False, True])
    assert text.splitlines()[2:] == ["| a | ✓ right |", "| :red-background[b] | :red-background[✗ wrong] |"]
    assert read_tables(text)[0].attrs["marked"] == [False, True]


def test_a_line_of_the_wrong_length_is_refused():
    with pytest.raises(ValueError, match="2 cells"):
        markdown_table(["a", "b"], [["only one"]])
    assert list(read_tables(markdown_table(["a"], []))[0].columns) == ["a"], "no lines: the header alone"
