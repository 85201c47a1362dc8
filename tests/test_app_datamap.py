"""The Data map page run headless with streamlit's AppTest on a tiny real checkpoint (its run recorded training
dynamics on the fixture's 12 SNLI "test" pairs) and a copy of it without dynamics: the map draws one point per
trained pair, a box lists its pairs, a listed pair opens in the Pair explorer, the URL brings the view back, the
hard-to-learn list shows every checkpoint's prediction beside the gold label, and a checkpoint without dynamics
says how to get them."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

pytest.importorskip("streamlit.testing.v1", reason="streamlit's AppTest is not installed")

from nlivis.analysis.datamap import Thresholds, data_map  # noqa: E402
from nlivis.store.checkpoints import DYNAMICS_FILE  # noqa: E402
from nlivis.store.dynamics import read_dynamics  # noqa: E402
from nlivis.app import paths  # noqa: E402
from tests.fixtures.app_checkpoints import APP_DATA, train_variant  # noqa: E402
from tests.test_app_pages import charts, click_table_row, open_app, open_link, show, texts  # noqa: E402

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


def map_points(app) -> list[dict]:
    return [t for f in charts(app) for t in f["data"] if t.get("type") == "scattergl" and t.get("mode") == "markers"]


def overlays(figure: dict) -> list[str]:
    """The names of the lines drawn over the points (thresholds, the selection's outline)."""
    return [t["name"] for t in figure["data"] if t.get("mode") == "lines"]


def drawn_columns(traces: list[dict]) -> list[int]:
    import base64

    import numpy as np

    columns = []
    for trace in traces:
        custom = trace["customdata"]
        if isinstance(custom, dict):  # plotly's typed-array encoding
            custom = np.frombuffer(base64.b64decode(custom["bdata"]), dtype=custom["dtype"]).tolist()
        columns += [int(c) for c in custom]
    return sorted(columns)


def test_the_map_draws_every_trained_pair_and_a_box_lists_them_into_the_explorer(monkeypatch, tmp_path, root):
    points = data_map(read_dynamics(root / "gcnn-snli-small"))
    trained = [i for i, e in enumerate(points.epochs) if e > 0]
    assert trained, "the fixture's run trained on some pairs"
    app = open_app(monkeypatch, tmp_path, root, APP_DATA)
    show(app, PAGE)
    assert app.selectbox(key="datamap_checkpoint").value == "gcnn-snli-small"
    assert drawn_columns(map_points(app)) == trained, "one point per trained pair, its column as customdata"
    assert "Regions — ambiguous: variability ≥ 0.2; easy-to-learn: confidence ≥ 0.75" in texts(app, "caption")
    assert "trained on snli test" in texts(app, "caption"), "the reduced protocol is stated"
    figure = charts(app)[0]
    assert "variability" in figure["layout"]["xaxis"]["title"]["text"]
    assert overlays(figure) == ["thresholds"], "no selection drawn yet"

    box = {"xref": "x", "yref": "y", "x": [0.0, 0.5], "y": [0.0, 1.0]}
    app.session_state["chart_datamap_0"] = {"selection": {"points": [], "point_indices": [], "box": [box], "lasso": []}}
    app.run()
    assert not app.exception, app.exception
    assert app.query_params["sel"] == "box:0,0.5,0,1" and app.query_params["sel_on"] == "gcnn-snli-small"
    listed = app.dataframe(key="datamap_selected_pairs_table").value
    assert len(listed) == len(trained) and set(listed["split"]) == {"snli_test"}
    assert (listed["confidence"].diff().dropna() >= 0).all(), "lowest confidence first"
    assert (listed["id"].astype(int) == listed["row"] + 1).all() and listed["premise"].str.len().min() > 0
    assert overlays(charts(app)[0]) == ["thresholds", "selection"], "the box is drawn"
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
    assert len(back.dataframe(key="datamap_selected_pairs_table").value) == len(trained)
    assert overlays(charts(back)[0]) == ["thresholds", "selection"]


def test_hard_to_learn_pairs_show_every_models_prediction_beside_the_gold_label(monkeypatch, tmp_path, root):
    thresholds = Thresholds(hard_confidence=0.45)
    points = data_map(read_dynamics(root / "gcnn-snli-small"), thresholds)
    hard = points.region_counts()["hard-to-learn"]
    app = open_link(monkeypatch, tmp_path, root, APP_DATA, PAGE, tab=MISLABELLED, hard="0.45",
                    models="gcnn-snli-small,old-gcnn-snli-small")
    if not hard:
        assert "No pair" in texts(app, "info")
        pytest.skip("the fixture's 4-step run left no pair below confidence 0.45")
    listed = app.dataframe(key="datamap_mislabelled_pairs_table").value
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
    assert len(charts(app)) == 1 and {t["name"].split(" (")[0] for t in map_points(app)} <= {"entailment", "neutral",
                                                                                            "contradiction"}
    alone = open_link(monkeypatch, tmp_path, root, APP_DATA, PAGE, checkpoint="old-gcnn-snli-small")
    assert "has no data map" in texts(alone, "info") and not charts(alone)
    assert "old-gcnn-snli-small (no training dynamics)" in app.selectbox(key="datamap_compare").options


def test_two_maps_side_by_side_compare_regions_and_a_bad_selection_in_the_link_is_said(monkeypatch, tmp_path, root):
    shutil.copytree(root / "gcnn-snli-small", tmp_path / "pair" / "gcnn-snli-small")
    shutil.copytree(root / "gcnn-snli-small", tmp_path / "pair" / "copy-gcnn-snli-small")
    app = open_link(monkeypatch, tmp_path, tmp_path / "pair", APP_DATA, PAGE, checkpoint="gcnn-snli-small",
                    compare="copy-gcnn-snli-small", tab="Regions of the two maps", sel="box:oops")
    assert len(charts(app)) == 2
    assert "selection 'box:oops'" in texts(app, "warning")
    table = app.dataframe[0].value
    assert int(table.to_numpy().sum()) == len(read_dynamics(root / "gcnn-snli-small").ids), "every pair, once"
    diagonal = sum(int(table.iloc[i, i]) for i in range(min(table.shape)))
    assert diagonal == int(table.to_numpy().sum()), "the same run's two copies put every pair in the same region"
