"""A list of pairs' lines as its component draws them (`pair_list.table_data`, `cell_text`) and the click it reads
back (`opened_line`): every cell is text the browser sets as text, and only a line the list shows opens."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

pytest.importorskip("streamlit")

from nlivis.app.components.pair_list import PAIR_TABLE_JS, cell_text, opened_line, table_data  # noqa: E402
from nlivis.app.text import MISSING  # noqa: E402

TEXT = st.text(st.one_of(st.characters(blacklist_categories=("Cs",)), st.sampled_from("<>&\"'`|\\*_[]\n")),
               max_size=40)
"""Any text a data file or a user gives, markup's own characters included."""


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(TEXT, st.integers(-10**12, 10**12), st.floats(allow_nan=True, allow_infinity=False),
                          st.one_of(st.none(), st.booleans())), max_size=8))
def test_every_cell_is_its_value_as_text_and_numbers_are_marked_as_numbers(lines):
    frame = pd.DataFrame(lines, columns=["premise", "row", "confidence", "flag"])
    data = table_data(frame)
    assert data["columns"] == ["premise", "row", "confidence", "flag"]
    assert data["numeric"][:3] == [False, True, True] or not lines
    assert len(data["rows"]) == len(lines)
    for (text, row, confidence, _), cells in zip(lines, data["rows"]):
        assert all(isinstance(cell, str) for cell in cells)
        assert cells[0] == text, "the text itself: the browser sets it as text, so nothing needs escaping"
        assert cells[1] == str(row), "an id without thousands separators"
        assert cells[2] == (MISSING if math.isnan(confidence) else f"{confidence:.3f}")


def test_missing_truth_and_tag_values_read_as_a_reader_expects():
    assert [cell_text(v) for v in (None, float("nan"), pd.NA, np.float32("nan"))] == [MISSING] * 4
    assert [cell_text(v) for v in (True, np.bool_(False))] == ["yes", "no"]
    assert cell_text(("negation", "quantifier")) == "negation, quantifier"
    assert cell_text(np.int64(9824)) == "9824" and cell_text(np.float64(0.12345)) == "0.123"


@pytest.mark.parametrize("result, lines, expected", [
    ({"open": 0}, 3, 0), ({"open": 2}, 3, 2), ({"open": 3}, 3, None), ({"open": -1}, 3, None),
    ({"open": True}, 3, None), ({"open": "1"}, 3, None), ({"open": None}, 3, None), ({}, 3, None), (None, 3, None),
])
def test_only_a_line_the_list_shows_opens(result, lines, expected):
    assert opened_line(result, lines) == expected


def test_the_browser_half_sets_text_never_markup():
    assert "textContent" in PAIR_TABLE_JS and "innerHTML" not in PAIR_TABLE_JS and "insertAdjacentHTML" not in PAIR_TABLE_JS


def _a_list_of_pairs():
    """A page that shows the list `lists.resolve` gives (the test puts one there)."""
    from nlivis.app import state
    from nlivis.app.components import pair_list

    pair_list.show("test", "pairs", state.ListRef.of("predictions", split="snli_dev"), sortable=False)


def test_a_line_that_cannot_be_opened_says_so_once_and_the_list_stays(monkeypatch):
    """Two split pairs, the second not in the local copy of its split (no row, no text), one text holding markup."""
    from streamlit.testing.v1 import AppTest

    from nlivis.app.components import lists
    from nlivis.app.components.pair_list import clicks_key
    from tests.test_app_pages import list_lines, send_trigger

    frame = pd.DataFrame({"split": ["snli_dev", "snli_dev"], "row": [3, None], "id": ["a", "b"],
                          "premise": ["A man <b>sleeps</b>.", ""], "hypothesis": ["Nobody sleeps.", ""]})
    monkeypatch.setattr(lists, "resolve", lambda ref: lists.PairList(frame, "two pairs"))
    app = AppTest.from_function(_a_list_of_pairs).run()
    assert not app.exception, app.exception
    lines = list_lines(app, "test_pairs_table")
    assert list(lines["premise"]) == ["A man <b>sleeps</b>.", ""], "the text as given: the browser sets it as text"
    send_trigger(app, clicks_key("test_pairs_table"), "open", 1)
    assert not app.exception, app.exception
    assert [w.value for w in app.warning] == ["That pair is not in the local copy of snli\\_dev, so it cannot be opened."]
    assert len(list_lines(app, "test_pairs_table")) == 2, "the list stays"
    app.run()
    assert not app.warning, "said once: the next run does not act on the same click"
