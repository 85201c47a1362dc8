"""A Vega-Lite spec as an SVG file or a page's figure drawn on the server (nlivis.viz.vega.export), and the app's
figure with its buttons (components.figures)."""
import json
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
from nlivis.viz.vega.export import (COLUMN_GAP_PX, EXPORT_WIDTH_PX, fixed_width, page_json, page_svg, page_width,
                                   spec_svg, stretched, takes_input)


def svg_width(svg: str) -> float:
    return float(re.search(r'<svg[^>]* width="([\d.]+)"', svg).group(1))


def test_every_container_width_becomes_pixels_and_the_spec_is_untouched():
    rows = [{"width": "container", "x": 1}]
    spec = {"width": "container", "vconcat": [{"width": "container", "mark": "bar", "data": {"values": rows}}, {"width": 300}],
            "layer": [{"encoding": {"x": {"field": "width"}}}], "title": "container", "datasets": {"t": rows}}
    fixed = fixed_width(spec, 500)
    assert fixed["vconcat"][0]["data"]["values"] is rows and fixed["datasets"]["t"] is rows  # data: not walked
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


def test_per_tag_differences_name_every_variant_in_full_in_the_legend():
    from nlivis.viz.vega.bars import delta_bars

    names = ["esan-snli-small-augmented", "esan-snli-small-augmented-seed2", "esan-snli-small-matched-seed2"]
    table = pd.DataFrame({"variant": names * 2, "tag": ["NEGATION"] * 3 + ["QUANTIFIER"] * 3,
                          "delta": [-0.05, 0.02, 0.01, -0.2, 0.1, 0.0], "significant": [True, False] * 3})
    legend = [text for text in re.findall(r"<text[^>]*>([^<]*)</text>", spec_svg(delta_bars(table)))
              if text.startswith("esan-")]
    assert legend == names, "each seed variant's whole name, not cut with an ellipsis"


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


# ---------------------------------------------------------------- a page's figure drawn on the server


def hover_titles(svg: str) -> list[str]:
    """Each mark's hover text in a page's SVG, as the browser shows it (XML character references read)."""
    import html

    return [html.unescape(text) for text in re.findall(r'data-hover="1" aria-label="([^"]*)"', svg)]


def test_a_heatmap_drawn_for_a_page_has_each_cell_s_tooltip_as_its_hover_text():
    """The tooltip's fields, titles and number format become each cell's hover text lines (its `aria-label`), in
    the cells' order, in place of Vega's own description of every encoded field; no mark has an SVG `<title>`."""
    from nlivis.viz.vega.heatmaps import colour, token_heatmap

    values = np.array([[0.123456, 0.5], [1.0, 0.0]])
    spec = token_heatmap(values, ["a", "dog"], ["it", "runs"], "softmax weight", ("premise token", "hypothesis token"),
                         ("premise tokens", "hypothesis tokens"), "two by two", colour("softmax weight", [0, 1], "blues"))
    before = json.dumps(spec, sort_keys=True)
    svg = page_svg(page_json(spec, dark=False))
    assert hover_titles(svg) == [f"premise token: {p}\nhypothesis token: {h}\nsoftmax weight: {v}"
                                 for p, h, v in [("a", "it", "0.1235"), ("a", "runs", "0.5000"),
                                                 ("dog", "it", "1.0000"), ("dog", "runs", "0.0000")]]
    assert "<title>" not in svg and svg.count('data-hover="1" aria-label=') == 4
    assert svg.count('aria-roledescription="rect mark"') == 4
    assert json.dumps(spec, sort_keys=True) == before, "the spec, shared by the caches, is not changed"


def test_hover_text_reads_escaped_field_names_constant_tooltips_and_views_without_aria():
    """A field whose name holds a dot (escaped for Vega-Lite), a tooltip that is one constant text, and a chart
    that turned ARIA off (the gates do, for the browser) all give their hover text."""
    spec = {"$schema": SCHEMA, "config": {"aria": False}, "data": {"values": [{"p.value": 0.01234, "name": "x"}]},
            "layer": [{"mark": {"type": "bar", "aria": False},
                       "encoding": {"x": {"field": "p\\.value", "type": "quantitative"},
                                    "y": {"field": "name", "type": "nominal"},
                                    "tooltip": [{"field": "name", "type": "nominal", "title": "test"},
                                                {"field": "p\\.value", "type": "quantitative", "format": ".1%"}]}},
                      {"mark": "rule", "encoding": {"x": {"datum": 0.05}, "tooltip": {"value": "threshold 5%"}}}]}
    assert hover_titles(page_svg(page_json(spec, dark=True))) == ["test: x\np.value: 1.2%", "threshold 5%"]


def test_a_page_figure_is_drawn_for_its_share_of_the_row_and_never_wider_than_its_container():
    spec = comparison_bars(pd.DataFrame({"checkpoint": ["a", "b"], "accuracy": [0.5, 0.75]}), "checkpoint", "accuracy")
    whole, half = (page_svg(page_json(spec, dark=False, columns=n)) for n in (1, 2))
    assert svg_width(half) < svg_width(whole) - page_width(1) / 3
    assert page_width(2) * 2 + COLUMN_GAP_PX == page_width(1)
    assert all('style="max-width: 100%; height: auto"' in svg for svg in (whole, half))


@pytest.mark.parametrize("tokens", [3, 12, 60])
def test_a_stack_of_views_drawn_for_a_page_fills_its_width_whatever_the_pair_s_length(tokens):
    """Gate strips are a vconcat of views with no width: Streamlit stretches each to the page in the browser, so
    the server draws each at the page's width too, not at Vega-Lite's 20 px a token (a three-token pair's strips
    were ~60 px wide); views side by side (the glance grid's rows) keep their own widths."""
    from nlivis.viz.vega.gates import Strip, gate_strips

    words = [f"w{i}" for i in range(tokens)]
    spec = gate_strips([Strip(np.full((tokens, 4), 0.5), words, "premise gate"),
                        Strip(np.full((tokens, 4), 0.5), words, "hypothesis gate")])
    prepared = json.loads(page_json(spec, dark=False, columns=1))
    assert [view["width"] for view in prepared["vconcat"]] == [page_width(1)] * 4
    assert "width" not in spec["vconcat"][0]  # the spec itself is not changed
    svg = page_svg(page_json(spec, dark=False, columns=1))
    assert page_width(1) <= svg_width(svg) < page_width(1) + 200  # the plot, its axis and legend
    row = {"hconcat": [{"mark": "bar"}, {"mark": "bar", "width": 90}]}
    assert stretched({"vconcat": [row, {"mark": "bar", "width": 300}, {"layer": []}]})["vconcat"] == [
        row, {"mark": "bar", "width": 300}, {"layer": [], "width": "container"}]


def test_data_a_json_file_cannot_hold_is_refused_before_the_converter():
    with pytest.raises(ValueError):
        page_json({"$schema": SCHEMA, "data": {"values": [{"x": float("nan")}]}, "mark": "point"}, dark=False)


def test_only_charts_that_read_the_pointer_stay_in_the_browser():
    clickable = data_map_spec(np.array([0.1]), np.array([0.5]), ["1/2 right"], ["7"], (0.2, 0.75, 0.25), {}, "a map",
                              colour_name="correctness")
    assert takes_input(clickable) and takes_input({"vconcat": [{"layer": [{"params": [{"name": "p", "select": "point"}]}]}]})
    assert not takes_input(comparison_bars(pd.DataFrame({"checkpoint": ["a"], "accuracy": [0.5]}), "checkpoint",
                                           "accuracy"))
    assert not takes_input({"params": [{"name": "width", "value": 3}], "data": {"values": [{"params": [{"select": 1}]}]}})


def figure_svg(body: str) -> str:
    """The SVG a server-drawn figure's element puts in the page (`components.figures.figure_html`): the JSON string
    its script assigns, which no text can end early."""
    (script,) = re.findall(r"<script>(.*)</script>$", body, flags=re.S)
    assert "<" not in script, "the sanitizer removes a script whose text looks like markup"
    (text,) = re.findall(r'innerHTML = ("(?:[^"\\]|\\.)*");', script)
    return json.loads(text)


def test_a_figure_s_text_cannot_end_its_script():
    from nlivis.app.components.figures import figure_html

    svg = '<svg class="marks"><text>&lt;/script&gt; a </script><b>"quoted"</b></text></svg>'
    body = figure_html(svg)
    assert body.count("</script>") == 1 and body.endswith("</script>") and figure_svg(body) == svg


def draw_a_static_and_a_clickable_figure():
    import numpy as np
    import pandas as pd

    from nlivis.app.components.figures import show
    from nlivis.viz.vega.bars import comparison_bars
    from nlivis.viz.vega.datamap import data_map_spec

    show(comparison_bars(pd.DataFrame({"checkpoint": ["a"], "accuracy": [0.5]}), "checkpoint", "accuracy",
                         title="accuracy of a"), "bars")
    show(data_map_spec(np.array([0.1]), np.array([0.5]), ["1/2 right"], ["7"], (0.2, 0.75, 0.25), {}, "a map",
                       colour_name="correctness"), "map", clickable=True)
    show({"data": {"values": [{"x": float("nan")}]}, "mark": "point"}, "unconvertible")


def test_a_page_sends_a_static_figure_as_svg_and_keeps_vega_lite_for_clicks(monkeypatch):
    """By default a figure that takes no input reaches the browser as the server's SVG, in a container keyed as
    a chart is; one that takes clicks is a Vega-Lite chart; one the converter cannot draw is left to the browser
    (nothing is lost); every one keeps its two downloads."""
    from nlivis.viz.vega.export import start_converter

    monkeypatch.delenv("NLIVIS_FIGURES", raising=False)
    start_converter()  # the server's warm-up does this; until then pages draw with Vega-Lite (below)
    app = AppTest.from_function(draw_a_static_and_a_clickable_figure).run()
    assert not app.exception
    (element,) = app.get("html")
    drawn = figure_svg(element.proto.body)
    assert drawn.startswith("<svg") and "accuracy of a" in drawn
    assert set(hover_titles(drawn)) == {"checkpoint: a\naccuracy: 50.0%"}  # the bar and its printed value
    assert len(app.get("vega_lite_chart")) == 2  # the map, and the spec the converter refused
    assert len(app.get("download_button")) == 6
    monkeypatch.setenv("NLIVIS_FIGURES", "vega-lite")
    app = AppTest.from_function(draw_a_static_and_a_clickable_figure).run()
    assert len(app.get("vega_lite_chart")) == 3 and not app.get("html")


def draw_ahead_then_show():
    import pandas as pd
    import streamlit as st

    from nlivis.app.components.figures import dark_theme, draw_ahead, show
    from nlivis.viz.vega.bars import comparison_bars

    spec = comparison_bars(pd.DataFrame({"checkpoint": ["a"], "accuracy": [0.5]}), "checkpoint", "accuracy",
                           title=st.session_state.get("title", "ahead"))
    draw_ahead(spec, dark_theme(), columns=2)  # what a page's work ahead does for the view it shows next
    show(spec, "ahead", where=st.columns(2)[0], columns=2)


def test_a_figure_drawn_ahead_is_the_one_the_page_shows(monkeypatch):
    """`draw_ahead` keeps the drawing under the key `show` looks up (same look, same share of the row): the
    converter runs once for both."""
    import uuid

    from nlivis.viz.vega import export

    monkeypatch.delenv("NLIVIS_FIGURES", raising=False)
    export.start_converter()
    drawn = []
    monkeypatch.setattr(export, "page_svg", lambda text: drawn.append(text) or "<svg class=\"marks\"></svg>")
    app = AppTest.from_function(draw_ahead_then_show)
    app.session_state["title"] = f"drawn ahead {uuid.uuid4()}"  # a spec no earlier test put in the shared cache
    app.run()
    assert not app.exception and len(drawn) == 1 and len(app.get("html")) == 1


def test_until_the_converter_is_warm_every_figure_is_drawn_in_the_browser(monkeypatch):
    """A cold converter would cost the first page after a launch seconds of the server's CPU: until the warm-up
    has started it, a figure that takes no clicks is a Vega-Lite chart, in a container keyed as its SVG is."""
    from nlivis.app.components import figures

    monkeypatch.delenv("NLIVIS_FIGURES", raising=False)
    monkeypatch.setattr(figures, "converter_ready", lambda: False)
    app = AppTest.from_function(draw_a_static_and_a_clickable_figure).run()
    assert not app.exception and not app.get("html") and len(app.get("vega_lite_chart")) == 3


@pytest.mark.parametrize("kind", ["heatmap", "channel grid", "gates"])
def test_token_labels_read_from_parameters_draw_the_same_svg(kind):
    """`with_label_params` (the server's faster form of a token axis) draws exactly what the split expression
    draws — tokens that are expression keywords or quotes included — in a single view, a faceted grid and views
    concatenated with axes of their own; the spec is not changed."""
    from nlivis.viz.vega.common import themed
    from nlivis.viz.vega.export import LABELS_PARAM, with_label_params
    from nlivis.viz.vega.gates import Strip, gate_strips
    from nlivis.viz.vega.heatmaps import colour, token_heatmap

    premise, hypothesis = ["if", "a", '"dog"', "runs", "."], ["it", "else", "moves"]
    if kind == "heatmap":
        spec = token_heatmap(np.arange(15.0).reshape(5, 3) / 15, premise, hypothesis, "weight", ("p", "h"),
                             ("premise", "hypothesis"), "a map", colour("weight", [0, 1], "blues"))
    elif kind == "channel grid":
        entry = FeatureMaps(maps=torch.arange(2 * 5 * 3, dtype=torch.float32).reshape(1, 2, 5, 3), stage="interaction",
                            token_axes=True)
        spec = channel_grid(entry, 0, premise, hypothesis, channels=[0, 1])
    else:
        spec = gate_strips([Strip(np.full((5, 4), 0.25), premise, "premise gate"),
                            Strip(np.full((3, 4), 0.75), hypothesis, "hypothesis gate")])
    before = json.dumps(spec, sort_keys=True, default=str)
    drawn = themed(spec)
    with_params = with_label_params(drawn)
    assert [p["name"] for p in with_params["params"]][0] == f"{LABELS_PARAM}0"
    assert LABELS_PARAM not in json.dumps(drawn, default=str)
    fast, slow = (re.sub(r"gradient_\d+", "gradient", page_svg(json.dumps(form, default=str)))  # the converter
                  for form in (with_params, drawn))  # numbers its colour bars' gradients across drawings
    assert fast == slow
    assert json.dumps(spec, sort_keys=True, default=str) == before


# ---------------------------------------------------------------- the key a drawing is kept under

from hypothesis import given, settings, strategies as hst  # noqa: E402

from nlivis.viz.vega.common import spec_fingerprint  # noqa: E402


def fingerprint_spec(values: list[float], groups: list[str], title: str) -> dict:
    frame = pd.DataFrame({"x": np.asarray(values, dtype=np.float32), "g": pd.Categorical(groups)})
    return {"title": title, "data": {"values": frame}, "mark": "point",
            "encoding": {"x": {"field": "x"}, "extra": np.arange(3)}}


@settings(max_examples=60, deadline=None)
@given(hst.lists(hst.tuples(hst.floats(-1e6, 1e6, width=32), hst.sampled_from(["a", "b", "c"])), min_size=1,
                 max_size=30),
       hst.text(max_size=8), hst.integers(0, 29), hst.floats(-1e6, 1e6, width=32))
def test_a_spec_fingerprint_is_the_same_for_equal_specs_and_changes_with_any_drawn_value(rows, title, where, other):
    values, groups = [v for v, _ in rows], [g for _, g in rows]
    print_ = spec_fingerprint(fingerprint_spec(values, groups, title))
    assert spec_fingerprint(fingerprint_spec(list(values), list(groups), title)) == print_  # a new, equal spec
    where %= len(values)
    if np.float32(other) != np.float32(values[where]):
        changed = [*values[:where], other, *values[where + 1:]]
        assert spec_fingerprint(fingerprint_spec(changed, groups, title)) != print_  # one value of the data
    regrouped = [*groups[:where], "z", *groups[where + 1:]]
    assert spec_fingerprint(fingerprint_spec(values, regrouped, title)) != print_  # one category
    assert spec_fingerprint(fingerprint_spec(values, groups, title + "!")) != print_  # the spec around the data


def test_a_spec_fingerprint_sees_column_names_category_order_arrays_and_records():
    base = fingerprint_spec([1.0, 2.0], ["a", "b"], "t")
    printed = spec_fingerprint(base)
    renamed = {**base, "data": {"values": base["data"]["values"].rename(columns={"x": "y"})}}
    reordered = {**base, "data": {"values": base["data"]["values"].assign(
        g=pd.Categorical(["a", "b"], categories=["b", "a"]))}}
    array_changed = {**base, "encoding": {**base["encoding"], "extra": np.arange(1, 4)}}
    as_records = {**base, "data": {"values": [{"x": 1.0, "g": "a"}, {"x": 2.0, "g": "b"}]}}
    as_records_changed = {**base, "data": {"values": [{"x": 1.0, "g": "a"}, {"x": 2.5, "g": "b"}]}}
    prints = [spec_fingerprint(s) for s in (renamed, reordered, array_changed, as_records, as_records_changed)]
    assert len({printed, *prints}) == 6


def test_the_server_remembers_a_kept_specs_fingerprint_by_the_object_and_holds_only_so_many(monkeypatch):
    from nlivis.app.cache import figures as cached_figures
    reads = []
    monkeypatch.setattr(cached_figures, "spec_fingerprint", lambda spec: reads.append(spec) or spec_fingerprint(spec))
    monkeypatch.setattr(cached_figures, "_fingerprints", type(cached_figures._fingerprints)())
    spec = fingerprint_spec([1.0, 2.0], ["a", "b"], "t")
    first = cached_figures.fingerprint(spec)
    assert cached_figures.fingerprint(spec) == first and len(reads) == 1  # the same object: not read again
    assert cached_figures.fingerprint(fingerprint_spec([1.0, 2.0], ["a", "b"], "t")) == first and len(reads) == 2
    for n in range(cached_figures.FINGERPRINTS_KEPT + 5):
        cached_figures.fingerprint({"n": n})
    assert len(cached_figures._fingerprints) == cached_figures.FINGERPRINTS_KEPT
    cached_figures.fingerprint(spec)
    assert len(reads) == 3 + cached_figures.FINGERPRINTS_KEPT + 5  # forgotten, so read again
