"""What the Data map page selects, colours, lists and compares (nlivis.analysis.datamap), and the figure it draws
(nlivis.viz.datamap): hand-made dynamics with known values, no Streamlit."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nlivis.analysis.datamap import (NOT_TRAINED, Thresholds, augmented_groups, box_selection, compare_regions,
                                     correctness_groups, data_map, inside_polygon, lasso_selection, length_groups,
                                     listing, members, parse_selection, region_selection, tag_groups)
from nlivis.store.dynamics import AUGMENTED_SPLIT, MISSING, TrainingDynamics, encode
from nlivis.viz.common import figure_data
from nlivis.viz.common import CATEGORY_COLOURS
from nlivis.viz.datamap import data_map_scatter, group_colours, is_grey

LABELS = ["entailment", "neutral", "contradiction"]
BY_EPOCH = [  # (gold probability, right) per pair; pair 4 never trained on
    [(0.2, False), (0.9, True), (0.1, False), (0.5, True), None],
    [(0.5, True), (0.95, True), (0.15, False), (0.5, False), None],
    [(0.8, True), (0.85, True), (0.2, False), (0.6, True), None],
]
"""Pair 0: ambiguous (std 0.245), 1: easy (mean 0.9), 2: hard (mean 0.15), 3: between (mean 0.533), 4: not trained."""


def dynamics(by_epoch=BY_EPOCH, ids=None, sources=None, gold=None) -> TrainingDynamics:
    pairs = len(by_epoch[0])
    records = [[MISSING if cell is None else int(encode(np.array([cell[0]]), np.array([cell[1]]))[0]) for cell in row]
               for row in by_epoch]
    return TrainingDynamics(ids=ids or [f"p{i}" for i in range(pairs)], labels=LABELS,
                            gold=np.asarray(gold or [0, 1, 2, 0, 1][:pairs], dtype=np.uint8),
                            records=np.asarray(records, dtype=np.uint16),
                            sources=sources or [{"split": "snli_test", "start": 0, "count": pairs}])


def test_selections_round_trip_through_their_text_and_hold_the_right_pairs():
    points = data_map(dynamics())
    box = box_selection([0.3, 0.0], [1.0, 0.7])  # corners in any order; low variability, confidence ≥ 0.7
    assert box.xs == (0.0, 0.3) and box.ys == (0.7, 1.0)
    assert members(points, box).tolist() == [1]
    assert members(points, parse_selection(box.text)).tolist() == [1]
    assert members(points, region_selection("hard-to-learn")).tolist() == [2]
    assert members(points, parse_selection("region:ambiguous")).tolist() == [0]
    triangle = lasso_selection([0.0, 0.1, 0.0], [0.0, 0.3, 0.6])  # around (0.03, 0.15) only, pair 2
    assert members(points, triangle).tolist() == [2]
    assert parse_selection(triangle.text) == triangle
    everything = box_selection([0, 0.5], [0, 1])
    assert members(points, everything).tolist() == [0, 1, 2, 3], "a pair never trained on is on no map"


@pytest.mark.parametrize("text, problem", [
    ("region:nowhere", "not one of"), ("box:0,1,2", "x0,x1,y0,y1"), ("box:a,b,c,d", "digits 0-9"),
    ("lasso:0,0;1,1", "at least three"), ("lasso:0,0;1;2,2", "x,y;x,y"), ("square:1", "is not region:NAME"),
    ("box:0,nan,0,1", "digits 0-9"), ("", "is not region:NAME")])
def test_a_selection_that_cannot_be_read_says_why(text, problem):
    with pytest.raises(ValueError, match=problem):
        parse_selection(text)


def test_a_long_lasso_is_thinned_for_the_url_and_keeps_its_ends():
    angles = np.linspace(0, 2 * np.pi, 500, endpoint=False)
    lasso = lasso_selection((0.25 + 0.1 * np.cos(angles)).tolist(), (0.5 + 0.2 * np.sin(angles)).tolist())
    assert len(lasso.xs) == 64 and lasso.xs[0] == pytest.approx(0.35)
    assert len(lasso.text) < 1200
    inside = inside_polygon(np.array([0.25, 0.25, 0.4]), np.array([0.5, 0.72, 0.5]), np.array(lasso.xs), np.array(lasso.ys))
    assert inside.tolist() == [True, False, False]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 0.5), st.floats(0, 1)), min_size=1, max_size=40),
       st.tuples(st.floats(0, 0.5), st.floats(0, 0.5)), st.tuples(st.floats(0, 1), st.floats(0, 1)))
def test_a_box_as_a_lasso_holds_the_same_points(points, xs, ys):
    """The even-odd polygon test agrees with the box test for every point not on the box's edge."""
    x, y = np.array([p[0] for p in points]), np.array([p[1] for p in points])
    (x0, x1), (y0, y1) = sorted(xs), sorted(ys)
    on_edge = np.isclose(x, x0) | np.isclose(x, x1) | np.isclose(y, y0) | np.isclose(y, y1)
    in_box = (x >= x0) & (x <= x1) & (y >= y0) & (y <= y1)
    in_polygon = inside_polygon(x, y, np.array([x0, x1, x1, x0]), np.array([y0, y0, y1, y1]))
    assert (in_box == in_polygon)[~on_edge].all()


def test_colourings_per_pair():
    points = data_map(dynamics())
    assert correctness_groups(points) == ["2/3 right", "3/3 right", "0/3 right", "2/3 right", NOT_TRAINED]
    # quartile edges of these 8 lengths: 10, 13.5 → 14, 23, 33.25 → 33, 41; a group holds (lower edge, upper edge]
    assert length_groups([10, 12, 14, 16, 30, 31, 40, 41]) == ["10–14 tokens", "10–14 tokens", "10–14 tokens",
                                                              "15–23 tokens", "24–33 tokens", "24–33 tokens",
                                                              "34–41 tokens", "34–41 tokens"]
    assert length_groups([7, 7, 7]) == ["7 tokens"] * 3 and length_groups([]) == []
    assert tag_groups(["a", "b", "c"], {"a": frozenset({"negation"}), "b": frozenset()}, "negation") == \
        ["negation", "other", "(not tagged)"]
    assert augmented_groups(points) == ["training pair"] * 5


def test_length_groups_cover_every_pair_in_order():
    lengths = np.random.default_rng(0).integers(5, 60, 997)
    groups = length_groups(lengths)
    assert len(groups) == len(lengths) and 2 <= len(set(groups)) <= 4
    for name in set(groups):
        chosen = lengths[np.array(groups) == name]
        low, high = (int(v) for v in name.split()[0].split("–")) if "–" in name else (int(name.split()[0]),) * 2
        assert chosen.min() >= low and chosen.max() <= high


def augmented_dynamics() -> TrainingDynamics:
    by_epoch = [row[:4] + [(0.3, False), (0.95, True)] for row in BY_EPOCH]
    sources = [{"split": "snli_test", "start": 0, "count": 4},
               {"split": AUGMENTED_SPLIT, "start": 4, "count": 2, "kinds": ["antonym", "hypernym"], "originals": [0, 2]}]
    ids = ["p0", "p1", "p2", "p3", "p0~antonym~3", "p2~hypernym~1"]
    return dynamics(by_epoch, ids=ids, sources=sources, gold=[0, 1, 2, 0, 2, 0])


def test_augmented_pairs_are_coloured_and_listed_with_their_original():
    points = data_map(augmented_dynamics())
    assert augmented_groups(points) == ["training pair"] * 4 + ["augmented: antonym", "augmented: hypernym"]
    table = listing(points, [5, 2, 4], order="row")
    assert table["id"].tolist() == ["p2~hypernym~1", "p2", "p0~antonym~3"]
    assert [o if isinstance(o, str) else None for o in table["original"]] == ["p2", None, "p0"] and table["split"].tolist() == [AUGMENTED_SPLIT, "snli_test", AUGMENTED_SPLIT]


def test_listing_orders_and_columns():
    points = data_map(dynamics())
    table = listing(points, members(points, box_selection([0, 0.5], [0, 1])))
    assert table["id"].tolist() == ["p2", "p0", "p3", "p1"]  # lowest confidence first
    assert table.loc[0, "gold"] == "contradiction" and table.loc[0, "region"] == "hard-to-learn"
    assert table.loc[0, "confidence"] == pytest.approx(0.15, abs=1e-4) and table.loc[0, "correctness"] == 0.0
    assert listing(points, [0, 1, 2, 3], "highest variability first")["id"].iloc[0] == "p0"
    assert listing(points, [3, 1], "row")["id"].tolist() == ["p3", "p1"]
    with pytest.raises(ValueError, match="order must be one of"):
        listing(points, [0], "random")


def test_two_maps_compared_region_by_region_over_the_pairs_both_hold():
    first = data_map(dynamics())
    later = [[(0.9, True), (0.9, True), (0.9, True), (0.1, False), None]] * 3  # 0, 1, 2 easy; 3 hard
    second = data_map(dynamics(later, ids=["p0", "p1", "p2", "p3", "elsewhere"]))
    table = compare_regions(first, second)
    assert table.loc["ambiguous", "easy-to-learn"] == 1 and table.loc["easy-to-learn", "easy-to-learn"] == 1
    assert table.loc["hard-to-learn", "easy-to-learn"] == 1 and table.loc["between", "hard-to-learn"] == 1
    assert NOT_TRAINED not in table.index and int(table.to_numpy().sum()) == 4, "p4 is not on the second map"
    assert data_map(dynamics(), Thresholds(hard_confidence=0.1)).region[2] == "between"


def test_the_figure_draws_every_trained_pair_once_with_its_column_thresholds_and_outline():
    points = data_map(dynamics())
    figure = data_map_scatter(points.variability, points.confidence, correctness_groups(points), points.ids,
                              (0.2, 0.75, 0.25), points.region_counts(), "map", outline=("box", (0.0, 0.1), (0.1, 0.3)))
    assert {t.type for t in figure.data} == {"scattergl"}
    markers = [t for t in figure.data if t.mode == "markers"]
    columns = sorted(int(c) for t in markers for c in t.customdata)
    assert columns == [0, 1, 2, 3], "one point per trained pair; customdata is its column"
    assert [t.name for t in markers] == ["0/3 right (1)", "2/3 right (2)", "3/3 right (1)"]
    lines = {t.name: t for t in figure.data if t.mode == "lines"}
    assert list(lines) == ["thresholds", "selection"] and figure.data[-1].name == "selection", "drawn over the points"
    assert list(lines["thresholds"].x) == [0.2, 0.2, None, 0, 0.2, None, 0, 0.2]
    assert list(lines["thresholds"].y) == [0, 1, None, 0.75, 0.75, None, 0.25, 0.25]
    assert list(lines["selection"].x) == [0.0, 0.1, 0.1, 0.0, 0.0] and list(lines["selection"].y) == [0.1, 0.1, 0.3, 0.3, 0.1]
    assert not any(t.showlegend for t in lines.values()) and {t.hoverinfo for t in lines.values()} == {"skip"}
    assert any("hard-to-learn: 1" in a.text for a in figure.layout.annotations)
    assert "variability" in figure.layout.xaxis.title.text and "confidence" in figure.layout.yaxis.title.text
    data = figure_data(figure)
    assert sorted(data["text"]) == ["p0", "p1", "p2", "p3"] and len(data) == 4, "the CSV names every pair, no lines"
    lasso = data_map_scatter(points.variability, points.confidence, ["x"] * 5, points.ids, (0.2, 0.75, 0.25), {}, "map",
                             outline=("lasso", (0, 0.1, 0), (0, 0.3, 0.6)))
    assert lasso.data[-1].name == "selection" and list(lasso.data[-1].x) == [0, 0.1, 0, 0], "a closed polygon"
    empty = data_map_scatter(np.full(2, np.nan), np.full(2, np.nan), ["a", "a"], ["x", "y"], (0.2, 0.75, 0.25), {}, "map")
    assert "nothing to map" in empty.layout.annotations[0].text


def test_augmented_kinds_and_training_pairs_never_share_a_colour():
    kinds = ["antonym", "exclusive", "hypernym", "hyponym", "negation", "number", "quantifier", "swap", "synonym"]
    colours = group_colours(["training pair", *(f"augmented: {kind}" for kind in kinds)])
    assert len(set(colours.values())) == len(kinds) + 1
    assert is_grey(colours["training pair"]), "training pairs are the grey background"
    assert not any(is_grey(colours[f"augmented: {kind}"]) for kind in kinds), "no kind differs from it only in lightness"
    assert group_colours(["a", "b"]) == {"a": CATEGORY_COLOURS[0], "b": CATEGORY_COLOURS[1]}


def test_correctness_colours_run_from_never_right_to_always_right():
    colours = group_colours(["0/6 right", "6/6 right", "3/6 right", "other", "entailment"])
    assert len(set(colours.values())) == 5 and colours["other"] == "#c7c7c7"
    red, blue = (int(colours[g].strip("rgb()").split(",")[i]) for g, i in (("0/6 right", 0), ("6/6 right", 2)))
    assert red > 150 and blue > 150
