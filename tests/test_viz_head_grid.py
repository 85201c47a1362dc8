"""The layer × head grid of a multi-head model (bertviz's model view) and one head drawn large, on a tiny random
MiniLM (3 layers × 4 heads): the grid's shape and labels, the thumbnails' values and click targets, the picked head
outlined, the full square with its block outlined, the summaries, and the data behind the figures."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from nlivis.models.inspect import random_batch
from nlivis.models.registry import build, model_class
from nlivis.models.trace import Alignment, Trace
from nlivis.viz.common import figure_data
from nlivis.viz.head_grid import head_family, head_grid, mosaic, square_heatmap, summaries
from nlivis.viz.overview import ModelReading, overview_grid

LAYERS, HEADS = 3, 4
PREMISE_LENGTHS, HYPOTHESIS_LENGTHS = [5, 3], [4, 6]
"""Pair 1 (premise 3 words, hypothesis 6) is padded in both sentences by pair 0's longer one."""


@pytest.fixture(scope="module")
def traced():
    torch.manual_seed(0)
    model = build({"name": "minilm", **model_class("minilm").tiny_overrides, "encoder_layers": LAYERS,
                   "attention_heads": HEADS}).eval()
    batch = random_batch(PREMISE_LENGTHS, HYPOTHESIS_LENGTHS, 30, 20)
    with torch.no_grad():
        _, trace = model(batch, trace=True)
    return trace.detach(), batch.premise_tokens[1], batch.hypothesis_tokens[1]


def test_the_family_is_every_layer_head_and_block_and_rollout_is_its_summary(traced):
    trace, _, _ = traced
    family = head_family(trace)
    assert family.layers == [1, 2, 3] and family.heads == [1, 2, 3, 4]
    assert family.directions == ["p→h", "h→p", "p→p", "h→h"] and len(family.entries) == LAYERS * HEADS * 4
    assert family.picks()[:2] == ["1.1", "1.2"] and family.default_pick() == "3.1"
    assert set(family.blocks("2.3")) == {"p→h", "h→p", "p→p", "h→h"}
    assert family.blocks("2.3")["p→h"] is trace["layer2.head3.p→h"]
    assert list(summaries(trace)) == ["rollout"] and summaries(trace)["rollout"]["h→p"] is trace["rollout.h→p"]


def test_a_trace_without_heads_has_no_family_and_no_summaries():
    trace = Trace()
    trace.add("layer1.p→h", Alignment(torch.rand(1, 2, 3), "premise", "hypothesis", 1, "p→h"))
    assert head_family(trace) is None and summaries(trace) == {}


def test_the_grid_is_one_heatmap_of_thumbnails_with_layers_down_and_heads_across(traced):
    trace, premise, hypothesis = traced
    family = head_family(trace)
    figure = head_grid(family, 1, premise, hypothesis, "p→h", picked="2.3", label="tiny")
    heatmap, markers = figure.data
    z = np.asarray(heatmap.z, dtype=float)
    p, h = len(premise), len(hypothesis)  # the real words only: pair 0's padding is cut
    assert z.shape == (LAYERS * (p + 1) - 1, HEADS * (h + 1) - 1)
    assert np.isnan(z[p]).all() and np.isnan(z[:, h]).all(), "a blank row and column between thumbnails"
    top, left = 1 * (p + 1), 2 * (h + 1)  # layer 2, head 3
    expected = trace["layer2.head3.p→h"].weights[1, :p, :h].numpy()
    np.testing.assert_allclose(z[top:top + p, left:left + h], expected, rtol=1e-6)
    assert list(figure.layout.xaxis.ticktext) == [f"head {k}" for k in range(1, HEADS + 1)]
    assert list(figure.layout.yaxis.ticktext) == [f"layer {k}" for k in range(1, LAYERS + 1)]
    assert figure.layout.coloraxis.colorbar.title.text.startswith("attention"), "one shared scale, with its bar"
    [outline] = figure.layout.shapes
    assert (outline.x0, outline.x1, outline.y0, outline.y1) == (left - 0.5, left + h - 0.5, top - 0.5, top + p - 0.5)
    clicked = {tuple(c) for c in markers.customdata}
    assert clicked == {(layer, head) for layer in range(1, LAYERS + 1) for head in range(1, HEADS + 1)}
    i = [tuple(c) for c in markers.customdata].index((2, 3))
    assert (markers.x[i], markers.y[i]) == (left + (h - 1) / 2, top + (p - 1) / 2), "each marker on its thumbnail"


def test_the_grid_shows_the_chosen_block_and_no_outline_for_an_unknown_pick(traced):
    trace, premise, hypothesis = traced
    family = head_family(trace)
    figure = head_grid(family, 1, premise, hypothesis, "h→p", picked="9.9")
    assert np.asarray(figure.data[0].z).shape == (LAYERS * (len(hypothesis) + 1) - 1, HEADS * (len(premise) + 1) - 1)
    assert not figure.layout.shapes and "h→p" in figure.layout.title.text


def test_the_grids_data_leaves_out_the_gaps_and_names_layer_head_and_words(traced):
    trace, premise, hypothesis = traced
    table = figure_data(head_grid(head_family(trace), 1, premise, hypothesis))
    assert len(table) == LAYERS * HEADS * len(premise) * len(hypothesis)
    first = table.iloc[0]
    assert first["layer · premise word"] == f"layer 1 · {premise[0]}"
    assert first["head · hypothesis word"] == f"head 1 · {hypothesis[0]}"
    assert first["attention weight"] == pytest.approx(float(trace["layer1.head1.p→h"].weights[1, 0, 0]))


def test_a_head_large_is_the_full_square_with_the_chosen_block_outlined(traced):
    trace, premise, hypothesis = traced
    blocks = head_family(trace).blocks("2.3")
    figure = square_heatmap(blocks, 1, premise, hypothesis, "layer 2 · head 3", outlined="p→h",
                            colour_range=(0.0, 0.5))
    p, h = len(premise), len(hypothesis)
    z = np.asarray(figure.data[0].z, dtype=float)
    assert z.shape == (p + h, p + h)
    np.testing.assert_allclose(z[:p, p:], blocks["p→h"].weights[1, :p, :h].numpy(), rtol=1e-6)
    np.testing.assert_allclose(z[p:, :p], blocks["h→p"].weights[1, :h, :p].numpy(), rtol=1e-6)
    np.testing.assert_allclose(z[p:, p:], blocks["h→h"].weights[1, :h, :h].numpy(), rtol=1e-6)
    assert list(figure.layout.xaxis.ticktext) == [*premise, *hypothesis]
    outline = figure.layout.shapes[-1]
    assert (outline.x0, outline.x1, outline.y0, outline.y1) == (p - 0.5, p + h - 0.5, -0.5, p - 0.5)
    assert (figure.data[0].zmin, figure.data[0].zmax) == (0.0, 0.5), "the grid's scale, passed on"
    reverse = square_heatmap(blocks, 1, premise, hypothesis, "h→p", outlined="h→p").layout.shapes[-1]
    assert (reverse.x0, reverse.x1, reverse.y0, reverse.y1) == (-0.5, p - 0.5, p - 0.5, p + h - 0.5)


def test_a_missing_block_stays_blank_in_the_square(traced):
    trace, premise, hypothesis = traced
    blocks = {"p→h": trace["rollout.p→h"]}
    z = np.asarray(square_heatmap(blocks, 1, premise, hypothesis, "one block").data[0].z, dtype=float)
    p = len(premise)
    assert np.isnan(z[p:]).all() and np.isnan(z[:p, :p]).all() and not np.isnan(z[:p, p:]).any()


def test_the_mosaic_blanks_a_head_the_trace_lacks(traced):
    trace, premise, hypothesis = traced
    family = head_family(trace)
    del family.entries[(1, 2, "p→h")]
    grid = mosaic(family, "p→h", 1, premise, hypothesis)
    top, left = grid.origin(0, 1)
    assert np.isnan(grid.values[top:top + len(premise), left:left + len(hypothesis)]).all()


def test_at_a_glance_a_multi_head_model_shows_its_rollout_not_one_head(traced):
    trace, _, _ = traced
    premise, hypothesis = [f"p{t}" for t in range(PREMISE_LENGTHS[0])], [f"h{t}" for t in range(HYPOTHESIS_LENGTHS[0])]
    figure = overview_grid([ModelReading("tiny minilm", trace, premise, hypothesis)])  # the glance draws pair 0
    assert any("rollout.h→p" in a.text for a in figure.layout.annotations)
    np.testing.assert_allclose(np.asarray(figure.data[0].z, dtype=float),
                               trace["rollout.h→p"].weights[0, :len(hypothesis)].numpy(), rtol=1e-6)
