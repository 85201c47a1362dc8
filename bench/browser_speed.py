"""How fast the app feels in a real browser: every page opened by URL with the five shipped snli-small models.

    OMP_NUM_THREADS=1 python bench/browser_speed.py [--warm 3] [--pages Home,Gates] [--floor] [--out bench/results/browser_speed.md]

Starts `streamlit run app.py` (as the README does), drives Debian's Chromium headless through Playwright and, per page:
  * cold: a freshly started server, the page's URL opened first (nothing in the server's memory yet; the disk
    caches — spaCy analyses, projections — are those of a machine where every page was opened once before,
    which the priming pass below makes true);
  * warm: the same URL opened again in a new browser tab (a new Streamlit session on the warm server), median
    of `--warm` visits.
All visits share one browser profile, as a user's do: Streamlit's and plotly's JavaScript come from the browser
cache after the priming pass. A visit ends when Streamlit's script state is `notRunning` (its running indicator is
gone) and every plotly chart on the page has drawn its SVG; "script" is when the first full run of the page ended
(a timer fragment that fills in later, such as the explorer's tags, does not count), "drawn" when the last chart
finished. Launch is a new server process from spawn until Home is idle. A second table times what a reader
does inside one tab of a warm server (median of `--warm`): switching page by the sidebar, each tab of Error
analysis, and opening a pair from Error analysis's list of errors (click on a line until the Pair explorer has
drawn) — from the click until the script is done and every chart drawn. A third table lists, per page, the
figures that dominate: the largest by the JSON plotly receives, with when each was drawn.
`--floor` times a one-title Streamlit page the same way, so each number can be read against what any page costs
on the machine. `--app-root` measures another checkout of the app (e.g. `git archive <commit> | tar -x -C /tmp/base`).
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from browser import CHROMIUM, AppServer, app_environment, chromium
from harness import ROOT, SHIPPED, add_out_option, publish

from nlivis.app import paths

PAGES = tuple(page.url_path for page in paths.PAGES)
VIEWPORT = {"width": 1600, "height": 1000}
TIMEOUT_S = 300.0

RECORDER = """
(() => {
  window.__nlivis = {states: [], drawn: {}};
  const seen = () => {
    const app = document.querySelector('[data-testid="stApp"]');
    if (app) {
      const state = app.getAttribute('data-test-script-state');
      const last = window.__nlivis.states[window.__nlivis.states.length - 1];
      if (!last || last[1] !== state) window.__nlivis.states.push([performance.now(), state]);
    }
    document.querySelectorAll('[data-testid="stPlotlyChart"]').forEach((chart, i) => {
      const holder = chart.closest('[class*="st-key-chart_"]');
      const key = holder ? [...holder.classList].find(c => c.startsWith('st-key-chart_')).slice(13) : 'chart ' + i;
      if (!(key in window.__nlivis.drawn) && chart.querySelector('.main-svg')) window.__nlivis.drawn[key] = performance.now();
    });
  };
  new MutationObserver(seen).observe(document, {subtree: true, childList: true, attributes: true,
                                                attributeFilter: ['data-test-script-state']});
})();
"""
"""Installed in every tab before the page loads: records each change of Streamlit's script state and when each
plotly chart first has its SVG, in ms since the navigation started."""

SETTLED = """
() => {
  const app = document.querySelector('[data-testid="stApp"]');
  if (!app || !window.__nlivis) return false;
  const states = window.__nlivis.states;
  const last = states[states.length - 1];
  if (!last || last[1] !== 'notRunning' || !states.some(s => s[1] === 'running')) return false;
  if (performance.now() - last[0] < 1000) return false;  // a rerun (a switch_page, a fragment) may follow
  const charts = document.querySelectorAll('[data-testid="stPlotlyChart"]');
  return [...charts].every(c => c.querySelector('.main-svg'));
}
"""

SETTLED_AFTER = """
(since) => {
  const app = document.querySelector('[data-testid="stApp"]');
  if (!app || !window.__nlivis) return false;
  const states = window.__nlivis.states;
  const last = states[states.length - 1];
  if (!last || last[1] !== 'notRunning' || !states.some(s => s[0] >= since && s[1] === 'running')) return false;
  if (performance.now() - last[0] < 1000) return false;
  return [...document.querySelectorAll('[data-testid="stPlotlyChart"]')].every(c => c.querySelector('.main-svg'));
}
"""
"""After a click at `since` (ms): a run started after it has ended, nothing ran for a second, every chart drew."""

ERROR_TABS = ("Accuracy and confusions", "Every error", "By annotation tag (Table 7)", "Challenge set")

FIGURES = """
() => [...document.querySelectorAll('[data-testid="stPlotlyChart"] .js-plotly-plot')].map((gd, i) => {
  const holder = gd.closest('[class*="st-key-chart_"]');
  const key = holder ? [...holder.classList].find(c => c.startsWith('st-key-chart_')).slice(13) : 'chart ' + i;
  let size = 0;
  try { size = JSON.stringify(gd.data).length + JSON.stringify(gd.layout).length; } catch (e) {}
  return {key, traces: (gd.data || []).length, bytes: size, drawn: window.__nlivis.drawn[key] || null,
          types: [...new Set((gd.data || []).map(t => t.type || 'scatter'))].join('+')};
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
        states = page.evaluate("() => window.__nlivis.states")
        started = next(t for t, state in states if state == "running")
        script_ms = next(t for t, state in states if state == "notRunning" and t > started)
        figures = page.evaluate(FIGURES)
        drawn_ms = max([f["drawn"] or 0 for f in figures] or [0])
        problems = page.locator('[data-testid="stException"]').all_inner_texts()
        return Visit(script_ms / 1000, drawn_ms / 1000, received[0] / 1024, figures, problems)
    finally:
        page.close()


def after_click(page, click, title: str | None = None) -> float:
    """Seconds from `click()` until the run it starts has ended and every chart is drawn (script state and
    charts as the recorder saw them; the last chart's first SVG or the script's end, whichever is later); with
    `title`, not before that page's title shows (a switch first reruns the page it leaves)."""
    since = page.evaluate("() => performance.now()")
    click()
    if title:
        page.wait_for_function("t => document.querySelector('h1') && document.querySelector('h1').innerText.includes(t)",
                               arg=title, timeout=TIMEOUT_S * 1000, polling=100)
    page.wait_for_function(SETTLED_AFTER, arg=since, timeout=TIMEOUT_S * 1000, polling=100)
    states = page.evaluate("() => window.__nlivis.states")
    ended = max(t for t, state in states if state == "notRunning" and t >= since)
    drawn = page.evaluate("since => Math.max(0, ...Object.values(window.__nlivis.drawn).filter(t => t >= since))", since)
    return (max(ended, drawn) - since) / 1000


def interactions(context, server: AppServer, repeats: int) -> dict[str, list[float]]:
    """What a reader waits for inside one tab: sidebar switches, Error analysis's tabs, a pair opened from its list
    of errors (each in a fresh tab of the warm server, `repeats` times)."""
    timed: dict[str, list[float]] = {}
    for _ in range(repeats):
        page = context.new_page()
        page.add_init_script(RECORDER)
        try:
            page.goto(page_url(server, "Home"), wait_until="commit", timeout=TIMEOUT_S * 1000)
            page.wait_for_function(SETTLED, timeout=TIMEOUT_S * 1000, polling=100)
            for target in ("Pair explorer", "Gates", "Attribution", "Error analysis"):
                link = page.locator('[data-testid="stSidebar"] [data-testid="stPageLink"] a', has_text=target).first
                timed.setdefault(f"switch to {target} (sidebar)", []).append(after_click(page, link.click, target))
            for tab in (*ERROR_TABS[1:3], ERROR_TABS[0]):
                button = page.get_by_role("tab", name=tab)
                timed.setdefault(f"Error analysis tab: {tab}", []).append(after_click(page, button.click))
            page.get_by_role("tab", name=ERROR_TABS[1]).click()
            page.wait_for_selector(".st-key-errors_wrong_pairs_table [data-testid='stDataFrame']", timeout=TIMEOUT_S * 1000)
            page.wait_for_function(SETTLED, timeout=TIMEOUT_S * 1000, polling=100)
            grid = page.locator(".st-key-errors_wrong_pairs_table [data-testid='stDataFrame']").first
            grid.scroll_into_view_if_needed()
            box = grid.bounding_box()
            timed.setdefault("open a pair from the list of errors", []).append(
                after_click(page, lambda: page.mouse.click(box["x"] + 14, box["y"] + 35 + 35 / 2), "Pair explorer"))
        except Exception as error:  # the pages' table is printed whatever happens here
            print(f"interactions stopped: {type(error).__name__}: {error}", file=sys.stderr)
            break
        finally:
            page.close()
    return timed


FLOOR_APP = {"app.py": 'import streamlit as st\nst.navigation([st.Page("home.py", title="Home", default=True)]).run()\n',
             "home.py": 'import streamlit as st\nst.title("Home")\nst.write("One line of text.")\n'}
"""The smallest app with nlivis's router shape: what Streamlit and the browser cost before any nlivis code runs."""


def streamlit_floor(context, env: dict, log: Path, folder: Path, warm: int, launches: int) -> dict[str, float]:
    """Launch, cold and warm times (medians) of `FLOOR_APP`, measured as the app's pages are."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in FLOOR_APP.items():
        (folder / name).write_text(text, encoding="utf-8")
    started: list[float] = []
    cold: list[float] = []
    warm_visits: list[float] = []
    for _ in range(launches):
        with AppServer(env, log, folder) as server:
            cold.append(visit(context, server.url).ready_s)
            started.append(time.perf_counter() - server.started)
            warm_visits += [visit(context, server.url).ready_s for _ in range(warm)]
    return {"launch": statistics.median(started), "cold": statistics.median(cold), "warm": statistics.median(warm_visits)}


def page_url(server: AppServer, page: str) -> str:
    models = ",".join(f"{m}-snli-small" for m in SHIPPED)
    return f"{server.url}/{'' if page == 'Home' else page}?models={models}"


@dataclass
class Measured:
    """What one run of this script measured, for `tables`."""
    pages: list[str]
    launches: list[float] = field(default_factory=list)
    cold: dict[str, Visit] = field(default_factory=dict)
    warm: dict[str, list[Visit]] = field(default_factory=dict)
    floor: dict[str, float] = field(default_factory=dict)
    clicked: dict[str, list[float]] = field(default_factory=dict)


def measure(args: argparse.Namespace, scratch: Path) -> Measured:
    """Priming, launches, each page cold and warm, the floor with `--floor`, and the clicks inside one tab."""
    measured = Measured([p for p in args.pages.split(",") if p])
    env = bench_environment(args.app_root / "checkpoints", scratch)
    log = scratch / "streamlit.log"
    with chromium() as browser:
        context = browser.new_context(viewport=VIEWPORT)
        if not args.no_prime:  # every page once, so disk caches (spaCy, projections) hold what a user's would
            with AppServer(env, log, args.app_root) as server:
                for page in measured.pages:
                    visit(context, page_url(server, page))
        for _ in range(args.launches):
            with AppServer(env, log, args.app_root) as server:
                visit(context, page_url(server, "Home").split("?")[0])
                measured.launches.append(time.perf_counter() - server.started)
        for page in measured.pages:
            with AppServer(env, log, args.app_root) as server:
                measured.cold[page] = visit(context, page_url(server, page))
                measured.warm[page] = [visit(context, page_url(server, page)) for _ in range(args.warm)]
            print(f"{page}: cold {measured.cold[page].ready_s:.1f} s, warm "
                  f"{statistics.median(v.ready_s for v in measured.warm[page]):.1f} s", file=sys.stderr)
        if args.floor:
            measured.floor = streamlit_floor(context, env, log, scratch / "floor", args.warm, args.launches)
        with AppServer(env, log, args.app_root) as server:
            for page in ("Home", "Error_analysis", "Pair_explorer", "Gates", "Attribution"):
                visit(context, page_url(server, page))  # the server warm for these pages, as after a first visit
            measured.clicked = interactions(context, server, args.warm)
    return measured


def tables(measured: Measured, commit: str, warm: int) -> list[str]:
    """The three tables: pages cold and warm, the clicks inside one tab, the figures that dominate."""
    load = os.getloadavg()
    floor = measured.floor
    lines = [f"Browser speed, five shipped snli-small models, app at {commit} ({os.cpu_count()} CPUs, load average "
             f"{load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} at the end, headless Chromium {VIEWPORT['width']}×"
             f"{VIEWPORT['height']})", "",
             f"Launch to Home idle: {statistics.median(measured.launches):.1f} s (median of {len(measured.launches)}; "
             "target ≤ 3 s)", "",
             *([f"Streamlit's floor on this machine (`--floor`: a page with one title and one line, no nlivis, timed "
                f"the same way): launch to idle {floor['launch']:.1f} s, cold {floor['cold']:.2f} s, warm "
                f"{floor['warm']:.2f} s", ""] if floor else []),
             "| page | cold: script / drawn (s) | warm: script / drawn (s) | target cold ≤ 3 s, warm ≤ 1 s | "
             "received (kB) | figures |", "|---|---|---|---|---|---|"]
    for page in measured.pages:
        c, ws = measured.cold[page], measured.warm[page]
        w_script = statistics.median(v.script_s for v in ws)
        w_ready = statistics.median(v.ready_s for v in ws)
        met = ("met" if c.ready_s <= 3 and w_ready <= 1 else
               "missed: " + ", ".join(p for p, bad in (("cold", c.ready_s > 3), ("warm", w_ready > 1)) if bad))
        problems = f" — exception: {c.problems[0][:80]}" if c.problems else ""
        lines.append(f"| {page.replace('_', ' ')} | {c.script_s:.2f} / {c.ready_s:.2f} | {w_script:.2f} / {w_ready:.2f} | "
                     f"{met}{problems} | {statistics.median(v.received_kb for v in ws):.0f} | {len(c.figures)} |")
    lines += ["", f"Inside one tab of a warm server (median of {warm}; from the click until the run ended and every "
              "chart drew):", "", "| action | median (s) | slowest (s) | target ≤ 1 s |", "|---|---|---|---|"]
    for action, seconds in measured.clicked.items():
        if not seconds:
            lines.append(f"| {action} | — | — | not measured (the click failed) |")
            continue
        lines.append(f"| {action} | {statistics.median(seconds):.2f} | {max(seconds):.2f} | "
                     f"{'met' if statistics.median(seconds) <= 1 else 'missed'} |")
    return lines + figure_table(measured)


def figure_table(measured: Measured) -> list[str]:
    """Per page, the three largest figures (by plotly JSON) of the visit that drew the most, the cold one on a tie."""
    lines = ["", "Figures that dominate (from the visit that drew the most figures, the cold one on a tie; largest plotly "
             "JSON first, at most three per page):", "",
             "| page | figure (chart key) | traces | JSON (kB) | drawn at (s) |", "|---|---|---|---|---|"]
    for page in measured.pages:
        seen = max((v.figures for v in (measured.cold[page], *measured.warm[page])), key=len)
        figures = sorted(seen, key=lambda f: -f["bytes"])[:3]
        for figure in figures:
            drawn = f"{figure['drawn'] / 1000:.2f}" if figure["drawn"] else "—"
            lines.append(f"| {page.replace('_', ' ')} | {figure['key']} ({figure['types']}) | {figure['traces']} | "
                         f"{figure['bytes'] / 1024:.0f} | {drawn} |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--warm", type=int, default=3, help="warm visits per page, median reported (default 3)")
    parser.add_argument("--launches", type=int, default=3, help="server launches timed to Home idle (default 3)")
    parser.add_argument("--pages", default=",".join(PAGES), help="comma-separated url paths (default: every page)")
    parser.add_argument("--app-root", type=Path, default=ROOT, help="the checkout whose app.py is run (default: this one)")
    parser.add_argument("--no-prime", action="store_true", help="skip the pass that fills the disk caches first")
    parser.add_argument("--floor", action="store_true",
                        help="also time a one-title Streamlit page the same way: what any page costs on this machine")
    add_out_option(parser)
    args = parser.parse_args()
    if not CHROMIUM.is_file():
        sys.exit(f"needs Debian's chromium at {CHROMIUM}")
    measured = measure(args, Path(tempfile.mkdtemp(prefix="nlivis-browser-speed-")))
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=args.app_root, capture_output=True,
                            text=True).stdout.strip() or str(args.app_root)
    publish(tables(measured, commit, args.warm), args.out)

if __name__ == "__main__":
    main()
