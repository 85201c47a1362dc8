"""The layer × head grid of a multi-head model (bertviz's model view) and one head drawn large, on a tiny random
MiniLM (3 layers × 4 heads), as Vega-Lite specs: the grid's facets, the thumbnails' cells (padding cut) and click
selection, the picked head framed, the full square with its block outlined, the summaries, and the data behind the
figures."""
from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import pytest
import torch

from nlivis.models.inspect import random_batch
from nlivis.models.registry import build, model_class
from nlivis.models.trace import Alignment, Trace
from nlivis.viz.head_grid import head_family, summaries, thumbnails
from nlivis.viz.overview import ModelReading
from nlivis.viz.vega.common import axis_labels, data_csv, data_values
from nlivis.viz.vega.head_grid import HEAD_FIELDS, PICKED, colour_domain, head_grid, square_heatmap
from nlivis.viz.vega.overview import overview_grid

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


def grid_cells(spec: dict) -> list[dict]:
    return [row for row in data_values(spec) if row.get("row_position") is not None]


def thumbnail(spec: dict, layer: int, head: int) -> np.ndarray:
    """One head's cells of a grid spec as a matrix (NaN where the spec has no cell)."""
    cells = [row for row in grid_cells(spec) if (row["layer"], row["head"]) == (layer, head)]
    if not cells:
        return np.zeros((0, 0))
    values = np.full((max(r["row_position"] for r in cells) + 1, max(r["column_position"] for r in cells) + 1), np.nan)
    for row in cells:
        values[row["row_position"], row["column_position"]] = row["attention weight"]
    return values


def test_the_grid_is_one_faceted_spec_of_thumbnails_with_layers_down_and_heads_across(traced):
    trace, premise, hypothesis = traced
    family = head_family(trace)
    spec = head_grid(family, 1, premise, hypothesis, "p→h", picked="2.3", label="tiny")
    assert spec["facet"]["row"]["field"] == "layer" and spec["facet"]["row"]["sort"] == [1, 2, 3]
    assert spec["facet"]["column"]["field"] == "head" and spec["facet"]["column"]["sort"] == [1, 2, 3, 4]
    p, h = len(premise), len(hypothesis)  # the real words only: pair 0's padding is cut
    cells = grid_cells(spec)
    assert len(cells) == LAYERS * HEADS * p * h
    assert [(c["layer"], c["head"]) for c in cells[::p * h]] == [(l, k) for l in (1, 2, 3) for k in (1, 2, 3, 4)]
    expected = trace["layer2.head3.p→h"].weights[1, :p, :h].numpy()
    np.testing.assert_allclose(thumbnail(spec, 2, 3), expected, rtol=1e-6)
    first = cells[0]
    assert (first["row word"], first["column word"]) == (premise[0], hypothesis[0]) and cells[1]["column_position"] == 1
    cells_layer, frame = spec["spec"]["layer"]
    assert cells_layer["encoding"]["x"]["scale"]["domain"] == list(range(h))
    assert cells_layer["encoding"]["y"]["scale"]["domain"] == list(range(p))
    assert cells_layer["encoding"]["color"]["legend"]["title"][0] == "attention", "one shared scale, with its bar"
    assert colour_domain(spec) == pytest.approx(tuple(cells_layer["encoding"]["color"]["scale"]["domain"]))
    [selection] = cells_layer["params"]
    assert selection["name"] == PICKED and selection["select"]["fields"] == list(HEAD_FIELDS), "a click picks a head"
    picked = [row for row in data_values(spec) if row.get("picked")]
    assert picked == [{"layer": 2, "head": 3, "picked": True}] and frame["mark"]["stroke"], "the picked head framed"
    assert spec["title"]["text"].startswith("tiny · attention p→h (premise rows over hypothesis columns) of 3 layers × 4 heads")


def test_the_grid_shows_the_chosen_block_and_no_frame_for_an_unknown_pick(traced):
    trace, premise, hypothesis = traced
    spec = head_grid(head_family(trace), 1, premise, hypothesis, "h→p", picked="9.9")
    assert thumbnail(spec, 1, 1).shape == (len(hypothesis), len(premise))
    assert not any(row.get("picked") for row in data_values(spec)) and "h→p" in spec["title"]["text"]
    assert "no p→x attention" in head_grid(head_family(trace), 1, premise, hypothesis, "p→x")["mark"]["text"]


def test_the_grids_csv_names_layer_head_and_words(traced):
    trace, premise, hypothesis = traced
    table = pd.read_csv(io.StringIO(data_csv(head_grid(head_family(trace), 1, premise, hypothesis))))
    assert len(table) == LAYERS * HEADS * len(premise) * len(hypothesis)
    first = table.iloc[0]
    assert (first["layer"], first["head"], first["row word"], first["column word"]) == (1, 1, premise[0], hypothesis[0])
    assert first["attention weight"] == pytest.approx(float(trace["layer1.head1.p→h"].weights[1, 0, 0]), rel=1e-6)


def square_values(spec: dict, n: int) -> np.ndarray:
    values = np.full((n, n), np.nan)
    for row in data_values(spec):
        values[row["row_position"], row["column_position"]] = row["attention weight"]
    return values


def test_a_head_large_is_the_full_square_with_the_chosen_block_outlined(traced):
    trace, premise, hypothesis = traced
    blocks = head_family(trace).blocks("2.3")
    spec = square_heatmap(blocks, 1, premise, hypothesis, "layer 2 · head 3", outlined="p→h", colour_range=(0.0, 0.5))
    p, h = len(premise), len(hypothesis)
    z = square_values(spec, p + h)
    np.testing.assert_allclose(z[:p, p:], blocks["p→h"].weights[1, :p, :h].numpy(), rtol=1e-6)
    np.testing.assert_allclose(z[p:, :p], blocks["h→p"].weights[1, :h, :p].numpy(), rtol=1e-6)
    np.testing.assert_allclose(z[p:, p:], blocks["h→h"].weights[1, :h, :h].numpy(), rtol=1e-6)
    cells, *_, frame = spec["layer"]
    assert axis_labels(cells["encoding"]["x"]["axis"]) == [*premise, *hypothesis]
    step = spec["width"]["step"]
    assert isinstance(step, int) and spec["height"]["step"] == step
    edges = {name: (frame["encoding"][name]["datum"], frame["encoding"][name]["bandPosition"])
             for name in ("x", "x2", "y", "y2")}
    assert edges == {"x": (p, 0), "x2": (p + h - 1, 1), "y": (0, 0), "y2": (p - 1, 1)}, \
        "the frame from the first hypothesis column's leading edge to the last's trailing one, over the premise rows"
    dividers = [layer["encoding"] for layer in spec["layer"][1:-1]]
    assert dividers == [{"x": {"datum": p, "type": "ordinal", "bandPosition": 0}},
                        {"y": {"datum": p, "type": "ordinal", "bandPosition": 0}}], "a line between the sentences"
    assert cells["encoding"]["color"]["scale"]["domain"] == [0.0, 0.5], "the grid's scale, passed on"
    assert spec["title"] == {"text": "layer 2 · head 3",
                             "subtitle": "p→h block outlined · rows normalised within each block"}
    assert {row["block"] for row in data_values(spec)} == {"p→h", "h→p", "p→p", "h→h"}
    reverse = square_heatmap(blocks, 1, premise, hypothesis, "h→p", outlined="h→p")["layer"][-1]["encoding"]
    assert [reverse[name]["datum"] for name in ("x", "x2", "y", "y2")] == [0, p - 1, p, p + h - 1]


def test_a_missing_block_has_no_cells_in_the_square(traced):
    trace, premise, hypothesis = traced
    spec = square_heatmap({"p→h": trace["rollout.p→h"]}, 1, premise, hypothesis, "one block")
    p, h = len(premise), len(hypothesis)
    assert len(data_values(spec)) == p * h and {row["block"] for row in data_values(spec)} == {"p→h"}
    z = square_values(spec, p + h)
    assert np.isnan(z[p:]).all() and np.isnan(z[:p, :p]).all() and not np.isnan(z[:p, p:]).any()


def test_a_head_the_trace_lacks_has_no_thumbnail(traced):
    trace, premise, hypothesis = traced
    family = head_family(trace)
    del family.entries[(1, 2, "p→h")]
    assert (1, 2) not in thumbnails(family, "p→h", 1, premise, hypothesis).blocks
    spec = head_grid(family, 1, premise, hypothesis)
    assert thumbnail(spec, 1, 2).size == 0 and thumbnail(spec, 1, 3).shape == (len(premise), len(hypothesis))


def test_at_a_glance_a_multi_head_model_shows_its_rollout_not_one_head(traced):
    trace, _, _ = traced
    premise, hypothesis = [f"p{t}" for t in range(PREMISE_LENGTHS[0])], [f"h{t}" for t in range(HYPOTHESIS_LENGTHS[0])]
    spec = overview_grid([ModelReading("tiny minilm", trace, premise, hypothesis)])  # the glance draws pair 0
    first = spec["vconcat"][0]["hconcat"][0]
    assert "rollout.h→p" in first["title"]["text"]
    cells = [row for row in data_values(spec) if row["panel"] == first["transform"][0]["filter"]["equal"]]
    values = np.array([row["value"] for row in cells]).reshape(len(hypothesis), len(premise))
    np.testing.assert_allclose(values, trace["rollout.h→p"].weights[0, :len(hypothesis)].numpy(), rtol=1e-6)
