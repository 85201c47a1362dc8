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
    from nlivis.training.checkpoint import MANIFEST

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
    from nlivis.training.checkpoint import find_checkpoints

    return find_checkpoints(root)


def models_to_load(roots: list[Path]) -> list[str]:
    """Home's labels of one checkpoint per model family: the full config, first seed, snli-small first."""
    from nlivis.app import loading

    chosen: dict[str, object] = {}
    infos = [info for root in roots for info in checkpoint_infos(root)]
    for info in sorted(infos, key=lambda i: (i.config_name != i.model, i.protocol != "snli-small", i.seed or 1, i.name)):
        chosen.setdefault(info.model, info)
    order = sorted(chosen, key=lambda model: FAMILY_ORDER.index(model) if model in FAMILY_ORDER else len(FAMILY_ORDER))
    return [loading.checkpoint_label(chosen[model].path, chosen[model]) for model in order]


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
           "NLIVIS_RUNS": str(scratch / "runs"), "NLIVIS_PROJECTION_CACHE": str(scratch / "projections")}
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
            hypothesis.press("Control+Enter")
            settle(page)
            hypothesis.blur()  # no focused, red-framed text box in the screenshot
            page.mouse.move(0, 0)
            assert_clean(page, "Pair explorer")
            assert page.get_by_text("Show the previous pair beside this one").count() == 1, "the new pair was not run"
            assert heatmaps_drawn(page) >= 1, "no alignment heatmap drawn"
            page.screenshot(path=str(SCREENSHOTS / "pair_explorer.png"))
            page.screenshot(path=str(shots / "pair_explorer.png"))

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

            open_page(page, "Train")
            assert_clean(page, "Train")
            assert page.get_by_role("button", name="Start training").count() == 1
            page.screenshot(path=str(shots / "train.png"))
        finally:
            browser.close()
    print(f"screenshots: {shots} and {SCREENSHOTS}")
