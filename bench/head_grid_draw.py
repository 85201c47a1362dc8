"""How long the Pair explorer takes to draw one pair's MiniLM attention in Chromium: the app of an earlier commit
(a heatmap per trace entry) against this checkout's (one layer × head grid), same pair, same checkpoints.

    OMP_NUM_THREADS=1 python bench/head_grid_draw.py [--checkpoints /tmp/ckpt] [--before 0625f75] [--warm 3]
        [--screenshot docs/screenshots/minilm_heads.png] [--out bench/results/head-grid-draw.md]

`--checkpoints` is a folder holding a MiniLM checkpoint (`--minilm`, default minilm-snli-small), searched before
this checkout's checkpoints/ (where `--other`, default esan-snli-small, is). Per app (the `--before` commit
extracted with `git archive`, then the working tree) on a freshly started server (bench/browser.py), the Pair
explorer is opened at `split=snli_dev&pair=N&models=MINILM,OTHER` (MiniLM's section is the first, open by itself;
were it not, the click that opens it would be added) and timed from the navigation until the run ended and every
chart drew (bench/browser_speed.py's recorder): cold (the first opening on the server) and warm (median of `--warm` fresh
tabs). In the working tree's app a thumbnail of the grid is also clicked, and the time until the head is drawn
large is reported with the `head=` the URL then holds. With `--screenshot`, MiniLM's section is saved as a PNG.
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from browser import AppServer, app_environment, chromium, require_chromium
from browser_speed import FIGURES, RECORDER, SETTLED, after_click
from harness import ROOT, add_out_option, command_line, load_average, publish

VIEWPORT = {"width": 1600, "height": 1000}
HANG_GUARD_S = 1200.0
"""How long one page may take to settle before it counts as hung: the earlier app's 294 heatmaps took minutes on
a loaded two-core machine. A guard against waiting forever, not a speed limit."""


def app_checkout(commit: str, folder: Path) -> Path:
    """The whole app (app.py, pages/, nlivis/, configs/ …) as it was at `commit`, extracted into `folder`."""
    archive = subprocess.run(["git", "archive", commit], cwd=ROOT, check=True, capture_output=True).stdout
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    return folder


def opened(context, url: str, model: str):
    """A new tab at `url`, settled, `model`'s section open (the first model's is open by itself; another's is
    clicked open): (seconds until every chart drew, the figures on the page, the tab, left open for the caller)."""
    page = context.new_page()
    page.add_init_script(RECORDER)
    page.goto(url, wait_until="commit", timeout=HANG_GUARD_S * 1000)
    page.wait_for_function(SETTLED, timeout=HANG_GUARD_S * 1000, polling=100)
    states = page.evaluate("() => window.__nlivis.states")
    seconds = max([t for t, state in states if state == "notRunning"] +
                  list(page.evaluate("() => Object.values(window.__nlivis.drawn)"))) / 1000
    section = page.locator('[data-testid="stExpander"] details', has_text=model).first
    section.wait_for()
    if not section.evaluate("details => details.open"):
        summary = section.locator("summary").first
        summary.scroll_into_view_if_needed()
        seconds += after_click(page, summary.click)
    return seconds, page.evaluate(FIGURES), page


def pick_a_head(page, model_index: int) -> tuple[float, str]:
    """Click the grid's thumbnail of layer 2, head 3 (a plotly grid: on its invisible marker; a Vega-Lite one: on a
    cell of it, found by the description Vega gives each cell): (seconds until drawn, head= in the URL afterwards)."""
    key = f"heads_{model_index}"
    if page.locator(f".st-key-chart_{key} .js-plotly-plot").count():
        page.locator(f".st-key-chart_{key} .js-plotly-plot").first.scroll_into_view_if_needed()
        point = page.evaluate("""key => {
            const gd = document.querySelector(`.st-key-chart_${key} .js-plotly-plot`);
            const markers = gd.data[1], i = markers.customdata.findIndex(c => c[0] === 2 && c[1] === 3);
            const xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis, box = gd.getBoundingClientRect();
            return {x: box.left + xa._offset + xa.l2p(markers.x[i]), y: box.top + ya._offset + ya.l2p(markers.y[i])};
        }""", key)
    else:
        cell = page.locator(f".st-key-chart_{key} svg.marks path[aria-label*='layer: 2; head: 3;']").first
        cell.scroll_into_view_if_needed()
        box = cell.bounding_box()
        point = {"x": box["x"] + box["width"] / 2, "y": box["y"] + box["height"] / 2}
    seconds = after_click(page, lambda: page.mouse.click(point["x"], point["y"]))
    head = page.evaluate("() => new URLSearchParams(window.location.search).get('head')")
    return seconds, head or "(none)"


def measure_app(name: str, app_root: Path, env: dict, url_query: str, args, rows: list[str], scratch: Path) -> None:
    with AppServer(env, scratch / f"{name}.log", app_root) as server, chromium() as browser:
        context = browser.new_context(viewport=VIEWPORT)
        context.set_default_timeout(HANG_GUARD_S * 1000)
        url = f"{server.url}/Pair_explorer?{url_query}"
        cold, figures, page = opened(context, url, args.minilm)
        print(f"{name}: cold {cold:.2f} s, {len(figures)} charts", file=sys.stderr, flush=True)
        page.close()
        warm, picks = [], []
        for _ in range(args.warm):
            seconds, figures, page = opened(context, url, args.minilm)
            print(f"{name}: warm {seconds:.2f} s", file=sys.stderr, flush=True)
            warm.append(seconds)
            if page.locator(".st-key-chart_heads_1, .st-key-chart_heads_0").count():
                picks.append(pick_a_head(page, 1 if page.locator(".st-key-chart_heads_1").count() else 0))
            if args.screenshot and name == "working tree" and len(warm) == args.warm:
                screenshot(page, args.minilm, args.screenshot)
            page.close()
        heatmaps = sum(1 for f in figures if "heatmap" in f["types"])
        kilobytes = sum(f["bytes"] for f in figures) / 1024
        pick = (f"{statistics.median(s for s, _ in picks):.2f} s (URL then says head={picks[-1][1]})" if picks
                else "— (no grid)")
        rows.append(f"| {name} | {cold:.2f} | {statistics.median(warm):.2f} | {len(figures)} | {heatmaps} | "
                    f"{kilobytes:,.0f} | {pick} |")
        print(rows[-1], file=sys.stderr, flush=True)


def screenshot(page, model: str, path: Path) -> None:
    """MiniLM's section (the grid, the picked head large and the rollout) as one PNG."""
    section = page.locator('[data-testid="stExpander"]', has_text=model).first
    height = section.bounding_box()["height"]
    page.set_viewport_size({"width": VIEWPORT["width"], "height": int(max(VIEWPORT["height"], height + 400))})
    page.wait_for_timeout(1500)  # a plotly chart redraws at the new size
    section.scroll_into_view_if_needed()
    page.mouse.move(0, 0)
    path.parent.mkdir(parents=True, exist_ok=True)
    section.screenshot(path=str(path))
    page.set_viewport_size(VIEWPORT)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--checkpoints", type=Path, default=ROOT / "checkpoints",
                        help="folder holding the MiniLM checkpoint (default: this checkout's checkpoints/)")
    parser.add_argument("--minilm", default="minilm-snli-small")
    parser.add_argument("--other", default="esan-snli-small", help="a second model, from this checkout's checkpoints/")
    parser.add_argument("--before", default=None, help="the commit whose app is measured first (default: none)")
    parser.add_argument("--pair", default="3", help="the snli_dev row (0-based)")
    parser.add_argument("--warm", type=int, default=3)
    parser.add_argument("--screenshot", type=Path, default=None)
    add_out_option(parser)
    args = parser.parse_args()
    require_chromium()
    scratch = Path(tempfile.mkdtemp(prefix="nlivis-head-grid-"))
    env = {**app_environment([args.checkpoints.resolve(), ROOT / "checkpoints"], scratch / "runs"), "OMP_NUM_THREADS": "1"}
    query = f"split=snli_dev&pair={args.pair}&models={args.minilm},{args.other}"
    rows = [command_line(f"headless Chromium {VIEWPORT['width']}×{VIEWPORT['height']}, a fresh server per app"), "",
            f"Pair explorer at `{query}`, {args.minilm}'s section open: from the navigation until the run ended and "
            "every chart drew", "",
            "| app | cold (s) | warm, median (s) | charts on the page | of them heatmaps | plotly JSON (kB) | "
            "pick a head by a click, median |", "|---|---|---|---|---|---|---|"]
    apps = [("working tree", ROOT)]
    if args.before:
        apps.insert(0, (f"before ({args.before})", app_checkout(args.before, scratch / "before")))
    for name, root in apps:
        measure_app(name, root, env, query, args, rows, scratch)
    publish(rows + ["", load_average("the end")], args.out)


if __name__ == "__main__":
    main()
