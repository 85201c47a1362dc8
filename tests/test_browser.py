"""The app in a real browser: `streamlit run app.py` as a subprocess, Debian's Chromium driven by Playwright.

Walks what a researcher does — from a number to its pairs to why — and asserts no exception or error box on any
page and the same view after each Back: Error analysis → a confusion cell → a pair → Attribution → Gates → DIIN →
Back → Back; a Table 7 cell, a projection point and a challenge-set category each → their pair → Back. Opens every
page at 1600 px width and saves its screenshot to docs/screenshots/ (linked from the README), and checks that a
link carrying Markdown makes the browser fetch nothing. The walks come after the every-page visit in this file, so
they find its results in the server's caches. The Train page's run is in tests/test_browser_train.py, a file of its
own that the other xdist worker can take. The app and the browser are the session's (`app_url` and
`chromium_browser` in tests/conftest.py, shared by every browser module). Needs the shipped checkpoints and
../shared/data (skips with the reason otherwise); never downloads a browser.
"""
from __future__ import annotations

import difflib
import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, parse_qsl, urlparse

import pytest
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from bench.browser import AppServer, app_environment
from nlivis.app import paths
from nlivis.models.families import SHIPPED_FAMILIES
from nlivis.viz.vega.raster_cells import GRID_ATTRIBUTE

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
SCREENSHOTS = ROOT / "docs" / "screenshots"
MODELS = ",".join(f"{family}-snli-small" for family in SHIPPED_FAMILIES)
PAGE_SECONDS = 300
"""A hang guard, not a speed criterion: how long a page may go on running before the test calls it stuck (a busy
machine, the first page after launch, tagging a split all take tens of seconds)."""
VIEWPORT = {"width": 1600, "height": 1600}
HOSTILE_HOST = "nlivis-fetch-test.invalid"
CHALLENGE = ROOT / "tests" / "fixtures" / "challenge" / "anli_like.csv"


STILL = """document.addEventListener('DOMContentLoaded', () => {
  const style = document.createElement('style');
  style.textContent = '*, *::before, *::after { animation: none !important; transition: none !important; }';
  document.head.appendChild(style);
});"""
"""Every CSS animation and transition off, in every page a test's tab loads. Headless chromium draws each frame of
Streamlit's running indicator, skeletons and fades on the CPU: they took about half of the browser's CPU time in
the walks. Nothing a test asserts, and no screenshot, which is taken once the page is still, shows an animation."""


FINISHED = (ForwardMsg.FINISHED_SUCCESSFULLY, ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY)


class ScriptRuns:
    """The tab's script runs as its Streamlit connection tells them: each rerun the browser asks for (`requests`
    counts them), each run the server starts, each run that finishes. Settling waits on these events, not on a
    quiet spell: a run that is about to start has been asked for, so it is known before the page shows it."""

    def __init__(self, tab) -> None:
        self.requests = 0
        self.socket = None
        self.last = {"request": -1, "start": -1, "finish": -1}
        """Where in the current connection's stream of events the newest of each kind came."""
        self.count = 0
        tab.on("websocket", self.connected)

    def connected(self, socket) -> None:
        if not socket.url.endswith("/_stcore/stream"):
            return
        self.socket, self.last = socket, {"request": -1, "start": -1, "finish": -1}
        socket.on("framesent", lambda payload: self.sent(socket, payload))
        socket.on("framereceived", lambda payload: self.received(socket, payload))

    def note(self, kind: str) -> None:
        self.count += 1
        self.last[kind] = self.count

    def sent(self, socket, payload) -> None:
        if socket is self.socket and isinstance(payload, bytes) and BackMsg.FromString(payload).HasField("rerun_script"):
            self.requests += 1
            self.note("request")

    def received(self, socket, payload) -> None:
        if socket is not self.socket or not isinstance(payload, bytes):
            return
        message = ForwardMsg.FromString(payload)
        kind = message.WhichOneof("type")
        if kind == "new_session":
            self.note("start")
        elif kind == "script_finished" and message.script_finished in FINISHED:
            self.note("finish")

    def idle(self, since: int = 0) -> bool:
        """More than `since` reruns asked for, and the run started after the newest request has finished
        (a request that comes while a run goes on restarts it: the server then starts another)."""
        last = self.last
        return self.requests > since and last["request"] < last["start"] < last["finish"]


def new_tab(browser):
    """A tab in a browser context of its own (no cookies or history from another test), animations off (STILL),
    its script runs followed (`tab.script_runs`, ScriptRuns)."""
    context = browser.new_context(viewport=VIEWPORT)
    context.add_init_script(STILL)
    tab = context.new_page()
    tab.script_runs = ScriptRuns(tab)
    return tab


def requested(page) -> int:
    """How many reruns the tab has asked for so far: pass it to `settle` to wait for the run an action asks for."""
    return page.script_runs.requests


@pytest.fixture
def page(chromium_browser) -> Iterator:
    """A new tab (`new_tab`), recording every URL it requests in `page.requested`."""
    tab = new_tab(chromium_browser)
    context = tab.context
    requests: list[str] = []
    tab.on("request", lambda request: requests.append(request.url))
    tab.requested = requests
    try:
        yield tab
    finally:
        context.close()


SETTLED = """
() => {
  const app = document.querySelector('[data-testid="stApp"]');
  if (!app || app.getAttribute('data-test-script-state') !== 'notRunning' || !document.querySelector('h1')) return false;
  return [...document.querySelectorAll('[data-testid="stPlotlyChart"]')].every(c => c.querySelector('.main-svg'))
      && [...document.querySelectorAll('[data-testid="stVegaLiteChart"]')].every(c => c.querySelector('canvas.marks, svg.marks'))
      && !document.querySelector('[data-testid="stSkeleton"]');
}
"""


def settle(page, since: int = 0) -> None:
    """Wait until the newest run the tab asked for (after `since` requests: the run an action asks for, see
    `requested`) has finished, and Streamlit has drawn it: its running indicator gone, every chart drawn."""
    deadline = time.monotonic() + PAGE_SECONDS
    while not (page.script_runs.idle(since) and page.evaluate(SETTLED)):
        if time.monotonic() > deadline:
            raise AssertionError(f"{address(page)}: the page was still running after {PAGE_SECONDS} s")
        page.wait_for_timeout(50)


def assert_clean(page, name: str) -> None:
    """No exception and no error box on the page."""
    exceptions = page.locator('[data-testid="stException"]').all_inner_texts()
    errors = page.locator('[data-testid="stAlertContentError"]').all_inner_texts()
    assert not exceptions, f"{name}: exception shown: {exceptions}"
    assert not errors, f"{name}: error shown: {errors}"


def open_url(page, url: str, name: str) -> None:
    before = requested(page)
    page.goto(url, wait_until="commit")
    settle(page, before)
    assert_clean(page, name)


def address(page) -> str:
    """The URL the page shows now. Not Playwright's `page.url`: that keeps a history entry's URL after the app
    replaces it (history.replaceState, as after Back over a `switch_page` step), while the address bar and
    `location` show the new one."""
    return page.evaluate("() => location.href")


def parameters(page) -> dict[str, str]:
    """The query parameters of the URL the page shows now."""
    return {key: values[0] for key, values in parse_qs(urlparse(address(page)).query).items()}


def query(url: str) -> tuple[str, tuple]:
    """A URL's path and its parameters, decoded and sorted (`a,b` and `a%2Cb` are one URL)."""
    parsed = urlparse(url)
    return parsed.path, tuple(sorted(parse_qsl(parsed.query)))


COMPARE_OFFER = "Show the previous pair beside this one"
"""The Pair explorer's offer (a toggle, off for a split's pair) to compare with the pair seen just before: it names
whichever pair that was, so it is not part of the view a Back restores."""


def view(page) -> tuple[tuple, str, str]:
    """What the reader sees, to compare after Back: the URL, the title and the main area's text (less the tags
    line, which fills in when the background tagging is done, and the explorer's COMPARE_OFFER)."""
    page.mouse.move(0, 0)  # a figure's hover box (outside the main area, hidden off the marks) is not part of the view
    text = page.locator('[data-testid="stMain"]').inner_text()
    lines = [line for line in text.splitlines() if "automatic tags are being computed" not in line and "Tags:" not in line
             and not line.startswith(COMPARE_OFFER) and line.strip()]
    return query(address(page)), page.locator("h1").first.inner_text(), "\n".join(lines)


def go_back(page, expected: tuple[tuple, str, str], name: str) -> None:
    """One Back, then the URL, title and text of `expected`: every step (a sidebar link, a clicked line or point, a
    cell, Next) is one entry of the browser's history, so one Back shows the view before it."""
    before = requested(page)
    page.go_back()
    deadline = time.monotonic() + PAGE_SECONDS
    while query(address(page)) != expected[0]:
        assert time.monotonic() < deadline, f"{name}: Back shows {address(page)}, expected {expected[0]}"
        page.wait_for_timeout(50)
    settle(page, before)
    assert_clean(page, name)
    now = view(page)
    assert now[:2] == expected[:2], f"{name}: Back landed on {now[:2]}, expected {expected[:2]}"
    changed = [line for line in difflib.unified_diff(expected[2].splitlines(), now[2].splitlines(), lineterm="", n=0)
               if line[:1] in "+-" and line[:3] not in ("+++", "---")]
    assert not changed, f"{name}: the view after Back differs: {changed[:8]}"


PAIR_LINE = ".st-key-{key} .nlivis-pair-table tr[data-line='{line}']"
"""A line of a list of pairs (`pair_list.show`: a table of its own, each line a button)."""


def click_table_line(page, key: str, line: int, on_checkbox: bool = False) -> None:
    """Click line `line` (0-based) of the table with key `key`: a list of pairs' line in the middle (on whatever
    cell is there); a selectable st.dataframe's in the middle of the line (a cell), or `on_checkbox` at its left (a
    table that selects rows only)."""
    page.wait_for_selector(f".st-key-{key} .nlivis-pair-table, .st-key-{key} [data-testid='stDataFrame']",
                           timeout=PAGE_SECONDS * 1000)
    if page.locator(f".st-key-{key} .nlivis-pair-table").count():
        target = page.locator(PAIR_LINE.format(key=key, line=line)).first
        target.scroll_into_view_if_needed()
        box = target.bounding_box()
        x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    else:
        grid = page.locator(f".st-key-{key} [data-testid='stDataFrame']").first
        grid.scroll_into_view_if_needed()
        page.wait_for_timeout(500)
        box = grid.bounding_box()
        header, row_height = 35, 35
        x, y = box["x"] + (14 if on_checkbox else box["width"] / 2), box["y"] + header + row_height * line + row_height / 2
    page.mouse.move(x, y)
    page.wait_for_timeout(300)
    page.mouse.click(x, y)


def click_chart_mark(page, chart_key: str, marks: str = ".mark-symbol path", index: int = 0) -> None:
    """Click mark `index` of the `marks` of the chart with key `chart_key` (Vega's SVG in the browser or the
    server's: the first symbol unless told), at its centre (the mark drawn on top there takes the click)."""
    point = page.locator(f".st-key-chart_{chart_key} svg.marks {marks}").nth(index)
    point.scroll_into_view_if_needed()
    page.wait_for_timeout(500)
    box = point.bounding_box()
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.mouse.move(x, y)
    page.wait_for_timeout(300)
    page.mouse.click(x, y)


def open_when_drawn_by_server(page, url: str, name: str, chart_key: str, tries: int = 8) -> None:
    """Open `url` until its chart `chart_key` is the server's SVG (the warm-up starts the converter while no page
    runs: until then the browser draws it), a few seconds apart."""
    for _ in range(tries):
        open_url(page, url, name)
        if page.locator(f".st-key-chart_{chart_key} .nlivis-figure svg.marks").count() == 1:
            return
        page.wait_for_timeout(3000)
    raise AssertionError(f"the chart {chart_key} of {url} was never drawn by the server")


def landed(page, title: str, name: str) -> dict[str, str]:
    """Wait for the page a click opened; its query parameters."""
    page.wait_for_function("t => document.querySelector('h1') && document.querySelector('h1').innerText.includes(t)",
                           arg=title, timeout=PAGE_SECONDS * 1000)
    settle(page)
    assert_clean(page, name)
    return parameters(page)


def follow_link(page, label: str, title: str) -> dict[str, str]:
    page.get_by_role("link", name=re.compile(label)).first.click()
    return landed(page, title, label)


# ---------------------------------------------------------------- every page

def sidebar_entries(page) -> list[str]:
    """The page names the sidebar lists: Streamlit's navigation (the old-style pages/ listing) and the router's page
    links (less the names of the icons' ligatures, e.g. `home`)."""
    icons = {entry.icon.split("/")[-1].strip(":") for entry in paths.PAGES}
    lists = page.locator('[data-testid="stSidebarNav"], [data-testid="stSidebar"] [data-testid="stPageLink"]')
    lines = [line.strip() for text in lists.all_inner_texts() for line in text.splitlines()]
    return [line for line in lines if line and line not in icons]


def test_a_freshly_launched_server_opens_every_page_from_its_link(chromium_browser, tmp_path):
    """The first URLs a newly started server is asked for are links to pages, never the root: each opens its own
    page through the router (app.py) — its title, the router's sidebar (Home first, with every page's title), not
    Streamlit's old-style listing of pages/ ("app" first). Its own server: the session's has served other pages.
    No checkpoint and no data, so every page opens at once."""
    for empty in ("checkpoints", "data"):
        (tmp_path / empty).mkdir()
    environment = app_environment([tmp_path / "checkpoints"], tmp_path / "runs", tmp_path / "data")
    tab = new_tab(chromium_browser)
    context = tab.context
    titles = [page.title for page in paths.PAGES]
    try:
        with AppServer(environment, tmp_path / "streamlit.log") as server:
            for page in [*paths.PAGES[1:], paths.HOME]:
                open_url(tab, f"{server.url}/{'' if page is paths.HOME else page.url_path}", page.title)
                heading = "nlivis" if page is paths.HOME else page.title
                assert heading in tab.locator("h1").first.inner_text(), page.url_path
                assert sidebar_entries(tab) == titles, f"{page.url_path}: the sidebar lists {sidebar_entries(tab)}"
    finally:
        context.close()


PAGES = [("home", "", "nlivis"), ("pair_explorer", f"Pair_explorer?models={MODELS}&split=snli_dev&pair=3934", "Pair explorer"),
         ("diin_interaction_space", f"DIIN_interaction_space?models={MODELS}&split=snli_dev&pair=3934", "DIIN"),
         ("gates", f"Gates?models={MODELS}&split=snli_dev&pair=3934", "Gates"),
         ("error_analysis", f"Error_analysis?models={MODELS}", "Error analysis"),
         ("error_analysis_table7", "Error_analysis?models=gcnn-mnli-small&tab=By+annotation+tag+%28Table+7%29", "Error analysis"),
         ("ablations", "Ablations", "Ablations"), ("projection", f"Projection?models={MODELS}", "Projection"),
         ("train", "Train", "Train"), ("attribution", f"Attribution?models={MODELS}&split=snli_dev&pair=3934", "Attribution")]


def figure_screenshot(page, figure, file_name: str) -> None:
    """One figure's screenshot, whole: the window is made taller than the figure first (the app scrolls inside its
    main pane, which clips what lies below the window), then set back."""
    height = figure.bounding_box()["height"]
    page.set_viewport_size({"width": VIEWPORT["width"], "height": int(max(VIEWPORT["height"], height + 400))})
    figure.evaluate("""gd => new Promise(drawn => {  // Vega has drawn its marks
        const check = () => gd.querySelector('canvas.marks, svg.marks') ? drawn() : requestAnimationFrame(check);
        requestAnimationFrame(() => requestAnimationFrame(check));
    })""")
    figure.scroll_into_view_if_needed()
    page.mouse.move(0, 0)
    figure.screenshot(path=str(SCREENSHOTS / file_name))
    page.set_viewport_size(VIEWPORT)


def test_every_page_opens_clean_at_1600_px_with_its_screenshot(app_url, page):
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    for name, path, title in PAGES:
        open_url(page, f"{app_url}/{path}", name)
        assert title in page.locator("h1").first.inner_text()
        page.mouse.move(0, 0)
        page.screenshot(path=str(SCREENSHOTS / f"{name}.png"))
        if name == "pair_explorer":
            # a figure that takes no clicks is the server's SVG in a container keyed by the figure's key
            glance = page.locator(".st-key-chart_overview", has_text="all loaded models").first
            glance.scroll_into_view_if_needed()
            glance.locator("svg.marks").first.wait_for(timeout=PAGE_SECONDS * 1000)
            maps = page.locator("[class*='st-key-chart_align_'] svg.marks", has_text=" · layer ")
            assert maps.count() == 0, "GCNN's one layer is its row of the glance: its section starts closed"
            section = page.locator("details summary", has_text="gcnn-snli-small · output normalised by").first
            section.scroll_into_view_if_needed()
            section.click()
            maps.nth(1).wait_for(timeout=PAGE_SECONDS * 1000)  # both directions drawn, not only the first to arrive
            assert maps.count() >= 2, "opened, the first model's alignments (SVG, their title in it)"
            figure_screenshot(page, glance, "overview_grid.png")
        if name == "diin_interaction_space":
            figure_screenshot(page, page.locator("[class*='st-key-chart_diin_']").last, "diin_channels.png")
        if name == "error_analysis_table7":  # TaxiNLI's categories, ours beside the file's full-data ESIM and BERT
            taxinli = page.locator(".st-key-chart_errors_taxinli")
            taxinli.locator("svg.marks").first.wait_for(timeout=PAGE_SECONDS * 1000)
            figure_screenshot(page, taxinli, "taxinli.png")
        if name == "ablations":  # each variant's change per tag, significant ones solid, the others hollow
            open_url(page, f"{app_url}/Ablations?tab=By+annotation+tag", name)
            per_tag = page.locator(".st-key-chart_ablations_tags")
            per_tag.locator("svg.marks").first.wait_for(timeout=PAGE_SECONDS * 1000)
            figure_screenshot(page, per_tag, "ablations_tags.png")
    assert sidebar_entries(page) == [entry.title for entry in paths.PAGES], "the router's sidebar, not Streamlit's pages/ listing"
    assert_figures_come_from_the_server(page, f"{app_url}/Pair_explorer")


def assert_figures_come_from_the_server(page, url: str, tries: int = 8) -> None:
    """Once the server's warm-up has started its figure converter (while no page runs), a figure that takes no
    clicks reaches the browser as the server's SVG, each mark with its hover text, which shows beside the pointer
    over the mark and goes when the pointer leaves: the page is opened again, a few seconds apart, until it does."""
    for _ in range(tries):
        open_url(page, url, "Pair explorer")
        drawn = page.locator(".st-key-chart_overview .nlivis-figure svg.marks")
        if drawn.count() == 1:
            grids = drawn.locator(f"image[{GRID_ATTRIBUTE}]")
            assert grids.count() >= 1, "the grid's heatmaps come as one image each (viz.vega.raster_cells)"
            image = grids.nth(grids.count() // 2)
            image.scroll_into_view_if_needed()
            grid, box = json.loads(image.get_attribute(GRID_ATTRIBUTE)), image.bounding_box()
            assert grid["columns"] * grid["rows"] >= 64 and sum(map(bool, grid["labels"])) >= 64
            shown = page.locator("#nlivis-hover")
            for column, row in ((grid["columns"] // 2, grid["rows"] // 2), (0, grid["rows"] - 1),
                                (grid["columns"] - 1, 0)):
                label = grid["labels"][row * grid["columns"] + column]
                page.mouse.move(box["x"] + (column + 0.5) * box["width"] / grid["columns"],
                                box["y"] + (row + 0.5) * box["height"] / grid["rows"])
                if not label:
                    continue
                shown.wait_for(state="visible", timeout=PAGE_SECONDS * 1000)
                assert shown.inner_text().strip() == label.strip(), "the hover text of the cell under the pointer"
            page.mouse.move(0, 0)
            shown.wait_for(state="hidden", timeout=PAGE_SECONDS * 1000)
            page.locator("details summary", has_text="gcnn-snli-small · output normalised by").first.click()
            aligned = page.locator("[class*='st-key-chart_align_'] .nlivis-figure svg.marks :is([data-hover][aria-label], "
                                   f"image[{GRID_ATTRIBUTE}])")
            aligned.first.wait_for(timeout=PAGE_SECONDS * 1000)
            assert aligned.count() > 0, "an opened section's alignments have their hover text too"
            return
        page.wait_for_timeout(3000)  # idle pages: the warm-up's next step may run
    raise AssertionError(f"the figures of {url} were never drawn by the server")


# ---------------------------------------------------------------- the diagnosis path

def test_confusion_cell_to_pair_to_attribution_gates_diin_and_back(app_url, page):
    """Error analysis → a confusion cell → a pair (a click on a cell of its line) → Next → Attribution → Gates → DIIN
    → the sidebar's Error analysis, on a split pair, then Back step by step to the view first opened: one Back per
    step, each showing the view that step showed."""
    open_when_drawn_by_server(page, f"{app_url}/Error_analysis?models={MODELS}", "Error analysis", "confusions")
    opened_view = view(page)
    marks = "path[data-click]"  # the matrices' cells, each with its row's number and its description as hover text
    cells = [dict(part.split(": ", 1) for part in label.split("; ")) for label in
             page.locator(f".st-key-chart_confusions svg.marks {marks}").evaluate_all(
                 "paths => paths.map(p => p.getAttribute('aria-label'))")]
    index, cell = next((i, c) for i, c in enumerate(cells)
                       if c["model"] == "esan-snli-small" and c["gold"] != c["predicted"] and int(c["pairs"]) > 1)
    gold, predicted, count = cell["gold"], cell["predicted"], int(cell["pairs"])
    click_chart_mark(page, "confusions", marks, index)  # a cell of ESAN's matrix, one panel of the chart
    page.wait_for_selector(".st-key-errors_cell_pairs_table", timeout=PAGE_SECONDS * 1000)
    settle(page)
    assert_clean(page, "Error analysis, cell listed")
    cell_view = view(page)
    assert f"esan-snli-small: gold {gold}, predicted {predicted}" in cell_view[2]

    click_table_line(page, "errors_cell_pairs_table", 0)
    params = landed(page, "Pair explorer", "the cell's first pair")
    assert params["split"] == "snli_dev" and params["from.via"] == "cell" and params["from.gold"] == gold
    assert page.get_by_text(f"pair 1 of {count:,}").count() >= 1
    first_pair_view = view(page)
    page.locator(".st-key-explorer_list_next button").click()  # Next steps through the cell, in its order
    page.wait_for_function("t => document.body.innerText.includes(t)", arg=f"pair 2 of {count:,}",
                           timeout=PAGE_SECONDS * 1000)
    page.wait_for_function("old => !location.search.includes('&pair=' + old + '&')", arg=params["pair"],
                           timeout=PAGE_SECONDS * 1000)
    settle(page)
    assert_clean(page, "the cell's second pair")
    second_pair_view = view(page)

    follow_link(page, "This pair in Attribution", "Attribution")
    attribution_view = view(page)
    follow_link(page, "This pair in Gates", "Gates")
    gates_view = view(page)
    follow_link(page, "This pair in DIIN interaction space", "DIIN")
    assert page.locator("[class*='st-key-chart_diin_'] svg.marks").count() >= 1
    diin_view = view(page)
    page.locator('[data-testid="stSidebar"] [data-testid="stPageLink"] a', has_text="Error analysis").click()
    assert landed(page, "Error analysis", "the sidebar's Error analysis")["models"] == MODELS
    assert view(page)[2] == cell_view[2], "the sidebar returns to the page's last view"
    go_back(page, diin_view, "Back to DIIN")
    go_back(page, gates_view, "Back to Gates")
    go_back(page, attribution_view, "Back to Attribution")
    go_back(page, second_pair_view, "Back to the cell's second pair")
    go_back(page, first_pair_view, "Back to the cell's first pair")
    go_back(page, cell_view, "Back to the cell's list")
    assert page.locator(PAIR_LINE.format(key="errors_cell_pairs_table", line=0) + ".current").count() == 1, (
        "the line the pair was opened from is marked")
    go_back(page, opened_view, "Back to the page before the cell")


def test_projection_and_challenge_pairs_open_and_come_back(app_url, page):
    # a projection point → its pair → Back
    open_url(page, f"{app_url}/Projection?models={MODELS}&method=pca&colour=gold", "Projection")
    projection_view = view(page)
    click_chart_mark(page, "projection")
    params = landed(page, "Pair explorer", "a projection point")
    assert params["from"] == "projection" and params["from.colour"] == "gold"
    go_back(page, projection_view, "Back to the projection")

    # a challenge-set category → a pair → Back (evaluated into the writable copy of gcnn-snli-small)
    open_url(page, f"{app_url}/Error_analysis?models=gcnn-snli-small&tab=Challenge+set"
                   f"&challenge_mode=a+path+on+this+machine&challenge_path={CHALLENGE}", "Challenge set")
    if page.get_by_role("button", name="Evaluate 1 model(s) on this file").count():
        before = requested(page)
        page.get_by_role("button", name="Evaluate 1 model(s) on this file").click()
        settle(page, before)
    page.wait_for_selector(".st-key-errors_challenge_pairs_table", timeout=PAGE_SECONDS * 1000)
    before = requested(page)
    page.reload()  # the page as it is once the evaluation is stored (offered as an earlier one, no Evaluate button)
    settle(page, before)
    page.wait_for_selector(".st-key-errors_challenge_pairs_table", timeout=PAGE_SECONDS * 1000)
    figure_screenshot(page, page.locator(".st-key-chart_errors_challenge_bars"), "challenge.png")
    challenge_view = view(page)
    click_table_line(page, "errors_challenge_pairs_table", 0)
    params = landed(page, "Pair explorer", "a challenge pair")
    assert params["from"] == "challenge" and params.get("gold")
    go_back(page, challenge_view, "Back to the challenge set")


def test_a_table7_pair_opens_and_back_returns_to_table7(app_url, page):
    # a Table 7 cell (mnli-small on MultiNLI dev, gold tags) → its pairs → a pair, from the keyboard → Back
    open_url(page, f"{app_url}/Error_analysis?models=gcnn-mnli-small&tab=By+annotation+tag+%28Table+7%29", "Table 7")
    page.wait_for_selector(".st-key-errors_t7_pairs_table", timeout=PAGE_SECONDS * 1000)
    table7_view = view(page)
    line = page.locator(PAIR_LINE.format(key="errors_t7_pairs_table", line=1)).first
    line.focus()  # Tab reaches a line as it reaches a link; Enter opens it
    page.keyboard.press("Enter")
    params = landed(page, "Pair explorer", "a Table 7 pair")
    assert params["split"] == "mnli_dev_matched" and params["from.via"] == "table7" and params["from.tags"] == "gold"
    assert page.get_by_text("(gold)").count() >= 1, "the pair's gold tags are shown, marked"
    go_back(page, table7_view, "Back to Table 7")


def test_no_table_runs_past_the_page_in_a_1280_px_window(app_url, page):
    """Ablations under mnli-small (five accuracy columns) and AttentiveConvNet's long names and paper rows: a Markdown
    table cannot scroll sideways, so every table on the page, on each tab that shows Markdown tables, must end inside
    the page's block (as one table each, mnli-small's variants ran ~330 px past the edge, the paired comparison ~170
    px, AttentiveConvNet's nine-column variants past it too)."""
    page.set_viewport_size({"width": 1280, "height": 900})
    for family, protocol, tab, columns in (("esan", "mnli-small", "Paired+comparison", 13 + 13),
                                           ("esan", "mnli-small", "What+the+paper+reports", 13),
                                           ("attentive_conv", "snli-small", "Paired+comparison", 9 + 13)):
        open_url(page, f"{app_url}/Ablations?family={family}&protocol={protocol}&tab={tab}", "Ablations")
        page.wait_for_selector('[data-testid="stMarkdownContainer"] table', timeout=PAGE_SECONDS * 1000)
        page.wait_for_timeout(1000)  # the open tab's tables come after the variants'
        tables = page.evaluate("""() => {
          const right = document.querySelector('[data-testid="stMainBlockContainer"]').getBoundingClientRect().right;
          return [...document.querySelectorAll('[data-testid="stMarkdownContainer"] table')]
            .map(table => ({columns: table.querySelectorAll("th").length, past: table.getBoundingClientRect().right - right}));
        }""")
        assert sum(table["columns"] for table in tables) >= columns, f"{family} {tab}: the columns are all shown: {tables}"
        assert all(table["past"] <= 1 for table in tables), f"{family} {tab}: a table runs past the page (px): {tables}"


def test_a_link_carrying_markdown_makes_the_browser_fetch_nothing(app_url, page):
    hostile = f"![x](http://{HOSTILE_HOST}/x.png)"
    for path in (f"Error_analysis?models=gcnn-snli-small&split={hostile}",
                 f"Pair_explorer?models=gcnn-snli-small&premise={hostile}&hypothesis=[y](http://{HOSTILE_HOST})",
                 f"Ablations?variant={hostile}"):
        open_url(page, f"{app_url}/{path}", path.split("?")[0])
        assert page.get_by_text("in the link").count() + page.get_by_text("x.png").count() >= 1  # said as text
    assert not [url for url in page.requested if urlparse(url).hostname == HOSTILE_HOST]  # (the page's own URL names it)
    assert page.locator(f"img[src*='{HOSTILE_HOST}']").count() == 0 and page.locator(f"a[href*='{HOSTILE_HOST}']").count() == 0

