"""A chart whose only input is a click on a mark, drawn on the server (nlivis.viz.vega.export's click numbers and
components.figures' clickable figure): every mark tells which row it stands for, and a click gives the page what
Vega-Lite's own selection would have given."""
import html
import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from nlivis.viz.vega.curves import training_curves
from nlivis.viz.vega.datamap import data_map_spec
from nlivis.viz.vega.errors import CELL, CELL_FIELDS, confusion_matrices
from nlivis.viz.vega.export import (MAX_CLICKABLE_ROWS, click_selection, clicked_point, own_rows, page_json,
                                   page_svg, start_converter)
from nlivis.viz.vega.projection import CLICKED, LINK_FIELDS, projection_scatter

CLICKABLE_MARK = re.compile(r'<(\w+) role="graphics-symbol" data-click="(\d+)"'
                            r'(?: data-hover="1" aria-label="([^"]*)")?')
"""A clickable mark in a page's SVG: its element, row number and hover text."""


def clickable_marks(svg: str) -> list[tuple[str, int, str]]:
    return [(tag, int(number), html.unescape(title)) for tag, number, title in CLICKABLE_MARK.findall(svg)]


names = st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=1, max_size=12)


@settings(max_examples=12, deadline=None)
@given(st.data())
def test_every_cell_of_confusion_matrices_drawn_on_the_server_is_numbered_with_its_own_row(data):
    """Whatever the models' and labels' names (quotes, semicolons, markup) and counts: each cell's mark carries
    the number of the row it was drawn from — its hover text, which Vega wrote from the mark's own datum, names
    that row's model, labels and count — and each (model, gold, predicted) is clicked back exactly once."""
    labels = data.draw(st.lists(names, min_size=2, max_size=3, unique=True))
    models = data.draw(st.lists(names, min_size=1, max_size=3, unique=True))
    matrices = {m: (np.array(data.draw(st.lists(st.lists(st.integers(0, 500), min_size=len(labels),
                                                                  max_size=len(labels)),
                                                         min_size=len(labels), max_size=len(labels)))), labels)
                for m in models}
    spec = confusion_matrices(matrices, normalize=data.draw(st.booleans()))
    rows = own_rows(spec)
    marks = clickable_marks(page_svg(page_json(spec, dark=False)))
    assert {tag for tag, _, _ in marks} == {"path"} and len(marks) == len(rows) == len(models) * len(labels) ** 2
    clicked = []
    for _, number, title in marks:
        row = rows[number]
        assert title == f"model: {row['model']}; gold: {row['gold']}; predicted: {row['predicted']}; pairs: {row['pairs']}"
        name, point = clicked_point(spec, number)
        assert name == CELL and tuple(point) == CELL_FIELDS
        clicked.append(tuple(point.values()))
    assert sorted(clicked) == sorted((m, g, p) for m in models for g in labels for p in labels)


def test_a_projection_point_clicks_back_its_split_and_row_and_only_its_marks_are_numbered():
    frame = pd.DataFrame({"id": ["a", "b", "c"], "x": [0.0, 1.0, 2.0], "y": [1.0, 0.0, 2.0],
                          "gold": ["neutral", "entailment", "neutral"], "premise": ["<b>one</b>", "two", "three"],
                          "hypothesis": ["x", "y", "z"], "split": ["snli_dev"] * 3, "row": [7, 8, 9]})
    spec = projection_scatter(frame, "gold")
    svg = page_svg(page_json(spec, dark=True))
    marks = clickable_marks(svg)
    assert sorted(number for _, number, _ in marks) == [0, 1, 2]
    for _, number, title in marks:
        assert f"premise: {frame.premise[number]}" in title and "\u241f" not in title
        assert clicked_point(spec, number) == (CLICKED, {"split": "snli_dev", "row": int(frame.row[number])})
    assert svg.count("data-click") == 3, "the legend's symbols are not clickable"


def test_only_a_single_click_selection_over_the_spec_s_own_rows_is_drawn_clickable_on_the_server():
    frame = pd.DataFrame({"x": [0.0], "y": [1.0], "gold": ["neutral"], "split": ["d"], "row": [1]})
    assert click_selection(projection_scatter(frame, "gold")) == (CLICKED, LINK_FIELDS)
    assert click_selection(projection_scatter(frame.drop(columns=["split", "row"]), "gold")) is None  # no link
    box_and_click = data_map_spec(np.array([0.1]), np.array([0.5]), ["1/2 right"], ["7"], (0.2, 0.75, 0.25), {},
                                  "a map", colour_name="correctness")
    hover = training_curves([{"step": 1, "loss": 0.5}, {"step": 2, "loss": 0.4}])
    point = {"name": "p", "select": {"type": "point", "fields": ["a"], "on": "click"}}
    named = {"datasets": {"t": [{"a": 1}]}, "data": {"name": "t"}, "mark": "point", "params": [point]}
    twice = {"data": {"values": [{"a": 1}]}, "layer": [{"mark": "point", "params": [point]},
                                                       {"mark": "bar", "params": [{**point, "name": "q"}]}]}
    too_many = {"data": {"values": [{"a": i} for i in range(MAX_CLICKABLE_ROWS + 1)]}, "mark": "point",
                "params": [point]}
    for spec in (box_and_click, hover, named, twice, too_many):
        assert click_selection(spec) is None
    assert click_selection({**too_many, "data": {"values": too_many["data"]["values"][:3]}}) == ("p", ("a",))


@pytest.mark.parametrize("number", [None, -1, 4, "4", "x", True, [], {}])
def test_a_click_number_that_names_no_row_selects_nothing(number):
    spec = confusion_matrices({"m": (np.eye(2), ["a", "b"])})
    assert clicked_point(spec, number) is None
    assert clicked_point(spec, "3") == (CELL, {"model": "m", "gold": "b", "predicted": "b"})


def clicked_confusions():
    import numpy as np
    import streamlit as st

    from nlivis.app.components import figures
    from nlivis.viz.vega.errors import confusion_matrices

    spec = confusion_matrices({"m": (np.array([[3, 1], [2, 5]]), ["yes", "no"])})
    st.session_state["before"] = figures.drawn_event("cells")
    st.session_state["event"] = figures.show(spec, "cells", clickable=True)


def test_a_click_on_a_server_drawn_figure_reaches_the_page_as_vega_lite_s_selection(monkeypatch):
    """With the converter warm, a clickable confusion matrix is the server's SVG in the clickable component (no
    Vega-Lite chart); the component's clicked row comes back as the selection event Vega-Lite would send, both
    from `show` and, before the figure is drawn again, from `drawn_event`."""
    monkeypatch.delenv("NLIVIS_FIGURES", raising=False)
    start_converter()
    app = AppTest.from_function(clicked_confusions, default_timeout=30).run()
    assert not app.exception and not app.get("vega_lite_chart") and len(app.get("download_button")) == 2
    assert app.session_state["event"] == {"selection": {}} and app.session_state["before"] is None
    app.session_state["figure_cells"] = {"click": 2}  # what the component sets when the third cell is clicked
    app.run()
    clicked = {"selection": {CELL: [{"model": "m", "gold": "no", "predicted": "yes"}]}}
    assert app.session_state["event"] == clicked and app.session_state["before"] == clicked
    monkeypatch.setenv("NLIVIS_FIGURES", "vega-lite")
    app = AppTest.from_function(clicked_confusions, default_timeout=30).run()
    assert len(app.get("vega_lite_chart")) == 1


def test_a_single_view_without_a_width_fills_the_page_s_share_as_streamlit_draws_it():
    """A scatter that names no width is drawn as wide as its column, as Streamlit's `width="stretch"` draws it in
    the browser (Vega-Lite's own default is 200 px); a faceted chart keeps its panels' own size."""
    from nlivis.viz.vega.export import page_width

    frame = pd.DataFrame({"x": [0.0, 1.0], "y": [1.0, 0.0], "gold": ["a", "b"], "split": ["d", "d"], "row": [1, 2]})
    for columns in (1, 2):
        svg = page_svg(page_json(projection_scatter(frame, "gold"), dark=False, columns=columns))
        width = float(re.search(r'<svg[^>]* width="([\d.]+)"', svg).group(1))
        assert page_width(columns) <= width < page_width(columns) + 200  # the plot's width, plus axes and legend
    faceted = page_svg(page_json(confusion_matrices({"m": (np.eye(2), ["a", "b"])}), dark=False))
    assert float(re.search(r'<svg[^>]* width="([\d.]+)"', faceted).group(1)) < page_width(1) / 2
