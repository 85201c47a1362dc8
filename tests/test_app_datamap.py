"""The Data map page run headless with streamlit's AppTest on a tiny real checkpoint (its run recorded training
dynamics on the fixture's 12 SNLI "test" pairs) and a copy of it without dynamics: the map draws one point per
trained pair (a Vega-Lite spec: no plotly), a dragged box lists its pairs, a listed pair opens in the Pair explorer,
the URL brings the view back, a clicked point opens its pair, the hard-to-learn list shows every checkpoint's
prediction beside the gold label, and a checkpoint without dynamics says how to get them."""
from __future__ import annotations

import shutil
from pathlib import Path
from urllib.parse import parse_qsl

import numpy as np
import pyarrow as pa
import pytest

pytest.importorskip("streamlit.testing.v1", reason="streamlit's AppTest is not installed")

from nlivis.analysis.datamap import Thresholds, data_map  # noqa: E402
from nlivis.store.checkpoints import DYNAMICS_FILE  # noqa: E402
from nlivis.store.dynamics import read_dynamics  # noqa: E402
from nlivis.app import paths  # noqa: E402
from tests.fixtures.app_checkpoints import APP_DATA, train_variant  # noqa: E402
from tests.test_app_pages import click_table_row, list_lines, open_app, open_link, show, texts, vega_specs  # noqa: E402

PAGE = paths.DATA_MAP.path
MISLABELLED = "Possibly mislabelled (hard-to-learn)"


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    """gcnn-snli-small (with dynamics) and old-gcnn-snli-small, the same checkpoint as one trained before
    dynamics were recorded."""
    from nlivis.store.weights import rewrite_checkpoint

    folder = tmp_path_factory.mktemp("datamap") / "checkpoints"
    trained = train_variant(folder, "gcnn")
    shutil.copytree(trained, folder / "old-gcnn-snli-small")
    rewrite_checkpoint(folder / "old-gcnn-snli-small", remove=(DYNAMICS_FILE,))
    return folder


def maps(app) -> list[dict]:
    """The data maps on the page: Vega-Lite specs, each with its points as `data.values`."""
    return vega_specs(app)


def overlays(spec: dict) -> list[str]:
    """What is drawn over the points: the threshold lines ("rule"), the region counts ("text"), the selection's
    outline ("line")."""
    return list(dict.fromkeys(layer["mark"]["type"] for layer in spec["layer"][1:]))


def drawn_columns(spec: dict, ids: list[str]) -> list[int]:
    """The map's columns of the points drawn (each point carries its pair id)."""
    return sorted(ids.index(str(row["pair"])) for row in spec["data"]["values"])


def box_event(variability: list[float], confidence: list[float]) -> dict:
    """A box dragged over a map, as st.vega_lite_chart returns it (an interval selection: a range per field)."""
    return {"selection": {"box": {"variability": variability, "confidence": confidence}, "point": []}}


def test_the_map_draws_every_trained_pair_and_a_box_lists_them_into_the_explorer(monkeypatch, tmp_path, root):
    points = data_map(read_dynamics(root / "gcnn-snli-small"))
    trained = [i for i, e in enumerate(points.epochs) if e > 0]
    assert trained, "the fixture's run trained on some pairs"
    app = open_app(monkeypatch, tmp_path, root, APP_DATA)
    show(app, PAGE)
    assert app.selectbox(key="datamap_checkpoint").value == "gcnn-snli-small"
    assert drawn_columns(maps(app)[0], list(points.ids)) == trained, "one point per trained pair, with its id"
    (chart,) = app.get("vega_lite_chart")
    sent = pa.ipc.open_stream(chart.proto.data.data).read_all().schema
    assert sent.names == ["pair", "variability", "confidence", "correctness"], "only what the chart reads"
    assert [str(sent.field(n).type) for n in sent.names[:3]] == ["int32", "float", "float"]
    assert pa.types.is_dictionary(sent.field("correctness").type), "each group's name sent once"
    assert "Regions — ambiguous: variability ≥ 0.2; easy-to-learn: confidence ≥ 0.75" in texts(app, "caption")
    assert "trained on snli test" in texts(app, "caption"), "the reduced protocol is stated"
    spec = maps(app)[0]
    assert "variability" in spec["layer"][0]["encoding"]["x"]["title"]
    assert overlays(spec) == ["rule", "text"], "no selection drawn yet"
    assert not app.get("plotly_chart"), "the page draws no plotly chart (its 4.7 MB chunk costs every new tab)"
    assert "Drag a box over a map" in texts(app, "caption")

    app.session_state["chart_datamap_0"] = box_event([0.5, 0.0], [1.0, 0.0])  # dragged from the top right
    app.run()
    assert not app.exception, app.exception
    assert app.query_params["sel"] == "box:0,0.5,0,1" and app.query_params["sel_on"] == "gcnn-snli-small"
    listed = list_lines(app, "datamap_selected_pairs_table")
    assert len(listed) == len(trained) and set(listed["split"]) == {"snli_test"}
    assert (listed["confidence"].diff().dropna() >= 0).all(), "lowest confidence first"
    assert (listed["id"].astype(int) == listed["row"] + 1).all() and listed["premise"].str.len().min() > 0
    assert overlays(maps(app)[0]) == ["rule", "text", "line"], "the box is drawn"
    view = dict(app.query_params)

    click_table_row(app, "datamap_selected_pairs_table", 0)
    assert [t.value for t in app.title] == ["Pair explorer"]
    row = int(listed["row"].iloc[0])
    assert app.query_params["split"] == "snli_test" and app.query_params["pair"] == str(row)
    assert app.query_params["from"] == "datamap" and app.query_params["from.sel"] == "box:0,0.5,0,1"
    assert app.query_params["models"] == "gcnn-snli-small", "the pair opens with the map's own checkpoint"
    from nlivis.data.protocols import get_protocol, read_split

    expected = read_split(get_protocol("snli-small").train[0], APP_DATA).pairs[row]
    assert f"**Premise:** {expected.premise}" in texts(app, "markdown")
    assert "a data-map selection" in texts(app, "markdown", "caption"), "the explorer says where the pair came from"

    back = open_link(monkeypatch, tmp_path, root, APP_DATA, PAGE, **view)  # what Back (or the link) opens
    assert dict(back.query_params) == view
    assert len(list_lines(back, "datamap_selected_pairs_table")) == len(trained)
    assert overlays(maps(back)[0]) == ["rule", "text", "line"]


def test_hard_to_learn_pairs_show_every_models_prediction_beside_the_gold_label(monkeypatch, tmp_path, root):
    thresholds = Thresholds(hard_confidence=0.45)
    points = data_map(read_dynamics(root / "gcnn-snli-small"), thresholds)
    hard = points.region_counts()["hard-to-learn"]
    app = open_link(monkeypatch, tmp_path, root, APP_DATA, PAGE, tab=MISLABELLED, hard="0.45",
                    models="gcnn-snli-small,old-gcnn-snli-small")
    if not hard:
        assert "No pair" in texts(app, "info")
        pytest.skip("the fixture's 4-step run left no pair below confidence 0.45")
    listed = list_lines(app, "datamap_mislabelled_pairs_table")
    assert len(listed) == hard and set(listed["region"]) == {"hard-to-learn"}
    assert {"gold", "gcnn-snli-small predicts", "old-gcnn-snli-small predicts"} <= set(listed.columns)
    assert set(listed["gcnn-snli-small predicts"]) <= {"entailment", "neutral", "contradiction"}
    # the same weights read the same pairs: the copy without dynamics predicts the same labels
    assert (listed["gcnn-snli-small predicts"] == listed["old-gcnn-snli-small predicts"]).all()
    assert "confidence ≤ 0.45" in texts(app, "caption")


def test_side_by_side_with_a_checkpoint_without_dynamics_says_how_to_get_them(monkeypatch, tmp_path, root):
    app = open_link(monkeypatch, tmp_path, root, APP_DATA, PAGE, checkpoint="gcnn-snli-small",
                    compare="old-gcnn-snli-small", colour="gold label")
    message = texts(app, "info")
    assert "old-gcnn-snli-small" in message and "trained without recording training dynamics" in message
    assert "python -m nlivis train --config gcnn --dataset snli-small" in message
    (spec,) = maps(app)
    assert {row["gold label"] for row in spec["data"]["values"]} <= {"entailment", "neutral", "contradiction"}
    alone = open_link(monkeypatch, tmp_path, root, APP_DATA, PAGE, checkpoint="old-gcnn-snli-small")
    assert "has no data map" in texts(alone, "info") and not maps(alone)
    assert "old-gcnn-snli-small (no training dynamics)" in app.selectbox(key="datamap_compare").options


def test_two_maps_side_by_side_compare_regions_a_clicked_point_opens_and_bad_selections_are_said(monkeypatch, tmp_path, root):
    shutil.copytree(root / "gcnn-snli-small", tmp_path / "pair" / "gcnn-snli-small")
    shutil.copytree(root / "gcnn-snli-small", tmp_path / "pair" / "copy-gcnn-snli-small")
    app = open_link(monkeypatch, tmp_path, tmp_path / "pair", APP_DATA, PAGE, checkpoint="gcnn-snli-small",
                    compare="copy-gcnn-snli-small", tab="Regions of the two maps", sel="box:oops")
    assert len(maps(app)) == 2
    assert "selection 'box:oops'" in texts(app, "warning")
    table = app.dataframe[0].value
    assert int(table.to_numpy().sum()) == len(read_dynamics(root / "gcnn-snli-small").ids), "every pair, once"
    diagonal = sum(int(table.iloc[i, i]) for i in range(min(table.shape)))
    assert diagonal == int(table.to_numpy().sum()), "the same run's two copies put every pair in the same region"
    app.session_state["chart_datamap_0"] = {"selection": {"box": {"variability": [0.1]}, "point": []}}
    app.run()
    assert "That selection could not be read" in texts(app, "warning"), "a box it cannot read is said, not guessed"

    first = next(i for i, e in enumerate(data_map(read_dynamics(root / "gcnn-snli-small")).epochs) if e > 0)
    clicked = int(data_map(read_dynamics(root / "gcnn-snli-small")).ids[first])  # as the browser sends it back
    app.session_state["chart_datamap_1"] = {"selection": {"box": {}, "point": [{"pair": clicked}]}}  # a click
    app.run()
    (opening,) = [dict(parse_qsl(link.proto.query_string)) for link in app.get("page_link")
                  if link.proto.label == "Open this pair in the Pair explorer"]  # the copies load no weights here
    assert opening["split"] == "snli_test" and opening["pair"] == str(first), "a clicked point opens its pair"
    assert opening["from.checkpoint"] == "copy-gcnn-snli-small" and opening["from"] == "datamap"
    assert opening["models"] == "gcnn-snli-small,copy-gcnn-snli-small", "with the page's two checkpoints"


def test_a_map_drawn_on_the_server_sends_its_points_and_a_click_or_a_box_acts_as_vega_lite_s(monkeypatch, tmp_path, root):
    """With figures drawn on the server (the served app's default once its converter is warm) the map is its
    component: the frame's SVG with the points as one image over the plot (no point is a mark), every trained
    pair's id and coordinates for the browser to find under the pointer; a click on a point's row opens that
    pair, a dragged box lists its pairs, as Vega-Lite's selections do on the other path."""
    import base64
    import io

    from PIL import Image

    from nlivis.viz.vega.export import start_converter

    points = data_map(read_dynamics(root / "gcnn-snli-small"))
    trained = [i for i, e in enumerate(points.epochs) if e > 0]
    start_converter()
    app = open_app(monkeypatch, tmp_path, root, APP_DATA)
    monkeypatch.setenv("NLIVIS_FIGURES", "svg")
    show(app, PAGE)
    assert not app.get("vega_lite_chart") and not app.get("plotly_chart")
    (component,) = [e for e in app.get("bidi_component") if e.proto.component_name.endswith("nlivis_point_map")]
    import json

    sent = json.loads(component.proto.json)
    svg, drawn = sent["svg"], sent["points"]
    assert [str(i) for i in drawn["ids"]] == [points.ids[i] for i in trained], "every trained pair, with its id"
    assert drawn["x"] == [round(points.variability[i] * 10_000) for i in trained]
    assert svg.count("<image ") == 1 and svg.count("data:image/webp;base64,") == 1, "the points: one image"
    assert 'aria-roledescription="circle"' not in svg and len(svg.split("base64,")[0]) < 40_000, "no point a mark"
    image = Image.open(io.BytesIO(base64.b64decode(svg.split("data:image/webp;base64,")[1].split('"')[0])))
    assert image.format == "WEBP" and image.width > 400, "the points, drawn at the plot's size"
    assert len(app.get("download_button")) == 2, "the map's CSV and SVG"

    app.session_state["figure_datamap_0"] = {"click": 1}  # what the component sends for the second point
    app.run()
    assert not app.exception, app.exception
    (opening,) = [dict(parse_qsl(link.proto.query_string)) for link in app.get("page_link")
                  if link.proto.label == "Open this pair in the Pair explorer"]
    assert opening["split"] == "snli_test" and opening["pair"] == str(trained[1]), "the clicked point's pair"
    assert opening["from.checkpoint"] == "gcnn-snli-small" and opening["models"] == "gcnn-snli-small"

    back = open_link(monkeypatch, tmp_path, root, APP_DATA, PAGE)
    monkeypatch.setenv("NLIVIS_FIGURES", "svg")
    back.run()
    back.session_state["figure_datamap_0"] = {"box": {"x": [0.5, -0.004], "y": [1.0, 0.0]}}  # dragged from the top right
    back.run()
    assert not back.exception, back.exception
    assert back.query_params["sel"] == "box:0,0.5,0,1" and back.query_params["sel_on"] == "gcnn-snli-small"
    assert len(list_lines(back, "datamap_selected_pairs_table")) == len(trained)


@pytest.mark.parametrize("result, expected", [
    ({"click": 1}, ("pair", "12")), ({"click": 0}, ("pair", "7")), ({"click": 2}, None), ({"click": -1}, None),
    ({"click": True}, None), ({"click": "1"}, None), (None, None), ({}, None),
    ({"box": {"x": [0.3, 0.1], "y": [0.9, 0.2]}}, ("box", ([0.1, 0.3], [0.2, 0.9]))),
    ({"box": {"x": [0.6, -0.01], "y": [1.2, -0.3]}}, ("box", ([0.0, 0.5], [0.0, 1.0]))),
])
def test_the_server_drawn_map_s_click_or_box_reads_as_vega_lite_s_selection(result, expected):
    """What the component sends (a clicked point's row, a dragged box's corners in data units) becomes the event
    Vega-Lite's chart gave, read by the same functions: a row that names no point, or a flag, selects nothing."""
    import numpy as np

    from nlivis.app.components.point_map import selection_event
    from nlivis.viz.vega.datamap import boxed_ranges, clicked_pair, data_map_spec

    spec = data_map_spec(np.array([0.1, 0.2]), np.array([0.5, 0.9]), ["a", "b"], ["7", "12"], (0.2, 0.75, 0.25), {},
                         "map")
    selection = selection_event(spec, result)["selection"]
    if expected is None:
        assert clicked_pair(selection) is None and boxed_ranges(selection) is None
    elif expected[0] == "pair":
        assert clicked_pair(selection) == expected[1] and boxed_ranges(selection) is None
    else:
        low_high = [sorted(values) for values in boxed_ranges(selection)]
        assert low_high == [list(expected[1][0]), list(expected[1][1])] and clicked_pair(selection) is None


def test_the_thresholds_section_draws_its_selectboxes_only_when_open_and_the_link_s_values_hold_either_way(
        monkeypatch, tmp_path, root):
    """Closed, the section draws nothing, yet the link's thresholds draw the map and stay in the URL (a value that
    is no choice is said); opened, its selectboxes show those values."""
    app = open_link(monkeypatch, tmp_path, root, APP_DATA, PAGE, hard="0.45", amb="0.33")
    assert not [box for box in app.selectbox if box.key in ("datamap_amb", "datamap_easy", "datamap_hard")]
    assert "confidence ≤ 0.45" in texts(app, "caption") and app.query_params["hard"] == "0.45"
    assert "amb=0.33 in the link is not one of the choices here" in texts(app, "warning")
    assert "amb" not in app.query_params, "the default instead, said above"
    app.session_state["datamap_thresholds_open"] = True
    app.run()
    assert not app.exception, app.exception
    assert app.selectbox(key="datamap_hard").value == 0.45 and app.selectbox(key="datamap_amb").value == 0.2
    app.selectbox(key="datamap_easy").set_value(0.8).run()
    assert app.query_params["easy"] == "0.8" and "confidence ≥ 0.8" in texts(app, "caption")


def test_a_frame_the_converter_rejects_leaves_the_map_to_vega_lite(monkeypatch, tmp_path, root):
    """Nothing is lost when the server cannot draw the map's frame: Vega-Lite draws the map, with its selections."""
    from nlivis.app.components import point_map
    from nlivis.viz.vega.export import start_converter

    def rejected(key: str, dark: bool, columns: int, spec: dict) -> str:
        raise ValueError("the converter refused it")

    start_converter()
    monkeypatch.setattr(point_map.cached_figures, "page_svg", rejected)
    app = open_app(monkeypatch, tmp_path, root, APP_DATA)
    monkeypatch.setenv("NLIVIS_FIGURES", "svg")
    show(app, PAGE)
    assert len(app.get("vega_lite_chart")) == 1 and not app.get("bidi_component")
    assert len(app.get("download_button")) == 2


def retrained(folder: Path, confidence: float) -> None:
    """`folder`'s dynamics as a new run of it would leave them: every trained pair at gold probability
    `confidence` in every epoch it was trained in, the manifest recording the new file, a later modification time."""
    import json
    import os

    from nlivis.store.checkpoints import MANIFEST
    from nlivis.store.dynamics import encode, write_dynamics
    from nlivis.store.files import sha256_file

    dynamics = read_dynamics(folder)
    seen = dynamics.seen()
    records = encode(np.full(seen.shape, confidence), np.full(seen.shape, confidence > 0.5))
    dynamics.records = np.where(seen, records, dynamics.records).astype(np.uint16)
    path = folder / DYNAMICS_FILE
    write_dynamics(path, dynamics)
    manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    manifest["files"][DYNAMICS_FILE] = {"bytes": path.stat().st_size, "sha256": sha256_file(path)}
    (folder / MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
    later = path.stat().st_mtime + 10
    os.utime(path, (later, later))


def test_a_retrained_checkpoint_s_map_and_list_are_drawn_again(monkeypatch, tmp_path, root):
    """The map's spec and its list are kept per view between runs (a rerun builds neither again), under the state
    of the dynamics file: a checkpoint retrained into the same folder is drawn and listed anew."""
    folder = tmp_path / "checkpoints"
    shutil.copytree(root / "gcnn-snli-small", folder / "gcnn-snli-small")
    app = open_link(monkeypatch, tmp_path, folder, APP_DATA, PAGE, hard="0.45")
    before = maps(app)[0]
    assert maps(app.run())[0] is not None and maps(app)[0]["data"] == before["data"], "a rerun draws the same map"
    retrained(folder / "gcnn-snli-small", confidence=0.1)
    app.run()
    assert not app.exception, app.exception
    points = data_map(read_dynamics(folder / "gcnn-snli-small"), Thresholds(hard_confidence=0.45))
    trained = int((points.epochs > 0).sum())
    drawn = maps(app)[0]["data"]["values"]
    assert len(drawn) == trained and {round(float(row["confidence"]), 3) for row in drawn} == {0.1}
    listed = list_lines(app, "datamap_selected_pairs_table")
    assert len(listed) == trained and set(listed["region"]) == {"hard-to-learn"}, "every trained pair is hard now"
