"""The Attribution page run headless with AppTest on a tiny real GCNN checkpoint and the app fixture data (with
a hand-written e-SNLI highlights file beside it): salience strips and the attention summary for the current
pair, a chosen class, and the faithfulness table, agreement and plausibility plots over a split sample."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

pytest.importorskip("streamlit.testing.v1", reason="streamlit's AppTest is not installed")

from tests.fixtures.app_checkpoints import APP_DATA, train_variant  # noqa: E402
from tests.test_app_pages import load_models, open_app, show, texts, vega_specs  # noqa: E402

PAGE = "pages/9_Attribution.py"


@pytest.fixture(scope="session")
def gcnn_checkpoint(tmp_path_factory) -> Path:
    return train_variant(tmp_path_factory.mktemp("attribution_checkpoints") / "checkpoints", "gcnn")


@pytest.fixture
def data_with_highlights(tmp_path) -> Path:
    """The app fixture data plus an esnli_highlights file whose line i highlights the last word of dev
    hypothesis i (the file's layout under the data root)."""
    root = tmp_path / "data"
    shutil.copytree(APP_DATA, root)
    hypotheses = next(root.glob("snli/**/s2.dev")).read_text(encoding="utf-8").splitlines()
    folder = root / "esnli_highlights"
    folder.mkdir()
    lines = [json.dumps({"sentA": "", "sentB": h, "keywordA": [], "keywordB": [h.split()[-2]]}) for h in hypotheses]
    (folder / "esnli_sents_highlight_contradict.dev.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


def test_one_pair_shows_salience_beside_the_attention_summary(monkeypatch, tmp_path, gcnn_checkpoint):
    app = load_models(open_app(monkeypatch, tmp_path, gcnn_checkpoint.parent, APP_DATA), gcnn_checkpoint)
    show(app, PAGE)
    app.text_area(key="attribution_premise").set_value("A man plays a guitar on the street .")
    app.text_area(key="attribution_hypothesis").set_value("A man sleeps .")
    app.button(key="attribution_analyse").click().run()
    assert not app.exception, app.exception
    specs = vega_specs(app)
    assert not app.get("plotly_chart"), "no plotly chart: its chunk costs every new tab ~1.3 s"
    titles = [spec["title"] for spec in specs]
    assert any(t.startswith("salience for ") for t in titles), titles
    assert "attention summary" in titles
    salience = next(spec for spec in specs if spec["title"].startswith("salience for "))
    cells = salience["data"]["values"]
    assert len({cell["row"] for cell in cells}) == 4  # integrated gradients, gradient, grad × input, occlusion
    assert {side: len({c["position"] for c in cells if c["sentence"] == side}) for side in ("premise", "hypothesis")} \
        == {"premise": 9, "hypothesis": 4}
    assert "completeness gap" in texts(app, "caption")
    assert "cross-sentence alignment" in texts(app, "caption")
    assert len(app.get("download_button")) >= 2

    app.selectbox(key="attribution_target").set_value("neutral").run()
    assert not app.exception, app.exception
    assert "explaining neutral" in texts(app, "markdown").replace("**", "")


def split_tab(monkeypatch, tmp_path: Path, checkpoint: Path, data: Path, pairs: int):
    """The Attribution page on its split tab (SNLI dev, `pairs` pairs) with `checkpoint` loaded, caching under
    tmp_path; nothing computed yet."""
    monkeypatch.setenv("NLIVIS_CACHE_DIR", str(tmp_path / "cache"))
    app = load_models(open_app(monkeypatch, tmp_path, checkpoint.parent, data), checkpoint)
    app.session_state["attribution_tab"] = "Over a dataset split"
    show(app, PAGE)
    app.selectbox(key="attribution_over").set_value("snli_dev")
    app.slider(key="attribution_size").set_value(pairs)
    return app


def test_split_tab_draws_faithfulness_agreement_and_plausibility(monkeypatch, tmp_path, gcnn_checkpoint,
                                                                 data_with_highlights):
    app = split_tab(monkeypatch, tmp_path, gcnn_checkpoint, data_with_highlights, pairs=6)
    app.button(key="attribution_computed_button").click().run()
    assert not app.exception, app.exception
    table = app.dataframe[-1].value
    assert set(table["method"]) == {"integrated_gradients", "gradient", "grad_x_input", "occlusion", "attention", "random"}
    assert (table["pairs"] == 6).all()
    assert (table["plausibility_pairs"] > 0).all()
    assert not app.get("plotly_chart")
    titles = [spec["title"] for spec in vega_specs(app)]
    for start in ("comprehensiveness over 6 pairs", "sufficiency over 6 pairs", "Kendall τ between attention",
                  "plausibility against e-SNLI highlights"):
        assert any(t.startswith(start) for t in titles), (start, titles)
    agreement = next(spec for spec in vega_specs(app) if spec["title"].startswith("Kendall τ between attention"))
    measures = {row["comparison"].split(" · ")[1] for row in agreement["data"]["values"]}
    assert measures == {"pooled", "membership baseline", "within premise", "within hypothesis"}
    assert {"median_tau_membership_baseline", "median_tau_within_premise", "median_tau_within_hypothesis"} <= set(table)
    layer = next(option for option in app.selectbox(key="attribution_agreement_layer").options if option != "average")
    app.selectbox(key="attribution_agreement_layer").set_value(layer).run()
    assert not app.exception, app.exception
    assert any(spec["title"].startswith(f"Kendall τ between attention ({layer})") for spec in vega_specs(app))
    assert any((tmp_path / "cache" / "attribution").rglob("*.json"))


def test_split_tab_without_highlights_says_why_there_is_no_plausibility(monkeypatch, tmp_path, gcnn_checkpoint):
    app = split_tab(monkeypatch, tmp_path, gcnn_checkpoint, APP_DATA, pairs=5)
    app.multiselect(key="attribution_split_methods").set_value(["gradient", "random"])
    app.button(key="attribution_computed_button").click().run()
    assert not app.exception, app.exception
    assert set(app.dataframe[-1].value["method"]) == {"gradient", "random"}
    assert "No plausibility" in texts(app, "info")
    assert "No agreement to show" in texts(app, "info")
