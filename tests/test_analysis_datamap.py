"""What the Data map page selects, colours, lists and compares (nlivis.analysis.datamap), and the Vega-Lite
map it draws (nlivis.viz.vega.datamap): hand-made dynamics with known values, no Streamlit."""
from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nlivis.analysis.datamap import (NOT_TRAINED, Thresholds, augmented_groups, box_selection, compare_regions,
                                     correctness_groups, data_map, drawn_coordinates, inside_polygon, lasso_selection,
                                     length_groups, listing, members, parse_selection, region_selection, tag_groups)
from nlivis.store.dynamics import AUGMENTED_SPLIT, MISSING, TrainingDynamics, encode
from nlivis.viz.common import CATEGORY_COLOURS
from nlivis.viz.vega.common import data_csv, data_values, with_records
from nlivis.viz.vega.datamap import (BOX, CLICKED, boxed_ranges, clicked_pair, data_map_spec, group_colours, is_grey,
                                     pair_ids)

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


def layers_of(spec: dict, mark: str) -> list[dict]:
    return [layer for layer in spec["layer"] if layer["mark"]["type"] == mark]


def test_the_map_draws_every_trained_pair_once_with_its_id_thresholds_counts_and_outline():
    points = data_map(dynamics())
    spec = data_map_spec(*drawn_coordinates(points), correctness_groups(points), points.ids, (0.2, 0.75, 0.25),
                         points.region_counts(), "map", colour_name="correctness", outline=("box", (0.0, 0.1), (0.1, 0.3)))
    rows = data_values(spec)
    assert [row["pair"] for row in rows] == ["p0", "p1", "p2", "p3"], "one point per trained pair; a click gives its id"
    assert rows[0] == {"pair": "p0", "variability": 0.245, "confidence": 0.5, "correctness": "2/3 right"}
    assert rows[3]["variability"] == 0.0471 and rows[3]["confidence"] == 0.5333, "float32 written back as rounded"
    assert data_csv(spec).splitlines()[:2] == ["pair,variability,confidence,correctness", "p0,0.245,0.5,2/3 right"]
    (dots,) = layers_of(spec, "circle")
    colour = dots["encoding"]["color"]
    assert colour["scale"]["domain"] == ["0/3 right", "2/3 right", "3/3 right"], "the legend in order of k"
    assert '"0/3 right": " (1)"' in colour["legend"]["labelExpr"] and '"2/3 right": " (2)"' in colour["legend"]["labelExpr"]
    params = {param["name"]: param["select"] for param in dots["params"]}
    assert params[BOX]["type"] == "interval" and params[BOX]["encodings"] == ["x", "y"]
    assert params["point"]["fields"] == ["pair"] and params["point"]["on"] == "click"
    assert dots["mark"]["aria"] is False, "no per-point description: the points are drawn on a canvas"
    assert "variability" in dots["encoding"]["x"]["title"] and "confidence" in dots["encoding"]["y"]["title"]
    (thresholds,) = layers_of(spec, "rule")
    assert [(r["variability"], r["x2"], r["confidence"], r["y2"]) for r in thresholds["data"]["values"]] == [
        (0.2, 0.2, 0.0, 1.0), (0.0, 0.2, 0.75, 0.75), (0.0, 0.2, 0.25, 0.25)]
    labels = [layer["data"]["values"][0]["text"] for layer in layers_of(spec, "text")]
    assert "hard-to-learn: 1" in labels and "easy-to-learn: 1" in labels and "ambiguous: 1" in labels
    outline = layers_of(spec, "line")
    assert spec["layer"][-1] is outline[-1], "the outline is drawn over the points"
    corners = [(v["variability"], v["confidence"]) for v in outline[-1]["data"]["values"]]
    assert corners == [(0.0, 0.1), (0.1, 0.1), (0.1, 0.3), (0.0, 0.3), (0.0, 0.1)], "a closed box"
    lasso = data_map_spec(*drawn_coordinates(points), ["x"] * 5, points.ids, (0.2, 0.75, 0.25), {}, "map",
                          outline=("lasso", (0, 0.1, 0), (0, 0.3, 0.6)))
    assert [v["variability"] for v in layers_of(lasso, "line")[-1]["data"]["values"]] == [0, 0.1, 0, 0], "closed"
    assert not layers_of(data_map_spec(*drawn_coordinates(points), ["x"] * 5, points.ids, (0.2, 0.75, 0.25), {},
                                       "map"), "line"), "no outline without a drawn selection"
    empty = data_map_spec(np.full(2, np.nan), np.full(2, np.nan), ["a", "a"], ["x", "y"], (0.2, 0.75, 0.25), {}, "map")
    assert "nothing to map" in empty["mark"]["text"]


@pytest.mark.parametrize("box, expected", [
    # the drawn points: p0 (0.245, 0.5), p1 (0.0408, 0.9), p2 (0.0408, 0.15), p3 (0.0471, 0.5333); p4 not trained
    ({"variability": [0.0471, 0.0408], "confidence": [0.9, 0.15]}, [1, 2, 3]),  # p1, p2, p3 on its edges: in
    ({"variability": [0.0409, 0.3], "confidence": [0.15, 0.9]}, [0, 3]),  # p1, p2 just left of it: out
    ({"variability": [0.0, 0.5], "confidence": [0.5, 0.5334]}, [0, 3]),  # a flat band: p0 on its lower edge
    ({"variability": [0.3, 0.5], "confidence": [0.0, 1.0]}, []),  # the empty right of the map
    ({"variability": [-0.005, 0.0408], "confidence": [-0.01, 0.15]}, [2]),  # dragged into the axes' padding
])
def test_a_dragged_box_selects_the_pairs_drawn_inside_it_or_on_its_edge(box, expected):
    points = data_map(dynamics())
    ranges = boxed_ranges({BOX: box, "point": []})  # as st.vega_lite_chart returns an interval selection
    assert ranges is not None and min(*ranges[0], *ranges[1]) >= 0, "no negative end: the map's values start at 0"
    assert members(points, box_selection(*ranges)).tolist() == expected


@pytest.mark.parametrize("selection", [{}, {BOX: {}}, {"point": [{"pair": 1}]}, None])
def test_no_box_drawn_is_no_selection(selection):
    assert boxed_ranges(selection) is None


@pytest.mark.parametrize("box", [{"variability": [0.1, 0.2]}, {"variability": [0.1], "confidence": [0, 1]},
                                 {"variability": 0.1, "confidence": [0, 1]}, [0.1, 0.2],
                                 {"variability": [0.1, "a"], "confidence": [0, 1]}])
def test_a_box_selection_that_cannot_be_read_says_why(box):
    with pytest.raises(ValueError, match="box selection"):
        boxed_ranges({BOX: box})


def test_the_points_travel_as_typed_columns_only_the_chart_reads():
    """Streamlit sends the frame as Arrow: integer ids as int32, coordinates as float32, the group as a dictionary
    of the legend's groups (each name once); the SVG converter gets plain rows."""
    import pyarrow as pa

    ids = ["7", "12", "3", "1000"]
    spec = data_map_spec(np.array([0.1234, 0.2, np.nan, 0.0471]), np.array([0.5, 0.9, 0.1, 0.5333]),
                         ["3/6 right", "6/6 right", "0/6 right", "3/6 right"], ids, (0.2, 0.75, 0.25), {}, "map",
                         colour_name="correctness")
    frame = spec["data"]["values"]
    table = pa.Table.from_pandas(frame, preserve_index=False)
    assert table.schema.names == ["pair", "variability", "confidence", "correctness"]
    assert [str(t) for t in table.schema.types[:3]] == ["int32", "float", "float"]
    group = table.schema.field("correctness").type
    assert pa.types.is_dictionary(group) and group.index_type == pa.int8(), "each group's name once, a byte a point"
    assert frame["pair"].tolist() == [7, 12, 1000], "the pair without coordinates is not drawn"
    assert list(frame["correctness"].cat.categories) == ["3/6 right", "6/6 right"], "only the groups drawn"
    assert frame["correctness"].tolist() == ["3/6 right", "6/6 right", "3/6 right"]
    plain = with_records(spec)
    assert plain["data"]["values"][0] == {"pair": 7, "variability": 0.1234, "confidence": 0.5,
                                          "correctness": "3/6 right"} and spec["data"]["values"] is frame
    import json
    json.dumps(plain)  # what the SVG converter reads


@pytest.mark.parametrize("ids, expected", [
    (["1", "2", "9824"], "int32"), (["0", "15"], "int32"),
    (["p0", "1"], "text"), (["01", "2"], "text"), (["2147483648"], "text"), (["-1"], "text"), (["١٢"], "text"),
])
def test_pair_ids_are_integers_only_where_they_read_back_the_same(ids, expected):
    sent = pair_ids(ids)
    assert ("int32" if isinstance(sent, np.ndarray) and sent.dtype == np.int32 else "text") == expected
    assert [clicked_pair({CLICKED: [{"pair": value}]}) for value in
            (sent.tolist() if isinstance(sent, np.ndarray) else sent)] == ids, "a click gives the id back"


@settings(max_examples=150, deadline=None)
@given(st.lists(st.one_of(st.integers(0, 2 ** 32).map(str), st.text(max_size=12)), min_size=1, max_size=20))
def test_any_pair_ids_read_back_from_a_click(ids):
    sent = pair_ids(ids)
    values = sent.tolist() if isinstance(sent, np.ndarray) else sent
    assert [clicked_pair({CLICKED: [{"pair": value}]}) for value in values] == ids


@pytest.mark.parametrize("selection, expected", [
    ({CLICKED: [{"pair": 12}]}, "12"), ({CLICKED: [{"pair": 12.0}]}, "12"), ({CLICKED: [{"pair": "p3"}]}, "p3"),
    ({CLICKED: []}, None), ({CLICKED: [{"pair": 1}, {"pair": 2}]}, None), ({CLICKED: [{}]}, None),
    ({CLICKED: [{"pair": True}]}, None), ({CLICKED: [{"pair": 1.5}]}, None), ({BOX: {}}, None), (None, None),
])
def test_a_click_gives_one_points_pair_id_or_nothing(selection, expected):
    assert clicked_pair(selection) == expected


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


def map_of(xs, ys, groups, ids=None) -> dict:
    return data_map_spec(np.array(xs, dtype=float), np.array(ys, dtype=float), groups,
                         ids or [str(i + 1) for i in range(len(xs))], (0.2, 0.75, 0.25), {}, "map",
                         colour_name="correctness")


@settings(max_examples=15, deadline=None)
@given(st.lists(st.sampled_from(["0/2 right", "1/2 right", "2/2 right", "other"]), min_size=1, max_size=12),
       st.integers(120, 400), st.integers(120, 400))
def test_the_points_image_puts_each_point_where_its_axes_say_in_its_group_s_colour(groups, width, height):
    """The server's raster of the points (`points_image`, what a page shows under the frame's SVG): whatever the
    groups and the plot's size, each point is a disc centred at its data coordinates on the axes' domains, in its
    group's colour at the points' opacity; away from every point the image is transparent."""
    import io

    from PIL import Image

    from nlivis.viz.vega.datamap import IMAGE_SCALE, POINT_OPACITY, X, Y, domain, point_colours, points_image

    count = len(groups)  # points on a diagonal, far enough apart that no two discs touch
    xs = [0.02 + 0.45 * i / max(1, count - 1) for i in range(count)]
    ys = [0.05 + 0.9 * i / max(1, count - 1) for i in range(count)]
    spec = map_of(xs, ys, groups)
    image = Image.open(io.BytesIO(points_image(spec, width, height))).convert("RGBA")
    assert image.size == (width * IMAGE_SCALE, height * IMAGE_SCALE)
    (x0, x1), (y0, y1) = domain(spec, X), domain(spec, Y)
    _, colours = point_colours(spec)
    from PIL import ImageColor
    for x, y, group in zip(xs, ys, groups):
        centre = (int((x - x0) / (x1 - x0) * image.width), int((y1 - y) / (y1 - y0) * image.height))
        red, green, blue, alpha = image.getpixel(centre)
        assert abs(alpha - 255 * POINT_OPACITY) <= 2, (group, centre, alpha)
        assert max(abs(a - b) for a, b in zip((red, green, blue), ImageColor.getrgb(colours[group]))) <= 3
    assert image.getpixel((image.width - 2, 1))[3] == 0 and image.getpixel((1, image.height - 2))[3] == 0


def test_a_box_past_the_axes_ends_does_not_widen_the_drawing():
    """A link's box over the whole unit square, on a map whose axes end at 0.5: drawn, the map is as wide and high
    as without it (unclipped, its outline widened the SVG and the page scaled the map's text down to illegible)."""
    import vl_convert

    points = data_map(dynamics())
    args = (*drawn_coordinates(points), correctness_groups(points), points.ids, (0.2, 0.75, 0.25), {}, "map")

    def size(spec: dict) -> tuple[str, str]:
        svg = vl_convert.vegalite_to_svg({**with_records(spec), "width": 400, "height": 300})
        return re.search(r'<svg[^>]*width="([\d.]+)"', svg).group(1), re.search(r'<svg[^>]*height="([\d.]+)"', svg).group(1)

    assert size(data_map_spec(*args, outline=("box", (0.0, 1.0), (0.0, 1.0)))) == size(data_map_spec(*args))
    assert all(layer["mark"]["clip"] for layer in layers_of(data_map_spec(*args, outline=("box", (0, 1), (0, 1))), "line"))


def test_the_frame_is_the_map_without_its_points_or_inputs_and_the_image_spans_the_axes():
    from nlivis.viz.vega.datamap import IMAGE_DESCRIPTION, X, Y, domain, frame_spec

    spec = data_map_spec(np.array([0.1, 0.2]), np.array([0.5, 0.9]), ["1/2 right", "2/2 right"], ["a", "b"],
                         (0.2, 0.75, 0.25), {"easy-to-learn": 1}, "map", colour_name="correctness",
                         outline=("box", (0.0, 0.1), (0.1, 0.3)))
    before = json_of(spec)
    frame = frame_spec(spec, "data:image/webp;base64,AAAA")
    assert json_of(spec) == before, "the map's spec (shared by the caches) is not changed"
    assert frame["data"] == {"values": []} and "params" not in frame["layer"][0]
    assert "tooltip" not in frame["layer"][0]["encoding"] and frame["layer"][0]["encoding"]["color"] == \
        spec["layer"][0]["encoding"]["color"], "the legend's groups and colours as the map's"
    image = frame["layer"][1]
    assert image["mark"]["type"] == "image" and image["mark"]["aspect"] is False
    (row,) = image["data"]["values"]
    assert (row[X], row["x2"], row[Y], row["y2"]) == (*domain(spec, X), *domain(spec, Y))
    assert row["url"] == "data:image/webp;base64,AAAA"
    assert image["encoding"]["description"] == {"value": IMAGE_DESCRIPTION}
    assert frame["layer"][2:] == spec["layer"][1:], "thresholds, counts and the outline over the points"


def json_of(spec: dict) -> str:
    import json

    return json.dumps(spec, default=lambda v: v.to_dict() if hasattr(v, "to_dict") else str(v), sort_keys=True)


@settings(max_examples=20, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 0.5), st.floats(0, 1), st.sampled_from(["1/3 right", "3/3 right", "x"]),
                          st.one_of(st.integers(0, 2 ** 31 - 1).map(str), st.text("abc-_", min_size=1, max_size=5))),
                min_size=1, max_size=20, unique_by=lambda p: p[3]))
def test_the_browser_gets_each_points_coordinates_id_and_group(points):
    """What the browser finds a hovered or clicked point from (`browser_points`): every drawn point in order, its
    coordinates in ten-thousandths of the rounded values drawn, the id a click on Vega-Lite's chart gave, its
    group by index into the legend's groups, and the axes' domains."""
    from nlivis.viz.vega.datamap import X, Y, browser_points, domain

    xs, ys, groups, ids = (list(column) for column in zip(*points))
    xs, ys = [round(x, 4) for x in xs], [round(y, 4) for y in ys]
    spec = map_of(xs, ys, groups, ids)
    sent = browser_points(spec)
    assert [str(i) for i in sent["ids"]] == ids
    assert [clicked_pair({CLICKED: [{"pair": i}]}) for i in sent["ids"]] == ids
    assert sent["x"] == [round(x * 10_000) for x in xs] and sent["y"] == [round(y * 10_000) for y in ys]
    assert [sent["names"][g] for g in sent["groups"]] == groups and sent["field"] == "correctness"
    assert sent["domain"] == {"x": list(domain(spec, X)), "y": list(domain(spec, Y))}
