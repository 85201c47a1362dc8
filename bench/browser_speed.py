"""How fast the app feels in a real browser: every page opened by URL with the five shipped snli-small models.

    OMP_NUM_THREADS=1 python bench/browser_speed.py [--warm 3] [--pages Home,Gates] [--floor] [--warm-only]
        [--out bench/results/browser_speed.md]

Starts `streamlit run app.py` (as the README does), drives Debian's Chromium headless through Playwright and, per page:
  * cold: a freshly started server, the page's URL opened first (nothing in the server's memory yet; the disk
    caches — spaCy analyses, projections — are those of a machine where every page was opened once before,
    which the priming pass below makes true);
  * warm: the same URL opened again in a new browser tab (a new Streamlit session) of one server past its start
    (every page visited once on it), every page in turn for `--warm` rounds, median of the visits (until session
    39 a full run made them on the cold page's fresh server, still warming up in the background).
All visits share one browser profile, as a user's do: Streamlit's and plotly's JavaScript come from the browser
cache after the priming pass. A visit ends when Streamlit's script state is `notRunning` (its running indicator is
gone), every chart on the page has drawn and no element is still a skeleton waiting for its code (`PENDING`);
"script" is when the first full run of the page ended (a timer fragment that fills in later, such as the
explorer's tags, does not count), "drawn" when the last chart finished or the last element waiting for its code
was shown, whichever came later. Launch is a new server process from spawn until Home is idle. A second table times what a reader
does inside one tab of a warm server (median of `--warm`): switching page by the sidebar, each tab of Error
analysis, opening a pair from Error analysis's list of errors (click on a line until the Pair explorer has
drawn) and Next in that pair — from the click until the script is done and every chart drawn. A third table lists the charts drawn
last on each page, with when each was drawn.
`--floor` serves a stand-in Streamlit app beside nlivis (the router, two pages of a title, a line, a button that
reruns, sidebar page links; `FLOOR_APP`) and times it in the same rounds — launch, a page by URL cold and warm (at
the same depth as nlivis's: `floor_url`), a sidebar switch, a rerun — so each table gives nlivis − floor: what nlivis adds to what any Streamlit page costs on
the machine at that moment (the load is said in the header). `--warm-only` skips the launches and the cold pages
(a fresh server each): one warm server, and the floor's beside it, every page in turn for `--warm` rounds — what a
loaded machine can measure in minutes. `--app-root` measures another checkout of the app (e.g. `git archive <commit> | tar -x -C /tmp/base`).
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from browser import AppServer, app_environment, chromium, require_chromium
from harness import ROOT, SHIPPED, add_out_option, command_line, publish

from nlivis.app import paths

PAGES = tuple(page.url_path for page in paths.PAGES)
VIEWPORT = {"width": 1600, "height": 1000}
TIMEOUT_S = 300.0

CHARTS = ('[data-testid="stPlotlyChart"], [data-testid="stVegaLiteChart"], [data-testid="stHtml"]:has(svg.marks), '
          '[data-testid^="stBidiComponent"]:has(.nlivis-figure)')
"""A chart's element: a plotly figure's, a Vega-Lite spec's, or the SVG the server drew (components/figures.show
draws a figure that takes no clicks that way since session 27, and one that takes only clicks on its marks in its
clickable component since session 28; an older checkout drew them with Vega-Lite). Streamlit 1.67 marks the
component's element `stBidiComponentRegular`: until session 31 the selector named `stBidiComponent` exactly, so a
clickable figure's drawing (a confusion matrix, a projection, the data map) was waited for but not counted in the
time reported."""

DRAWN = ".main-svg, canvas.marks, svg.marks"
"""What a chart has once drawn: plotly's SVG, or the canvas or SVG of Vega's marks."""

PENDING = '[data-testid="stSkeleton"]'
"""An element Streamlit has received but not yet shown: it loads each element kind's code when the first element of
that kind arrives and draws a grey skeleton (React's Suspense fallback) until the code has loaded and run. Found
in session 38: a data grid (Home's checkpoints, Ablations' variants) could still be a skeleton a second after the
run ended, when `SETTLED` had already called the page done; since then a page is done only when none is left, and
its "drawn" time counts the last one shown (`complete`). Earlier results undercount pages with such elements."""

RECORDER = """
(() => {
  window.__nlivis = {states: [], drawn: {}, redrawn: {}, finished: [], pending: false, complete: 0};
  const finishes = bytes => {  // a ForwardMsg whose field 6 (script_finished, a varint) is set
    let i = 0;
    const varint = () => { let value = 0, shift = 0, byte; do { byte = bytes[i++]; value += (byte & 0x7f) * 2 ** shift;
                                                                 shift += 7; } while (byte & 0x80 && i < bytes.length);
                           return value; };
    while (i < bytes.length) {
      const tag = varint(), field = Math.floor(tag / 8), wire = tag % 8;
      if (field === 6 && wire === 0) return true;
      if (wire === 0) varint(); else if (wire === 2) { const length = varint(); i += length; } else if (wire === 1) i += 8;
      else if (wire === 5) i += 4; else return false;
    }
    return false;
  };
  const Socket = window.WebSocket;
  window.WebSocket = function (...args) {
    const socket = new Socket(...args);
    socket.addEventListener('message', e => {
      if (e.data instanceof ArrayBuffer && finishes(new Uint8Array(e.data))) window.__nlivis.finished.push(performance.now());
    });
    return socket;
  };
  window.WebSocket.prototype = Socket.prototype;
  Object.assign(window.WebSocket, Socket);
  const chartKey = (chart, i) => {
    const holder = chart.closest('[class*="st-key-chart_"]');
    return holder ? [...holder.classList].find(c => c.startsWith('st-key-chart_')).slice(13) : 'chart ' + i;
  };
  const seen = records => {
    const app = document.querySelector('[data-testid="stApp"]');
    if (app) {
      const state = app.getAttribute('data-test-script-state');
      const last = window.__nlivis.states[window.__nlivis.states.length - 1];
      if (!last || last[1] !== state) window.__nlivis.states.push([performance.now(), state]);
    }
    const pending = !!document.querySelector('PENDING');  // an element still waiting for its code
    if (window.__nlivis.pending && !pending) window.__nlivis.complete = performance.now();
    window.__nlivis.pending = pending;
    document.querySelectorAll('CHARTS').forEach((chart, i) => {
      const key = chartKey(chart, i);
      if (!(key in window.__nlivis.drawn) && chart.querySelector('DRAWN')) window.__nlivis.drawn[key] = performance.now();
    });
    for (const record of records) {  // a chart drawn again under a key it had (a new pair): plotly changes its SVG
      const target = record.target.nodeType === 1 ? record.target : record.target.parentElement;
      const chart = target && target.closest('CHARTS');
      if (chart && !target.closest('.hoverlayer, .modebar-container')) window.__nlivis.redrawn[chartKey(chart, 0)] = performance.now();
    }
  };
  new MutationObserver(seen).observe(document, {subtree: true, childList: true, attributes: true,
                                                attributeFilter: ['data-test-script-state']});
})();
""".replace("CHARTS", CHARTS).replace("DRAWN", DRAWN).replace("PENDING", PENDING)
"""Installed in every tab before the page loads: records each change of Streamlit's script state, each
`script_finished` message the server sends (read from the websocket: a run of a few milliseconds may never show
the running state in the page), when each chart first has drawn (`DRAWN`: plotly's SVG or Vega's marks) and
when a chart's drawing last changed (`redrawn`: a chart drawn again under the same key, as opening a pair or Next
does, which `drawn` alone missed; plotly's hover labels and mode bar are not drawing), and when the last element
waiting for its code (`PENDING`) was shown (`complete`), in ms since the navigation started."""

CHART_HOLDERS = "'[class*=\"st-key-chart_\"], [data-testid=\"stVegaLiteChart\"]'"
"""Every chart the app shows is keyed `chart_<key>` (components/figures.show). Streamlit puts that key on the
element container of a chart that takes clicks at once, before the chart's component has mounted (in a new tab
that can be more than a second after the run ended); a Vega-Lite chart without selections gets no key (Streamlit
1.67 uses a chart's key only for its selection), so its own element is waited on. Waiting on both keeps a visit
from counting as drawn before its charts exist (warm visits reported 0 figures otherwise)."""

ALL_SHOWN = (f"!document.querySelector({PENDING!r}) && "
             f"[...document.querySelectorAll({CHART_HOLDERS})].every(c => c.querySelector({DRAWN!r}))")
"""A JavaScript expression, true when no element waits for its code (`PENDING`) and every chart has drawn: the
last condition of `SETTLED` and `SETTLED_AFTER`."""

SETTLED = """
() => {
  const app = document.querySelector('[data-testid="stApp"]');
  if (!app || !window.__nlivis) return false;
  const states = window.__nlivis.states;
  const last = states[states.length - 1];
  // a run seen running, or (a run of a few ms that never showed it) the server's script_finished
  if (!last || last[1] !== 'notRunning' || !(states.some(s => s[1] === 'running') || window.__nlivis.finished.length))
    return false;
  if (performance.now() - last[0] < 1000) return false;  // a rerun (a switch_page, a fragment) may follow
  return ALL_SHOWN;
}
""".replace("ALL_SHOWN", ALL_SHOWN)

SETTLED_AFTER = """
(since) => {
  const app = document.querySelector('[data-testid="stApp"]');
  if (!app || !window.__nlivis) return false;
  const states = window.__nlivis.states;
  const last = states[states.length - 1];
  const finished = window.__nlivis.finished.filter(t => t >= since);
  if (!last || last[1] !== 'notRunning') return false;
  if (!finished.length && !states.some(s => s[0] >= since && s[1] === 'running')) return false;
  const drawing = Object.values(window.__nlivis.redrawn);
  if (performance.now() - Math.max(last[0], ...finished, ...drawing) < 1000) return false;
  return ALL_SHOWN;
}
""".replace("ALL_SHOWN", ALL_SHOWN)
"""After a click at `since` (ms): a run started after it has ended (the server said `script_finished`, or the page
showed it running and then idle), nothing ran and no chart changed for a second, every chart drew and no element
waits for its code (`PENDING`)."""

LAST_DRAWN = """
since => Math.max(0, ...[...Object.values(window.__nlivis.drawn), ...Object.values(window.__nlivis.redrawn),
                          window.__nlivis.complete].filter(t => t >= since))
"""
"""When the last chart drawn after `since` (ms) finished, drawn for the first time or again under its key, or the
last element waiting for its code was shown (`PENDING`), whichever came later."""

ERROR_TABS = ("Accuracy and confusions", "Every error", "By annotation tag (Table 7)", "Challenge set")

FIGURES = """
() => [...document.querySelectorAll('[data-testid="stPlotlyChart"] .js-plotly-plot, [data-testid="stVegaLiteChart"], [data-testid="stHtml"]:has(svg.marks), [data-testid^="stBidiComponent"]:has(.nlivis-figure)')].map((gd, i) => {
  const holder = gd.closest('[class*="st-key-chart_"]');
  const key = holder ? [...holder.classList].find(c => c.startsWith('st-key-chart_')).slice(13) : 'chart ' + i;
  return {key, drawn: window.__nlivis.drawn[key] || null,
          types: gd.matches('[data-testid="stVegaLiteChart"]') ? 'vega-lite' : gd.matches('[data-testid="stHtml"]') ? 'svg'
                 : gd.matches('[data-testid^="stBidiComponent"]') ? 'svg, clickable'
                 : [...new Set((gd.data || []).map(t => t.type || 'scatter'))].join('+')};
})
"""


@dataclass
class Visit:
    script_s: float
    drawn_s: float
    received_kb: float
    figures: list[dict] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def ready_s(self) -> float:
        return max(self.script_s, self.drawn_s)


def bench_environment(checkpoints: Path, scratch: Path) -> dict[str, str]:
    """The app's environment for a measurement: `checkpoints`, runs in `scratch`, and one OpenMP thread unless
    OMP_NUM_THREADS says otherwise."""
    return {**app_environment([checkpoints], scratch / "runs"), "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")}


def visit(context, url: str) -> Visit:
    """Open `url` in a new tab and wait until the script is done and every chart is drawn."""
    page = context.new_page()
    page.add_init_script(RECORDER)
    received = [0]
    page.on("websocket", lambda ws: ws.on("framereceived", lambda payload: received.__setitem__(
        0, received[0] + len(payload))))
    try:
        page.goto(url, wait_until="commit", timeout=TIMEOUT_S * 1000)
        page.wait_for_function(SETTLED, timeout=TIMEOUT_S * 1000, polling=100)
        script_ms = script_end_ms(page)
        figures = page.evaluate(FIGURES)
        drawn_ms = max([f["drawn"] or 0 for f in figures] + [page.evaluate("() => window.__nlivis.complete")])
        problems = page.locator('[data-testid="stException"]').all_inner_texts()
        return Visit(script_ms / 1000, drawn_ms / 1000, received[0] / 1024, figures, problems)
    finally:
        page.close()


def script_end_ms(page) -> float:
    """When a settled tab's run ended, in ms since the navigation: its script state back to not running after it
    was seen running, or (a run too short to show it was running) the server's `script_finished`."""
    states, finished = page.evaluate("() => [window.__nlivis.states, window.__nlivis.finished]")
    started = next((t for t, state in states if state == "running"), None)
    return next(t for t, state in states if state == "notRunning" and t > started) if started is not None \
        else min(finished)


def after_click(page, click, title: str | None = None) -> float:
    """Seconds from `click()` until the run it starts has ended and every chart is drawn (the server's
    `script_finished`, the script state and the charts as the recorder saw them; the last chart's drawing, first
    or again under its key, or the script's end, whichever is later); with `title`, not before that page's title
    shows (a switch first reruns the page it leaves)."""
    since = page.evaluate("() => performance.now()")
    click()
    if title:
        page.wait_for_function("t => document.querySelector('h1') && document.querySelector('h1').innerText.includes(t)",
                               arg=title, timeout=TIMEOUT_S * 1000, polling=100)
    page.wait_for_function(SETTLED_AFTER, arg=since, timeout=TIMEOUT_S * 1000, polling=100)
    states, finished = page.evaluate("() => [window.__nlivis.states, window.__nlivis.finished]")
    ended = max([t for t, state in states if state == "notRunning" and t >= since] + [t for t in finished if t >= since])
    drawn = page.evaluate(LAST_DRAWN, since)
    return (max(ended, drawn) - since) / 1000


def reader_clicks(page, server: AppServer, timed: Callable[..., None], row: int = 0,
                  untimed: Callable[[], None] = lambda: None) -> None:
    """The reader's path in `page`, from Home: sidebar switches, Error analysis's tabs, line `row` of its list of
    errors opened (a click on the line until the Pair explorer has drawn) and Next in that pair. Each timed action
    is `timed(name, click, title)` (`title`: the page it must land on, or None); `untimed()` is called before the
    click that only shows the list."""
    page.goto(page_url(server, "Home"), wait_until="commit", timeout=TIMEOUT_S * 1000)
    page.wait_for_function(SETTLED, timeout=TIMEOUT_S * 1000, polling=100)
    for target in ("Pair explorer", "Gates", "Attribution", "Error analysis"):
        link = page.locator('[data-testid="stSidebar"] [data-testid="stPageLink"] a', has_text=target).first
        timed(f"switch to {target} (sidebar)", link.click, target)
    for tab in (*ERROR_TABS[1:3], ERROR_TABS[0]):
        timed(f"Error analysis tab: {tab}", page.get_by_role("tab", name=tab).click, None)
    untimed()
    page.get_by_role("tab", name=ERROR_TABS[1]).click()
    listed = ".st-key-errors_wrong_pairs_table"
    page.wait_for_selector(f"{listed} .nlivis-pair-table, {listed} [data-testid='stDataFrame']", timeout=TIMEOUT_S * 1000)
    page.wait_for_function(SETTLED, timeout=TIMEOUT_S * 1000, polling=100)
    if page.locator(f"{listed} .nlivis-pair-table").count():  # the list's own table: each line a button
        line = page.locator(f"{listed} .nlivis-pair-table tr[data-line='{row}']").first
        line.scroll_into_view_if_needed()
        box = line.bounding_box()
        x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    else:  # a data grid (an app before session 34), lines 35 px under a 35-px header
        grid = page.locator(f"{listed} [data-testid='stDataFrame']").first
        grid.scroll_into_view_if_needed()
        box = grid.bounding_box()
        x, y = box["x"] + box["width"] / 2, box["y"] + 35 * (row + 1) + 35 / 2
    timed(OPEN_PAIR, lambda: page.mouse.click(x, y),
          "Pair explorer")
    timed(NEXT_PAIR, page.locator(".st-key-explorer_list_next button").click, None)


def interactions(context, server: AppServer) -> dict[str, list[float]]:
    """What a reader waits for inside one tab of the warm server (`reader_clicks`), each action from the click
    until the script is done and every chart drawn (`after_click`)."""
    timed: dict[str, list[float]] = {}
    page = context.new_page()
    page.add_init_script(RECORDER)
    try:
        reader_clicks(page, server, lambda name, click, title: timed.setdefault(name, []).append(
            after_click(page, click, title)))
    except Exception as error:  # the pages' table is printed whatever happens here
        print(f"interactions stopped: {type(error).__name__}: {error}", file=sys.stderr)
    finally:
        page.close()
    return timed


OPEN_PAIR = "open a pair from the list of errors"
NEXT_PAIR = "Next in a pair opened from a list"


FLOOR_PAGE = """import streamlit as st
st.title({title!r})
st.session_state["floor_runs"] = st.session_state.get("floor_runs", 0) + 1
st.container(key="floor_runs").write(f"One line of text, run {{st.session_state['floor_runs']}}.")
st.button("Rerun", key="floor_rerun")
for path, label in (("home.py", "Home"), ("other.py", "Other")):
    st.sidebar.page_link(path, label=label)
"""
FLOOR_APP = {"app.py": 'import streamlit as st\nst.set_page_config(layout="wide")\n'
                       'st.navigation([st.Page("home.py", title="Home", default=True), st.Page("other.py", title="Other")],'
                       ' position="hidden").run()\n',
             "home.py": FLOOR_PAGE.format(title="Home"), "other.py": FLOOR_PAGE.format(title="Other")}
"""The smallest app with nlivis's shape — the router with its own list hidden, page links in the sidebar, a button
that reruns — and nothing else: what Streamlit and the browser cost before any nlivis code runs, for the same
three actions (a page by URL, a sidebar switch, a rerun)."""


def write_floor_app(folder: Path) -> Path:
    """`FLOOR_APP`'s files in `folder` (made if missing), which is returned."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in FLOOR_APP.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


FLOOR_RAN = """
(before) => {
  const line = document.querySelector('.st-key-floor_runs');
  const app = document.querySelector('[data-testid="stApp"]');
  return !!line && line.innerText !== before && !!app && app.getAttribute('data-test-script-state') === 'notRunning'
    && !document.querySelector(PENDING_SELECTOR);
}
""".replace("PENDING_SELECTOR", repr(PENDING))


def after_floor_click(page, click) -> float:
    """Seconds from `click()` until the floor's run counter shows the run it started and the script is idle. The
    floor's run is too short for the browser to show a running state (what `after_click` waits for), so its own
    line says that it ran; polled every 20 ms."""
    before = page.locator(".st-key-floor_runs").inner_text()
    started = time.perf_counter()
    click()
    page.wait_for_function(FLOOR_RAN, arg=before, timeout=TIMEOUT_S * 1000, polling=20)
    return time.perf_counter() - started


def floor_interactions(context, server: AppServer) -> dict[str, list[float]]:
    """The floor's two clicks in one tab: a sidebar switch (each way) and the button that reruns (twice)."""
    timed: dict[str, list[float]] = {}
    page = context.new_page()
    page.add_init_script(RECORDER)
    try:
        page.goto(server.url, wait_until="commit", timeout=TIMEOUT_S * 1000)
        page.wait_for_function(SETTLED, timeout=TIMEOUT_S * 1000, polling=100)
        for target in ("Other", "Home"):
            link = page.locator('[data-testid="stSidebar"] [data-testid="stPageLink"] a', has_text=target).first
            timed.setdefault("switch", []).append(after_floor_click(page, link.click))
            button = page.locator(".st-key-floor_rerun button")
            timed.setdefault("rerun", []).append(after_floor_click(page, button.click))
    finally:
        page.close()
    return timed


def page_url(server: AppServer, page: str) -> str:
    models = ",".join(f"{m}-snli-small" for m in SHIPPED)
    return f"{server.url}/{'' if page == 'Home' else page}?models={models}"


def floor_url(floor: AppServer, page: str) -> str:
    """The floor's page at the same depth as nlivis's `page`: its Home at the bare address, its other page at a path.
    A page whose URL has a path costs Streamlit more than the bare address whatever the app: its frontend first
    probes the path as the server's base (`/<page>/_stcore/health` and `host-config`, two 404s), waits its 100-ms
    retry and then tries `/` (`getPossibleBaseUris` in Streamlit's frontend; 0.12-0.14 s measured in session 31),
    so every page but Home is read against the floor's page at a path."""
    return floor.url if page == "Home" else f"{floor.url}/other"


@dataclass
class Measured:
    """What one run of this script measured, for `tables`; the floor's numbers (`--floor`) beside nlivis's, each
    taken in the same rounds as the nlivis numbers they are read against."""
    pages: list[str]
    launches: list[float] = field(default_factory=list)
    cold: dict[str, Visit] = field(default_factory=dict)
    warm: dict[str, list[Visit]] = field(default_factory=dict)
    clicked: dict[str, list[float]] = field(default_factory=dict)
    floor_launches: list[float] = field(default_factory=list)
    floor_cold: dict[str, Visit] = field(default_factory=dict)
    floor_warm: dict[str, list[Visit]] = field(default_factory=dict)
    floor_clicked: dict[str, list[float]] = field(default_factory=dict)
    loads: list[float] = field(default_factory=list)
    """The 1-minute load average after each round of warm visits."""


def launched(context, env: dict, log: Path, app_root: Path) -> float:
    """Seconds from starting a server of the app in `app_root` until its bare URL (Home) is idle and drawn."""
    with AppServer(env, log, app_root) as server:
        visit(context, server.url)
        return time.perf_counter() - server.started


def measure_page(context, measured: Measured, page: str, env: dict, log: Path, app_root: Path,
                 floor_root: Path | None) -> None:
    """`page` cold on a fresh server; with `floor_root`, a fresh floor server beside it, its page cold after
    nlivis's. The warm visits are not made here: right after a launch the server's background warm-up (models,
    the behavioural suite) may still hold a core, and warm visits made then read +0.2-0.3 s slower per page than on
    a server past its start (session 39: Home +0.67 against +0.33); they are made in `warm_round`s on one server."""
    with AppServer(env, log, app_root) as server, \
            (AppServer(env, log, floor_root) if floor_root else nullcontext()) as floor:
        measured.cold[page] = visit(context, page_url(server, page))
        if floor:
            measured.floor_cold[page] = visit(context, floor_url(floor, page))
    print(f"{page}: cold {measured.cold[page].ready_s:.1f} s", file=sys.stderr)


def warm_round(context, measured: Measured, server: AppServer, floor: AppServer | None) -> None:
    """One visit of every page in a new tab of the warm `server`, each followed by one of the `floor`'s page."""
    for page in measured.pages:
        measured.warm.setdefault(page, []).append(visit(context, page_url(server, page)))
        if floor:
            measured.floor_warm.setdefault(page, []).append(visit(context, floor_url(floor, page)))
    measured.loads.append(os.getloadavg()[0])


def measure(args: argparse.Namespace, scratch: Path) -> Measured:
    """Priming, launches, each page cold and warm, the clicks inside one tab; with `--floor`, the floor app's
    launches, pages and clicks interleaved with nlivis's."""
    measured = Measured([p for p in args.pages.split(",") if p])
    env = bench_environment(args.app_root / "checkpoints", scratch)
    log = scratch / "streamlit.log"
    floor_root = write_floor_app(scratch / "floor") if args.floor else None
    with chromium() as browser:
        context = browser.new_context(viewport=VIEWPORT)
        if not args.no_prime:  # every page once, so disk caches (spaCy, projections) hold what a user's would
            with AppServer(env, log, args.app_root) as server:
                for page in measured.pages:
                    visit(context, page_url(server, page))
        for _ in range(0 if args.warm_only else args.launches):
            measured.launches.append(launched(context, env, log, args.app_root))
            if floor_root:
                measured.floor_launches.append(launched(context, env, log, floor_root))
        for page in ([] if args.warm_only else measured.pages):
            measure_page(context, measured, page, env, log, args.app_root, floor_root)
        with AppServer(env, log, args.app_root) as server, \
                (AppServer(env, log, floor_root) if floor_root else nullcontext()) as floor:
            for page in dict.fromkeys(["Home", "Error_analysis", "Pair_explorer", "Gates", "Attribution",
                                       *measured.pages]):
                visit(context, page_url(server, page))  # the server warm for these pages, as after a first visit
            if floor:
                visit(context, floor.url)
                visit(context, floor_url(floor, "other"))
            for _ in range(args.warm):  # rounds: each page, then the floor, in turn
                warm_round(context, measured, server, floor)
            for _ in range(args.warm):
                for action, timed in interactions(context, server).items():
                    measured.clicked.setdefault(action, []).extend(timed)
                for action, timed in (floor_interactions(context, floor) if floor else {}).items():
                    measured.floor_clicked.setdefault(action, []).extend(timed)
    return measured


def measure_against(args: argparse.Namespace, scratch: Path) -> tuple[Measured, Measured]:
    """Warm only, this app (`--app-root`) and an earlier one (`--before-root`) served side by side with the floor:
    each round visits every page on this app, on the earlier one and on the floor in turn, then does the clicks in
    one tab of each, so the two apps are measured under the same load (the floor's numbers are shared)."""
    pages = [p for p in args.pages.split(",") if p]
    after, before = Measured(list(pages)), Measured(list(pages))
    env = {root: bench_environment(root / "checkpoints", scratch / root.name) for root in (args.app_root, args.before_root)}
    floor_root = write_floor_app(scratch / "floor")
    with chromium() as browser, AppServer(env[args.app_root], scratch / "after.log", args.app_root) as now, \
            AppServer(env[args.before_root], scratch / "before.log", args.before_root) as earlier, \
            AppServer(env[args.app_root], scratch / "floor.log", floor_root) as floor:
        context = browser.new_context(viewport=VIEWPORT)
        for server in (now, earlier):
            for page in dict.fromkeys(["Home", "Error_analysis", "Pair_explorer", "Gates", "Attribution", *pages]):
                visit(context, page_url(server, page))  # the server warm for these pages, as after a first visit
        visit(context, floor.url)
        visit(context, floor_url(floor, "other"))
        for _ in range(args.warm):
            for page in pages:
                for measured, server in ((after, now), (before, earlier)):
                    measured.warm.setdefault(page, []).append(visit(context, page_url(server, page)))
                floor_visit = visit(context, floor_url(floor, page))
                for measured in (after, before):
                    measured.floor_warm.setdefault(page, []).append(floor_visit)
            for measured, server in ((after, now), (before, earlier)):
                for action, timed in interactions(context, server).items():
                    measured.clicked.setdefault(action, []).extend(timed)
            for action, timed in floor_interactions(context, floor).items():
                for measured in (after, before):
                    measured.floor_clicked.setdefault(action, []).extend(timed)
            for measured in (after, before):
                measured.loads.append(os.getloadavg()[0])
    return after, before


def median(values) -> float | None:
    values = list(values)
    return statistics.median(values) if values else None


def seconds(value: float | None, signed: bool = False) -> str:
    return "—" if value is None else f"{value:+.2f}" if signed else f"{value:.2f}"


def minus(first: float | None, second: float | None) -> float | None:
    return None if first is None or second is None else first - second


ACTION_FLOOR = {"switch to": ("switch",), "Error analysis tab": ("rerun",), OPEN_PAIR: ("rerun", "switch"),
                NEXT_PAIR: ("rerun",)}
"""Which of the floor's clicks each action is read against: a sidebar switch against its switch; a tab and Next
(one rerun of the page) against its button; opening a pair from a list (the list's rerun, then the explorer's
page) against its button plus its switch."""
ACTION_TARGET = {"switch to": 0.5, "Error analysis tab": 0.5, OPEN_PAIR: 0.7, NEXT_PAIR: 0.7}
"""Issue 30's targets for nlivis − floor, in seconds (Next: as opening a pair)."""


def page_lines(measured: Measured) -> list[str]:
    """Per page: cold and warm (drawn) for nlivis and the floor, nlivis − floor; the first page after a launch
    against 8 s, warm − floor against 0.5 s."""
    lines = ["| page | cold: nlivis / floor / − floor (s) | warm: nlivis script / all shown (s) | warm: floor (s) | "
             "warm − floor (s) | targets: cold ≤ 8 s, warm − floor ≤ 0.5 s | received (kB) | figures |",
             "|---|---|---|---|---|---|---|---|"]
    for page in measured.pages:
        ws = measured.warm[page]
        cold = measured.cold[page].ready_s if page in measured.cold else None
        floor_cold = measured.floor_cold[page].ready_s if page in measured.floor_cold else None
        floor_warm = median(v.ready_s for v in measured.floor_warm.get(page, []))
        ready = median(v.ready_s for v in ws)
        over = minus(ready, floor_warm)
        missed = [name for name, bad in (("cold", cold is not None and cold > 8),
                                         ("warm", over is not None and over > 0.5)) if bad]
        verdict = "—" if over is None else "met" if not missed else "missed: " + ", ".join(missed)
        problems = sorted({p[:80] for v in ws for p in v.problems})
        lines.append(f"| {page.replace('_', ' ')} | {seconds(cold)} / {seconds(floor_cold)} / "
                     f"{seconds(minus(cold, floor_cold), True)} | {median(v.script_s for v in ws):.2f} / "
                     f"{ready:.2f} | {seconds(floor_warm)} | {seconds(over, True)} | {verdict}"
                     f"{' — exception: ' + problems[0] if problems else ''} | "
                     f"{median(v.received_kb for v in ws):.0f} | {max(len(v.figures) for v in ws)} |")
    return lines


def action_lines(measured: Measured) -> list[str]:
    """Per action inside one tab: nlivis's median, the floor's clicks it is read against, the difference."""
    lines = ["| action | nlivis median (s) | slowest (s) | floor (s) | − floor (s) | target − floor |",
             "|---|---|---|---|---|---|"]
    for action, timed in measured.clicked.items():
        kind = action_kind(action)
        floor = action_floor(action, measured)
        over = minus(median(timed), floor)
        verdict = "—" if over is None else ("met" if over <= ACTION_TARGET[kind] else "missed")
        lines.append(f"| {action} | {seconds(median(timed))} | {seconds(max(timed) if timed else None)} | "
                     f"{seconds(floor)} | {seconds(over, True)} | ≤ {ACTION_TARGET[kind]} s: {verdict} |")
    return lines


def action_kind(action: str) -> str:
    """The `ACTION_FLOOR` / `ACTION_TARGET` key an action's name starts with."""
    return next(kind for kind in ACTION_FLOOR if action.startswith(kind))


def action_floor(action: str, measured: Measured) -> float | None:
    """The floor's seconds `action` is read against (`ACTION_FLOOR`: its median sidebar switch, rerun, or both
    added), None when the floor was not measured."""
    parts = [median(measured.floor_clicked.get(name, [])) for name in ACTION_FLOOR[action_kind(action)]]
    return None if None in parts else sum(parts)


def tables(measured: Measured, commit: str, warm: int) -> list[str]:
    """The pages cold and warm, the clicks inside one tab (each beside the floor with `--floor`), and the figures
    that dominate."""
    load = os.getloadavg()
    launch, floor_launch = median(measured.launches), median(measured.floor_launches)
    floor_note = ("Floor: `--floor`'s stand-in (the router with its list hidden, two pages of a title, a line and a "
                  "button, sidebar page links; no nlivis code), served beside nlivis and visited in the same rounds: "
                  "each floor number is read against the nlivis numbers of its round. For the clicks, the floor's "
                  "sidebar switch and its button's rerun (opening a pair: both, as it is a rerun and a page).")
    return [f"Browser speed, five shipped snli-small models, app at {commit} ({os.cpu_count()} CPUs, load average "
            f"{load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} at the end, median 1-min load "
            f"{seconds(median(measured.loads))} over the warm rounds; headless Chromium {VIEWPORT['width']}×"
            f"{VIEWPORT['height']}; medians of {warm})", "",
            f"Launch to Home idle: {seconds(launch)} s, floor {seconds(floor_launch)} s, − floor "
            f"{seconds(minus(launch, floor_launch), True)} s (median of {len(measured.launches)})", "",
            *([floor_note, ""] if measured.floor_launches else []), *page_lines(measured), "",
            f"Inside one tab of a warm server (median of {warm} tabs; from the click until the run ended, every "
            "chart drew and no element waited for its code):", "", *action_lines(measured), *figure_table(measured)]


def figure_table(measured: Measured) -> list[str]:
    """Per page, the three charts drawn last in the visit that drew the most (the cold one on a tie): what a
    page's "drawn" waits for."""
    lines = ["", "Charts drawn last (from the visit that drew the most charts, the cold one on a tie; at most three per "
             "page; a chart is named by its key, or by its place on the page when it takes no clicks):", "",
             "| page | chart | kind | drawn at (s) |", "|---|---|---|---|"]
    for page in measured.pages:
        visits = ([measured.cold[page]] if page in measured.cold else []) + measured.warm[page]
        seen = max((v.figures for v in visits), key=len)
        for figure in sorted(seen, key=lambda f: -(f["drawn"] or 0))[:3]:
            drawn = f"{figure['drawn'] / 1000:.2f}" if figure["drawn"] else "—"
            lines.append(f"| {page.replace('_', ' ')} | {figure['key']} | {figure['types']} | {drawn} |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--warm", type=int, default=3, help="warm visits per page, median reported (default 3)")
    parser.add_argument("--launches", type=int, default=3, help="server launches timed to Home idle (default 3)")
    parser.add_argument("--pages", default=",".join(PAGES), help="comma-separated url paths (default: every page)")
    parser.add_argument("--app-root", type=Path, default=ROOT, help="the checkout whose app.py is run (default: this one)")
    parser.add_argument("--no-prime", action="store_true", help="skip the pass that fills the disk caches first")
    parser.add_argument("--warm-only", action="store_true",
                        help="no launches and no cold pages: one warm server (and floor), every page in rounds")
    parser.add_argument("--floor", action="store_true",
                        help="also time a one-title Streamlit page the same way: what any page costs on this machine")
    parser.add_argument("--before-root", type=Path, default=None,
                        help="warm only: also serve this earlier checkout and measure it in the same rounds, "
                             "with the floor (e.g. `git archive <commit> | tar -x -C /tmp/before`)")
    add_out_option(parser)
    args = parser.parse_args()
    require_chromium()
    scratch = Path(tempfile.mkdtemp(prefix="nlivis-browser-speed-"))
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=args.app_root, capture_output=True,
                            text=True).stdout.strip() or str(args.app_root)
    if args.before_root is None:
        publish(tables(measure(args, scratch), commit, args.warm), args.out)
        return
    after, before = measure_against(args, scratch)
    publish([command_line("this app and the earlier one in the same rounds, with the floor"), "",
             f"**This app ({commit})**", "", *tables(after, commit, args.warm), "",
             f"**Before ({args.before_root})**", "", *tables(before, str(args.before_root), args.warm)], args.out)

if __name__ == "__main__":
    main()
