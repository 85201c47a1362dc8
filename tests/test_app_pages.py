"""Every page of the app run headless with streamlit's AppTest, asserting on what it shows: with tiny real
checkpoints, without checkpoints, without data, with an empty and an absurdly long sentence, with a model
that lacks a view's internals, and a training run started, found again after a refresh, stopped and resumed.
"""
from __future__ import annotations

import functools
import os
import time
from pathlib import Path

import pandas as pd
import pytest

pytest.importorskip("streamlit.testing.v1", reason="streamlit's AppTest is not installed")
from streamlit.testing.v1 import AppTest  # noqa: E402

from nlivis.app import paths  # noqa: E402
from nlivis.app.text import MISSING, md  # noqa: E402
from nlivis.models.families import SHIPPED_FAMILIES  # noqa: E402
from nlivis.viz.vega import overview as vega_overview  # noqa: E402
from nlivis.viz.vega import errors as vega_errors, gates  # noqa: E402
from nlivis.viz.vega.errors import CELL  # noqa: E402
from tests.fixtures.app_checkpoints import APP_DATA, gcnn_family, train_variant  # noqa: E402
from tests.fixtures.markdown_tables import page_tables  # noqa: E402
from tests.fixtures.waiting import wait_for  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
PAGES = [page.path for page in paths.PAGES]
"""Every page, in the sidebar's order."""
MODEL_PAGES = tuple(page.path for page in (paths.EXPLORER, paths.DIIN, paths.GATES, paths.ERRORS, paths.PROJECTION,
                                           paths.ATTRIBUTION))
"""The pages that work on the models loaded on Home."""
TIMEOUT = 900
"""AppTest's hang guard (seconds one script run may take), not a deadline: only a hung run reaches it, so a page
that is merely slow on a busy machine still passes."""
TAG_TAB = "By annotation tag (Table 7)"
"""Error analysis's tab with accuracy by tag and DIIN's Table 7."""


@pytest.fixture(scope="session")
def checkpoints(tmp_path_factory) -> Path:
    """A checkpoint folder with a GCNN family: the full model (two seeds) and its no-forget-gate ablation."""
    return gcnn_family(tmp_path_factory.mktemp("app_checkpoints") / "checkpoints")


@pytest.fixture(scope="session")
def diin_checkpoints(tmp_path_factory) -> Path:
    import nlivis.models

    if "diin" not in nlivis.models.available():
        pytest.skip("no DIIN model is registered yet (nlivis/models/diin.py), so the DIIN page cannot be shown a DIIN")
    root = tmp_path_factory.mktemp("app_diin") / "checkpoints"
    train_variant(root, "diin", model_name="diin")
    return root


@pytest.fixture
def empty_folder(tmp_path) -> Path:
    folder = tmp_path / "empty"
    folder.mkdir()
    return folder


def open_app(monkeypatch, tmp_path: Path, checkpoints: Path, data: Path, runs: Path | None = None) -> AppTest:
    """Home, run once, with the given checkpoint and data folders (caches under tmp_path); the
    Train page's runs go to `runs`, or by default to the user data folder under tmp_path/xdg-data."""
    monkeypatch.setenv("NLIVIS_CHECKPOINTS", str(checkpoints))
    monkeypatch.setenv("NLIVIS_DATA", str(data))
    monkeypatch.setenv("NLIVIS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("NLIVIS_WARM_UP", "0")  # each test starts its own app: no background loading
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    if runs is None:
        monkeypatch.delenv("NLIVIS_RUNS", raising=False)
    else:
        monkeypatch.setenv("NLIVIS_RUNS", str(runs))
    app = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT).run()
    assert not app.exception, app.exception
    return app


def load_models(app: AppTest, *folders: Path) -> AppTest:
    app.multiselect(key="home_selected").set_value([f.name for f in folders]).run()
    assert not app.exception, app.exception
    return app


def show(app: AppTest, page: str) -> AppTest:
    app.switch_page(str(ROOT / page)).run()
    assert not app.exception, f"{page}: {app.exception}"
    return app


def analyse(app: AppTest, prefix: str, premise: str | None = None, hypothesis: str | None = None) -> AppTest:
    """Type into the pair form of the page with widget prefix `prefix` and press Analyse."""
    if premise is not None:
        app.text_area(key=f"{prefix}_premise").set_value(premise)
    if hypothesis is not None:
        app.text_area(key=f"{prefix}_hypothesis").set_value(hypothesis)
    app.button(key=f"{prefix}_analyse").click().run()
    assert not app.exception, app.exception
    return app


def texts(app: AppTest, *kinds: str) -> str:
    """Everything the page wrote in the given element kinds (info, warning, error, caption, markdown …), as the
    reader sees it: the backslashes that escape user-supplied text from Markdown are taken out."""
    import re

    return "\n".join(re.sub(r"\\(.)", r"\1", str(element.value)) for kind in kinds for element in getattr(app, kind))


def command_line(app: AppTest) -> str:
    """The Train page's command line as the reader copies it: the code span in its "Command line" expander, without
    the backticks that fence it (no escapes inside a code span)."""
    shown = [markdown.value for expander in app.expander if expander.label == "Command line" for markdown in expander.markdown]
    assert len(shown) == 1 and shown[0].startswith("`") and shown[0].endswith("`"), shown
    return shown[0].strip("`").strip()


def charts(app: AppTest) -> list[dict]:
    """The plotly figures on the page, as the JSON specs streamlit sends to the browser."""
    import json

    return [json.loads(chart.proto.spec) for chart in app.get("plotly_chart")]


def vega_data(app: AppTest) -> list:
    """The data of each Vega-Lite chart on the page (streamlit sends it beside the spec, as Arrow)."""
    from streamlit.dataframe_util import convert_arrow_bytes_to_pandas_df

    return [convert_arrow_bytes_to_pandas_df(chart.proto.data.data) for chart in app.get("vega_lite_chart")]


def glance_rows(app: AppTest) -> list[str]:
    """The Pair explorer's at-a-glance grid: its rows' model names, in order ([] when it is not drawn)."""
    glances = [spec for spec in vega_specs(app) if "all loaded models" in str(spec.get("title"))]
    return [row["title"]["text"] for glance in glances for row in glance["vconcat"]]


def alignment_maps(app: AppTest) -> list[dict]:
    """The Pair explorer's alignment heatmaps (Vega-Lite specs titled "… · layer …", drawn as rects)."""
    return [spec for spec in vega_specs(app) if " · layer " in vega_title(spec)
            and spec.get("layer", [spec])[0]["mark"]["type"] == "rect"]


def vega_specs(app: AppTest) -> list[dict]:
    """The Vega-Lite charts on the page, as the JSON specs streamlit sends to the browser, each with its data's rows
    put back as `data.values` (streamlit sends a spec's own data beside it, as an Arrow table)."""
    import json

    from streamlit.dataframe_util import convert_arrow_bytes_to_pandas_df

    specs = []
    for chart in app.get("vega_lite_chart"):
        spec = json.loads(chart.proto.spec)
        if chart.proto.data.data:
            spec["data"] = {"values": convert_arrow_bytes_to_pandas_df(chart.proto.data.data).to_dict("records")}
        if chart.proto.datasets:  # named tables, each view reading its own (the gates)
            spec["datasets"] = {dataset.name: convert_arrow_bytes_to_pandas_df(dataset.data.data).to_dict("records")
                                for dataset in chart.proto.datasets}
        specs.append(spec)
    return specs


def curve_panels(app: AppTest) -> list[str]:
    """The panel titles of the page's side-by-side Vega-Lite charts (the Train page's loss, accuracy, pairs/s)."""
    return [panel.get("title") for spec in vega_specs(app) for panel in spec.get("hconcat", [])]


def vega_title(spec: dict) -> str:
    """A Vega-Lite spec's title as one line: its text, then its subtitle when it has one."""
    title = spec.get("title", "")
    if not isinstance(title, dict):
        return title
    subtitle = title.get("subtitle")
    lines = [title.get("text"), *(subtitle if isinstance(subtitle, list) else [subtitle])]
    return " · ".join(str(line) for line in lines if line)


def vega_marks(app: AppTest) -> list[str]:
    """The mark of every layer of the page's Vega-Lite charts ("bar", "rule", …; a faceted chart's: its panel's)."""
    views = [spec.get("spec", spec) for spec in vega_specs(app)]
    layers = [layer for view in views for layer in view.get("layer", [view])]
    return [layer["mark"] if isinstance(layer["mark"], str) else layer["mark"]["type"] for layer in layers]


# ---------------------------------------------------------------- every page, no checkpoints

def test_the_page_table_matches_the_page_files():
    """`paths.PAGES` is the one table of the pages: every script in the pages folder, in the order of the number
    its file name starts with, each with its own key, title and address."""
    on_disk = sorted((ROOT / paths.PAGES_FOLDER).glob("*.py"), key=lambda path: int(path.name.split("_")[0]))
    assert PAGES == [str(path.relative_to(ROOT)) for path in on_disk]
    for fact in ("key", "title", "url_path"):
        assert len({getattr(page, fact) for page in paths.PAGES}) == len(paths.PAGES), fact


def test_every_page_script_runs_as_its_table_entry():
    """Each script opens `frame.page` with its own entry of the table (its view namespace and icon come from it)."""
    for page in paths.PAGES:
        source = (ROOT / page.path).read_text(encoding="utf-8")
        assert f"frame.page(paths.{_table_name(page)}" in source, page.path


def _table_name(page: paths.Page) -> str:
    return next(name for name, value in vars(paths).items() if value is page)


def test_home_and_error_analysis_in_a_new_process_import_no_torch(tmp_path, checkpoints):
    """Importing torch for the checkpoint scan cost 1.5–2 s of every cold start (bench/app_speed.py); Error
    analysis's first run loaded every chosen model (torch and the weights, ~2 s) only to learn their labels and
    families, which their config.json gives. Its accuracy chart and confusion matrix (one default model) are drawn all the same."""
    import os
    import subprocess
    import sys

    script = ("import sys; from streamlit.testing.v1 import AppTest; "
              f"app = AppTest.from_file({str(ROOT / 'app.py')!r}, default_timeout={TIMEOUT}).run(); "
              "print(len(app.dataframe[0].value), 'torch' in sys.modules); "
              f"app.switch_page({paths.ERRORS.path!r}).run(); "
              "print(len(app.get('vega_lite_chart')), len(app.get('plotly_chart')), [e.value for e in app.exception], "
              "'torch' in sys.modules)")
    env = {**os.environ, "NLIVIS_CHECKPOINTS": str(checkpoints), "NLIVIS_DATA": str(APP_DATA),
           "NLIVIS_CACHE_DIR": str(tmp_path / "cache"), "NLIVIS_RUNS": str(tmp_path / "runs"),
           "NLIVIS_WARM_UP": "0"}  # the background warm-up imports torch on purpose
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=ROOT,
                            timeout=TIMEOUT)
    assert result.stdout.split()[-6:] == ["3", "False", "2", "0", "[]", "False"], (result.stdout[-500:],
                                                                                 result.stderr[-2000:])


def test_the_router_lists_every_page_home_first_with_bundled_icons():
    """The sidebar said "app" for Home, and icons were emoji (a blank box without an emoji font)."""
    import re

    import runpy

    import streamlit as st

    listed: list[tuple[str, dict]] = []
    navigated: list[list] = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(st, "Page", lambda path, **options: listed.append((path, options)) or path)
        patch.setattr(st, "navigation", lambda pages, **options: navigated.append(pages) or type("Nav", (), {"run": lambda self: None})())
        patch.setattr(st, "set_page_config", lambda **options: None)
        runpy.run_path(str(ROOT / "app.py"))
    assert [path for path, _ in listed] == PAGES == navigated[0]
    assert listed[0][1]["title"] == "Home" and listed[0][1]["default"] and not any(o["default"] for _, o in listed[1:])
    assert [options["icon"] for _, options in listed] == [page.icon for page in paths.PAGES]
    sources = [ROOT / "app.py", *(ROOT / p for p in PAGES), *sorted((ROOT / "nlivis" / "app").rglob("*.py"))]
    icons = [page.icon for page in paths.PAGES] + [icon for source in sources for icon in re.findall(r'icon=["\']([^"\']*)["\']', source.read_text(encoding="utf-8"))]
    assert icons and all(re.fullmatch(r":material/[a-z_]+:", icon) for icon in icons), icons


def test_no_page_has_a_bare_string_that_streamlit_would_draw():
    """Streamlit's magic writes any bare string statement: an attribute docstring in app.py was drawn atop every page."""
    import ast

    for source in [ROOT / "app.py", *(ROOT / p for p in PAGES)]:
        body = ast.parse(source.read_text(encoding="utf-8")).body
        bare = [node.lineno for node in body[1:] if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
                and isinstance(node.value.value, str)]
        assert not bare, f"{source.name} line(s) {bare}"


def test_every_page_without_checkpoints(monkeypatch, tmp_path, empty_folder):
    app = open_app(monkeypatch, tmp_path, empty_folder, APP_DATA)
    assert "No checkpoints found" in texts(app, "info")
    for page in MODEL_PAGES:
        show(app, page)
        assert "No model is loaded" in texts(app, "info"), page
    show(app, "pages/6_Ablations.py")
    assert "No checkpoints found" in texts(app, "info")
    show(app, "pages/8_Train.py")
    assert "No run has been started from the app" in texts(app, "info")
    assert not app.button(key="train_start").disabled
    show(app, "pages/10_Data_map.py")
    assert "No checkpoints found" in texts(app, "info")


def test_home_with_a_missing_checkpoint_folder(monkeypatch, tmp_path):
    app = open_app(monkeypatch, tmp_path, tmp_path / "nowhere", APP_DATA)
    assert "does not exist" in texts(app, "warning")
    assert "No checkpoints found" in texts(app, "info")


# ---------------------------------------------------------------- with checkpoints and data

def test_home_lists_checkpoints_and_loads_the_selection(monkeypatch, tmp_path, checkpoints):
    app = open_app(monkeypatch, tmp_path, checkpoints, APP_DATA)
    table = app.dataframe[0].value
    assert set(table["checkpoint"]) == {"gcnn-snli-small", "gcnn-snli-small-seed2", "gcnn-no_forget_gate-snli-small"}
    assert set(table["protocol"]) == {"snli-small"}
    assert "reduced protocols" in texts(app, "caption")
    load_models(app, checkpoints / "gcnn-snli-small")
    assert "Selected: gcnn-snli-small" in texts(app, "success")


def test_pair_explorer_predicts_and_draws_alignments(monkeypatch, tmp_path, checkpoints):
    app = load_models(open_app(monkeypatch, tmp_path, checkpoints, APP_DATA), checkpoints / "gcnn-snli-small",
                      checkpoints / "gcnn-no_forget_gate-snli-small")
    built = counting(monkeypatch, vega_overview, "overview_grid")
    show(app, "pages/2_Pair_explorer.py")
    app.run()
    assert len(built) <= 1, "a pair's overview is built once, not at every run"
    assert glance_rows(app) == ["gcnn-snli-small", "gcnn-no_forget_gate-snli-small"]
    predictions = page_tables(app)[0]
    assert len(predictions) == 2 and {"P(entailment)", "P(neutral)", "P(contradiction)"} <= set(predictions.columns)
    assert set(predictions["predicted"]) <= {"entailment", "neutral", "contradiction"}
    assert "Protocol snli-small" in texts(app, "caption")
    specs = vega_specs(app)
    bars = next(spec for spec in specs if spec["title"] == "class probabilities")
    assert {(row["model"], row["label"]) for row in bars["data"]["values"]} == \
        {(m, label) for m in predictions["model"] for label in ("entailment", "neutral", "contradiction")}
    labels = [b.label for b in app.get("download_button")]
    assert labels.count("data (CSV)") == labels.count("figure (SVG)") == len(specs)
    assert not alignment_maps(app), "a one-layer model's section repeats its row of the glance: it starts closed"
    app.session_state["explorer_open_gcnn-snli-small"] = True
    app.run()
    maps = alignment_maps(app)
    assert len(maps) == 2 and all(row.get("softmax weight", 0) >= 0 for spec in maps for row in spec["data"]["values"])
    assert not app.get("plotly_chart"), "no plotly chart: its chunk costs every new tab ~1.1 s"
    analyse(app, "explorer", hypothesis="Nobody is playing an instrument .")
    assert app.toggle(key="explorer_compare").value, "the previous pair is offered beside the new one"


def test_a_pair_read_before_is_shown_from_disk_without_reading_any_weights(monkeypatch, tmp_path, checkpoints):
    """The Pair explorer's first page after a launch imported torch and loaded every chosen checkpoint to read its
    default pair again: the readings are kept on disk, and a later process shows the same table and figures from
    them without loading a checkpoint."""
    import streamlit as st

    from nlivis import inference

    loads = []
    real = inference.load_checkpoint
    monkeypatch.setattr(inference, "load_checkpoint", lambda folder: loads.append(Path(folder).name) or real(folder))
    app = load_models(open_app(monkeypatch, tmp_path, checkpoints, APP_DATA), checkpoints / "gcnn-snli-small",
                      checkpoints / "gcnn-no_forget_gate-snli-small")
    shown = []
    for _ in range(2):
        st.cache_resource.clear()  # as after a launch: nothing loaded in this process
        loads.clear()
        show(app, "pages/2_Pair_explorer.py")
        shown.append((page_tables(app)[0], vega_specs(app), texts(app, "markdown", "caption"), list(loads)))
    (table, specs, words, computed_loads), (kept_table, kept_specs, kept_words, kept_loads) = shown
    assert sorted(computed_loads) == ["gcnn-no_forget_gate-snli-small", "gcnn-snli-small"] and kept_loads == []
    assert table.equals(kept_table) and words == kept_words
    assert glance_rows(app) and specs == kept_specs, "the same probabilities and overview"
    st.cache_resource.clear()
    show(app, "pages/4_Gates.py")  # the same pair's gates, from the same kept readings
    assert loads == [] and "gate entries" in texts(app, "markdown") and vega_specs(app)
    app.session_state["explorer_tab"] = "Edits"  # the Edits tab runs the models on every edit: it loads them
    show(app, "pages/2_Pair_explorer.py")
    assert sorted(loads) == ["gcnn-no_forget_gate-snli-small", "gcnn-snli-small"]


def test_a_checkpoint_that_cannot_load_is_named_on_the_pages_that_read_kept_readings(monkeypatch, tmp_path,
                                                                                    checkpoints):
    """The Pair explorer, Gates and DIIN pages describe their models without loading them: a checkpoint whose
    weights do not load (damaged in place, the same size) is still reported as one that could not load, and the
    page shows the others."""
    import shutil

    root = Path(shutil.copytree(checkpoints, tmp_path / "checkpoints"))
    weights = root / "gcnn-no_forget_gate-snli-small" / "model.safetensors"
    data = bytearray(weights.read_bytes())
    data[-1] ^= 0xFF
    weights.write_bytes(bytes(data))
    app = load_models(open_app(monkeypatch, tmp_path, root, APP_DATA), root / "gcnn-snli-small",
                      root / "gcnn-no_forget_gate-snli-small")
    for page in ("pages/2_Pair_explorer.py", "pages/4_Gates.py"):
        show(app, page)
        assert "Could not load" in texts(app, "error") and "gcnn-no_forget_gate-snli-small" in texts(app, "error")
        assert vega_specs(app), f"{page} shows the model that loads"


def test_pair_explorer_picks_a_pair_from_the_data(monkeypatch, tmp_path, checkpoints):
    app = load_models(open_app(monkeypatch, tmp_path, checkpoints, APP_DATA), checkpoints / "gcnn-snli-small")
    show(app, "pages/2_Pair_explorer.py")
    app.radio(key="explorer_pair_source").set_value("pick from a dataset split").run()
    app.number_input(key="explorer_pair_row").set_value(1)
    app.button(key="explorer_analyse_row").click().run()
    assert not app.exception
    assert "**Gold:** contradiction" in texts(app, "markdown")
    predictions = page_tables(app)[0]
    assert set(predictions["gold"]) == {"contradiction"}
    assert predictions.attrs["marked"] == [p != "contradiction" for p in predictions["predicted"]], \
        "a model wrong on the pair is marked, a right one not"


def test_empty_sentence_asks_for_words(monkeypatch, tmp_path, checkpoints):
    app = load_models(open_app(monkeypatch, tmp_path, checkpoints, APP_DATA), checkpoints / "gcnn-snli-small")
    for page, prefix in (("pages/2_Pair_explorer.py", "explorer"), ("pages/4_Gates.py", "gates")):
        show(app, page)
        analyse(app, prefix, premise="   ")
        assert "Type a premise and a hypothesis" in texts(app, "info"), page
        assert not charts(app) and not vega_specs(app), page
        analyse(app, prefix, premise="A man is playing a guitar on a stage .")


def test_absurdly_long_sentence_is_cut_with_a_note(monkeypatch, tmp_path, checkpoints):
    app = load_models(open_app(monkeypatch, tmp_path, checkpoints, APP_DATA), checkpoints / "gcnn-snli-small")
    show(app, "pages/2_Pair_explorer.py")
    analyse(app, "explorer", premise="the guitar player " * 3000)
    assert len(app.query_params["premise"]) == 2000, "the URL carries the sentence as the models read it"
    assert "cut to its first 2000 characters" in texts(app, "warning")
    assert len(page_tables(app)[0]) == 1
    assert glance_rows(app) == ["gcnn-snli-small"]
    show(app, "pages/4_Gates.py")
    assert gate_strips_shown(app)


def test_diin_page_says_a_gcnn_has_no_interaction_maps(monkeypatch, tmp_path, checkpoints):
    app = load_models(open_app(monkeypatch, tmp_path, checkpoints, APP_DATA), checkpoints / "gcnn-snli-small")
    show(app, "pages/3_DIIN_interaction_space.py")
    assert "has no 2-D interaction maps" in texts(app, "info")
    assert not charts(app) and not vega_specs(app)


def test_diin_page_draws_channels_of_a_diin(monkeypatch, tmp_path, diin_checkpoints):
    folder = next(p for p in diin_checkpoints.iterdir() if p.name.startswith("diin"))
    app = load_models(open_app(monkeypatch, tmp_path, diin_checkpoints, APP_DATA), folder)
    show(app, "pages/3_DIIN_interaction_space.py")
    assert "predicts" in texts(app, "markdown")
    assert app.selectbox(key="diin_stage").options, "the DIIN trace names its feature-map stages"
    (grid,) = vega_specs(app)
    assert grid["spec"]["mark"]["type"] == "rect" and grid["facet"]["field"] == "panel" and not charts(app)
    app.radio(key="diin_pick").set_value("max_activation").run()
    assert not app.exception and "by max activation" in vega_specs(app)[0]["title"]


def test_gates_page_draws_gcnn_gates_per_pair_and_over_a_split(monkeypatch, tmp_path, checkpoints):
    app = load_models(open_app(monkeypatch, tmp_path, checkpoints, APP_DATA), checkpoints / "gcnn-snli-small")
    show(app, "pages/4_Gates.py")
    strips = gate_strips_shown(app)
    assert strips and not app.get("plotly_chart"), "no plotly chart: its chunk costs every new tab ~1.3 s"
    assert all(title.startswith("gcnn-snli-small · ") for title in strips)
    app.session_state["gates_tab"] = "Over a dataset split"
    app.run()
    app.button(key="gates_computed_button").click().run()
    assert not app.exception
    summary = app.dataframe[0].value
    assert len(summary) and summary["mean"].between(0, 1).all() and set(summary["pairs"]) == {12}
    bars = next(data for spec, data in zip(vega_specs(app), vega_data(app))
                if spec["title"].startswith("mean gate value over"))
    assert list(bars["mean"]) == pytest.approx(list(summary["mean"]))
    assert not app.get("plotly_chart")
    assert not app.get("progress")  # the bar is gone once the statistics are done


def gate_strips_shown(app: AppTest) -> dict[str, set[int]]:
    """The gate strips on the Gates page (a chart per model, a strip per gate, each view on its own named table):
    each one's title → the dimensions its heatmap draws."""
    strips = {}
    for spec in vega_specs(app):
        if "vconcat" not in spec:
            continue
        views = spec["vconcat"]
        assert len(views) % 2 == 0 and set(spec["datasets"]) == {view["data"]["name"] for view in views}
        for bars, cells in zip(views[::2], views[1::2]):  # strip i: its titled bars above its heatmap
            assert len(spec["datasets"][bars["data"]["name"]]) == len(bars["encoding"]["x"]["scale"]["domain"])
            strips[bars["title"]] = {int(row["dimension"]) for row in spec["datasets"][cells["data"]["name"]]}
    return strips


def counting(monkeypatch, module, name: str) -> list:
    """Replace `module.name` by a wrapper that records each call; returns the list of calls' arguments."""
    calls, function = [], getattr(module, name)
    monkeypatch.setattr(module, name, lambda *args, **kwargs: calls.append(args) or function(*args, **kwargs))
    return calls


def test_gates_draw_only_open_sections_and_reach_every_dimension(monkeypatch, tmp_path, checkpoints):
    """All models' gate figures rendered inside closed expanders (13 s); only the first 64 dimensions were shown."""
    folders = (checkpoints / "gcnn-snli-small", checkpoints / "gcnn-no_forget_gate-snli-small")
    app = load_models(open_app(monkeypatch, tmp_path, checkpoints, APP_DATA), *folders)
    built = counting(monkeypatch, gates, "gate_strips")
    show(app, "pages/4_Gates.py")
    app.run()
    first_only = len(gate_strips_shown(app))
    assert len(built) <= 1 and len(vega_specs(app)) == 1, "a model's strips are one chart, built once per pair"
    assert first_only >= 1 and all(title.startswith("gcnn-snli-small · ") for title in gate_strips_shown(app))
    app.session_state["gates_open_gcnn-no_forget_gate-snli-small"] = True
    app.run()
    assert not app.exception, app.exception
    shown = gate_strips_shown(app)
    assert len(shown) > first_only and all(0 < len(dims) <= 64 for dims in shown.values())


def test_gates_show_the_first_layer_by_default_and_the_others_one_choice_away(monkeypatch, tmp_path, checkpoints):
    """Every layer's gates (twelve strips of a GCNN, ~7,800 cells) were the Gates page's whole warm cost in the
    browser (issue 30): the first layer is drawn, the caption names the others, and choosing them draws them."""
    app = load_models(open_app(monkeypatch, tmp_path, checkpoints, APP_DATA), checkpoints / "gcnn-snli-small")
    show(app, "pages/4_Gates.py")
    layers = app.multiselect(key="gates_layers_gcnn-snli-small")
    others = layers.options[1:]
    assert layers.value == [1] and layers.options[0] == "1" and others, layers.options
    first = gate_strips_shown(app)
    assert first and all(" · layer 1 · " in title for title in first)
    assert (f"Shown: {len(first)} gates of layer 1. Not shown: layer{'s' if len(others) > 1 else ''} "
            f"{', '.join(others)} (add under Layers).") in texts(app, "caption")
    layers.set_value([int(option) for option in layers.options]).run()
    assert not app.exception, app.exception
    every = gate_strips_shown(app)
    assert set(first) < set(every) and {title.split(" · layer ")[1][0] for title in every} == set(layers.options)
    assert f"Shown: {len(every)} gates of layers {', '.join(layers.options)}." in texts(app, "caption")
    assert "Not shown" not in texts(app, "caption")


def test_error_analysis_shows_accuracy_confusions_and_tags(monkeypatch, tmp_path, checkpoints):
    app = load_models(open_app(monkeypatch, tmp_path, checkpoints, APP_DATA), checkpoints / "gcnn-snli-small")
    built = counting(monkeypatch, vega_errors, "confusion_matrices")
    show(app, "pages/5_Error_analysis.py")
    app.run()
    assert len(built) <= 1, "the confusion matrices' figure is built once per predictions files, not at every run"
    assert app.selectbox(key="errors_split").value == "snli_dev"
    assert "Protocol snli-small" in texts(app, "caption")
    assert {"rect", "bar"} <= set(vega_marks(app)) and not app.get("plotly_chart"), \
        "no plotly chart: its chunk costs every new tab ~1.3 s"
    assert not app.dataframe, "the tab's small tables are Markdown: a data grid's code held back the confusion matrix"
    accuracy, per_label = page_tables(app)
    (line,) = accuracy.to_dict("records")
    assert line["model"] == "gcnn-snli-small" and line["count"] == "12"
    assert float(line["accuracy"].rstrip("%")) == pytest.approx(100 * int(line["correct"]) / 12, abs=0.005)
    assert float(line["ci_low"].rstrip("%")) <= float(line["accuracy"].rstrip("%")) <= float(line["ci_high"].rstrip("%"))
    assert list(per_label["label"]) == ["entailment", "neutral", "contradiction"]
    assert set(per_label["model"]) == {"gcnn-snli-small"}
    assert sum(map(int, per_label["support"])) == 12
    assert all(value == "–" or 0 <= float(value) <= 1 for value in per_label["recall"])
    app.session_state["errors_tab"] = TAG_TAB
    app.run()
    assert "on 12 of 12 pairs" in texts(app, "caption")
    tag_table = next(d.value for d in app.dataframe if "tag" in d.value.columns)
    assert "NEGATION" in set(tag_table["tag"])


def test_projection_draws_a_pca_of_the_split(monkeypatch, tmp_path, checkpoints):
    app = load_models(open_app(monkeypatch, tmp_path, checkpoints, APP_DATA), checkpoints / "gcnn-snli-small")
    app.session_state["projection_method"] = "pca"  # UMAP (numba) takes long to start; PCA exercises the same page
    show(app, "pages/7_Projection.py")
    assert app.radio(key="projection_method").value == "pca"
    (points,) = vega_data(app)
    assert len(points) == 12 and points[["x", "y"]].notna().all().all() and not charts(app)


def test_projection_recolours_from_the_cache_without_running_the_model(monkeypatch, tmp_path, checkpoints):
    """Each recolour re-predicted the whole sample (13–28 s for 1,000 pairs); the default colour was uninformative."""
    from nlivis.workflows import projection

    calls = []
    real = projection.pooled_outputs
    monkeypatch.setattr(projection, "pooled_outputs", lambda *a, **k: calls.append(1) or real(*a, **k))
    app = load_models(open_app(monkeypatch, tmp_path, checkpoints, APP_DATA), checkpoints / "gcnn-snli-small")
    app.session_state["projection_method"] = "pca"
    show(app, "pages/7_Projection.py")
    assert app.radio(key="projection_colour").value == "correctness" and len(calls) == 1
    names = set(vega_data(app)[0]["correctness"])
    assert names <= {"right", "wrong"} and names
    for colour in ("prediction", "gold", "correctness"):
        app.radio(key="projection_colour").set_value(colour).run()
        assert not app.exception, app.exception
    assert len(calls) == 1
    assert not app.get("progress")  # nothing left over from the first computation


def test_a_kept_projection_is_shown_without_reading_any_weights(monkeypatch, tmp_path, checkpoints):
    """The Projection page's first visit after a launch loaded every chosen checkpoint (torch's import and the
    weights, seconds of a cold start) to show a layout kept on disk: it reads their config.json, and loads only the
    model it runs, only when the layout is not kept yet."""
    import streamlit as st

    from nlivis import inference

    loads = []
    real = inference.load_checkpoint
    monkeypatch.setattr(inference, "load_checkpoint", lambda folder: loads.append(Path(folder).name) or real(folder))
    app = load_models(open_app(monkeypatch, tmp_path, checkpoints, APP_DATA), checkpoints / "gcnn-snli-small",
                      checkpoints / "gcnn-no_forget_gate-snli-small")
    app.session_state["projection_method"] = "pca"
    app.session_state["projection_model"] = "gcnn-no_forget_gate-snli-small"
    st.cache_resource.clear()  # as after a launch: nothing loaded in this process
    loads.clear()
    show(app, "pages/7_Projection.py")
    assert loads == ["gcnn-no_forget_gate-snli-small"]  # computed: the model it projects is loaded, the other is not
    (computed,) = vega_data(app)
    st.cache_resource.clear()
    loads.clear()
    show(app, "pages/7_Projection.py")
    assert loads == []  # read back from disk: no weights
    (kept,) = vega_data(app)
    assert computed[["x", "y"]].equals(kept[["x", "y"]]) and list(computed["prediction"]) == list(kept["prediction"])


def ablations_table(app: AppTest, key: str) -> pd.DataFrame:
    """Ablations' variants (`key` "checkpoint") or paired comparison ("variant") read back whole: a wide one is two
    Markdown tables that share that first column (`ablations.split_wide`)."""
    parts = [table for table in page_tables(app) if list(table.columns)[:1] == [key]]
    assert parts, f"no table led by {key} on the page"
    return functools.reduce(lambda whole, part: whole.merge(part, on=key), parts)


def test_ablations_compare_variants_with_seed_noise_and_the_paper(monkeypatch, tmp_path, checkpoints):
    app = open_app(monkeypatch, tmp_path, checkpoints, APP_DATA)
    show(app, "pages/6_Ablations.py")
    assert app.selectbox(key="ablations_family").value == "gcnn"
    assert app.selectbox(key="ablations_variant").value == "gcnn-snli-small"
    # small tables as Markdown: no data grid on the page's first view; the comparison's fourteen columns as two
    # tables that share its variant column (`ablations.split_wide`)
    scored, trained, difference, significance = page_tables(app)  # each of the two wide tables as two
    assert list(scored.columns)[:2] == ["checkpoint", "seed"] and list(trained.columns)[:2] == ["checkpoint", "config"]
    assert list(difference.columns)[:2] == ["variant", "pairs"] and list(significance.columns)[:2] == ["variant", "McNemar p"]
    variants, comparison = ablations_table(app, "checkpoint"), ablations_table(app, "variant")
    assert list(variants["checkpoint"]) == ["gcnn-snli-small", "gcnn-snli-small-seed2", "gcnn-no_forget_gate-snli-small"]
    assert (variants["parameters"] != MISSING).all() and (variants["training pairs/s"] != MISSING).all()
    assert variants["snli_dev (select)"].str.fullmatch(r"\d+\.\d\d%").all(), "accuracies as percentages, two decimals"
    assert variants.set_index("config").loc["gcnn-no_forget_gate", "paper row"] == "GCNN - forget gate"
    columns = list(comparison.columns)
    assert "McNemar p" in columns and columns.index("within seed noise") == columns.index("significant") + 1
    assert comparison.set_index("variant").loc["gcnn-snli-small-seed2", "within seed noise"] == "yes"  # the seed gap
    assert comparison.set_index("variant").loc["gcnn-snli-small-seed2", "pairs"] == "12"
    assert comparison["difference"].str.fullmatch(r"[+-]\d+\.\d\d%").all(), "differences with their sign"
    assert "Seed noise: 2 seeds of the full model" in texts(app, "caption")
    assert "gcnn-snli-small-seed2" in texts(app, "caption") and "train a third" in texts(app, "caption")
    assert "Protocol snli-small" in texts(app, "caption")
    specs = vega_specs(app)
    assert len(specs) >= 2 and not app.get("plotly_chart"), "no plotly chart: its chunk costs every new tab ~1.3 s"
    accuracy_bars = next(s for s in specs if "accuracy on" in s["title"])
    assert [row["variant"] for row in accuracy_bars["data"]["values"]] == ["full model · seed 1", "full model · seed 2",
                                                                          "no_forget_gate"]
    differences = next(s for s in specs if "accuracy difference vs" in s["title"])
    assert {row["variant"] for row in differences["data"]["values"]} == {"gcnn-snli-small-seed2", "gcnn-no_forget_gate-snli-small"}
    assert "grey band: seed noise" in differences["title"]
    assert len(page_tables(app)) == 4 and not app.dataframe, "the open tab's tables beside the variants: the others are drawn when opened"
    app.session_state["ablations_tab"] = "What the paper reports"
    app.run()
    assert not app.exception and app.query_params["tab"] == "What the paper reports"
    # GCNN reports MultiNLI and Quora rows only: our snli-small numbers sit beside none of them
    reported = page_tables(app)[-1]
    assert "GCNN - forget gate" in set(reported["paper row"])
    assert not any(column.startswith("ours") for column in reported.columns)
    assert "reports no SNLI rows for gcnn" in texts(app, "info")
    assert len(vega_specs(app)) == 1, "the variants' accuracy bars; the differences' chart is on its own tab"
    app.session_state["ablations_tab"] = "By annotation tag"
    app.run()
    assert not app.exception, app.exception
    deltas = next(d.value for d in app.dataframe if "tag" in d.value.columns)
    assert set(deltas["variant"]) <= {"gcnn-snli-small-seed2", "gcnn-no_forget_gate-snli-small"} and len(deltas)
    assert any("accuracy change per tag" in spec["title"] for spec in vega_specs(app))


def test_ablations_without_a_second_seed_says_so(monkeypatch, tmp_path, checkpoints):
    root = tmp_path / "one_seed"
    root.mkdir()
    for name in ("gcnn-snli-small", "gcnn-no_forget_gate-snli-small"):
        (root / name).symlink_to(checkpoints / name)
    (root / "embeddings").symlink_to(checkpoints / "embeddings")
    app = open_app(monkeypatch, tmp_path, root, APP_DATA)
    show(app, "pages/6_Ablations.py")
    assert "cannot be said" in texts(app, "caption")
    assert "bar" in vega_marks(app) and not app.get("plotly_chart")


def test_ablations_with_seeds_from_different_data_warns_instead_of_failing(monkeypatch, tmp_path, checkpoints):
    """Two 'seeds' whose prediction files disagree on gold labels (trained on different copies of a split)."""
    import dataclasses
    import shutil

    from nlivis.store.predictions import find_prediction_files, read_predictions, write_predictions

    root = tmp_path / "mixed"
    root.mkdir()
    for name in ("gcnn-snli-small", "gcnn-no_forget_gate-snli-small", "embeddings"):
        (root / name).symlink_to(checkpoints / name)
    shutil.copytree(checkpoints / "gcnn-snli-small-seed2", root / "gcnn-snli-small-seed2")
    predictions = find_prediction_files(root / "gcnn-snli-small-seed2")["snli_dev"]
    rotate = {"entailment": "contradiction", "contradiction": "neutral", "neutral": "entailment"}
    write_predictions(predictions, [dataclasses.replace(p, gold=rotate[p.gold]) for p in read_predictions(predictions)])
    app = open_app(monkeypatch, tmp_path, root, APP_DATA)
    show(app, "pages/6_Ablations.py")
    assert "Seed noise cannot be measured" in texts(app, "warning")
    comparison = ablations_table(app, "variant")
    assert "not from the same split" in comparison.set_index("variant").loc["gcnn-snli-small-seed2", "problem"]
    assert "bar" in vega_marks(app)


# ---------------------------------------------------------------- one selection in the URL

def open_link(monkeypatch, tmp_path: Path, checkpoints: Path, data: Path, page: str, **params: str) -> AppTest:
    """A fresh session opening `page` with the query parameters `params`, as a link or a reload does."""
    monkeypatch.setenv("NLIVIS_CHECKPOINTS", str(checkpoints))
    monkeypatch.setenv("NLIVIS_DATA", str(data))
    monkeypatch.setenv("NLIVIS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("NLIVIS_WARM_UP", "0")
    monkeypatch.delenv("NLIVIS_RUNS", raising=False)
    app = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    app.query_params.update(params)
    app.switch_page(str(ROOT / page)).run()
    assert not app.exception, app.exception
    return app


def fixture_row(row: int):
    from nlivis.data.protocols import get_protocol, read_split

    return read_split(get_protocol("snli-small").select, APP_DATA).pairs[row]


def test_a_link_opens_its_pair_and_models_in_the_pair_explorer(monkeypatch, tmp_path, checkpoints):
    app = open_link(monkeypatch, tmp_path, checkpoints, APP_DATA, "pages/2_Pair_explorer.py",
                    split="snli_dev", pair="3", models="gcnn-no_forget_gate-snli-small,gcnn-snli-small")
    expected = fixture_row(3)
    assert list(page_tables(app)[0]["model"]) == ["gcnn-no_forget_gate-snli-small", "gcnn-snli-small"]
    assert f"**Premise:** {expected.premise}" in texts(app, "markdown")
    assert "row 3 of snli_dev" in texts(app, "markdown")
    assert app.number_input(key="explorer_pair_row").value == 3 and app.selectbox(key="explorer_pair_split").value == "snli_dev"
    assert app.query_params == {"split": "snli_dev", "pair": "3", "models": "gcnn-no_forget_gate-snli-small,gcnn-snli-small"}
    reloaded = open_link(monkeypatch, tmp_path, checkpoints, APP_DATA, "pages/2_Pair_explorer.py", **app.query_params)
    assert f"**Premise:** {expected.premise}" in texts(reloaded, "markdown")
    assert len(page_tables(reloaded)[0]) == 2


def test_a_link_with_an_unknown_model_says_so_and_loads_the_rest(monkeypatch, tmp_path, checkpoints):
    app = open_link(monkeypatch, tmp_path, checkpoints, APP_DATA, "pages/2_Pair_explorer.py",
                    split="snli_dev", pair="1", models="no-such-model,gcnn-snli-small")
    assert "no-such-model" in texts(app, "warning") and "the others are loaded" in texts(app, "warning")
    assert list(page_tables(app)[0]["model"]) == ["gcnn-snli-small"]
    assert app.query_params["models"] == "gcnn-snli-small"
    bad_row = open_link(monkeypatch, tmp_path, checkpoints, APP_DATA, "pages/2_Pair_explorer.py",
                        split="snli_dev", pair="999", models="gcnn-snli-small")
    assert "there is no row 999" in texts(bad_row, "warning")
    assert glance_rows(bad_row) == ["gcnn-snli-small"], "the default pair is still analysed"
    not_a_row = open_link(monkeypatch, tmp_path, checkpoints, APP_DATA, "pages/2_Pair_explorer.py", split="snli_dev", pair="-1",
                          models="gcnn-snli-small")
    assert "is not a row number" in texts(not_a_row, "warning") and glance_rows(not_a_row)


def test_the_selection_follows_every_page_and_comes_back_after_the_sidebar_drops_it(monkeypatch, tmp_path, checkpoints):
    app = load_models(open_app(monkeypatch, tmp_path, checkpoints, APP_DATA), checkpoints / "gcnn-snli-small")
    assert app.query_params["models"] == "gcnn-snli-small"
    show(app, "pages/2_Pair_explorer.py")
    analyse(app, "explorer", premise="A dog runs .", hypothesis="An animal moves .")
    assert app.query_params["premise"] == "A dog runs ." and app.query_params["hypothesis"] == "An animal moves ."
    app.query_params.clear()  # what the sidebar's page links do
    show(app, "pages/9_Attribution.py")
    assert app.query_params == {"models": "gcnn-snli-small", "premise": "A dog runs .", "hypothesis": "An animal moves ."}
    assert app.text_area(key="attribution_premise").value == "A dog runs ."
    reloaded = open_link(monkeypatch, tmp_path, checkpoints, APP_DATA, "pages/4_Gates.py", **app.query_params)
    assert reloaded.text_area(key="gates_premise").value == "A dog runs ." and gate_strips_shown(reloaded)


def test_a_half_typed_edit_is_not_analysed_and_previous_means_previously_analysed(monkeypatch, tmp_path, checkpoints):
    app = load_models(open_app(monkeypatch, tmp_path, checkpoints, APP_DATA), checkpoints / "gcnn-snli-small")
    show(app, "pages/2_Pair_explorer.py")
    first = page_tables(app)[0].copy()
    app.text_area(key="explorer_hypothesis").set_value("Nobody")
    app.run()  # another widget reruns the page before Analyse is pressed
    assert page_tables(app)[0].equals(first), "the half-typed hypothesis was analysed"
    assert app.query_params["hypothesis"] == "A person is making music ." and not app.get("toggle")
    analyse(app, "explorer", hypothesis="Nobody is making music .")
    assert "A man is playing a guitar" in app.toggle(key="explorer_compare").label
    assert app.query_params["hypothesis"] == "Nobody is making music ."


def test_split_picker_starts_on_the_select_split_and_names_a_training_split(monkeypatch, tmp_path, checkpoints):
    app = load_models(open_app(monkeypatch, tmp_path, checkpoints, APP_DATA), checkpoints / "gcnn-snli-small")
    show(app, "pages/2_Pair_explorer.py")
    app.radio(key="explorer_pair_source").set_value("pick from a dataset split").run()
    picker = app.selectbox(key="explorer_pair_split")
    assert picker.value == "snli_dev"
    assert "snli_test (training split of gcnn-snli-small)" in picker.options, picker.options


# ---------------------------------------------------------------- click-through to the Pair explorer

def click_table_row(app: AppTest, key: str, line: int, column: str | None = None) -> AppTest:
    """What a click on line `line` of the table `key` sends: a list of pairs' line sends its position as the
    trigger `open` of the list's component (`pair_list.clicks_key`); a selectable st.dataframe's click its
    selection state (on its checkbox, or on its cell in `column` for a table that takes one)."""
    from nlivis.app.components.pair_list import clicks_key

    if pair_table(app, key) is not None:
        send_trigger(app, clicks_key(key), "open", line)
    else:
        cells = [] if column is None else [[line, column]]
        app.session_state[key] = {"selection": {"rows": [] if cells else [line], "columns": [], "cells": cells}}
        app.run()
    assert not app.exception, app.exception
    return follow_opening_link(app)


def send_trigger(app: AppTest, key: str, name: str, value) -> AppTest:
    """A components-v2 element's trigger value `name` sent once, as the browser does: the run it causes sees it,
    the runs after it do not (Streamlit resets a trigger after its run; AppTest keeps what a test set)."""
    app.session_state[key] = {name: value}
    app.run()
    if key in app.session_state:
        app.session_state[key] = {}
    return app


def pair_table(app: AppTest, key: str):
    """The component element drawing the list of pairs `key` (`pair_list.show`), or None when the page has none."""
    from nlivis.app.components.pair_list import clicks_key

    found = [element for element in app.get("bidi_component")
             if element.proto.component_name.endswith("nlivis_pair_table") and element.proto.id
             and clicks_key(key) in element.proto.id]
    return found[0] if found else None


def list_lines(app: AppTest, key: str) -> pd.DataFrame:
    """The lines the list of pairs `key` shows, as a reader reads them: a column whose every cell is a number
    (or "–", missing) as numbers, one of yes / no as truth values, any other as its text."""
    import json

    element = pair_table(app, key)
    assert element is not None, f"no list of pairs {key} on the page"
    data = json.loads(element.proto.json)
    frame = pd.DataFrame(data["rows"], columns=data["columns"])
    for column, numeric in zip(frame.columns, data["numeric"]):
        cells = frame[column].replace(MISSING, None)
        if numeric:
            frame[column] = pd.to_numeric(cells)
        elif set(cells.dropna()) <= {"yes", "no"} and cells.notna().any():
            frame[column] = cells.map({"yes": True, "no": False})
    return frame


def follow_opening_link(app: AppTest) -> AppTest:
    """What the browser does with the link a click opens (`state.switch_to`): its script clicks it, so the link's
    page runs with the link's parameters. Without one (the click opened nothing), the app as it is."""
    from urllib.parse import parse_qsl

    from nlivis.app import state

    opening = [link for link in app.get("page_link") if link.proto.label == "Open this pair in the Pair explorer"]
    if not opening:
        return app
    assert any(f".st-key-{state.OPENING}" in html.proto.body for html in app.get("html")), "the script that clicks it"
    link = opening[-1].proto
    app.query_params.clear()
    app.query_params.update(dict(parse_qsl(link.query_string, keep_blank_values=True)))
    return show(app, next(page.path for page in paths.PAGES if page.url_path == link.page))


def click_vega_point(app: AppTest, chart_key: str, param: str, fields: dict) -> AppTest:
    """What a click on a Vega-Lite point sends: the chart's selection state, its point selection `param` holding
    the point's `fields`."""
    app.session_state[f"chart_{chart_key}"] = {"selection": {param: [fields]}}
    app.run()
    assert not app.exception, app.exception
    return follow_opening_link(app)


def assert_explorer_shows_row(app: AppTest, row: int, models: int) -> None:
    expected = fixture_row(row)
    assert [t.value for t in app.title] == ["Pair explorer"]
    assert app.query_params["split"] == "snli_dev" and app.query_params["pair"] == str(row)
    assert f"**Premise:** {expected.premise}" in texts(app, "markdown") and f"row {row} of snli_dev" in texts(app, "markdown")
    assert len(page_tables(app)[0]) == models


def test_a_wrong_pair_and_a_confusion_cell_open_their_pair_in_the_explorer(monkeypatch, tmp_path, checkpoints):
    app = load_models(open_app(monkeypatch, tmp_path, checkpoints, APP_DATA), checkpoints / "gcnn-snli-small",
                      checkpoints / "gcnn-no_forget_gate-snli-small")
    app.session_state["errors_tab"] = "Every error"
    show(app, "pages/5_Error_analysis.py")
    wrong = list_lines(app, "errors_wrong_pairs_table")
    assert list(wrong.columns[:2]) == ["row", "id"] and (wrong["id"].astype(int) == wrong["row"] + 1).all()  # SNLI ids: lines
    assert_explorer_shows_row(click_table_row(app, "errors_wrong_pairs_table", 1), int(wrong["row"].iloc[1]), models=2)

    app.session_state["errors_tab"] = "Accuracy and confusions"
    show(app, "pages/5_Error_analysis.py")
    gold, predicted = wrong["gold"].iloc[0], wrong["predicted"].iloc[0]
    click_vega_point(app, "confusions", CELL, {"model": "gcnn-snli-small", "gold": gold, "predicted": predicted})
    cell = list_lines(app, "errors_cell_pairs_table")
    assert len(cell) >= 1 and set(cell["gold"]) == {gold} and set(cell["predicted"]) == {predicted}
    assert cell["premise"].str.len().min() > 0
    clicked = click_table_row(app, "errors_cell_pairs_table", 0, column="hypothesis")  # anywhere on the line
    assert_explorer_shows_row(clicked, int(cell["row"].iloc[0]), models=2)


def test_a_projection_point_and_a_disagreement_open_their_pair_in_the_explorer(monkeypatch, tmp_path, checkpoints):
    app = load_models(open_app(monkeypatch, tmp_path, checkpoints, APP_DATA), checkpoints / "gcnn-snli-small")
    app.session_state["projection_method"] = "pca"
    show(app, "pages/7_Projection.py")
    point = vega_data(app)[0].iloc[0]
    assert point["split"] == "snli_dev" and 0 <= int(point["row"]) < 12
    clicked = click_vega_point(app, "projection", "point", {"split": "snli_dev", "row": int(point["row"])})
    assert_explorer_shows_row(clicked, int(point["row"]), models=1)

    show(app, "pages/6_Ablations.py")
    assert app.selectbox(key="ablations_variant").value == "gcnn-snli-small" and "variant" not in app.query_params  # the default
    app.session_state["ablations_tab"] = "Pairs where they disagree"
    app.run()
    disagreements = list_lines(app, "ablations_disagreements_table")
    opened = click_table_row(app, "ablations_disagreements_table", 0)  # with the checkpoints the table compares
    assert_explorer_shows_row(opened, int(disagreements["row"].iloc[0]), models=3)
    assert opened.query_params["models"] == "gcnn-snli-small,gcnn-snli-small-seed2,gcnn-no_forget_gate-snli-small"


# ---------------------------------------------------------------- with checkpoints, without data

def test_pages_without_data_say_what_is_missing(monkeypatch, tmp_path, checkpoints, empty_folder):
    app = load_models(open_app(monkeypatch, tmp_path, checkpoints, empty_folder), checkpoints / "gcnn-snli-small")
    show(app, "pages/2_Pair_explorer.py")
    assert glance_rows(app), "a typed pair needs no data"
    app.radio(key="explorer_pair_source").set_value("pick from a dataset split").run()
    assert not app.exception and "No dataset split found" in texts(app, "info")
    show(app, "pages/7_Projection.py")
    assert "No dataset split found" in texts(app, "info")
    app.session_state["gates_tab"] = "Over a dataset split"
    show(app, "pages/4_Gates.py")
    assert "No dataset split found" in texts(app, "info")
    show(app, "pages/5_Error_analysis.py")
    assert "rect" in vega_marks(app), "the recorded predictions' confusion matrix needs no data"
    app.session_state["errors_tab"] = TAG_TAB
    app.run()
    assert "cannot be tagged" in texts(app, "info")
    app.session_state["ablations_tab"] = "By annotation tag"
    show(app, "pages/6_Ablations.py")
    assert "cannot be tagged" in texts(app, "info")
    show(app, "pages/8_Train.py")
    assert "needs splits that are not in" in texts(app, "warning")
    assert app.button(key="train_start").disabled


# ---------------------------------------------------------------- training from the app

def wait_for_status(monkeypatch, tmp_path, runs: Path, wanted: str) -> AppTest:
    """The Train page reopened (a fresh session, as after a browser refresh) once the newest run under `runs`
    has status `wanted`; fails at once when its worker ends without reaching it. No wall-clock deadline."""
    from nlivis.training import runs as training_runs

    def status() -> str | None:
        newest = next(iter(training_runs.find_runs(runs)), None)
        return None if newest is None else training_runs.run_status(newest)

    wait_for(lambda: status() == wanted, lambda: status() == "running", f"its run was {wanted}")
    return show(open_app(monkeypatch, tmp_path, runs, APP_DATA, runs=runs), "pages/8_Train.py")


def start_from_page(app: AppTest, max_steps: int, epochs: float | None = None) -> AppTest:
    app.selectbox(key="train_embeddings").set_value("random").run()
    app.number_input(key="train_max_steps").set_value(max_steps).run()
    if epochs is not None:
        app.number_input(key="train_epochs_gcnn_shipped").set_value(epochs).run()
    app.button(key="train_start").click().run()
    assert not app.exception, app.exception
    return app


FAKE_WORKER = """
import json, pathlib, sys, time
out = pathlib.Path(sys.argv[1])
out.mkdir(parents=True, exist_ok=True)
with open(out / "metrics.jsonl", "w") as log:
    for step in (10, 20, 30):
        log.write(json.dumps({"step": step, "epoch": step / 100, "loss": 1.1 - step / 100, "train_acc": 0.3 + step / 100,
                              "pairs_per_s": 100.0 + step}) + "\\n")
    log.write(json.dumps({"step": 30, "epoch": 0.3, "dev_acc": 0.5, "best_dev_acc": 0.5}) + "\\n")
while not (out / "STOP").exists():
    time.sleep(0.05)
(out / "state").mkdir()
(out / "state" / "state.json").write_text("{}")
"""
"""Stands in for `python -m nlivis train` where only the page's side of the protocol is tested: it logs
metrics.jsonl lines, waits for the STOP file and leaves a training state, as the trainer does."""


def test_train_page_watches_a_live_run_found_again_after_a_refresh(monkeypatch, tmp_path):
    import sys

    from nlivis.training import runs as training_runs

    runs = tmp_path / "runs"
    runs.mkdir()
    app = show(open_app(monkeypatch, tmp_path, runs, APP_DATA, runs=runs), "pages/8_Train.py")
    assert app.selectbox(key="train_config").value == "gcnn" and app.radio(key="train_size_gcnn").value == "shipped"
    assert "--config gcnn --dataset snli-small" in command_line(app)
    out = runs / "gcnn-snli-small"
    run = training_runs.start_run([sys.executable, "-c", FAKE_WORKER, str(out)], out)
    try:
        wait_for(lambda: len(training_runs.read_run_metrics(out)) >= 4, lambda: training_runs.read_run(out).running,
                 "it wrote its metrics")
        app = show(open_app(monkeypatch, tmp_path, runs, APP_DATA, runs=runs), "pages/8_Train.py")  # a fresh session
        metrics = {m.label: m.value for m in app.metric}
        assert "running" in metrics["status"] and metrics["step"] == "30" and metrics["best dev accuracy"] == "50.0%"
        assert metrics["pairs/s"] == "130"
        name_box = app.text_input(key="train_name_gcnn_snli-small_1")
        assert name_box.value == "gcnn-snli-small-run2", "the default name is a free one"
        assert not app.button(key="train_start").disabled
        name_box.set_value("gcnn-snli-small").run()
        assert "already writing to" in texts(app, "warning") and app.button(key="train_start").disabled
        assert curve_panels(app) == ["loss", "accuracy", "pairs / s"] and not app.get("plotly_chart")
        dev = [row for spec in vega_specs(app) for row in spec["data"]["values"] if row.get("series") == "dev"]
        assert [(row["step"], row["value"]) for row in dev] == [(30, 0.5)], "the worker's own dev accuracy is drawn"
        app.button(key="train_stop_gcnn-snli-small").click().run()
        assert "Stop requested" in texts(app, "info")
        while training_runs.read_run(out).running:  # the fake worker exits once it sees the STOP file
            time.sleep(0.1)
        app = show(open_app(monkeypatch, tmp_path, runs, APP_DATA, runs=runs), "pages/8_Train.py")
        assert "stopped" in next(m.value for m in app.metric if m.label == "status")
        app.text_input(key="train_name_gcnn_snli-small_1").set_value("gcnn-snli-small").run()
        assert "holds the saved state of an unfinished run" in texts(app, "warning")
        assert app.button(key="train_start").disabled and not app.button(key="train_resume_gcnn-snli-small").disabled
        assert training_runs.resume_command(training_runs.read_run(out))[-1] == "--resume"
    finally:
        training_runs.request_stop(run)


def test_train_page_offers_augmentation_and_its_command_carries_it(monkeypatch, tmp_path):
    from nlivis.training.augment import augment_choices

    runs = tmp_path / "runs"
    runs.mkdir()
    app = show(open_app(monkeypatch, tmp_path, runs, APP_DATA, runs=runs), "pages/8_Train.py")
    kinds = app.multiselect(key="train_augment")
    assert kinds.options == [kind for kind, _ in augment_choices()] and kinds.value == []
    assert app.number_input(key="train_augment_ratio").disabled, "no kind, no ratio"
    assert " -m nlivis train --config " in command_line(app) and "--augment" not in command_line(app)
    app.multiselect(key="train_augment").set_value(["antonym", "negation"]).run()
    assert not app.number_input(key="train_augment_ratio").disabled
    app.number_input(key="train_augment_ratio").set_value(0.25).run()
    assert not app.exception, app.exception
    command = command_line(app)
    assert "--augment antonym,negation --augment-ratio 0.25" in command, command
    assert "--augment-negated-share" not in command, "the default share is not written out"
    app.multiselect(key="train_augment").set_value(["number", "hyponym"]).run()
    app.number_input(key="train_augment_negated_share").set_value(1.0).run()
    assert "--augment number,hyponym --augment-ratio 0.25 --augment-negated-share 1" in command_line(app)
    assert "--augment-exclusive-twins" not in command_line(app), "off by default"
    assert app.checkbox(key="train_augment_exclusive_twins").disabled, "no exclusive kind, no exclusive twins"
    app.multiselect(key="train_augment").set_value(["exclusive", "number", "hyponym"]).run()
    app.checkbox(key="train_augment_exclusive_twins").check().run()
    assert command_line(app).endswith("--augment-negated-share 1 --augment-exclusive-twins"), command_line(app)
    assert not app.button(key="train_start").disabled


@pytest.mark.slow
def test_train_page_runs_a_worker_that_becomes_a_checkpoint(monkeypatch, tmp_path):
    from nlivis.training import runs as training_runs

    runs = tmp_path / "runs"
    runs.mkdir()
    start_from_page(show(open_app(monkeypatch, tmp_path, runs, APP_DATA, runs=runs), "pages/8_Train.py"), max_steps=3)
    app = wait_for_status(monkeypatch, tmp_path, runs, "finished")
    assert "finished" in next(m.value for m in app.metric if m.label == "status")
    assert "is listed on Home" in texts(app, "success")
    assert {"loss", "accuracy"} <= set(curve_panels(app)), "the loss / accuracy curves are drawn"
    assert not app.get("plotly_chart"), "no plotly chart: its chunk costs every new tab ~1.3 s"
    assert app.text_input(key="train_name_gcnn_snli-small_1").value == "gcnn-snli-small-run2", "a free default name"
    assert not app.button(key="train_start").disabled and "Cannot start" not in texts(app, "warning"), \
        "the next run can start with the offered name"
    app.text_input(key="train_name_gcnn_snli-small_1").set_value("gcnn-snli-small").run()
    assert "already holds a finished checkpoint" in texts(app, "warning")
    assert app.button(key="train_start").disabled, "a refreshed page does not start the run again"
    assert training_runs.run_progress(runs / "gcnn-snli-small").phase == "finished"
    home = open_app(monkeypatch, tmp_path, runs, APP_DATA, runs=runs)
    assert "gcnn-snli-small" in set(home.dataframe[0].value["checkpoint"])


STOP_AND_RESUME_STEPS = 12
"""The stop-and-resume run's steps: the worker is paused while Stop is clicked, so it stops within a step of where
it was seen, whatever the machine's load, and the resumed part stays short."""


@pytest.mark.slow
def test_train_page_stop_and_resume(monkeypatch, tmp_path):
    import signal

    from nlivis.training import runs as training_runs

    runs = tmp_path / "runs"
    runs.mkdir()
    start_from_page(show(open_app(monkeypatch, tmp_path, runs, APP_DATA, runs=runs), "pages/8_Train.py"),
                    max_steps=STOP_AND_RESUME_STEPS, epochs=500)
    app = wait_for_status(monkeypatch, tmp_path, runs, "running")
    app.text_input(key="train_name_gcnn_snli-small_1").set_value("gcnn-snli-small").run()
    assert "already writing to" in texts(app, "warning") and app.button(key="train_start").disabled
    out = runs / "gcnn-snli-small"
    wait_for(lambda: (progress := training_runs.run_progress(out)) is not None and (progress.step or 0) >= 1,
             lambda: training_runs.read_run(out).running, "its progress file said a step was made")
    worker = training_runs.read_run(out).pid
    os.killpg(worker, signal.SIGSTOP)  # its own session (start_new_session): the whole group holds still
    try:
        seen = training_runs.run_progress(out).step
        assert seen < STOP_AND_RESUME_STEPS - 1, f"the run was at step {seen} when paused"
        app.run()
        assert next(m.value for m in app.metric if m.label == "step") != "—"
        app.button(key="train_stop_gcnn-snli-small").click().run()
        assert "Stop requested at" in texts(app, "info")
    finally:
        os.killpg(worker, signal.SIGCONT)
    wait_for(lambda: training_runs.run_progress(out).phase == "stopped", lambda: training_runs.read_run(out).running,
             "its progress file said it stopped")
    app = wait_for_status(monkeypatch, tmp_path, runs, "stopped")
    stopped_at = int(next(m.value for m in app.metric if m.label == "step"))
    assert 0 < stopped_at <= seen + 1 and f"Stopped at step {stopped_at}" in texts(app, "info")
    app.selectbox(key="train_embeddings").set_value("minilm").run()  # the form no longer matches the run …
    app.button(key="train_resume_gcnn-snli-small").click().run()  # … resume uses the run's own command
    assert not app.exception
    app = wait_for_status(monkeypatch, tmp_path, runs, "finished")
    assert "finished" in next(m.value for m in app.metric if m.label == "status")
    assert next(m.value for m in app.metric if m.label == "step") == str(STOP_AND_RESUME_STEPS)


# ---------------------------------------------------------------- the shipped checkpoints

SHIPPED = ROOT / "checkpoints"
SHIPPED_FULL = [SHIPPED / f"{m}-snli-small" for m in SHIPPED_FAMILIES]


@pytest.fixture
def shipped(shared_data) -> Path:
    if not all((folder / "COMPLETE").is_file() for folder in SHIPPED_FULL):
        pytest.skip("the five shipped snli-small checkpoints are not in checkpoints/")
    return SHIPPED


def test_shipped_models_side_by_side_on_every_model_page(monkeypatch, tmp_path, shipped, shared_data):
    app = load_models(open_app(monkeypatch, tmp_path, shipped, shared_data), *SHIPPED_FULL)
    home = app.dataframe[0].value.set_index("checkpoint")
    listed = set(home.index)
    assert {folder.name for folder in SHIPPED_FULL} <= listed and "gcnn-snli-small-seed2" in listed
    paper = home["paper reports (full data)"]  # the papers' numbers beside ours, each on our dataset only
    assert paper["diin-snli-small"] == "88.0% (DIIN Table 3 · SNLI test)"
    assert paper["esan-snli-small"] == "89.0% (ESAN Table 1 · SNLI test)"
    assert paper["gcnn-snli-small"] == "—" and paper["gcnn-quora-small"] == "88.7% (GCNN Table 2 · Quora test)"
    assert "Selected: " in texts(app, "success")

    show(app, "pages/2_Pair_explorer.py")
    predictions = page_tables(app)[0]
    assert len(predictions) == 5 and set(predictions["predicted"]) <= {"entailment", "neutral", "contradiction"}
    assert glance_rows(app) == list(predictions["model"].str.split(" · ").str[-1])
    assert not alignment_maps(app), "GCNN's one layer is its row of the glance: its section starts closed"
    app.session_state["explorer_open_esan-snli-small"] = True
    app.run()
    assert len(alignment_maps(app)) == 4  # ESAN's two layers, both directions

    show(app, "pages/3_DIIN_interaction_space.py")
    assert app.selectbox(key="diin_model").options == ["diin-snli-small"]
    assert {"interaction", "scale_down", "dense_block_1"} <= {o.split(" ")[0] for o in app.selectbox(key="diin_stage").options}
    assert app.selectbox(key="diin_stage").value == "dense_block_1"  # learned channels first
    assert [spec["spec"]["mark"]["type"] for spec in vega_specs(app)] == ["rect"] and not charts(app)
    assert "4 loaded models have no 2-D interaction maps" in texts(app, "info")  # and the page names them

    show(app, "pages/4_Gates.py")
    assert gate_strips_shown(app)
    # AttentiveConvNet's 384-wide gates: the last window shows dimensions 320–383
    app.session_state["gates_open_attentive_conv-snli-small"] = True
    app.session_state["gates_dims_attentive_conv-snli-small"] = 320
    app.run()
    assert not app.exception, app.exception
    windows = [dims for title, dims in gate_strips_shown(app).items() if "attentive_conv" in title]
    assert windows and all(len(dims) == 64 for dims in windows)
    assert any("dims 320–383 of 384" in title for title in gate_strips_shown(app))


def test_shipped_ablations_page_compares_gcnn_variants_with_the_second_seed(monkeypatch, tmp_path, shipped, shared_data):
    app = open_app(monkeypatch, tmp_path, shipped, shared_data)
    show(app, "pages/6_Ablations.py")
    app.selectbox(key="ablations_family").set_value("gcnn").run()
    assert not app.exception
    variants = ablations_table(app, "checkpoint")
    assert {"gcnn-snli-small", "gcnn-snli-small-seed2", "gcnn-no_forget_gate-snli-small",
            "gcnn-no_output_gate-snli-small"} <= set(variants["checkpoint"])
    assert "Seed noise: 2 seeds of the full model" in texts(app, "caption")
    assert "gcnn-snli-small-seed2" in texts(app, "caption") and "train a third" in texts(app, "caption")
    # DIIN addition_fuse: −2.6% against diin-snli-small as retrained with dynamics (−2.9% before), significant,
    # inside the 3.9% gap between DIIN's two seeds
    app.selectbox(key="ablations_family").set_value("diin").run()
    comparison = ablations_table(app, "variant").set_index("variant")
    fuse = comparison.loc["diin-addition_fuse-snli-small"]
    assert fuse["significant"] == fuse["within seed noise"] == "yes"
    assert -2.7 < float(fuse["difference"].rstrip("%")) < -2.6
    app.session_state["ablations_tab"] = "What the paper reports"
    app.run()
    reported = page_tables(app)[-1]
    assert set(reported["reported on (full data)"]) == {"SNLI dev", "SNLI test"} and (reported["ours (%)"] != MISSING).any()
    # snli-small trains on SNLI test: beside DIIN's SNLI test number stands our SNLI dev, said so
    assert set(reported.loc[reported["our config"] == "diin", "ours on"]) == {"snli_dev (stand-in)"}
    app.selectbox(key="ablations_family").set_value("esan").run()
    app.selectbox(key="ablations_protocol").set_value("mnli-small").run()
    reported = page_tables(app)[-1].set_index("reported on (full data)")  # selected on XNLI-en dev: not beside MultiNLI
    assert reported.loc["MultiNLI matched test", "ours on"] == "mnli_dev_matched (stand-in)"
    assert reported.loc["MultiNLI mismatched test", "ours on"] == "mnli_dev_mismatched (stand-in)"


def test_the_link_contract_on_the_shipped_checkpoints(monkeypatch, tmp_path, shipped, shared_data):
    """?split=snli_dev&pair=3934&models=esan-snli-small,gcnn-snli-small: SNLI dev row 3934 (0-based) by those two."""
    from nlivis.data.protocols import get_protocol, read_split

    link = {"split": "snli_dev", "pair": "3934", "models": "esan-snli-small,gcnn-snli-small"}
    row = read_split(get_protocol("snli-small").select, shared_data).pairs[3934]
    for attempt in range(2):  # the link, then a reload of the URL the page left
        app = open_link(monkeypatch, tmp_path, shipped, shared_data, "pages/2_Pair_explorer.py", **link)
        assert [m.split(" · ")[-1] for m in page_tables(app)[0]["model"]] == ["esan-snli-small", "gcnn-snli-small"]
        assert f"**Premise:** {row.premise}  \n**Hypothesis:** {row.hypothesis}" in texts(app, "markdown")
        assert "row 3934 of snli_dev" in texts(app, "markdown") and row.id == "3935"  # SNLI ids are 1-based lines
        assert set(page_tables(app)[0]["gold"]) == {row.label}
        assert len(alignment_maps(app)) >= 2, "ESAN first: its second layer is beyond the glance, its section open"
        link = dict(app.query_params)
    assert link == {"split": "snli_dev", "pair": "3934", "models": "esan-snli-small,gcnn-snli-small"}


def test_quora_pair_ids_map_to_split_rows(monkeypatch, shared_data):
    """Quora's official pair ids are not line numbers; pair tables still number every pair by its 0-based row."""
    from nlivis.analysis.pair_lists import prediction_rows
    from nlivis.app import cache
    from nlivis.data.protocols import get_protocol, read_split
    from nlivis.store.predictions import Prediction

    monkeypatch.setenv("NLIVIS_DATA", str(shared_data))
    pairs = read_split(get_protocol("quora-small").select, shared_data).pairs
    rows = cache.split_rows("quora_dev")
    assert len(rows) == len(pairs) == 10_000
    assert all(pairs[rows[pair.id]].id == pair.id for pair in pairs[::97])
    assert sum(pair.id != str(row + 1) for row, pair in enumerate(pairs)) > 9_000  # ids are not line numbers
    predictions = [Prediction(pid, "duplicate", "duplicate", (0.2, 0.8)) for pid in (pairs[5].id, pairs[4321].id, "not-a-quora-id")]
    table = prediction_rows(predictions, rows, pairs)
    assert table["row"].tolist()[:2] == [5, 4321] and table["row"].isna().iloc[2]
    assert table["premise"].iloc[1] == pairs[4321].premise


# ---------------------------------------------------------------- gold tags and Table 7 (MultiNLI dev layout)

MNLI_DEV_FIXTURE = {  # made-up pairs in the MultiNLI dev layout (the real files are never copied into tests)
    "matched": [("9001e", "A man is not cooking soup .", "A man cooks nothing .", "entailment"),
                ("9002c", "A woman can play a guitar .", "A woman cannot play .", "contradiction"),
                ("9003n", "Two dogs run in a park .", "Two dogs think about food .", "neutral"),
                ("9004e", "A boy reads a book .", "A boy reads .", "entailment"),
                ("9005c", "If it rains , people stay inside .", "People stay outside .", "contradiction"),
                ("9006n", "A girl is sleeping .", "A girl is tired .", "neutral")],
    "mismatched": [("9101e", "Some people sing .", "People sing .", "entailment"),
                   ("9102c", "The man will not eat .", "The man eats .", "contradiction"),
                   ("9103n", "A cat sits on a mat .", "A cat may sleep .", "neutral"),
                   ("9104e", "A dog barks loudly .", "A dog barks .", "entailment")],
}
MNLI_GOLD_FIXTURE = {  # the RepEval release's shape: '#' marks, a trailing tab for a pair without tags
    "matched": "9001e\t#NEGATION\n9002c\t#MODAL\t#NEGATION\n9003n\t#BELIEF\n9005c\t#CONDITIONAL\t#ANTO\n9006n\t\n",
    "mismatched": "9101e\t#QUANTIFIER\n9102c\t#MODAL\t#NEGATION\n9103n\t#MODAL\n",
}


@pytest.fixture
def mnli_dev_setup(tmp_path, checkpoints) -> tuple[Path, Path]:
    """(checkpoint root, data root): a copy of the fixture GCNN evaluated on a small MultiNLI-dev-shaped
    matched and mismatched split whose gold annotation tags sit in mnli_annotations/."""
    import json
    import shutil

    from nlivis.cli import main

    data = tmp_path / "data"
    shutil.copytree(APP_DATA, data)
    (data / "mnli_dev").mkdir()
    (data / "mnli_annotations").mkdir()
    for half, rows in MNLI_DEV_FIXTURE.items():
        (data / "mnli_dev" / f"multinli_1.0_dev_{half}.jsonl").write_text("".join(
            json.dumps({"gold_label": label, "pairID": pid, "sentence1": p, "sentence2": h}) + "\n"
            for pid, p, h, label in rows), encoding="utf-8")
        (data / "mnli_annotations" / f"multinli_1.0_{half}_annotations.txt").write_text(
            MNLI_GOLD_FIXTURE[half], encoding="utf-8")
    root = tmp_path / "checkpoints"
    shutil.copytree(checkpoints / "gcnn-snli-small", root / "gcnn-snli-small")
    shutil.copytree(checkpoints / "embeddings", root / "embeddings")  # the shared word-vector file it loads
    for half in MNLI_DEV_FIXTURE:
        assert main(["evaluate", str(root / "gcnn-snli-small"), "--dataset", "mnli-small", "--split", f"mnli_dev_{half}",
                     "--data-dir", str(data), "--cache-dir", str(tmp_path / "cache")]) == 0
    return root, data


def test_error_analysis_uses_gold_tags_and_shows_table7_with_counts(monkeypatch, tmp_path, mnli_dev_setup):
    root, data = mnli_dev_setup
    app = load_models(open_app(monkeypatch, tmp_path, root, data), root / "gcnn-snli-small")
    show(app, "pages/5_Error_analysis.py")
    app.selectbox(key="errors_split").set_value("mnli_dev_matched").run()
    assert not app.exception, app.exception

    overall = vega_specs(app)[0]
    rules = [layer for layer in overall["layer"] if layer["mark"]["type"] == "rule"]
    assert any("y2" in rule["encoding"] for rule in rules)  # the 95% interval
    assert any(rule["mark"].get("strokeDash") for rule in rules)  # the majority line
    app.session_state["errors_tab"] = TAG_TAB
    app.run()
    assert "Gold tags" in texts(app, "caption") and "5 pairs of mnli_dev_matched" in texts(app, "caption")
    tag_table = app.dataframe(key="errors_tag_table").value
    gold = tag_table[tag_table["source"] == "gold"].set_index("tag")
    assert gold.loc["NEGATION", "count"] == 2 and gold.loc["CONDITIONAL", "count"] == 1
    assert set(tag_table["source"]) == {"gold", "automatic"}  # 9004e has no gold tags: scored automatically
    assert {"ci_low", "ci_high", "majority_accuracy"} <= set(tag_table.columns)

    table7 = next(d.value for d in app.dataframe if "matched pairs" in d.value.columns)
    assert table7.loc["NEGATION", "matched pairs"] == 2 and table7.loc["MODAL", "mismatched pairs"] == 2
    model_column = next(c for c in table7.columns if c.startswith("mismatched") and c.endswith("gcnn-snli-small"))
    assert "mismatched majority" in table7.columns and "[" in table7.loc["MODAL", model_column]
    assert table7.loc["NEGATION", "matched DIIN (paper)"] == "78" and table7.loc["NEGATION", "mismatched DIIN (paper)"] == "77"
    assert "DIIN Table 7" not in table7.columns and "Natural Language Inference over Interaction Space" in texts(app, "caption")
    assert not table7.isna().any().any(), "no None: 0 pairs, or – where there is no number"

    line = int(tag_table.index[(tag_table["source"] == "gold") & (tag_table["tag"] == "NEGATION")][0])
    click_table_row(app, "errors_tag_table", line, column="accuracy")  # a click on any cell of the line
    behind = list_lines(app, "errors_tag_pairs_table")
    assert set(behind["id"]) == {"9001e", "9002c"} and list(behind["row"]) == [0, 1]
    conditional = int(tag_table.index[(tag_table["source"] == "gold") & (tag_table["tag"] == "CONDITIONAL")][0])
    click_table_row(app, "errors_tag_table", conditional)  # or on its checkbox
    assert len(list_lines(app, "errors_tag_pairs_table")) == 1
    click_table_row(app, "errors_tag_table", line)
    assert_explorer_shows_pair(click_table_row(app, "errors_tag_pairs_table", 1), "mnli_dev_matched", 1,
                               MNLI_DEV_FIXTURE["matched"][1][1])
    mismatched = load_models(open_app(monkeypatch, tmp_path, root, data), root / "gcnn-snli-small")
    show(mismatched, "pages/5_Error_analysis.py")
    mismatched.selectbox(key="errors_split").set_value("mnli_dev_mismatched").run()
    mismatched.session_state["errors_tab"] = TAG_TAB
    mismatched.run()
    assert mismatched.selectbox(key="errors_t7_half").value == "mismatched", "the pair list starts on the page's half"


def write_taxinli(data: Path) -> None:
    """A TaxiNLI-shaped file (made-up categories and reference labels) for the MultiNLI dev fixture pairs."""
    from nlivis.data.taxonomies import TAXINLI_CATEGORIES, TAXINLI_FILE

    header = ["", "Unnamed: 0", "prem", "hyp", "label", *TAXINLI_CATEGORIES, "pairID", "genre", "s1", "s2",
              "bag_of_words", "aloxatel/bert-base-mnli", "esim"]
    lines = ["\t".join(header)]
    for half, rows in MNLI_DEV_FIXTURE.items():
        for index, (pair_id, premise, hypothesis, label) in enumerate(rows):
            on = {"lexical_linguistic", *(["negation_logic"] if " not " in premise else [])}
            flags = ["1" if c in on else "0" for c in TAXINLI_CATEGORIES]
            genre = "fiction" if half == "matched" else "letters"
            lines.append("\t".join([str(index), str(index), premise, hypothesis, label, *flags, pair_id, genre, premise,
                                    hypothesis, "neutral", label, "entailment"]))
    (data / TAXINLI_FILE).parent.mkdir(parents=True, exist_ok=True)
    (data / TAXINLI_FILE).write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_error_analysis_and_pair_explorer_show_taxinli_with_the_reference_models(monkeypatch, tmp_path, mnli_dev_setup):
    root, data = mnli_dev_setup
    write_taxinli(data)
    app = load_models(open_app(monkeypatch, tmp_path, root, data), root / "gcnn-snli-small")
    show(app, "pages/5_Error_analysis.py")
    app.selectbox(key="errors_split").set_value("mnli_dev_matched").run()
    app.session_state["errors_tab"] = TAG_TAB
    app.run()
    assert not app.exception, app.exception
    assert "Accuracy by TaxiNLI category" in [h.value for h in app.subheader]
    table = next(d.value for d in app.dataframe if "negation_logic" in d.value.index)
    assert table.loc["lexical_linguistic", "matched pairs"] == 6 and table.loc["lexical_linguistic", "mismatched pairs"] == 4
    assert table.loc["lexical_linguistic", "matched BERT-base (full MultiNLI)"].startswith("100.0")  # BERT = gold here
    assert any(c.startswith("mismatched") and c.endswith("gcnn-snli-small") for c in table.columns)
    genres = next(d.value for d in app.dataframe if "fiction" in d.value.index)
    assert genres.loc["fiction", "matched pairs"] == 6
    tag_table = app.dataframe(key="errors_tag_table").value
    line = int(tag_table.index[(tag_table["source"] == "gold") & (tag_table["tag"] == "NEGATION")][0])
    click_table_row(app, "errors_tag_table", line)
    explorer = click_table_row(app, "errors_tag_pairs_table", 0)
    assert not explorer.exception, explorer.exception
    card = next(m for m in texts(explorer, "markdown").split("\n") if "**TaxiNLI**" in m)
    assert "pair 9001e" in card and "negation_logic" in card and "ESIM (full MultiNLI) **entailment**" in card


def assert_explorer_shows_pair(app: AppTest, split: str, row: int, premise: str) -> None:
    assert [t.value for t in app.title] == ["Pair explorer"]
    assert app.query_params["split"] == split and app.query_params["pair"] == str(row)
    assert f"**Premise:** {premise}" in texts(app, "markdown")


def test_sample_pages_say_how_many_pairs_the_token_cut_offs_shorten(monkeypatch, tmp_path, checkpoints):
    """Issue 12 item 15: a split shown in the app reports the pairs cut to the model's token limits — the
    Gates statistics and the Projection work on a sample of the split, so they say it for that sample."""
    import shutil

    data = tmp_path / "data"
    shutil.copytree(APP_DATA, data)
    premise_file = data / "snli" / "esnli_tokenized" / "s1.dev"
    premises = premise_file.read_text(encoding="utf-8").splitlines()
    # 121 tokens; the fixture model keeps 12 premise / 8 hypothesis tokens, and one fixture hypothesis is
    # already longer than 8: two pairs of the twelve are cut
    premises[0] = " ".join(["a", "very", "long", "premise"] * 30) + " ."
    premise_file.write_text("\n".join(premises) + "\n", encoding="utf-8")
    app = load_models(open_app(monkeypatch, tmp_path, checkpoints, data), checkpoints / "gcnn-snli-small")
    show(app, "pages/4_Gates.py")
    app.session_state["gates_tab"] = "Over a dataset split"
    app.run()
    app.button(key="gates_computed_button").click().run()
    assert not app.exception, app.exception
    assert "on this sample of snli_dev: 2 of 12 pairs were cut" in texts(app, "caption")
    app.session_state["projection_method"] = "pca"
    show(app, "pages/7_Projection.py")
    assert not app.exception, app.exception
    assert "on this sample of snli_dev: 2 of 12 pairs were cut" in texts(app, "caption")


def test_a_checkpoint_name_found_in_two_roots_is_used_once(monkeypatch, tmp_path, checkpoints):
    """A second checkpoint folder holding a same-named checkpoint listed it twice: Ablations drew the full model
    twice, stacked to 144%. The first root's is used; another model under that name is said on Home's list of
    unusable folders, a copy of the same model beside the first's folder (no problem to solve)."""
    import shutil

    other = tmp_path / "other"
    shutil.copytree(checkpoints / "gcnn-snli-small", other / "gcnn-snli-small")
    shutil.copytree(checkpoints / "gcnn-snli-small-seed2", other / "gcnn-no_forget_gate-snli-small")
    shutil.copytree(checkpoints / "embeddings", other / "embeddings")
    monkeypatch.setenv("NLIVIS_CHECKPOINTS", os.pathsep.join([str(checkpoints), str(other)]))
    monkeypatch.setenv("NLIVIS_DATA", str(APP_DATA))
    monkeypatch.setenv("NLIVIS_WARM_UP", "0")
    app = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT).run()
    assert not app.exception, app.exception
    listed = app.dataframe[0].value
    assert list(listed["checkpoint"]).count("gcnn-snli-small") == 1
    assert listed.set_index("checkpoint").loc["gcnn-snli-small", "folder"] == (
        f"{checkpoints / 'gcnn-snli-small'} (the same model also in {other / 'gcnn-snli-small'})")
    assert listed.set_index("checkpoint").loc["gcnn-no_forget_gate-snli-small", "folder"] == str(
        checkpoints / "gcnn-no_forget_gate-snli-small")
    unusable = app.dataframe[1].value
    assert list(unusable["folder"]) == [str(other / "gcnn-no_forget_gate-snli-small")]
    assert "same name as" in unusable["problem"][0]
    scanned = [caption.value for caption in app.sidebar.expander[0].caption]
    assert scanned[:2] == [md(str(checkpoints)), md(str(other))], "the folders scanned, in the sidebar beside adding one"
