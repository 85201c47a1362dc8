"""A Vega-Lite spec as an SVG file (nlivis.viz.vega.export) and the app's button for it (components.figures)."""
import re

import numpy as np
import pandas as pd
import pytest
import torch
from streamlit.testing.v1 import AppTest

from nlivis.models.trace import FeatureMaps
from nlivis.viz.vega.bars import comparison_bars
from nlivis.viz.vega.channel_grid import channel_grid
from nlivis.viz.vega.common import SCHEMA, message_spec
from nlivis.viz.vega.datamap import data_map_spec
from nlivis.viz.vega.export import EXPORT_WIDTH_PX, fixed_width, spec_svg


def svg_width(svg: str) -> float:
    return float(re.search(r'<svg[^>]* width="([\d.]+)"', svg).group(1))


def test_every_container_width_becomes_pixels_and_the_spec_is_untouched():
    spec = {"width": "container", "vconcat": [{"width": "container", "mark": "bar"}, {"width": 300}],
            "layer": [{"encoding": {"x": {"field": "width"}}}], "title": "container"}
    fixed = fixed_width(spec, 500)
    assert fixed["width"] == 500 and [part["width"] for part in fixed["vconcat"]] == [500, 300]
    assert fixed["title"] == "container" and fixed["layer"][0]["encoding"]["x"]["field"] == "width"
    assert spec["width"] == "container" and spec["vconcat"][0]["width"] == "container"


def test_a_bar_chart_becomes_an_svg_with_every_bar_its_values_and_title():
    table = pd.DataFrame({"checkpoint": ["esim-snli-small", "gcnn-snli-small"], "accuracy": [0.8125, 0.6875]})
    svg = spec_svg(comparison_bars(table, "checkpoint", "accuracy", title="SNLI dev accuracy"))
    assert svg.startswith("<svg") and svg.rstrip().endswith("</svg>")
    assert "SNLI dev accuracy" in svg and "81.3%" in svg and "68.8%" in svg  # the printed values
    assert svg.count('aria-roledescription="bar"') == 2
    assert EXPORT_WIDTH_PX <= svg_width(svg) < EXPORT_WIDTH_PX + 200  # the container's width, plus axis and padding


def test_a_faceted_heatmap_keeps_its_tokens_and_cells():
    premise, hypothesis = ["a", "dog", "runs"], ["it", "moves"]
    entry = FeatureMaps(maps=torch.arange(2 * 3 * 2, dtype=torch.float32).reshape(1, 2, 3, 2), stage="interaction",
                        token_axes=True)
    svg = spec_svg(channel_grid(entry, 0, premise, hypothesis, channels=[0, 1]))
    assert "channel 0" in svg and "channel 1" in svg
    assert all(f">{token}<" in svg for token in premise + hypothesis)
    assert svg.count('aria-roledescription="rect mark"') == 2 * 3 * 2  # one cell per channel, premise and hypothesis token
    drawn = sorted(float(value) for value in re.findall(r"activation: ([\d.]+);", svg))
    assert drawn == list(range(2 * 3 * 2))


def test_a_data_map_sent_as_a_typed_frame_exports_every_point_and_its_legend():
    spec = data_map_spec(np.array([0.1234, 0.2, 0.05]), np.array([0.5, 0.9, 0.1]), ["3/6 right", "6/6 right", "3/6 right"],
                         ["7", "12", "3"], (0.2, 0.75, 0.25), {"hard-to-learn": 1}, "a map", colour_name="correctness")
    assert isinstance(spec["data"]["values"], pd.DataFrame), "the points travel as typed columns"
    svg = spec_svg(spec)
    assert "a map" in svg and "3/6 right (2)" in svg and "6/6 right (1)" in svg and "hard-to-learn: 1" in svg
    points = re.search(r'class="mark-symbol role-mark[^"]*"[^>]*>(.*?)</g>', svg).group(1)
    fills = re.findall(r'fill="([^"]+)"', points)
    assert len(fills) == 3 and fills[0] == fills[2] != fills[1], "every point, coloured by its group"
    assert isinstance(spec["data"]["values"], pd.DataFrame), "the spec itself is not changed"


def test_a_message_spec_exports_its_words():
    assert "nothing to compare" in spec_svg(message_spec("nothing to compare"))


def test_nothing_is_fetched_for_a_spec_that_names_a_url():
    with pytest.raises(ValueError, match="not allowed"):
        spec_svg({"$schema": SCHEMA, "data": {"url": "https://example.com/rows.csv"}, "mark": "bar"})


def draw_one_spec():
    import pandas as pd

    from nlivis.app.components.figures import show
    from nlivis.viz.vega.bars import comparison_bars

    show(comparison_bars(pd.DataFrame({"checkpoint": ["a"], "accuracy": [0.5]}), "checkpoint", "accuracy"), "bars")


def test_a_drawn_spec_offers_its_csv_and_its_svg_side_by_side():
    app = AppTest.from_function(draw_one_spec).run()
    assert not app.exception
    buttons = app.get("download_button")
    assert [button.label for button in buttons] == ["data (CSV)", "figure (SVG)"]
    assert len(app.get("vega_lite_chart")) == 1
    assert np.all([button.proto.deferred_file_id or button.proto.url for button in buttons])


def test_a_gates_chart_exports_every_view_from_its_own_table():
    """The gates' views read named tables (`datasets`), not one shared table: the SVG still draws each view's
    marks from its own rows (a bar per token, a cell per token and dimension) at its values' heights."""
    from nlivis.viz.vega.gates import Strip, gate_strips

    spec = gate_strips([Strip(np.full((6, 4), 0.25), ["the", "cat", "sat", "on", "the", "mat"], "premise gate"),
                        Strip(np.full((3, 4), 0.75), ["a", "cat", "sits"], "hypothesis gate")])
    svg = spec_svg(spec)
    views = re.findall(r'<g class="mark-rect role-mark concat_(\d)_marks"[^>]*>(.*?)</g>', svg)
    assert [(int(view), marks.count("<path")) for view, marks in views] == [(0, 6), (1, 6 * 4), (2, 3), (3, 3 * 4)]
    bar_heights = [{float(h) for h in re.findall(r"v([\d.]+)h", marks)} for view, marks in views if view in "02"]
    assert bar_heights == [{0.25 * 80}, {0.75 * 80}]  # the bars' 80 px axis runs 0…1
    assert "premise gate" in svg and "hypothesis gate" in svg and ">sits<" in svg


def test_named_tables_go_to_the_browser_compact_and_the_spec_is_untouched():
    from nlivis.app.components.figures import compact_tables

    spec = {"datasets": {"cells": [{"dimension": 3, "token": "cat", "value": 0.5, "flag": True},
                                   {"dimension": 4, "token": "cat", "value": None, "flag": False}],
                         "big": [{"id": 2 ** 40}]}, "vconcat": []}
    sent = compact_tables(spec)
    cells = sent["datasets"]["cells"]
    assert cells.dtypes.astype(str).to_dict() == {"dimension": "int32", "token": "category", "value": "float32",
                                                  "flag": "bool"}
    assert cells["value"].isna().tolist() == [False, True] and list(cells["token"]) == ["cat", "cat"]
    assert str(sent["datasets"]["big"]["id"].dtype) == "int64"  # too big for int32
    assert isinstance(spec["datasets"]["cells"], list) and compact_tables({"mark": "bar"}) == {"mark": "bar"}


def draw_gates():
    import numpy as np

    from nlivis.app.components.figures import show
    from nlivis.viz.vega.gates import Strip, gate_strips

    show(gate_strips([Strip(np.full((3, 70), 0.5), ["a", "cat", "sits"], "gate")]), "gates")


def test_a_drawn_gates_chart_sends_each_view_its_own_arrow_table():
    import json

    from streamlit.dataframe_util import convert_arrow_bytes_to_pandas_df

    app = AppTest.from_function(draw_gates).run()
    assert not app.exception
    (chart,) = app.get("vega_lite_chart")
    tables = {dataset.name: convert_arrow_bytes_to_pandas_df(dataset.data.data) for dataset in chart.proto.datasets}
    assert {name: len(table) for name, table in tables.items()} == {"gate1_means": 3, "gate1_dimensions": 3 * 64}
    assert not chart.proto.data.data and "datasets" not in json.loads(chart.proto.spec)
    assert str(tables["gate1_dimensions"]["value"].dtype) == "float32"
    assert sorted(set(tables["gate1_dimensions"]["dimension"])) == list(range(64))
