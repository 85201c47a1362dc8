"""What the charts cost a page in the browser: this checkout against the same code with every chart left out, served
side by side with Streamlit's floor and measured in the same rounds; then one page switched to again and again in
one tab, to show how much of a chart page's time is the browser running Vega's code for the first time in a tab.

    OMP_NUM_THREADS=1 python bench/chart_share.py [--pages Pair_explorer,Gates] [--warm 3] [--repeats 5]
        [--out bench/results/chart_share.md]

The chartless copy is `git archive HEAD` of this checkout with one change: `figures.show` (the one place that
draws a chart, `nlivis/app/components/figures.py`) returns before drawing, so its page runs the same script,
computes and caches the same figures, and sends everything but the charts (and their two download buttons). Both
are measured by `bench/browser_speed.py`'s A/B rounds (`measure_against`: each page by URL in a new tab, the
reader's clicks in one tab, the floor's page and clicks in the same rounds); the table puts nlivis − floor with
and without charts side by side. The second table opens Home in one tab, then switches to `--switch-page` by the
sidebar and back to Home `--repeats` times, timing each switch to the page (from the click until the run ended and
every chart drew): the first switch in a tab runs Vega-Lite's compiler and Vega's dataflow as code V8 has not yet
optimised in that tab; later switches draw the same charts with warm code.
"""
from __future__ import annotations

import argparse
import subprocess
import tempfile
from pathlib import Path

import browser_speed
from browser import AppServer, chromium, require_chromium
from harness import ROOT, add_out_option, command_line, load_average, publish

FIGURES = Path("nlivis/app/components/figures.py")
DRAWS = '    name = clean_file_name(filename or key)\n'
"""The first line of `figures.show`'s body, before which the chartless copy returns."""
LEFT_OUT = '    return None  # bench/chart_share.py: this copy draws no chart\n'
DEFAULT_PAGES = "Pair_explorer,Gates,Error_analysis,Ablations,Projection,Attribution,DIIN_interaction_space,Data_map"


def chartless_copy(folder: Path) -> Path:
    """This checkout's HEAD in `folder`, with `figures.show` returning before it draws anything (RuntimeError
    when `figures.show` no longer has the line this patch expects, so a stale patch cannot pass unnoticed)."""
    folder.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(["git", "archive", "HEAD"], cwd=ROOT, capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    path = folder / FIGURES
    text = path.read_text(encoding="utf-8")
    if text.count(DRAWS) != 1:
        raise RuntimeError(f"{FIGURES}: `show` no longer starts with {DRAWS.strip()!r}; update bench/chart_share.py")
    path.write_text(text.replace(DRAWS, LEFT_OUT + DRAWS), encoding="utf-8")
    return folder


def repeated_switches(root: Path, target: str, repeats: int, scratch: Path) -> list[float]:
    """Seconds of each of `repeats` sidebar switches from Home to `target` (a page title) in one tab of a warm
    server of `root`, back to Home between them."""
    env = browser_speed.bench_environment(root / "checkpoints", scratch)
    with chromium() as browser, AppServer(env, scratch / "switches.log", root) as server:
        context = browser.new_context(viewport=browser_speed.VIEWPORT)
        browser_speed.visit(context, browser_speed.page_url(server, target.replace(" ", "_")))  # warm the server
        page = context.new_page()
        page.add_init_script(browser_speed.RECORDER)
        page.goto(browser_speed.page_url(server, "Home"), wait_until="commit")
        page.wait_for_function(browser_speed.SETTLED, timeout=browser_speed.TIMEOUT_S * 1000, polling=100)
        sidebar = page.locator('[data-testid="stSidebar"] [data-testid="stPageLink"] a')
        timed = []
        for _ in range(repeats):
            timed.append(browser_speed.after_click(page, sidebar.filter(has_text=target).first.click, target))
            browser_speed.after_click(page, sidebar.filter(has_text="Home").first.click)
        return timed


def share_table(with_charts: browser_speed.Measured, without: browser_speed.Measured) -> list[str]:
    """Per page and per click: nlivis − floor with and without charts, and their difference (the charts' share)."""
    lines = ["| what (warm; medians) | with charts − floor (s) | without charts − floor (s) | charts' share (s) |",
             "|---|---:|---:|---:|"]

    def row(what: str, full: float | None, bare: float | None) -> None:
        lines.append(f"| {what} | {browser_speed.seconds(full, True)} | {browser_speed.seconds(bare, True)} | "
                     f"{browser_speed.seconds(browser_speed.minus(full, bare), True)} |")

    for page in with_charts.pages:
        floor = browser_speed.median(v.ready_s for v in with_charts.floor_warm.get(page, []))
        full, bare = (browser_speed.median(v.ready_s for v in m.warm.get(page, [])) for m in (with_charts, without))
        row(f"{page.replace('_', ' ')} by URL, new tab", browser_speed.minus(full, floor), browser_speed.minus(bare, floor))
    for action in with_charts.clicked:
        floor = browser_speed.action_floor(action, with_charts)
        full, bare = (browser_speed.median(m.clicked.get(action, [])) for m in (with_charts, without))
        row(action, browser_speed.minus(full, floor), browser_speed.minus(bare, floor))
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", default=DEFAULT_PAGES, help=f"comma-separated url paths (default {DEFAULT_PAGES})")
    parser.add_argument("--warm", type=int, default=3, help="A/B rounds, medians reported (default 3)")
    parser.add_argument("--switch-page", default="Pair explorer",
                        help="the page title switched to again and again in one tab (default: Pair explorer)")
    parser.add_argument("--repeats", type=int, default=5, help="switches to that page in one tab (default 5)")
    add_out_option(parser)
    args = parser.parse_args()
    require_chromium()
    header = load_average("start")
    with tempfile.TemporaryDirectory(prefix="nlivis-chart-share-") as folder:  # the copy holds the checkpoints
        scratch = Path(folder)
        bare_root = chartless_copy(scratch / "chartless")
        options = argparse.Namespace(pages=args.pages, warm=args.warm, app_root=ROOT, before_root=bare_root)
        with_charts, without = browser_speed.measure_against(options, scratch)
        switches = repeated_switches(ROOT, args.switch_page, args.repeats, scratch)
    publish([command_line("this checkout and its chartless copy served side by side with the floor, same rounds"),
             header, load_average("end"), "", *share_table(with_charts, without), "",
             f"Switching to {args.switch_page} by the sidebar again and again in one tab (Home in between), "
             "with charts, each switch's seconds in order: " + ", ".join(f"{s:.2f}" for s in switches)], args.out)


if __name__ == "__main__":
    main()
