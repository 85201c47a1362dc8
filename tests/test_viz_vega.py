"""Vega-Lite specs' shared parts (nlivis.viz.vega.common): the look, data values, token axes, clicks, CSV."""
import csv
import io
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nlivis.viz.vega.common import (DARK, LIGHT, axis_labels, clicked_values, data_csv, look, plain, point_selection,
                                    records, themed,
                                    token_axis, visible_tokens)


def test_the_look_is_streamlits_in_either_theme_and_a_spec_keeps_its_own_settings():
    light, dark = look(), look(dark=True)
    assert light["axis"]["labelColor"] == LIGHT["text"] and dark["axis"]["labelColor"] == DARK["text"]
    assert light["title"]["color"] == LIGHT["heading"] and dark["axis"]["gridColor"] == DARK["grid"]
    assert light["background"] == dark["background"] == "transparent"
    spec = {"mark": "rect", "config": {"axis": {"labelFontSize": 9}, "padding": 3}}
    drawn = themed(spec, dark=True)
    assert drawn["config"]["axis"]["labelFontSize"] == 9  # the spec's own value wins
    assert drawn["config"]["axis"]["labelColor"] == DARK["text"] and drawn["config"]["padding"] == 3
    assert drawn["mark"] == "rect" and spec["config"] == {"axis": {"labelFontSize": 9}, "padding": 3}  # untouched
    json.dumps(drawn)  # plain JSON


def test_records_are_plain_rows_with_null_for_what_json_cannot_hold():
    rows = records({"x": np.array([1, 2]), "v": np.array([0.5, np.nan], dtype=np.float32), "t": ["a", "b"]})
    assert rows == [{"x": 1, "v": 0.5, "t": "a"}, {"x": 2, "v": None, "t": "b"}]
    assert all(type(row["x"]) is int for row in rows)
    json.dumps(rows, allow_nan=False)
    with pytest.raises(ValueError, match="one length"):
        records({"x": [1, 2], "y": [1]})


floats = st.floats(allow_nan=True, allow_infinity=True, width=32)
columns = st.one_of(
    st.lists(floats, min_size=4, max_size=4).map(lambda v: np.array(v, dtype=np.float32)),
    st.lists(st.floats(allow_nan=True, allow_infinity=True), min_size=4, max_size=4).map(np.array),
    st.lists(st.integers(-2**40, 2**40), min_size=4, max_size=4).map(np.array),
    st.lists(st.booleans(), min_size=4, max_size=4).map(np.array),
    st.lists(st.text(max_size=3), min_size=4, max_size=4).map(np.array),
    st.lists(st.one_of(floats.map(np.float32), st.floats(), st.integers(), st.text(max_size=3), st.none(),
                       st.booleans().map(np.bool_)), min_size=4, max_size=4))


@settings(max_examples=200)
@given(st.lists(columns, min_size=1, max_size=3))
def test_records_hold_each_value_as_plain_gives_it_whatever_the_column_s_type(given_columns):
    """A column converted whole (numpy numbers) or value by value gives each row exactly what `plain` gives for
    that value: Python's own numbers and strings, None for NaN and infinities."""
    rows = records({f"c{i}": column for i, column in enumerate(given_columns)})
    expected = [{f"c{i}": plain(column[r].item() if isinstance(column, np.ndarray) else column[r])
                 for i, column in enumerate(given_columns)} for r in range(4)]
    assert json.dumps(rows, allow_nan=False) == json.dumps(expected, allow_nan=False)
    assert all(type(row[name]) is type(want[name]) for row, want in zip(rows, expected) for name in row)


def test_a_token_axis_labels_each_position_even_a_repeated_token():
    tokens = ["the", "cat", "saw", "the", "\u200d", "extraordinarily-long-token"]
    axis = token_axis(tokens, "x", title="hypothesis")
    labels = axis_labels(axis)
    assert len(labels) == len(tokens) and labels[0] == labels[3] == "the"
    assert labels[4] == "ZWJ" and labels[5].endswith("…") and len(labels[5]) <= 14
    assert axis["title"] == "hypothesis" and axis["labelAngle"] == -45
    assert token_axis(["w"] * 40, "x")["labelFontSize"] == 9 and "labelAngle" not in token_axis(tokens, "y")
    assert visible_tokens(["\u200d", "a"]) == ["ZWJ", "a"]
    # Vega's expression parser reads a string literal "if" as a signal's name: the labels are one string, split
    assert axis_labels(token_axis(["if", 'say "hi"', "a\u001fb"])) == ["if", 'say "hi"', "ab"]
    assert '"if"' not in token_axis(["if"])["labelExpr"]


def test_a_click_gives_back_the_fields_of_the_point_selection():
    param = point_selection("pick", ["pair", "split"])
    assert param["select"]["fields"] == ["pair", "split"]
    event_selection = {"pick": [{"pair": 12, "split": "dev"}], "other": {}}  # st.vega_lite_chart's event.selection
    assert clicked_values(event_selection, "pick") == [{"pair": 12, "split": "dev"}]
    assert clicked_values({"pick": {}}, "pick") == [] and clicked_values({}, "pick") == []
    assert clicked_values(None, "pick") == []


def test_the_csv_holds_every_row_and_field_in_order():
    spec = {"data": {"values": [{"a": 1, "b": "x,y"}, {"a": None, "c": 2.5}]}}
    assert list(csv.reader(io.StringIO(data_csv(spec)))) == [["a", "b", "c"], ["1", "x,y", ""], ["", "", "2.5"]]
    assert data_csv({"mark": "rect"}) == ""


@settings(max_examples=30, deadline=None)
@given(st.lists(st.fixed_dictionaries({"token": st.text(max_size=6), "value": st.floats(allow_nan=False,
                                                                                        allow_infinity=False)}),
                max_size=8))
def test_the_csv_reads_back_as_the_rows(rows):
    text = data_csv({"data": {"values": records({"token": [r["token"] for r in rows],
                                                 "value": [r["value"] for r in rows]})}})
    read = list(csv.DictReader(io.StringIO(text, newline="")))
    assert [(row["token"], float(row["value"])) for row in read] == [(r["token"], r["value"]) for r in rows]
