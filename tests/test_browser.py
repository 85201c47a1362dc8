"""The app in a real browser: `streamlit run app.py` as a subprocess, Debian's Chromium driven by Playwright.

Opens every page, loads models on Home, runs a pair in the Pair explorer, asserts that no page shows an
exception or an error box and that the heatmaps are drawn (plotly's heatmap layer is in the DOM), and saves
screenshots: docs/screenshots/pair_explorer.png and diin_channels.png (linked from the README) and one per
page under the test's tmp folder. Uses the repository's checkpoints/ when it holds complete checkpoints,
else tiny ones trained here on the fixture data. Never downloads a browser.
"""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Iterator

import pytest

from tests.fixtures.app_checkpoints import APP_DATA, gcnn_family, train_variant

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]
SCREENSHOTS = ROOT / "docs" / "screenshots"
SHARED_DATA = ROOT.parent / "shared" / "data"
PAGE_SECONDS = 300
"""The longest a page may take to settle (real checkpoints on real data: tagging 500 pairs, a UMAP of 1,000)."""
VIEWPORT = {"width": 1400, "height": 2200}
FAMILY_ORDER = ("esan", "gcnn", "diin", "attentive_conv", "amn", "esim")
"""Load order on Home, which is the order of the Pair explorer's panels: a model with alignments first."""
TINY_PREFIX = "tiny_fixture-"
"""Starts the folder name of checkpoints trained here on 12 fixture pairs, so a screenshot says what they are."""

if not CHROMIUM.is_file():
    pytest.skip(f"Debian's chromium is not installed at {CHROMIUM} (apt-get install chromium)", allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install -r requirements-test.txt)")


def complete_checkpoints(root: Path) -> list[Path]:
    from nlivis.store.checkpoints import MANIFEST

    return sorted(p for p in root.iterdir() if (p / MANIFEST).is_file()) if root.is_dir() else []


@pytest.fixture(scope="module")
def app_folders(tmp_path_factory) -> tuple[list[Path], Path]:
    """(checkpoint roots, data root): the repository's checkpoints with the shared data when complete ones
    exist, else a tiny GCNN family on the fixture data; plus a tiny DIIN when none of them is a DIIN."""
    import nlivis.models

    scratch = tmp_path_factory.mktemp("browser")
    shipped = complete_checkpoints(ROOT / "checkpoints")
    if shipped:
        roots, data = [ROOT / "checkpoints"], SHARED_DATA if SHARED_DATA.is_dir() else APP_DATA
    else:
        roots, data = [gcnn_family(scratch / "gcnn", prefix=TINY_PREFIX)], APP_DATA
    has_diin = any(info.model == "diin" for root in roots for info in checkpoint_infos(root))
    if not has_diin and "diin" in nlivis.models.available():
        train_variant(scratch / "diin", "diin", model_name="diin", prefix=TINY_PREFIX)
        roots.append(scratch / "diin")
    return roots, data


def checkpoint_infos(root: Path) -> list:
    from nlivis.store.checkpoints import find_checkpoints

    return find_checkpoints(root)


def models_to_load(roots: list[Path]) -> list[str]:
    """The names of one checkpoint per model family: the full config, first seed, snli-small first."""
    chosen: dict[str, object] = {}
    infos = [info for root in roots for info in checkpoint_infos(root)]
    for info in sorted(infos, key=lambda i: (i.config_name != i.model, i.protocol != "snli-small", i.seed or 1, i.name)):
        chosen.setdefault(info.model, info)
    order = sorted(chosen, key=lambda model: FAMILY_ORDER.index(model) if model in FAMILY_ORDER else len(FAMILY_ORDER))
    return [chosen[model].name for model in order]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def server(app_folders, tmp_path_factory) -> Iterator[str]:
    """The app served on a free loopback port; stopped whatever happens."""
    roots, data = app_folders
    scratch = tmp_path_factory.mktemp("server")
    port = free_port()
    env = {**os.environ, "NLIVIS_CHECKPOINTS": os.pathsep.join(map(str, roots)), "NLIVIS_DATA": str(data),
           "NLIVIS_RUNS": str(scratch / "runs"), "NLIVIS_CACHE_DIR": str(scratch / "cache")}
    log = open(scratch / "streamlit.log", "wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true", "--server.port", str(port),
         "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 90
        while True:
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                    if response.read().strip() == b"ok":
                        break
            except OSError:
                pass
            if process.poll() is not None or time.time() > deadline:
                pytest.fail(f"streamlit did not start: {(scratch / 'streamlit.log').read_text(errors='replace')[-2000:]}")
            time.sleep(0.5)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


def settle(page, quiet: float = 2.0, seconds: float = PAGE_SECONDS) -> None:
    """Wait until streamlit has finished running the script (no status widget for `quiet` seconds)."""
    deadline = time.time() + seconds
    calm_since = None
    while time.time() < deadline:
        if page.locator('[data-testid="stStatusWidget"]').count():
            calm_since = None
        elif calm_since is None:
            calm_since = time.time()
        elif time.time() - calm_since >= quiet:
            return
        time.sleep(0.25)
    raise AssertionError(f"the page was still running after {seconds:.0f} s")


def assert_clean(page, name: str) -> None:
    """No exception and no error box on the page."""
    exceptions = page.locator('[data-testid="stException"]').all_inner_texts()
    errors = page.locator('[data-testid="stAlertContentError"]').all_inner_texts()
    assert not exceptions, f"{name}: exception shown: {exceptions}"
    assert not errors, f"{name}: error shown: {errors}"


def heatmaps_drawn(page) -> int:
    """Plotly heatmap traces in the DOM (each draws a `g.hm` inside the plot's `g.heatmaplayer`)."""
    return page.locator("g.heatmaplayer g.hm").count()


def open_page(page, title: str) -> None:
    page.locator('[data-testid="stSidebarNav"] a', has_text=title).first.click()
    page.wait_for_function("t => document.querySelector('h1') && document.querySelector('h1').innerText.includes(t)",
                           arg=title.split(" ")[0], timeout=PAGE_SECONDS * 1000)
    settle(page)


def test_every_page_in_chromium(server, app_folders, tmp_path):
    roots, _ = app_folders
    labels = models_to_load(roots)
    assert labels, "no checkpoint to load"
    shots = tmp_path / "screenshots"
    shots.mkdir()
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport=VIEWPORT)
            page.goto(server, wait_until="networkidle")
            page.wait_for_selector('[data-testid="stMultiSelect"]', timeout=PAGE_SECONDS * 1000)
            settle(page)
            for label in labels:  # typing filters the (virtualised) option list down to the label
                page.locator('[data-testid="stMultiSelect"]').click()
                page.locator('[data-testid="stMultiSelect"] input').fill(label)
                page.get_by_role("option", name=label, exact=True).click()
                settle(page)
            page.keyboard.press("Escape")
            settle(page)
            assert_clean(page, "Home")
            loaded = page.locator('[data-testid="stAlertContentSuccess"]').inner_text()
            assert all(label in loaded for label in labels), loaded
            page.screenshot(path=str(shots / "home.png"))

            open_page(page, "Pair explorer")
            hypothesis = page.locator("textarea").nth(1)
            hypothesis.fill("Nobody is making music .")
            settle(page)
            assert page.get_by_text("Show the previous pair beside this one").count() == 0, "a half-typed edit was analysed"
            page.get_by_role("button", name="Analyse").click()
            settle(page)
            page.mouse.move(0, 0)
            assert_clean(page, "Pair explorer")
            assert page.get_by_text("Show the previous pair beside this one").count() == 1, "the new pair was not run"
            assert heatmaps_drawn(page) >= 1, "no alignment heatmap drawn"
            assert "hypothesis=Nobody" in page.url, page.url
            page.screenshot(path=str(SCREENSHOTS / "pair_explorer.png"))
            page.screenshot(path=str(shots / "pair_explorer.png"))
            overview = page.locator(".st-key-chart_overview .js-plotly-plot")
            if len(labels) >= 5:
                overview.scroll_into_view_if_needed()
                page.mouse.move(0, 0)
                overview.screenshot(path=str(SCREENSHOTS / "overview_grid.png"))

            open_page(page, "DIIN interaction space")
            assert_clean(page, "DIIN interaction space")
            if any(label.startswith("diin ·") for label in labels):
                assert heatmaps_drawn(page) >= 4, "the DIIN channel grid is not drawn"
                page.locator('[data-testid="stPlotlyChart"]').last.screenshot(path=str(SCREENSHOTS / "diin_channels.png"))
            page.screenshot(path=str(shots / "diin_interaction_space.png"))

            open_page(page, "Gates")
            assert_clean(page, "Gates")
            assert heatmaps_drawn(page) >= 1, "no gate heatmap drawn"
            page.screenshot(path=str(shots / "gates.png"))

            open_page(page, "Error analysis")
            assert_clean(page, "Error analysis")
            assert heatmaps_drawn(page) >= 1, "no confusion matrix drawn"
            page.screenshot(path=str(shots / "error_analysis.png"))

            open_page(page, "Ablations")
            assert_clean(page, "Ablations")
            assert page.locator(".js-plotly-plot").count() >= 1
            page.screenshot(path=str(shots / "ablations.png"))

            open_page(page, "Projection")
            assert_clean(page, "Projection")
            assert page.locator(".js-plotly-plot").count() >= 1
            page.screenshot(path=str(shots / "projection.png"))

            open_page(page, "Attribution")
            assert_clean(page, "Attribution")
            assert page.locator(".js-plotly-plot").count() >= 1, "no token strip drawn"
            page.screenshot(path=str(shots / "attribution.png"))

            open_page(page, "Train")
            assert_clean(page, "Train")
            assert page.get_by_role("button", name="Start training").count() == 1
            page.screenshot(path=str(shots / "train.png"))
        finally:
            browser.close()
    print(f"screenshots: {shots} and {SCREENSHOTS}")


# ---------------------------------------------------------------- click-through to the Pair explorer

LINKED_MODELS = ("esan", "gcnn")
"""The models the click-through test loads through the URL (first checkpoint of each, as models_to_load picks)."""


def click_table_line(page, key: str, line: int) -> None:
    """Click line `line` (0-based) of the selectable st.dataframe with key `key`, in its row-marker column."""
    grid = page.locator(f".st-key-{key} [data-testid='stDataFrame']").first
    grid.scroll_into_view_if_needed()
    box = grid.bounding_box()
    header, row_height = 35, 35
    page.mouse.click(box["x"] + 14, box["y"] + header + row_height * line + row_height / 2)


def click_plotly_point(page, chart_key: str, curve: int, index: int) -> None:
    """Click the point `index` of trace `curve` of the plotly chart with key `chart_key`, at its pixel position."""
    plot = page.locator(f".st-key-chart_{chart_key} .js-plotly-plot").first
    plot.scroll_into_view_if_needed()
    page.wait_for_timeout(500)
    x, y = plot.evaluate("""(gd, [curve, index]) => {
        const trace = gd._fullData[curve], layout = gd._fullLayout, rect = gd.getBoundingClientRect();
        const xa = layout[trace.xaxis.replace('x', 'xaxis')], ya = layout[trace.yaxis.replace('y', 'yaxis')];
        return [rect.left + xa._offset + xa.l2p(trace.x[index]), rect.top + ya._offset + ya.l2p(trace.y[index])];
    }""", [curve, index])
    page.mouse.move(x, y)
    page.wait_for_timeout(300)
    page.mouse.click(x, y)


def landed_row(page, shots: Path, name: str) -> tuple[str, int]:
    """Wait for the Pair explorer the click opened; (split, row) from its URL, checked against what it shows."""
    from urllib.parse import parse_qs, urlparse

    page.wait_for_function("() => document.querySelector('h1') && document.querySelector('h1').innerText.includes('Pair explorer')",
                           timeout=PAGE_SECONDS * 1000)
    settle(page)
    assert_clean(page, f"Pair explorer after {name}")
    query = parse_qs(urlparse(page.url).query)
    split, row = query["split"][0], int(query["pair"][0])
    assert query["models"][0].split(",") == [f"{m}-snli-small" for m in LINKED_MODELS], page.url
    assert page.get_by_text(f"row {row} of {split}").count() >= 1, f"the explorer does not show row {row}"
    assert heatmaps_drawn(page) >= 2
    page.mouse.move(0, 0)
    page.screenshot(path=str(shots / f"explorer_after_{name}.png"))
    return split, row


def go_back_to(page, title: str) -> None:
    page.go_back()
    page.wait_for_function("t => document.querySelector('h1') && document.querySelector('h1').innerText.includes(t)",
                           arg=title, timeout=PAGE_SECONDS * 1000)
    settle(page)


def test_click_through_from_errors_confusions_and_projection_in_chromium(server, app_folders, tmp_path):
    """An error row, a confusion-matrix cell and a projection point each open their pair in the Pair explorer with
    the same models; the browser's Back returns. Needs the shipped snli-small checkpoints and the SNLI dev split."""
    from nlivis.store.predictions import find_prediction_files, read_predictions
    from nlivis.data.protocols import get_protocol, read_split

    roots, data = app_folders
    folders = [root / f"{m}-snli-small" for m in LINKED_MODELS for root in roots if (root / f"{m}-snli-small").is_dir()]
    if len(folders) < len(LINKED_MODELS) or data != SHARED_DATA:
        pytest.skip("needs the shipped esan- and gcnn-snli-small checkpoints and ../shared/data")
    dev = read_split(get_protocol("snli-small").select, data).pairs
    esan = {p.id: p for p in read_predictions(find_prediction_files(folders[0])["snli_dev"])}
    models = ",".join(f.name for f in folders)
    shots = tmp_path / "screenshots"
    shots.mkdir()
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport=VIEWPORT)
            page.goto(f"{server}/Error_analysis?models={models}", wait_until="networkidle")
            page.wait_for_selector(".st-key-errors_wrong", timeout=PAGE_SECONDS * 1000)
            settle(page)
            assert_clean(page, "Error analysis")
            page.screenshot(path=str(shots / "error_analysis.png"))

            click_table_line(page, "errors_wrong", 0)
            split, row = landed_row(page, shots, "error_row")
            assert split == "snli_dev" and esan[dev[row].id].correct is False, "the opened pair is not one ESAN gets wrong"
            go_back_to(page, "Error analysis")

            cells = page.locator(".st-key-chart_confusion_0 .js-plotly-plot").first.evaluate(
                "gd => gd._fullData[1].customdata.map(c => [c[0], c[1], c[2]])")
            index, (gold, predicted, _) = next((i, c) for i, c in enumerate(cells) if c[0] != c[1] and c[2] > 0)
            click_plotly_point(page, "confusion_0", 1, index)
            page.wait_for_selector(".st-key-errors_cell_pairs", timeout=PAGE_SECONDS * 1000)
            settle(page)
            page.screenshot(path=str(shots / "confusion_cell_pairs.png"))
            click_table_line(page, "errors_cell_pairs", 0)
            split, row = landed_row(page, shots, "confusion_cell")
            opened = esan[dev[row].id]
            assert (opened.gold, opened.predicted) == (gold, predicted), "the opened pair is not in the clicked cell"
            go_back_to(page, "Error analysis")

            page.goto(f"{server}/Projection?models={models}", wait_until="networkidle")
            page.wait_for_selector("h1", timeout=PAGE_SECONDS * 1000)
            settle(page)
            page.get_by_text("PCA", exact=True).click()
            page.wait_for_selector(".st-key-chart_projection .js-plotly-plot", timeout=PAGE_SECONDS * 1000)
            settle(page)
            assert_clean(page, "Projection")
            page.screenshot(path=str(shots / "projection.png"))
            click_plotly_point(page, "projection", 0, 0)
            split, row = landed_row(page, shots, "projection_point")
            assert split == "snli_dev" and 0 <= row < len(dev)
            go_back_to(page, "Projection")
        finally:
            browser.close()
    print(f"screenshots: {shots}")
