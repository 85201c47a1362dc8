"""The all-models overview grid, colour ranges that fit narrow values, and token axes that stay legible."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from nlivis.models.trace import Alignment, FeatureMaps, MemoryKeys, Trace
from nlivis.viz import ModelReading, figure_data, overview_grid
from nlivis.viz.common import fitted_range, token_ticks, visible_token
from nlivis.viz.vega.heatmaps import alignment_heatmap, memory_keys_heatmap

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


def test_overview_has_one_row_per_model_with_the_premise_across_every_panel():
    model = alignment_model()
    figure = overview_grid([model, diin_model(), amn_model()])
    names = [trace.name for trace in figure.data]
    assert names == ["esan-x · h→p · layer 2 · softmax",
                     "esan-x · p→h · layer 2 · softmax · transposed: each column sums to 1",
                     "diin-x · interaction · mean of 4 channels", "amn-x · memory keys · premise tokens across"]
    shapes = [np.asarray(trace.z).shape for trace in figure.data]
    assert shapes == [(3, 6), (3, 6), (3, 6), (10, 6)]  # padding cut; hypothesis (or slots) down, premise across
    source = model.trace["l2_ph"].weights[0, :6, :3].numpy()
    assert np.asarray(figure.data[1].z) == pytest.approx(source.T)  # p→h, drawn with the premise across
    diin = np.asarray(figure.data[2].z)
    assert diin[2, 1] == pytest.approx(3.0) and diin[0, 0] == 0.0  # (sits, cat)
    # every alignment-like panel labels hypothesis rows × premise columns, so they compare down the page
    assert figure.layout.xaxis.ticktext == figure.layout.xaxis2.ticktext == figure.layout.xaxis3.ticktext == tuple(PREMISE)
    assert figure.layout.yaxis.ticktext == figure.layout.yaxis3.ticktext == tuple(HYPOTHESIS)
    assert [trace.coloraxis for trace in figure.data] == ["coloraxis", "coloraxis", "coloraxis2", "coloraxis3"]
    weights = np.concatenate([np.asarray(t.z, dtype=float).ravel() for t in figure.data[:2]])
    top = float(np.quantile(weights[np.isfinite(weights)], 0.99))
    assert top < 0.95 and (figure.layout.coloraxis.cmin, figure.layout.coloraxis.cmax) == pytest.approx((0.0, top)), \
        "alignment weights run to their 99th percentile, so thin weights (long sentences) keep their contrast"
    assert f"0–{top:.2f} (99% of the weights are below it" in figure.layout.title.text
    for axis, row_axis in (("coloraxis", "yaxis"), ("coloraxis2", "yaxis3"), ("coloraxis3", "yaxis5")):
        bar, (bottom, top) = figure.layout[axis].colorbar, figure.layout[row_axis].domain
        assert bar.y == pytest.approx(top) and bottom <= bar.y - bar.len, f"{axis}'s bar beside its first row"
    assert figure.layout.margin.b >= 100, "room under the last row for its rotated token labels"
    memory = figure.layout.coloraxis3
    assert (memory.cmin, memory.cmax) == pytest.approx((0.098, 0.102))
    assert "0.098–0.102" in memory.colorbar.title.text and "0.098–0.102" in figure.layout.title.text
    assert len(figure_data(figure)) == 18 + 18 + 18 + 60
    assert figure.layout.xaxis.domain[1] - figure.layout.xaxis.domain[0] > 0.4  # half the width, not ~100 px


def test_overview_says_so_when_no_model_has_anything_to_show():
    figure = overview_grid([ModelReading("plain", Trace(), PREMISE, HYPOTHESIS)])
    assert "no loaded model" in figure.layout.annotations[0].text


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
