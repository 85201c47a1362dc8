"""The Train page's curves as a Vega-Lite spec (nlivis.viz.vega.curves): the rows drawn from metrics.jsonl lines,
the panels and series, colours that stay put while a run logs more, a lone first point and thousands."""
from __future__ import annotations

import functools
import importlib.util
import json
import math
from pathlib import Path

import pytest

from nlivis.viz.common import CATEGORY_COLOURS
from nlivis.viz.vega.common import data_csv, themed
from nlivis.viz.vega.curves import FEW_POINTS, PANELS_WIDTH_PX, curve_records, training_curves

TRAIN_LINE = {"step": 10, "epoch": 0.0649, "loss": 1.0976, "train_acc": 0.3516, "pairs_per_s": 23.15, "lr": 0.001,
              "time": 1795619872.5}
DEV_LINE = {"step": 154, "epoch": 1.0, "dev_acc": 0.6087, "best_dev_acc": 0.6087, "lr": 0.001, "time": 1795620391.8}
"""Two lines as the trainer writes them (checkpoints/gcnn-snli-small/metrics.jsonl): a logging window's train
numbers, an evaluation's dev numbers."""


def layer(panel: dict, mark: str) -> dict:
    return next(layer for layer in panel["layer"] if layer["mark"]["type"] == mark)


def test_each_logged_number_is_a_row_of_its_panel_and_series():
    rows = curve_records([TRAIN_LINE, DEV_LINE])
    assert rows == [
        {"panel": "loss", "series": "train", "metric": "loss", "step": 10, "epoch": 0.0649, "value": 1.0976},
        {"panel": "accuracy", "series": "train", "metric": "train_acc", "step": 10, "epoch": 0.0649, "value": 0.3516},
        {"panel": "pairs / s", "series": "train", "metric": "pairs_per_s", "step": 10, "epoch": 0.0649, "value": 23.15},
        {"panel": "accuracy", "series": "dev", "metric": "dev_acc", "step": 154, "epoch": 1.0, "value": 0.6087},
        {"panel": "accuracy", "series": "best dev", "metric": "best_dev_acc", "step": 154, "epoch": 1.0,
         "value": 0.6087}]
    assert data_csv(training_curves([TRAIN_LINE])).splitlines()[:2] == [
        "panel,series,metric,step,epoch,value", "loss,train,loss,10,0.0649,1.0976"]


def test_what_cannot_be_drawn_is_left_out():
    lines = [{"epoch": 0.5, "loss": 1.0}, {"step": 5, "loss": math.nan, "train_acc": "n/a", "dev_acc": True},
             {"step": 6, "loss": math.inf, "dev_loss": 0.9}]
    assert curve_records(lines) == [{"panel": "loss", "series": "dev", "metric": "dev_loss", "step": 6, "epoch": None,
                                     "value": 0.9}]
    assert curve_records(lines, "epoch") == [{"panel": "loss", "series": "train", "metric": "loss", "step": None,
                                              "epoch": 0.5, "value": 1.0}]


def test_a_panel_for_each_logged_kind_side_by_side_on_one_step_axis():
    spec = training_curves([TRAIN_LINE, DEV_LINE])
    panels = spec["hconcat"]
    assert [panel["title"] for panel in panels] == ["loss", "accuracy", "pairs / s"]
    assert all(panel["transform"] == [{"filter": {"field": "panel", "equal": panel["title"]}}] for panel in panels)
    assert sum(panel["width"] for panel in panels) <= PANELS_WIDTH_PX
    assert spec["resolve"]["scale"]["x"] == "shared" and spec["resolve"]["scale"]["y"] == "independent"
    lines = layer(panels[1], "line")["encoding"]
    assert lines["x"]["field"] == "step" and lines["x"]["axis"]["tickMinStep"] == 1
    assert lines["y"]["axis"]["format"] == ".1~%" and lines["y"]["scale"]["zero"] is False
    tooltip = layer(panels[1], "circle")["encoding"]["tooltip"]
    assert [entry["field"] for entry in tooltip] == ["series", "step", "epoch", "value"]
    assert tooltip[-1] == {"field": "value", "type": "quantitative", "title": "accuracy", "format": ".1%"}
    only_dev = training_curves([DEV_LINE])["hconcat"]
    assert [panel["title"] for panel in only_dev] == ["accuracy"] and only_dev[0]["width"] == PANELS_WIDTH_PX
    by_epoch = training_curves([TRAIN_LINE, DEV_LINE], "epoch")["hconcat"][0]
    assert layer(by_epoch, "line")["encoding"]["x"]["field"] == "epoch"
    with pytest.raises(ValueError, match="step"):
        training_curves([TRAIN_LINE], "time")


def test_a_series_keeps_its_colour_and_dash_when_dev_appears():
    before = layer(training_curves([TRAIN_LINE])["hconcat"][0], "line")["encoding"]
    after = layer(training_curves([TRAIN_LINE, DEV_LINE])["hconcat"][1], "line")["encoding"]
    assert before["color"]["scale"] == {"domain": ["train"], "range": [CATEGORY_COLOURS[0]]}
    assert after["color"]["scale"] == {"domain": ["train", "dev", "best dev"], "range": list(CATEGORY_COLOURS[:3])}
    assert after["strokeDash"]["scale"]["range"][2] != after["strokeDash"]["scale"]["range"][1], \
        "best dev is dashed where it lies on the dev line"
    assert after["color"]["legend"]["orient"] == "bottom"


def test_a_lone_first_point_is_a_dot_and_thousands_are_lines_with_a_dot_under_the_pointer():
    one = training_curves([TRAIN_LINE])
    assert len(one["data"]["values"]) == 3 and len(one["hconcat"]) == 3
    dots = layer(one["hconcat"][0], "circle")["encoding"]["opacity"]
    assert dots["value"] == 1, "a line of one point draws nothing: the dot is the point"
    many = [{**TRAIN_LINE, "step": step} for step in range(1, 3001)]
    spec = training_curves(many)
    assert len(spec["data"]["values"]) == 9000
    dots = [layer(panel, "circle") for panel in spec["hconcat"]]
    assert all(dot["encoding"]["opacity"]["value"] == 0 for dot in dots)
    names = [dot["params"][0]["name"] for dot in dots]
    assert len(set(names)) == 3, "each panel's hover selection has its own name"
    assert all(dot["encoding"]["opacity"]["condition"]["param"] == name for dot, name in zip(dots, names))
    assert all(dot["params"][0]["select"]["nearest"] for dot in dots)
    edge = training_curves([{**TRAIN_LINE, "step": step} for step in range(FEW_POINTS)])
    assert layer(edge["hconcat"][0], "circle")["encoding"]["opacity"]["value"] == 1


def test_before_anything_drawable_is_logged_the_chart_says_so():
    assert training_curves([])["mark"]["text"] == "no metrics logged yet"
    assert training_curves([{"epoch": 1.0, "loss": 1.0}])["mark"]["text"] == "no metrics logged yet"
    nothing_drawable = training_curves([{"step": 3, "lr": 0.001}])
    assert nothing_drawable["mark"]["text"] == "metrics logged so far have no loss or accuracy"


@functools.cache
def vega_lite_schema() -> dict:
    """The Vega-Lite v6 JSON schema that altair (a dependency of streamlit) ships, read without importing it."""
    found = importlib.util.find_spec("altair")
    if found is None or not found.submodule_search_locations:
        pytest.skip("altair (streamlit's dependency) is not installed: no Vega-Lite schema to validate against")
    path = Path(found.submodule_search_locations[0]) / "vegalite" / "v6" / "schema" / "vega-lite-schema.json"
    if not path.is_file():
        pytest.skip(f"no Vega-Lite v6 schema at {path}")
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("lines", [[TRAIN_LINE], [TRAIN_LINE, DEV_LINE], [],
                                   [{**TRAIN_LINE, "step": step} for step in range(100)]])
def test_the_spec_is_valid_vega_lite(lines):
    jsonschema = pytest.importorskip("jsonschema")
    spec = themed(training_curves(lines))
    jsonschema.validate(json.loads(json.dumps(spec, allow_nan=False)), vega_lite_schema())
