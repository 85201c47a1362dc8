"""A MiniLM checkpoint beside a shipped model in the app, headless with AppTest: the Pair explorer opens with
`models=minilm-snli-small,esan-snli-small` and shows MiniLM's attention as one layer × head grid with the picked
head (from the link) drawn large and the rollout beside it; the pages whose views cannot apply say so. The MiniLM
is a tiny random one (2 layers × 2 heads, four training steps on the fixture pairs) reading the fetched word-piece
vocabulary; the ESAN is the shipped one."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("streamlit.testing.v1", reason="streamlit's AppTest is not installed")
from streamlit.testing.v1 import AppTest  # noqa: E402

from tests.fixtures.app_checkpoints import train_variant  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ROOT / "checkpoints"
MODELS = "minilm-snli-small,esan-snli-small"
TINY = {"pretrained": False, "encoder_layers": 2, "attention_heads": 2, "word_dim": 8, "intermediate_size": 8,
        "max_positions": 128, "freeze_word_embeddings": False, "frozen_layers": 1}


@pytest.fixture(scope="module")
def minilm_root(tmp_path_factory) -> Path:
    """A folder holding a tiny `minilm-snli-small`, and the nlivis cache it reads MiniLM's vocab.txt from."""
    from nlivis.features.embeddings import minilm_available, minilm_folder

    if not minilm_available():
        pytest.skip("MiniLM's vocab.txt is not fetched here (python -m nlivis fetch-minilm)")
    if not (SHIPPED / "esan-snli-small" / "COMPLETE").is_file():
        pytest.skip("needs the shipped esan-snli-small in checkpoints/")
    root = tmp_path_factory.mktemp("minilm_app")
    (root / "cache").mkdir()
    (root / "cache" / "minilm").symlink_to(minilm_folder(fetch=False).parent)  # the app's own cache finds it
    train_variant(root / "checkpoints", "minilm", model_name="minilm", **TINY)
    return root


def open_page(monkeypatch, minilm_root: Path, data: Path, page: str, **params: str) -> AppTest:
    monkeypatch.setenv("NLIVIS_CHECKPOINTS", f"{minilm_root / 'checkpoints'}:{SHIPPED}")
    monkeypatch.setenv("NLIVIS_DATA", str(data))
    monkeypatch.setenv("NLIVIS_CACHE_DIR", str(minilm_root / "cache"))
    monkeypatch.setenv("NLIVIS_WARM_UP", "0")
    monkeypatch.delenv("NLIVIS_RUNS", raising=False)
    app = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    app.query_params.update({"models": MODELS, **params})
    app.switch_page(str(ROOT / page)).run()
    assert not app.exception, app.exception
    return app


def chart_titles(app: AppTest) -> list[tuple[str, str]]:
    """(title, subtitle) of every Vega-Lite chart on the page."""
    titles = []
    for chart in app.get("vega_lite_chart"):
        title = json.loads(chart.proto.spec).get("title", "")
        title = title if isinstance(title, dict) else {"text": title}
        subtitle = title.get("subtitle", "")
        titles.append((str(title.get("text", "")), " ".join(subtitle) if isinstance(subtitle, list) else subtitle))
    return titles


def test_the_explorer_shows_minilm_as_one_grid_with_the_linked_head_large(monkeypatch, minilm_root, shared_data):
    app = open_page(monkeypatch, minilm_root, shared_data, "pages/2_Pair_explorer.py", split="snli_dev", pair="3",
                    head="1.2")
    titles = chart_titles(app)
    grids = [t for t, _ in titles if "layers ×" in t]
    assert grids == ["minilm-snli-small · attention p→h (premise rows over hypothesis columns) of 2 layers × 2 heads · "
                     "click a head"]
    assert ("layer 1 · head 2", "p→h block outlined · rows normalised within each block") in titles, titles
    assert any(t.startswith("rollout: a summary of every layer and head") for t, _ in titles), titles
    assert not any(t.startswith("layer1.head") for t, _ in titles), "no heatmap per trace entry"
    assert any(t == "all loaded models" for t, _ in titles), "the glance, a Vega-Lite spec too"
    assert app.query_params["head"] == "1.2" and app.query_params["models"] == MODELS


def test_a_head_the_model_lacks_is_said_and_the_default_drawn(monkeypatch, minilm_root, shared_data):
    app = open_page(monkeypatch, minilm_root, shared_data, "pages/2_Pair_explorer.py", split="snli_dev", pair="3",
                    head="9.9", heads_block="h→p")
    assert any("head=9.9 is not a head here (2 layers × 2 heads" in str(w.value).replace("\\", "") for w in app.warning)
    titles = chart_titles(app)
    assert any(t == "layer 2 · head 1" and s.startswith("h→p block outlined") for t, s in titles), titles
    assert any("attention h→p (hypothesis rows over premise columns)" in t for t, _ in titles), titles


@pytest.mark.parametrize("page, said", [("pages/4_Gates.py", "minilm-snli-small: this model has no gates"),
                                        ("pages/3_DIIN_interaction_space.py",
                                         "tensor): minilm-snli-small, esan-snli-small")])
def test_pages_whose_views_cannot_apply_say_so(monkeypatch, minilm_root, shared_data, page, said):
    app = open_page(monkeypatch, minilm_root, shared_data, page, split="snli_dev", pair="3")
    shown = " ".join(str(e.value).replace("\\", "") for kind in ("caption", "info", "markdown") for e in getattr(app, kind))
    assert said in shown
