"""The all-models overview grid (a Vega-Lite spec), colour ranges that fit narrow values, and token axes that stay legible."""
from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from nlivis.models.trace import Alignment, FeatureMaps, MemoryKeys, Trace
from nlivis.viz import ModelReading
from nlivis.viz.common import RED_YELLOW_BLUE, fitted_range, scale_colours, token_ticks, visible_token
from nlivis.viz.vega.common import axis_labels, data_values
from nlivis.viz.vega.heatmaps import alignment_heatmap, memory_keys_heatmap
from nlivis.viz.vega.overview import overview_grid

PREMISE = ["the", "cat", "sat", "on", "the", "mat"]
HYPOTHESIS = ["a", "cat", "sits"]


def cross(rows: str, cols: str, layer: int, shape: tuple[int, int]) -> Alignment:
    weights = torch.softmax(torch.randn(1, *shape), dim=-1)
    return Alignment(weights, rows, cols, layer, f"{rows[0]}→{cols[0]}")


def alignment_model() -> ModelReading:
    """Two layers of cross attention both ways, plus intra-sentence attention (not a main alignment)."""
    trace = Trace()
    trace.add("l1_ph", cross("premise", "hypothesis", 1, (8, 5)))
    trace.add("l2_ph", cross("premise", "hypothesis", 2, (8, 5)))
    trace.add("l2_hp", cross("hypothesis", "premise", 2, (5, 8)))
    trace.add("self_pp", cross("premise", "premise", 3, (8, 8)))
    return ModelReading("esan-x", trace, PREMISE, HYPOTHESIS)


def diin_model() -> ModelReading:
    trace = Trace()
    maps = torch.zeros(1, 4, 8, 5)
    maps[0, :, 1, 2] = torch.tensor([1.0, 2.0, 3.0, 6.0])  # channel mean 3.0 at (cat, sits)
    trace.add("interaction", FeatureMaps(maps, "interaction"))
    return ModelReading("diin-x", trace, PREMISE, HYPOTHESIS)


def amn_model() -> ModelReading:
    """Near-uniform memory addressing, as the shipped AMN's premise keys (0.098–0.102 over ten slots)."""
    trace = Trace()
    weights = torch.full((1, 8, 10), 0.1)
    weights[0, 0, 0], weights[0, 0, 1] = 0.102, 0.098
    trace.add("memory_keys_premise", MemoryKeys(weights, "premise"))
    return ModelReading("amn-x", trace, PREMISE, HYPOTHESIS)


def panel_cells(spec: dict, name: str) -> list[dict]:
    return [row for row in data_values(spec) if row["panel"] == name]


def panels_of(spec: dict) -> list[dict]:
    """The grid's unit specs, row by row (a row per model)."""
    return [panel for row in spec["vconcat"] for panel in row["hconcat"]]


def test_overview_has_one_row_per_model_with_the_premise_across_every_panel():
    model = alignment_model()
    spec = overview_grid([model, diin_model(), amn_model()])
    assert [row["title"]["text"] for row in spec["vconcat"]] == ["esan-x", "diin-x", "amn-x"], "the models' order"
    names = list(dict.fromkeys(row["panel"] for row in data_values(spec)))
    assert names == ["esan-x · h→p · layer 2 · softmax",
                     "esan-x · p→h · layer 2 · softmax · transposed: each column sums to 1",
                     "diin-x · interaction · mean of 4 channels", "amn-x · memory keys · premise tokens across"]
    panels = panels_of(spec)
    assert [p["transform"][0]["filter"]["equal"] for p in panels] == names, "each panel draws its own rows"
    assert [len(panel_cells(spec, name)) for name in names] == [18, 18, 18, 60], "padding cut"
    # every panel has the premise across (tokens in order) and the hypothesis (or slots) down
    for panel in panels:
        x, y = panel["encoding"]["x"], panel["encoding"]["y"]
        assert x["scale"]["domain"] == list(range(6)) and axis_labels(x["axis"]) == PREMISE
        assert x["axis"]["title"] == "premise token"
    assert axis_labels(panels[0]["encoding"]["y"]["axis"]) == HYPOTHESIS
    assert panels[3]["encoding"]["y"]["axis"]["title"] == "memory slot"
    transposed = panel_cells(spec, names[1])
    source = model.trace["l2_ph"].weights[0, :6, :3].numpy()  # premise → hypothesis, drawn with the premise across
    for row in transposed:
        assert row["value"] == pytest.approx(float(source[row["column_position"], row["row_position"]]))
        assert row["premise token"] == PREMISE[row["column_position"]]
        assert row["hypothesis token"] == HYPOTHESIS[row["row_position"]]
    first = transposed[0]
    assert (first["row_position"], first["column_position"]) == (0, 0) and transposed[1]["column_position"] == 1
    diin = {(r["hypothesis token"], r["premise token"]): r["value"] for r in panel_cells(spec, names[2])}
    assert diin[("sits", "cat")] == pytest.approx(3.0) and diin[("a", "the")] == 0.0


def test_overview_scales_one_per_kind_with_their_bars_beside_their_first_row():
    spec = overview_grid([alignment_model(), diin_model(), amn_model()])
    colours = [panel["encoding"]["color"] for panel in panels_of(spec)]
    weights = np.array([row["value"] for row in data_values(spec) if row["panel"].startswith("esan-x")])
    top = float(np.quantile(weights, 0.99))
    assert top < 0.95 and colours[0]["scale"]["domain"] == colours[1]["scale"]["domain"] == pytest.approx([0.0, top]), \
        "alignment weights run to their 99th percentile, so thin weights (long sentences) keep their contrast"
    assert all(c["scale"]["clamp"] for c in colours), "larger weights take the top colour"
    subtitle = " ".join(spec["title"]["subtitle"])
    assert f"0–{top:.2f} (99% of the weights are below it" in subtitle
    assert [c["legend"] is not None for c in colours] == [False, True, True, True], \
        "one bar per scale, beside the first row that uses it"
    assert colours[2]["scale"]["domain"] == pytest.approx([-3.0, 3.0]) and colours[2]["scale"]["scheme"] == "redblue"
    memory = colours[3]
    assert memory["scale"]["domain"] == pytest.approx([0.098, 0.102]) and "0.098–0.102" in memory["legend"]["title"][1]
    assert "premise memory keys: own colour scale 0.098–0.102" in subtitle
    assert spec["resolve"]["scale"]["color"] == "independent" and all(
        row["resolve"]["scale"]["color"] == "independent" for row in spec["vconcat"])
    assert [cell["model"] for cell in data_values(spec)][:1] == ["esan-x"]


def test_overview_cells_are_whole_pixels_and_amn_slots_lower_rows():
    spec = overview_grid([alignment_model(), amn_model()])
    alignment, memory = panels_of(spec)[0], panels_of(spec)[2]
    assert isinstance(alignment["width"]["step"], int) and alignment["width"]["step"] * 6 <= 380
    assert memory["height"]["step"] < alignment["height"]["step"]
    assert memory["encoding"]["y"]["axis"]["labelFontSize"] == 9


def test_overview_says_so_when_no_model_has_anything_to_show():
    spec = overview_grid([ModelReading("plain", Trace(), PREMISE, HYPOTHESIS)])
    assert "no loaded model" in spec["mark"]["text"]


def test_narrow_ranges_get_their_own_scale_and_say_it():
    assert fitted_range(np.array([0.0, 0.5])) == (0.0, 1.0, None)
    low, high, note = fitted_range(np.array([0.098, 0.1, 0.102]))
    assert (low, high) == pytest.approx((0.098, 0.102)) and "0.098–0.102" in note
    assert "all values 0.25" in fitted_range(np.array([0.25, 0.25]))[2]
    spec = memory_keys_heatmap(amn_model().trace["memory_keys_premise"], 0, PREMISE)
    assert spec["layer"][0]["encoding"]["color"]["scale"]["domain"] == pytest.approx([0.098, 0.102])
    assert "own colour scale 0.098–0.102" in spec["title"]["subtitle"]
    uniform = Alignment(torch.full((1, 6, 3), 1 / 3), "premise", "hypothesis", 1, "p→h")
    assert alignment_heatmap(uniform, 0, PREMISE, HYPOTHESIS)["title"] == {"text": "layer 1 · p→h · softmax",
                                                                             "subtitle": "all values 0.3333"}


def test_zero_width_tokens_are_named_not_blank():
    assert visible_token("\u200d") == "ZWJ" and visible_token("\ufe0f") == "VS16"
    assert visible_token("\u2764\ufe0f") == "\u2764" and visible_token("cat") == "cat"
    tokens = ["I", "\u2764", "\ufe0f", "my", "\U0001F468", "\u200d", "\U0001F469"]
    labels = token_ticks(tokens)["ticktext"]
    assert all(label.strip() for label in labels) and labels[2] == "VS16" and labels[5] == "ZWJ"


def test_long_token_axes_stay_legible():
    short = token_ticks(["a"] * 10)
    long = token_ticks([f"token{i}" for i in range(32)] + ["supercalifragilistic"])
    assert short["tickangle"] == -45 and "tickfont" not in short
    assert long["tickangle"] == -90 and long["tickfont"]["size"] <= 10
    assert long["ticktext"][-1] == "supercalifrag…" and len(long["tickvals"]) == 33
    assert "tickangle" not in token_ticks(["a"] * 40, axis="y")


def test_scale_colours_interpolate_between_stops_and_clip_outside():
    two = ((0, 0, 0), (200, 100, 50))
    assert scale_colours([0.0, 0.5, 1.0, 0.25], two, 0.0, 1.0) == \
        ["rgb(0, 0, 0)", "rgb(100, 50, 25)", "rgb(200, 100, 50)", "rgb(50, 25, 13)"]  # 12.5 rounds half up
    assert scale_colours([-3.0, 7.0], two, 0.0, 1.0) == ["rgb(0, 0, 0)", "rgb(200, 100, 50)"]
    assert scale_colours([15.0], two, 10.0, 20.0) == ["rgb(100, 50, 25)"]
    assert scale_colours([0.05], RED_YELLOW_BLUE, 0.0, 1.0) == ["rgb(190, 24, 39)"]  # between the first two stops
    assert scale_colours([0.5, 1.0], RED_YELLOW_BLUE, 0.0, 1.0) == ["rgb(255, 255, 191)", "rgb(49, 54, 149)"]
    assert scale_colours([], two, 0.0, 1.0) == []


def test_the_glance_names_what_it_draws_and_a_section_opens_only_for_more():
    """`glance_entries` is what each model's row draws (its last layer's cross alignments, else the interaction
    maps, then memory keys, two at most); the Pair explorer opens a model's section first only when the section
    draws something the row does not — another layer, a self-alignment — so one layer is never drawn twice."""
    from types import SimpleNamespace

    from nlivis.app.components.explorer import beyond_glance
    from nlivis.viz.overview import glance_entries

    esan, diin, amn = alignment_model(), diin_model(), amn_model()
    assert [name for name, _ in glance_entries(esan.trace)] == ["l2_hp", "l2_ph"]
    assert [name for name, _ in glance_entries(diin.trace)] == ["interaction"]
    assert [name for name, _ in glance_entries(amn.trace)] == ["memory_keys_premise"]
    one_layer = Trace()
    one_layer.add("ph", cross("premise", "hypothesis", 1, (8, 5)))
    one_layer.add("hp", cross("hypothesis", "premise", 1, (5, 8)))
    self_only = Trace()
    self_only.add("pp", cross("premise", "premise", 1, (8, 8)))
    self_only.add("interaction", diin.trace["interaction"])
    opened = {name: beyond_glance(SimpleNamespace(trace=trace)) for name, trace in
              (("esan", esan.trace), ("one layer", one_layer), ("amn", amn.trace), ("diin", self_only))}
    assert opened == {"esan": True, "one layer": False, "amn": False, "diin": True}
