"""Vega-Lite specs from hand-made trace entries: token labels, padding cut, channel choice, CSV =
drawn data."""
from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import pytest
import torch

from nlivis.models.trace import Alignment, FeatureMaps, Gate, MemoryKeys, OutputDistribution, Representation, Trace
from nlivis.viz import select_channels
from nlivis.viz.vega.bars import probability_bars
from nlivis.viz.vega.channel_grid import channel_grid
from nlivis.viz.vega.errors import CELL, accuracy_by_tag_bars, accuracy_dots, accuracy_interval_bars, confusion_matrices
from nlivis.viz.vega.common import axis_labels, data_csv, with_records
from nlivis.viz.vega.heatmaps import alignment_heatmap, difference_heatmap, memory_keys_heatmap
from nlivis.viz.vega.projection import projection_scatter
from nlivis.viz.drawable import drawable

PREMISE = ["the", "cat", "sat", "on", "the", "mat"]
HYPOTHESIS = ["a", "cat", "sits"]


def padded_alignment() -> Alignment:
    """Pair 1 of a batch of 2, padded to P=8, H=5; real region 6×3 holds known values."""
    weights = torch.full((2, 8, 5), 9.0)
    real = torch.arange(18, dtype=torch.float32).reshape(6, 3) / 100
    weights[1, :6, :3] = real
    return Alignment(weights=weights, rows="premise", cols="hypothesis", layer=2, direction="p→h", kind="softmax")


def heat(spec: dict) -> dict:
    """The encoding of a heatmap spec's cells (its first layer)."""
    return spec["layer"][0]["encoding"]


def test_alignment_heatmap_labels_axes_with_tokens_and_cuts_padding():
    spec = alignment_heatmap(padded_alignment(), 1, PREMISE, HYPOTHESIS)
    cells = spec["data"]["values"]
    assert len(cells) == 6 * 3 and 9.0 not in [cell["softmax weight"] for cell in cells]
    assert [(c["row_position"], c["column_position"]) for c in cells[:4]] == [(0, 0), (0, 1), (0, 2), (1, 0)]
    assert labels_of(heat(spec)["y"]["axis"]) == PREMISE  # repeated "the" stays two rows
    assert labels_of(heat(spec)["x"]["axis"]) == HYPOTHESIS
    assert heat(spec)["y"]["scale"]["domain"] == list(range(6)) and heat(spec)["x"]["scale"]["domain"] == [0, 1, 2]
    assert heat(spec)["y"]["axis"]["title"] == "premise tokens" and heat(spec)["x"]["axis"]["title"] == "hypothesis tokens"
    assert heat(spec)["color"]["scale"]["domain"] == [0.0, 1.0] and heat(spec)["color"]["scale"]["scheme"] == "viridis"
    assert [t["field"] for t in heat(spec)["tooltip"]] == ["premise", "hypothesis", "softmax weight"]
    assert spec["title"] == "layer 2 · p→h · softmax"
    assert alignment_heatmap(padded_alignment(), 1, PREMISE, HYPOTHESIS, label="a1")["title"].startswith("a1 · layer 2")


def test_reverse_direction_uses_hypothesis_rows():
    weights = torch.rand(1, 5, 8)
    entry = Alignment(weights=weights, rows="hypothesis", cols="premise", layer=0, direction="h→p", kind="sparsemax")
    spec = alignment_heatmap(entry, 0, PREMISE, HYPOTHESIS)
    assert len(spec["data"]["values"]) == 3 * 6
    assert labels_of(heat(spec)["y"]["axis"]) == HYPOTHESIS and labels_of(heat(spec)["x"]["axis"]) == PREMISE
    assert spec["data"]["values"][7]["sparsemax weight"] == pytest.approx(float(weights[0, 1, 1]))
    assert "sparsemax" in spec["title"]


def test_similarities_diverge_around_zero_and_an_intra_sentence_alignment_keeps_both_tokens():
    weights = torch.zeros(1, 6, 6)
    weights[0, 1, 4], weights[0, 2, 2] = -3.0, 2.0
    spec = alignment_heatmap(Alignment(weights, "premise", "premise", 1, "p→p", "similarity"), 0, PREMISE, HYPOTHESIS)
    assert heat(spec)["color"]["scale"]["domain"] == [-3.0, 3.0] and heat(spec)["color"]["scale"]["scheme"] == "redblue"
    cell = next(c for c in spec["data"]["values"] if c["similarity"] == -3.0)
    assert (cell["premise (row)"], cell["premise (column)"]) == ("cat", "the")


def test_alignment_csv_matches_drawn_values():
    spec = alignment_heatmap(padded_alignment(), 1, PREMISE, HYPOTHESIS)
    table = pd.read_csv(io.StringIO(data_csv(spec)))
    assert list(table.columns) == ["row_position", "premise", "column_position", "hypothesis", "softmax weight"]
    assert len(table) == 18
    row = table[(table.row_position == 4) & (table.column_position == 2)].iloc[0]
    assert row["premise"] == "the" and row["hypothesis"] == "sits"
    assert row["softmax weight"] == pytest.approx((4 * 3 + 2) / 100)


def test_difference_heatmap_centres_on_zero_and_marks_the_changed_token():
    values = np.array([[0.1, -0.4], [0.0, 0.2], [0.3, 0.0]])
    spec = difference_heatmap(values, ["a", "dog→cat", "runs"], ["it", "moves"], [False, True, False], [False, False],
                              "premise", "hypothesis", "a1 · edited − original")
    assert spec["title"] == "a1 · edited − original · largest change 0.400"
    scale = heat(spec)["color"]["scale"]
    assert scale["domain"] == [-0.4, 0.4] and scale["reverse"], "red: the edited pair attends more"
    assert labels_of(heat(spec)["y"]["axis"]) == ["a", "dog→cat", "runs"]
    assert heat(spec)["y"]["axis"]["labelFontWeight"]["condition"]["test"] == "indexof([1], datum.value) >= 0"
    (outline,) = spec["layer"][1:]  # the changed row only: no column changed
    assert outline["data"]["values"] == [{"row_position": 1}] and outline["encoding"]["y"]["field"] == "row_position"
    assert [c["edited − original"] for c in spec["data"]["values"]] == pytest.approx(values.ravel().tolist())
    empty = difference_heatmap(np.zeros((0, 0)), [], [], [], [], "premise", "hypothesis", "a1")
    assert empty["title"] == "a1 · no shared tokens" and empty["data"]["values"] == [] and len(empty["layer"]) == 1


def test_channel_selection_picks_expected_channels():
    maps = np.zeros((5, 3, 3), dtype=np.float32)
    maps[3, 0, 0] = 10.0            # highest single value
    maps[1] = np.array([[-4, 4, -4], [4, -4, 4], [-4, 4, -4]])  # largest variance
    maps[4, 1, 1] = 6.0
    assert select_channels(maps, "max_activation", 2) == [3, 4]
    assert select_channels(maps, "variance", 1) == [1]
    assert select_channels(maps, "index", 3) == [0, 1, 2]
    assert select_channels(maps, "index", 3, channels=[4, 2, 99]) == [4, 2]
    with pytest.raises(ValueError):
        select_channels(maps, "loudest", 2)


def labels_of(axis: dict) -> list[str]:
    """The tick labels a Vega-Lite token axis shows, position by position."""
    return axis_labels(axis)


def test_channel_selection_ignores_padding():
    """A huge value in the padded region must not make a channel 'most active'."""
    maps = torch.zeros(1, 3, 8, 5)
    maps[0, 0, 7, 4] = 100.0  # padding cell (premise has 6 tokens, hypothesis 3)
    maps[0, 2, 1, 1] = 1.0
    entry = FeatureMaps(maps=maps, stage="interaction", token_axes=True)
    spec = channel_grid(entry, 0, PREMISE, HYPOTHESIS, selection="max_activation", k=1)
    table = pd.read_csv(io.StringIO(data_csv(spec)))
    assert set(table.panel) == {"channel 2"} and spec["facet"]["sort"] == ["channel 2"]
    assert len(table) == 6 * 3 and 100.0 not in table.activation.tolist()  # the real 6×3 region, no padding
    assert table.loc[(table.row_position == 1) & (table.column_position == 1), "activation"].tolist() == [1.0]
    assert table.premise.tolist()[::3] == PREMISE and table.hypothesis.tolist()[:3] == HYPOTHESIS
    encoding = spec["spec"]["encoding"]
    assert labels_of(encoding["y"]["axis"]) == PREMISE and labels_of(encoding["x"]["axis"]) == HYPOTHESIS  # "the" twice
    assert encoding["y"]["axis"]["title"] == "premise" and encoding["x"]["axis"]["title"] == "hypothesis"
    assert encoding["color"]["scale"]["scheme"] == "viridis" and encoding["color"]["legend"] is None
    assert [t["field"] for t in encoding["tooltip"]] == ["premise", "hypothesis", "activation"]
    assert "interaction" in spec["title"] and "1 of 3 channels by max activation" in spec["title"]


def test_one_colour_range_spans_the_chosen_channels_and_its_bar_is_shown():
    maps = torch.arange(2 * 6 * 3, dtype=torch.float32).reshape(1, 2, 6, 3)
    entry = FeatureMaps(maps=maps, stage="interaction", token_axes=True)
    spec = channel_grid(entry, 0, PREMISE, HYPOTHESIS, channels=[1, 0], shared_scale=True, label="diin")
    colour = spec["spec"]["encoding"]["color"]
    assert colour["scale"]["domain"] == [0.0, 35.0] and colour["legend"]["title"] == "activation"
    assert "resolve" not in spec and spec["facet"]["sort"] == ["channel 1", "channel 0"]
    assert spec["title"].startswith("diin · interaction")
    separate = channel_grid(entry, 0, PREMISE, HYPOTHESIS, channels=[1, 0])
    assert separate["resolve"] == {"scale": {"color": "independent"}} and "domain" not in separate["spec"]["encoding"]["color"]["scale"]


def test_pooled_maps_keep_positions_without_token_labels():
    entry = FeatureMaps(maps=torch.rand(1, 4, 3, 2), stage="dense_block_2", token_axes=False)
    spec = channel_grid(entry, 0, PREMISE, HYPOTHESIS, k=4, columns=2)
    table = pd.read_csv(io.StringIO(data_csv(spec)))
    assert spec["columns"] == 2 and table.groupby("panel").size().tolist() == [3 * 2] * 4
    assert np.isfinite(table.activation).all() and {"row", "column"} <= set(table.columns)
    assert "labelExpr" not in spec["spec"]["encoding"]["x"]["axis"]
    assert "after pooling" in spec["title"]
    json.dumps(spec, allow_nan=False)


def test_a_projection_colours_by_category_hovers_the_pair_and_a_click_gives_its_split_and_row():
    points = pd.DataFrame({"id": ["7", "9", "11"], "x": [0.0, 1.0, 0.5], "y": [1.0, 0.0, 0.5],
                           "gold": ["entailment", "neutral", "neutral"], "premise": ["p1", "p2", "p3"],
                           "hypothesis": ["h1", "h2", "h3"], "correctness": ["wrong", "right", "right"],
                           "split": "snli_dev", "row": [4, -1, 8], "genre": "(none)"})
    spec = projection_scatter(points, color="correctness", hover=("premise", "hypothesis", "gold"))
    table = pd.read_csv(io.StringIO(data_csv(spec)))
    assert list(table.columns) == ["id", "x", "y", "correctness", "premise", "hypothesis", "gold", "split", "row"]
    assert table.row.tolist() == [4, -1, 8] and table.premise.tolist() == ["p1", "p2", "p3"]
    colour = spec["encoding"]["color"]
    assert dict(zip(colour["scale"]["domain"], colour["scale"]["range"])) == {"right": "#4c78a8", "wrong": "#e45756"}
    assert [t["field"] for t in spec["encoding"]["tooltip"]] == ["premise", "hypothesis", "gold", "correctness"]
    assert spec["params"][0]["name"] == "point" and spec["params"][0]["select"]["fields"] == ["split", "row"]
    by_gold = projection_scatter(points.drop(columns=["split", "row"]), color="gold")
    assert "params" not in by_gold and by_gold["encoding"]["color"]["scale"]["domain"] == ["entailment", "neutral"]
    assert data_csv(projection_scatter(points.iloc[:0], color="gold")) == ""  # a message, no data
    sent = spec["data"]["values"]  # a typed frame, sent as Arrow: no row dict per point
    assert sent.dtypes["x"] == np.float32 and sent.dtypes["row"] == np.int32 and sent["premise"].tolist() == ["p1", "p2", "p3"]
    json.dumps(with_records(spec), allow_nan=False)


def gate_panel(spec: dict, panel: str, strip: int = 0) -> list[dict]:
    """The rows of one panel ("means" or "dimensions") of strip `strip` of a gates spec: the named table its view
    reads."""
    from nlivis.viz.vega.gates import dataset_names

    means, dimensions = dataset_names(strip)
    return spec["datasets"][means if panel == "means" else dimensions]


def test_gate_strip_means_per_token_and_cuts_padding():
    from nlivis.viz.gate_strips import gate_title, gate_values
    from nlivis.viz.vega.common import data_csv
    from nlivis.viz.vega.gates import Strip, gate_strips

    values = torch.zeros(1, 5, 4)
    values[0, 0] = torch.tensor([1.0, 1.0, 0.0, 0.0])
    values[0, 2] = 1.0
    values[0, 3:] = 0.7  # padding
    entry = Gate(values=values, tokens="hypothesis", layer=1, name="forget")
    spec = gate_strips([Strip(gate_values(entry, 0, HYPOTHESIS), HYPOTHESIS, gate_title(entry, "m"))])
    means = gate_panel(spec, "means")
    assert [(row["position"], row["token"]) for row in means] == list(enumerate(HYPOTHESIS))
    assert [row["value"] for row in means] == pytest.approx([0.5, 0.0, 1.0])
    cells = gate_panel(spec, "dimensions")
    assert len(cells) == 4 * 3 and {row["dimension"] for row in cells} == {0, 1, 2, 3}
    assert next(row["value"] for row in cells if (row["token"], row["dimension"]) == ("a", 2)) == 0.0
    bars, heat = spec["vconcat"]
    assert bars["title"] == "m · forget gate · layer 1 · hypothesis"
    assert bars["mark"]["type"] == "bar" and heat["mark"]["type"] == "rect"
    # one colour scale, 0…1 on viridis, for the bars and the cells; each hover names the token and its value
    assert bars["encoding"]["color"]["scale"] == heat["encoding"]["color"]["scale"] == {"scheme": "viridis",
                                                                                        "domain": [0.0, 1.0]}
    assert [t["field"] for t in heat["encoding"]["tooltip"]] == ["dimension", "token", "position", "value"]
    assert labels_of(heat["encoding"]["x"]["axis"]) == ["a", "cat", "sits"]
    # the CSV holds both tables' numbers, each row naming its table
    table = pd.read_csv(io.StringIO(data_csv(spec)))
    assert list(table.columns) == ["dataset", "position", "token", "value", "dimension"]
    assert table.groupby("dataset").size().to_dict() == {"gate1_means": 3, "gate1_dimensions": 12}
    assert table.loc[table["dataset"] == "gate1_means", "value"].tolist() == pytest.approx([0.5, 0.0, 1.0])
    signed = gate_strips([Strip(np.array([[-0.5, 0.5]]), ["x"], "tanh")])
    assert signed["vconcat"][0]["encoding"]["color"]["scale"]["domain"] == [-1.0, 1.0]


def test_a_models_gates_are_one_spec_each_view_on_its_own_table():
    """Twelve gate strips were twelve Vega views (each compiled and drawn on its own); then one vconcat whose 24
    views each filtered one shared table of every gate's rows (24 × 6,240 rows through Streamlit's CSP-safe
    expression interpreter, ~1 s of a new tab's CPU): each view reads a named table of its own rows, on its own
    token axis, titled with its gate, with no per-mark ARIA description."""
    from nlivis.viz.vega.gates import Strip, gate_strips

    premise_gate, hypothesis_gate = np.full((6, 4), 0.25), np.full((3, 4), 0.75)
    spec = gate_strips([Strip(premise_gate, PREMISE, "m · forget · premise"),
                        Strip(hypothesis_gate, HYPOTHESIS, "m · forget · hypothesis")])
    titles = [view.get("title") for view in spec["vconcat"]]
    assert titles == ["m · forget · premise", None, "m · forget · hypothesis", None]
    assert spec["resolve"]["scale"] == {"x": "independent", "y": "independent", "color": "shared"}
    assert "data" not in spec and spec["config"] == {"aria": False}
    assert not any("transform" in view for view in spec["vconcat"]), "no view filters a shared table"
    names = [view["data"]["name"] for view in spec["vconcat"]]
    assert names == ["gate1_means", "gate1_dimensions", "gate2_means", "gate2_dimensions"] == list(spec["datasets"])
    assert [len(spec["datasets"][name]) for name in names] == [6, 6 * 4, 3, 3 * 4]
    assert all(set(row) == {"position", "token", "value"} for row in spec["datasets"]["gate2_means"])
    assert all(set(row) == {"dimension", "position", "token", "value"} for row in spec["datasets"]["gate2_dimensions"])
    second_cells = spec["vconcat"][3]
    assert second_cells["encoding"]["x"]["scale"]["domain"] == [0, 1, 2]
    assert labels_of(second_cells["encoding"]["x"]["axis"]) == ["a", "cat", "sits"]
    assert [row["value"] for row in gate_panel(spec, "means", strip=1)] == pytest.approx([0.75] * 3)
    assert [row["token"] for row in gate_panel(spec, "means", strip=0)] == PREMISE[:6]
    # one legend for gates on one scale; a sigmoid and a tanh gate each keep their own
    assert [view["encoding"]["color"]["legend"] is not None for view in spec["vconcat"]] == [True] * 4  # merged
    mixed = gate_strips([Strip(premise_gate, PREMISE, "sigmoid"), Strip(-hypothesis_gate, HYPOTHESIS, "tanh")])
    assert mixed["resolve"]["scale"]["color"] == "independent"
    assert [view["encoding"]["color"]["legend"] is not None for view in mixed["vconcat"]] == [False, True, False, True]
    json.dumps(spec, allow_nan=False)


def test_every_gate_dimension_is_reachable_window_by_window():
    """Only the first 64 of a 128- or 384-wide gate were drawn."""
    from nlivis.viz.vega.gates import Strip, dimension_windows, gate_strips

    values = np.arange(3 * 130, dtype=float).reshape(3, 130) / 1000
    windows = dimension_windows(130)
    assert windows == [0, 64, 128]
    seen = []
    for first in windows:
        spec = gate_strips([Strip(values, PREMISE[:3], "fuse", first)])
        cells = gate_panel(spec, "dimensions")
        seen += sorted({row["dimension"] for row in cells})
        assert next(row["value"] for row in cells if row["position"] == 0 and row["dimension"] == first) == \
            pytest.approx(values[0, first])
        assert spec["vconcat"][1]["encoding"]["y"]["scale"]["domain"] == sorted({row["dimension"] for row in cells})
        assert [row["value"] for row in gate_panel(spec, "means")] == pytest.approx(values.mean(axis=1))  # all dims
    assert seen == list(range(130))
    assert gate_strips([Strip(values, PREMISE[:3], "fuse", 128)])["vconcat"][0]["title"] == "fuse (dims 128–129 of 130)"
    assert gate_strips([Strip(values[:, :64], PREMISE[:3], "fuse")])["vconcat"][0]["title"] == "fuse"
    with pytest.raises(ValueError, match="outside the gate's 130 dimensions"):
        gate_strips([Strip(values, PREMISE[:3], "fuse", 130)])


def test_gate_summary_bars_group_gates_by_model_in_its_colour_with_std_whiskers():
    from nlivis.viz.vega.gates import gate_summary_bars

    summary = pd.DataFrame({"model": ["b", "b", "a"], "gate": ["forget", "output", "forget"], "layer": [1, 1, 2],
                            "tokens": ["premise"] * 3, "mean": [0.5, 0.25, 0.75], "std": [0.1, 0.2, 0.05],
                            "pairs": [12] * 3})
    spec = gate_summary_bars(summary, "over 12 pairs", colours={"a": "#000001", "b": "#000002"})
    bars, whiskers = spec["layer"]
    assert bars["encoding"]["x"]["sort"] == ["forget · L1 · premise", "output · L1 · premise", "forget · L2 · premise"]
    assert bars["encoding"]["color"]["scale"] == {"domain": ["b", "a"], "range": ["#000002", "#000001"]}
    assert [(row["model"], row["label"], row["mean"]) for row in spec["data"]["values"]][0] == \
        ("b", "forget · L1 · premise", 0.5)
    assert [(row["low"], row["high"]) for row in spec["data"]["values"]][1] == pytest.approx((0.05, 0.45))
    assert whiskers["encoding"]["y"]["field"] == "low" and whiskers["encoding"]["y2"]["field"] == "high"
    assert [t["field"] for t in bars["encoding"]["tooltip"]] == list(summary.columns)
    assert spec["title"] == "over 12 pairs"
    assert "range" not in gate_summary_bars(summary, colours={"a": "#000001"})["layer"][0]["encoding"]["color"]["scale"]


def test_memory_keys_and_confusion_matrix():
    weights = torch.softmax(torch.rand(1, 7, 4), dim=-1)
    spec = memory_keys_heatmap(MemoryKeys(weights=weights, tokens="premise"), 0, PREMISE)
    assert len(spec["data"]["values"]) == 6 * 4 and labels_of(heat(spec)["y"]["axis"]) == PREMISE
    assert labels_of(heat(spec)["x"]["axis"]) == ["slot 0", "slot 1", "slot 2", "slot 3"]
    assert spec["data"]["values"][5] == {"row_position": 1, "premise token": "cat", "column_position": 1,
                                         "memory slot": "slot 1", "address weight": pytest.approx(float(weights[0, 1, 1]))}
    assert spec["title"]["text"] == "memory keys · premise · layer 1" and spec["title"]["subtitle"].startswith("weights 0.")
    matrix = [[5, 1, 0], [2, 3, 1], [0, 0, 4]]
    labels = ["entailment", "neutral", "contradiction"]
    spec = confusion_matrices({"m": (matrix, labels)}, normalize=True)
    neutral = [row for row in spec["data"]["values"] if row["gold"] == "neutral"]
    assert [row["fraction of gold"] for row in neutral] == pytest.approx([2 / 6, 3 / 6, 1 / 6])
    assert [row["pairs"] for row in neutral] == [2, 3, 1] and [row["predicted"] for row in neutral] == \
        ["entailment", "neutral", "contradiction"]
    cells = layer_of(spec["spec"], "rect")
    assert cells["params"][0]["name"] == CELL and cells["params"][0]["select"]["fields"] == ["model", "gold", "predicted"]
    assert [t["field"] for t in cells["encoding"]["tooltip"]] == ["model", "gold", "predicted", "pairs",
                                                                  "fraction of gold", "hint"]
    counts = confusion_matrices({"m": (matrix, labels)})
    assert layer_of(counts["spec"], "text")["encoding"]["text"] == {"field": "pairs", "type": "quantitative", "format": "d"}
    assert data_csv(counts).splitlines()[0] == "model,gold,predicted,pairs,hint"
    with pytest.raises(ValueError, match="m's confusion matrix"):
        confusion_matrices({"m": ([[1, 2], [3, 4]], ["a", "b", "c"])})


def test_the_models_confusion_matrices_are_one_faceted_spec_whose_click_names_the_model():
    """Five matrices were five Vega views (each compiled and drawn on its own): they are one facet, a panel per
    model in the order given, three to a row, on one colour scale; a cell's data (and so a click) names its model."""
    labels = ["entailment", "neutral", "contradiction"]
    spec = confusion_matrices({f"m{i}": (np.eye(3) * (i + 1), labels) for i in range(5)})
    assert spec["facet"]["field"] == "model" and spec["facet"]["sort"] == ["m0", "m1", "m2", "m3", "m4"]
    assert spec["columns"] == 3 and "color" not in spec["resolve"]["scale"]
    assert {(row["model"], row["gold"], row["predicted"], row["pairs"]) for row in spec["data"]["values"]
            if row["gold"] == row["predicted"] == "neutral"} == {(f"m{i}", "neutral", "neutral", i + 1) for i in range(5)}
    # black text on light cells, white on dark ones: one threshold for the shared scale (half the largest count)
    assert layer_of(spec["spec"], "text")["encoding"]["color"]["condition"]["test"] == "datum['pairs'] > 2.5"
    assert confusion_matrices({"m": (np.eye(2), ["a", "b"])})["columns"] == 1


def test_charts_keep_their_data():
    labels = ["entailment", "neutral", "contradiction"]
    bars = probability_bars({"diin": [0.7, 0.2, 0.1], "gcnn": [0.1, 0.1, 0.8]}, labels, colours={"gcnn": "#000001"})
    table = pd.read_csv(io.StringIO(data_csv(bars)))
    assert table[(table.model == "gcnn") & (table.label == "contradiction")].probability.item() == pytest.approx(0.8)
    assert layer_of(bars, "bar")["encoding"]["x"]["sort"] == labels
    assert layer_of(bars, "bar")["encoding"]["color"]["scale"] == {"domain": ["diin", "gcnn"], "range": ["#1f77b4", "#000001"]}
    assert layer_of(bars, "text")["encoding"]["text"]["format"] == ".2f", "a few models' values printed"
    crowded = probability_bars({f"m{i}": [0.2, 0.3, 0.5] for i in range(4)}, labels)
    assert [layer["mark"]["type"] for layer in crowded["layer"]] == ["bar"], "many models' values left to the hover"
    with pytest.raises(ValueError):
        probability_bars({"diin": [0.5, 0.5]}, labels)
    tags = pd.DataFrame({"tag": ["negation", "negation"], "split": ["matched", "mismatched"], "accuracy": [0.6, 0.5], "count": [10, 12]})
    spec = accuracy_by_tag_bars(tags, group="split")
    assert [row["printed"] for row in spec["data"]["values"]] == ["60.0% (n=10)", "50.0% (n=12)"]
    assert layer_of(spec, "bar")["encoding"]["color"]["scale"]["domain"] == ["matched", "mismatched"]


def test_tag_bars_keep_a_100_percent_tick_inside_and_their_legend_close_under_a_tall_chart():
    tags = [f"category_{i}" for i in range(15)]
    table = pd.DataFrame([{"tag": tag, "model": model, "accuracy": 0.5, "count": 20, "majority_accuracy": 1.0 if i == 3 else 0.4}
                          for model in ("ours", "roberta", "bert", "esim") for i, tag in enumerate(tags)])
    spec = accuracy_by_tag_bars(table, group="model")
    x = layer_of(spec, "bar")["encoding"]["x"]
    assert x["scale"]["domain"][1] > 1.0 and 1.0 in x["axis"]["values"], "a majority tick at 100% is in the plot"
    assert spec["height"] > 1500 and layer_of(spec, "bar")["encoding"]["color"]["legend"]["orient"] == "bottom"
    ticks = layer_of(spec, "tick")
    assert len(ticks["data"]["values"]) == 15 and ticks["data"]["values"][3]["majority_accuracy"] == 1.0


def test_drawable_groups_entries_by_type():
    trace = Trace()
    trace.add("align_1", padded_alignment())
    trace.add("gate_p", Gate(values=torch.rand(2, 8, 4), tokens="premise", layer=0, name="output"))
    trace.add("pooled", Representation(vector=torch.rand(2, 6)))
    trace.add("output", OutputDistribution(probs=torch.rand(2, 3)))
    views = drawable(trace)
    assert views == {"alignment": ["align_1"], "gates": ["gate_p"], "representation": ["pooled"], "output": ["output"]}
    assert "feature_maps" not in views


def test_percent_ticks_label_every_step_distinctly():
    from nlivis.viz.common import percent_ticks

    half = percent_ticks(-0.011, 0.009)  # ESAN's chart: 0.5% steps were labelled −1%, −1%, +0%, +1%
    assert half["tickvals"] == [-0.015, -0.01, -0.005, 0.0, 0.005, 0.01]
    assert half["ticktext"] == ["−1.5%", "−1.0%", "−0.5%", "0.0%", "+0.5%", "+1.0%"]
    wide = percent_ticks(-0.06, 0.045)
    assert wide["ticktext"] == ["−6%", "−4%", "−2%", "0%", "+2%", "+4%", "+6%"]
    assert len(set(wide["ticktext"])) == len(wide["ticktext"]) <= 8


def layer_of(spec: dict, mark: str) -> dict:
    """The first layer of a Vega-Lite spec drawing `mark` (a layer's mark is a type name or {"type": …})."""
    return next(layer for layer in spec["layer"] if mark in (layer["mark"], layer["mark"].get("type") if isinstance(layer["mark"], dict) else None))


def test_ablation_accuracy_bars_wrap_short_labels_and_tilt_many_long_ones():
    import pandas as pd

    from nlivis.viz.vega.bars import comparison_bars

    few = pd.DataFrame({"variant": ["full model · seed 1", "no_gate"], "snli_dev (select)": [0.7, 0.72]})
    spec = comparison_bars(few, "variant", "snli_dev (select)")
    bars = layer_of(spec, "bar")["encoding"]
    assert bars["x"]["axis"]["labelAngle"] == 0 and "split(datum.label, ' · ')" in bars["x"]["axis"]["labelExpr"]
    assert bars["x"]["sort"] == ["full model · seed 1", "no_gate"] and bars["y"]["field"] == "snli_dev (select)"
    assert [row["snli_dev (select)"] for row in spec["data"]["values"]] == [0.7, 0.72]
    assert layer_of(spec, "text")["encoding"]["text"]["format"] == ".1%"
    names = [f"diin-{v}-snli-small" for v in ("no_conv", "no_encoding", "no_fuse_gate", "no_self_attention",
                                                "addition_fuse", "similarity", "one_gate_fuse", "unmasked_interaction")]
    tilted = comparison_bars(pd.DataFrame({"variant": names, "accuracy": [0.7] * 8}), "variant", "accuracy")
    assert layer_of(tilted, "bar")["encoding"]["x"]["axis"]["labelAngle"] == -30
    genres = pd.DataFrame({"genre": ["fiction", "fiction", "travel"], "model": ["m1", "m2", "m1"], "accuracy": [0.6, 0.7, 0.5]})
    grouped = layer_of(comparison_bars(genres, "genre", "accuracy", group="model", colours={"m2": "#000002"}), "bar")
    assert grouped["encoding"]["xOffset"]["field"] == "model" and grouped["encoding"]["color"]["scale"]["range"][1] == "#000002"


def test_difference_intervals_cover_the_intervals_and_the_seed_band_and_fade_what_is_not_significant():
    import pandas as pd

    from nlivis.viz.vega.bars import difference_intervals

    table = pd.DataFrame({"variant": ["a", "b"], "difference": [-0.004, 0.006], "CI low": [-0.009, 0.001],
                          "CI high": [0.001, 0.011], "significant": [False, True], "Holm p": [0.3, 1e-4]})
    spec = difference_intervals(table, noise=0.012)
    bars = layer_of(spec, "bar")["encoding"]
    low, high = bars["x"]["scale"]["domain"]
    ticks = bars["x"]["axis"]["values"]
    assert low < ticks[0] <= -0.012 and high > ticks[-1] >= 0.012, "the axis covers the seed band ± 0.012"
    assert "'+1.0%'" not in bars["x"]["axis"]["labelExpr"] and '"+1.0%"' in bars["x"]["axis"]["labelExpr"]
    band = layer_of(spec, "rect")
    assert band["data"]["values"] == [{"seed noise low": -0.012, "seed noise high": 0.012}]
    whiskers = layer_of(spec, "rule")["encoding"]
    assert (whiskers["x"]["field"], whiskers["x2"]["field"]) == ("CI low", "CI high")
    rows = spec["data"]["values"]
    assert [(row["bar"], row["sign"], row["significance"]) for row in rows] == [
        ("a (−0.4%)", "loss", "not significant"), ("b (+0.6%)", "gain", "significant")]
    opacity = bars["opacity"]["scale"]
    assert dict(zip(opacity["domain"], opacity["range"]))["not significant"] < 0.5
    assert {"field": "Holm p", "title": "Holm p", "type": "quantitative", "format": ".1e"} in bars["tooltip"]
    assert {"field": "CI low", "title": "CI low", "type": "quantitative", "format": "+.1%"} in bars["tooltip"]
    assert "seed noise" in spec["title"] and "rect" not in str(difference_intervals(table)["layer"])


def test_tag_deltas_give_each_variant_its_hue_and_hollow_the_bars_that_are_not_significant():
    import pandas as pd

    from nlivis.viz.common import CATEGORY_COLOURS
    from nlivis.viz.vega.bars import delta_bars

    table = pd.DataFrame({"variant": ["v1", "v1", "v2", "v2"], "tag": ["NEGATION", "QUANTIFIER"] * 2,
                          "delta": [-0.05, 0.02, 0.01, -0.2], "significant": [True, False, False, True]})
    spec = delta_bars(table)
    bars = layer_of(spec, "bar")["encoding"]
    assert bars["color"]["scale"] == {"domain": ["v1", "v2"], "range": list(CATEGORY_COLOURS[:2])} == bars["stroke"]["scale"]
    assert bars["y"]["sort"] == ["NEGATION", "QUANTIFIER"] and bars["yOffset"]["field"] == "variant"
    fill = dict(zip(bars["fillOpacity"]["scale"]["domain"], bars["fillOpacity"]["scale"]["range"]))
    assert fill["significant"] == 1.0 and fill["not significant"] < 0.5
    assert [row["significance"] for row in spec["data"]["values"]] == ["significant", "not significant", "not significant", "significant"]
    assert bars["x"]["scale"]["domain"][0] < -0.2 and layer_of(spec, "rule")["encoding"]["x"] == {"datum": 0}
    assert delta_bars(table.iloc[0:0])["mark"]["type"] == "text"


def test_downloaded_figures_get_clean_file_names():
    from nlivis.viz.common import clean_file_name

    assert clean_file_name("gcnn · snli-small · gcnn-snli-small_forget gate") == "gcnn_snli-small_gcnn-snli-small_forget_gate"
    assert clean_file_name(" · ") == "nlivis_figure"
    assert clean_file_name("esan · snli/dev") == "esan_snli_dev"


# ---------------------------------------------------------------- legibility (issue 21 item 6)

def test_token_strips_scale_each_row_by_its_largest_score_and_keep_a_readable_colour_bar():
    from nlivis.viz.vega.attribution import token_strips

    spec = token_strips({"average": ([0.1, 0.5, 0.2], [0.3, -1.0])}, ["a", "b", "c"], ["d", "e"], "attention summary")
    cells = layer_of(spec, "rect")["encoding"]
    assert cells["color"]["legend"]["gradientLength"] >= 120 and cells["color"]["scale"]["domain"] == [-1, 1]
    assert spec["height"]["step"] >= 140, "one row is as tall as the colour bar beside it, which it would cut"
    rows = spec["data"]["values"]
    assert [(r["sentence"], r["token"], r["slot"]) for r in rows] == [
        ("premise", "a", 0), ("premise", "b", 1), ("premise", "c", 2), ("hypothesis", "d", 4), ("hypothesis", "e", 5)]
    assert [r["score"] for r in rows] == [0.1, 0.5, 0.2, 0.3, -1.0] and rows[1]["scaled"] == 0.5 and rows[4]["scaled"] == -1.0
    assert labels_of(cells["x"]["axis"])[3] == "|", "the slot between the sentences is marked"


def test_kendall_boxes_keep_each_model_in_its_colour_beside_the_others():
    import pandas as pd

    from nlivis.viz.vega.attribution import agreement_boxes

    taus = pd.DataFrame({"model": ["m1", "m2"], "method": ["gradient", "gradient"], "measure": ["pooled", "pooled"], "tau": [0.1, 0.3]})
    spec = agreement_boxes(taus, "τ", colours={"m1": "#123456"})
    boxes = layer_of(spec, "boxplot")["encoding"]
    assert boxes["color"]["scale"]["domain"] == ["m1", "m2"] and boxes["color"]["scale"]["range"][0] == "#123456"
    assert boxes["xOffset"]["field"] == "model" and [r["comparison"] for r in spec["data"]["values"]] == ["gradient · pooled"] * 2
    assert layer_of(spec, "tick")["encoding"]["y"]["aggregate"] == "mean"


def test_faithfulness_and_plausibility_bars_draw_each_method_per_model_with_its_interval():
    import pandas as pd

    from nlivis.viz.vega.attribution import faithfulness_bars, plausibility_bars

    table = pd.DataFrame({"model": ["m1", "m1"], "method": ["gradient", "random"], "pairs": [5, 5],
                          "sufficiency": [0.2, 0.4], "sufficiency_low": [0.1, 0.3], "sufficiency_high": [0.3, 0.5],
                          "auprc": [0.6, 0.3], "f1": [0.5, 0.2], "plausibility_pairs": [4, 4]})
    spec = faithfulness_bars(table, "sufficiency", "sufficiency over 5 pairs", colours={"m1": "#abcdef"})
    assert spec["title"] == "sufficiency over 5 pairs (lower = more faithful)"
    whiskers = layer_of(spec, "rule")["encoding"]
    assert (whiskers["y"]["field"], whiskers["y2"]["field"]) == ("sufficiency_low", "sufficiency_high")
    assert layer_of(spec, "bar")["encoding"]["color"]["scale"]["range"] == ["#abcdef"]
    assert layer_of(spec, "bar")["encoding"]["y"]["scale"]["zero"], "bars start at 0 (the whiskers' lows moved it)"
    assert [r["sufficiency"] for r in spec["data"]["values"]] == [0.2, 0.4]
    panels = plausibility_bars(table, "plausibility")["hconcat"]
    assert [p["encoding"]["y"]["field"] for p in panels] == ["auprc", "f1"]


def test_tag_bars_use_legible_labels_and_each_model_keeps_its_colour():
    import pandas as pd

    table = pd.DataFrame({"model": ["m1", "m2"], "tag": ["NEGATION", "NEGATION"], "accuracy": [0.5, 0.7], "count": [10, 10],
                          "ci_low": [0.3, 0.5], "ci_high": [0.7, 0.9], "majority_accuracy": [0.4, 0.4],
                          "majority_label": ["neutral", "neutral"]})
    colours = {"m1": "#d62728", "m2": "#1f77b4"}
    bars = layer_of(accuracy_by_tag_bars(table, group="model", colours=colours), "bar")["encoding"]
    assert bars["y"]["axis"]["labelFontSize"] >= 14 and bars["color"]["scale"]["range"] == ["#d62728", "#1f77b4"]
    assert {t["field"] for t in bars["tooltip"]} >= {"model", "tag", "accuracy", "ci_low", "ci_high", "count"}
    overall = accuracy_interval_bars(table.drop(columns="tag"), colours=colours)
    assert layer_of(overall, "bar")["encoding"]["color"]["scale"]["range"] == ["#d62728", "#1f77b4"]
    assert "majority label: neutral, 40.0%" in overall["title"]
    rules = [layer for layer in overall["layer"] if layer["mark"]["type"] == "rule"]
    assert [rule["encoding"]["y"] for rule in rules] == [{"field": "ci_low", "type": "quantitative"}, {"datum": 0.4}]
    apart = accuracy_interval_bars(table.assign(majority_accuracy=[0.4, 0.5]).drop(columns="tag"))
    assert layer_of(apart, "tick")["encoding"]["y"]["field"] == "majority_accuracy", "a tick per bar, not one line"


def test_many_categories_read_as_one_row_each_with_intervals():
    rows = [{"group": f"cat{c}", "model": m, "count": 50 - c, "accuracy": 0.5, "ci_low": 0.4, "ci_high": 0.6,
             "majority_accuracy": 0.34} for c in range(44) for m in ("m1", "m2", "m3")]
    spec = accuracy_dots(pd.DataFrame(rows), "group", colours={"m1": "#000001"})
    dots = layer_of(spec, "circle")["encoding"]
    assert dots["y"]["sort"][:2] == ["cat0 (n=50)", "cat1 (n=49)"] and len(dots["y"]["sort"]) == 44
    assert spec["height"] <= 140 + 26 * 44 and dots["x"]["axis"]["orient"] == "top"
    assert dots["color"]["scale"]["range"][0] == "#000001" and dots["yOffset"]["field"] == "series"
    assert layer_of(spec, "rule")["encoding"]["x2"] == {"field": "ci_high"}
    assert len(layer_of(spec, "tick")["data"]["values"]) == 44


def test_model_colours_are_the_family_colour_first_then_distinct():
    from nlivis.viz.common import FAMILY_COLOURS, model_colours

    colours = model_colours([("esan-snli-small", "esan"), ("gcnn-snli-small", "gcnn"), ("esan-snli-small-seed2", "esan")])
    assert colours["esan-snli-small"] == FAMILY_COLOURS["esan"] == model_colours([("esan-snli-small", "esan")])["esan-snli-small"]
    assert len(set(colours.values())) == 3


