"""What Chromium spends on a page's charts, in the renderer's CPU time (robust to the machine's load).

    OMP_NUM_THREADS=1 python bench/chart_draw.py [--pages Pair_explorer,Gates,Error_analysis,Data_map]
        [--repeats 3] [--before-root DIR] [--clicks 2] [--alone 3] [--screenshots DIR] [--save-figures FILE]
        [--out FILE]

Starts the app (`streamlit run app.py`, five shipped snli-small models) and `browser_speed.FLOOR_APP` beside it,
warms each page once, then opens each page by URL in a new tab `--repeats` times, nlivis and the floor in turn
(with `--before-root`, an earlier checkout's app too, in the same rounds). Per visit, from Chrome's own
Performance metrics of the tab's renderer (DevTools protocol, read when the page has settled: the run ended and
every chart drew, bench/browser_speed.py's recorder): the main thread's CPU time (`ThreadTime`), the renderer
process's CPU (`ProcessTime`: raster and compositor threads too), and the main thread's task, script, layout and
style durations (wall time, so inflated by load, given for the split), and how many full plots its charts took
(plotly's `_doPlot`, counted in Streamlit's plotly bundle as the page gets it, `count_plots`); and the charts whose
axis labels needed wider margins than the layout gave, which plotly plots a second time.

With `--clicks N`, the reader's clicks (`browser_speed.reader_clicks`: sidebar switches, Error analysis's tabs, a
pair opened from the list of errors, Next) are walked N times in one tab of each app, each read the same way from
the click until its run ended and every chart drew (`browser_speed.after_click`).

With `--alone N`, every figure the page received (its plotly spec and config, decoded from Streamlit's messages)
is drawn by itself `N` times with `Plotly.newPlot` into a blank page at the size it had on the page, with the
template Streamlit's theme gave it there (plotly.js as bundled with the Python plotly package): the main
thread's CPU per figure, to say which figures dominate. With `--screenshots DIR`, each chart of the last nlivis visit is saved as a PNG.
"""
from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from pathlib import Path

from browser import AppServer, chromium, require_chromium
from browser_speed import (RECORDER, SETTLED, TIMEOUT_S, VIEWPORT, after_click, bench_environment, page_url,
                           reader_clicks, write_floor_app)
from harness import ROOT, add_out_option, command_line, load_average, publish

PAGES = ("Pair_explorer", "Gates", "Error_analysis", "Data_map")
METRICS = ("ThreadTime", "ProcessTime", "TaskDuration", "ScriptDuration", "LayoutDuration", "RecalcStyleDuration")

WIDTHS = """
() => Object.fromEntries([...document.querySelectorAll('[class*="st-key-chart_"] .js-plotly-plot')].map(gd => {
  const holder = gd.closest('[class*="st-key-chart_"]');
  const key = [...holder.classList].find(c => c.startsWith('st-key-chart_')).slice(13);
  const size = gd._fullLayout ? gd._fullLayout._size : {}, asked = (gd.layout || {}).margin || {};
  return [key, [gd._fullLayout ? gd._fullLayout.width : null, gd._fullLayout ? gd._fullLayout.height : null,
                JSON.stringify((gd.layout || {}).template || {}),
                ['l', 'r', 't', 'b'].map(side => [asked[side], Math.round(size[side])])]];
}))
"""

DRAW_ALONE = """
async ([data, layout, config, times]) => {
  const holder = document.createElement('div');
  document.body.appendChild(holder);
  window.__doPlots = 0;
  for (let i = 0; i < times; i++) {
    await Plotly.newPlot(holder, JSON.parse(JSON.stringify(data)), JSON.parse(JSON.stringify(layout)), config);
    await new Promise(resolve => requestAnimationFrame(() => requestAnimationFrame(resolve)));
    Plotly.purge(holder);
  }
  holder.remove();
  return window.__doPlots / times;
}
"""
"""Draws a figure `times` times; returns how many full plots (`_doPlot`) each draw took."""

DO_PLOT = "kt(e,t,r,i){var n;if(e=fi.getGraphDiv(e),xj.init(e),"
"""The start of plotly.js's `_doPlot` in the bundle Python's plotly ships (4.x): counted in the blank page, so a
figure whose automatic margins make plotly draw it again shows 2 plots per draw."""


def metrics(cdp) -> dict[str, float]:
    """The renderer's Performance metrics named in METRICS (seconds)."""
    values = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
    return {name: values.get(name, 0.0) for name in METRICS}


def plotly_elements(payloads: list[bytes]) -> list[dict]:
    """Each plotly chart in the received messages: its spec and config (JSON), in order."""
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    found = []
    for payload in payloads:
        message = ForwardMsg()
        message.ParseFromString(payload)
        if message.WhichOneof("type") != "delta" or message.delta.WhichOneof("type") != "new_element":
            continue
        element = message.delta.new_element
        if element.WhichOneof("type") == "plotly_chart":
            chart = element.plotly_chart
            found.append({"id": chart.id, "spec": chart.spec, "config": chart.config})
    return found


STREAMLIT_DO_PLOT = "function A(n,r,a,s){var l;if(n=i.getGraphDiv(n),o.init(n),"
"""The start of plotly.js's `_doPlot` in Streamlit's PlotlyChart bundle (Streamlit 1.67): the page's copy is
served with a counter added (`count_plots`), so a visit says how many full plots its charts took."""


def count_plots(context) -> None:
    """Serve Streamlit's plotly bundle to `context` with `window.__doPlots` counting every full plot."""
    def patched(route) -> None:
        response = route.fetch()
        body = response.text()
        counted = STREAMLIT_DO_PLOT.replace("{var l;", "{var l;window.__doPlots=(window.__doPlots||0)+1;")
        route.fulfill(response=response, body=body.replace(STREAMLIT_DO_PLOT, counted, 1))

    context.route("**/PlotlyChart.*.js", patched)


def visit(context, url: str, screenshots: Path | None = None) -> dict:
    """Open `url` in a new tab and wait until settled: the renderer's metrics, plots per chart, the charts'
    specs with the width each had."""
    page = context.new_page()
    page.add_init_script(RECORDER)
    cdp = context.new_cdp_session(page)
    cdp.send("Performance.enable", {"timeDomain": "threadTicks"})
    payloads: list[bytes] = []
    page.on("websocket", lambda socket: socket.on("framereceived", lambda payload: payloads.append(
        payload if isinstance(payload, bytes) else payload.encode())))
    try:
        before = metrics(cdp)
        page.goto(url, wait_until="commit", timeout=TIMEOUT_S * 1000)
        page.wait_for_function(SETTLED, timeout=TIMEOUT_S * 1000, polling=100)
        after = metrics(cdp)
        full_plots = page.evaluate("() => window.__doPlots || 0")
        widths = page.evaluate(WIDTHS)
        if screenshots is not None:  # a viewport as tall as the page, so that no chart is cut by scrolling
            height = page.evaluate("() => document.querySelector('[data-testid=\"stMain\"]').scrollHeight")
            page.set_viewport_size({"width": VIEWPORT["width"], "height": min(int(height) + 200, 16000)})
            page.wait_for_timeout(1500)
            for key in widths:
                page.locator(f".st-key-chart_{key} .js-plotly-plot").first.screenshot(
                    path=str(screenshots / f"{key}.png"))
    finally:
        cdp.detach()
        page.close()
    spent = {name: after[name] - (before[name] if after["ProcessTime"] >= before["ProcessTime"] else 0.0)
             for name in METRICS}
    return {"metrics": spent, "full_plots": full_plots, "widths": widths,
            "elements": plotly_elements(payloads)}


def clicks(context, server: AppServer) -> dict[str, tuple[float, float, int]]:
    """The reader's clicks in one tab of `server` (`browser_speed.reader_clicks`): per action, the renderer main
    thread's CPU from the click until the run ended and every chart drew (`after_click`), those seconds, and the
    full plots drawn."""
    page = context.new_page()
    page.add_init_script(RECORDER)
    cdp = context.new_cdp_session(page)
    cdp.send("Performance.enable", {"timeDomain": "threadTicks"})
    spent: dict[str, tuple[float, float, int]] = {}

    def timed(name: str, click, title: str | None) -> None:
        before, plots = metrics(cdp)["ThreadTime"], page.evaluate("() => window.__doPlots || 0")
        seconds = after_click(page, click, title)
        spent[name] = (metrics(cdp)["ThreadTime"] - before, seconds,
                       page.evaluate("() => window.__doPlots || 0") - plots)

    try:
        reader_clicks(page, server, timed)
    finally:
        cdp.detach()
        page.close()
    return spent


def click_table(clicked: dict[str, list[dict[str, tuple[float, float, int]]]]) -> list[str]:
    """Per action and app: medians of the renderer main thread's CPU, the click-to-drawn seconds, full plots."""
    lines = ["| action | app | main-thread CPU (s) | click to drawn (s) | full plots |", "|---|---|---|---|---|"]
    actions = dict.fromkeys(action for rounds in clicked.values() for one in rounds for action in one)
    for action in actions:
        for app, rounds in clicked.items():
            values = [one[action] for one in rounds if action in one]
            if values:
                lines.append(f"| {action} | {app} | {statistics.median(v[0] for v in values):.2f} | "
                             f"{statistics.median(v[1] for v in values):.2f} | "
                             f"{statistics.median(v[2] for v in values):.0f} |")
    return lines


def chart_key(element: dict, keys: list[str]) -> str:
    """The chart key (`chart_<key>` without the prefix) an element's id carries, else its id."""
    return next((key for key in sorted(keys, key=len, reverse=True) if f"chart_{key}" in element["id"]),
                element["id"][-40:])


def draw_alone(context, figures: list[dict], times: int) -> list[tuple[str, float, int, float]]:
    """Each figure drawn by itself `times` times in a blank page: (key, main-thread CPU s per draw, traces, full
    plots per draw)."""
    import plotly

    script = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
    page = context.new_page()
    cdp = context.new_cdp_session(page)
    cdp.send("Performance.enable", {"timeDomain": "threadTicks"})
    page.set_content(f"<html><body style='margin:0;width:{VIEWPORT['width']}px'></body></html>")
    source = script.read_text(encoding="utf-8")
    counted = DO_PLOT.replace("{var n;", "{var n;window.__doPlots++;") if DO_PLOT in source else DO_PLOT
    page.add_script_tag(content=source.replace(DO_PLOT, counted, 1))
    spent = []
    try:
        for figure in figures:
            spec = json.loads(figure["spec"])
            layout = {**spec.get("layout", {}), "width": figure["width"], "height": figure["height"],
                      "template": json.loads(figure["template"] or "{}")}
            config = json.loads(figure["config"] or "{}")
            page.evaluate(DRAW_ALONE, [spec.get("data", []), layout, config, 1])  # warm-up
            before = metrics(cdp)["ThreadTime"]
            plots = page.evaluate(DRAW_ALONE, [spec.get("data", []), layout, config, times])
            spent.append((figure["key"], (metrics(cdp)["ThreadTime"] - before) / times, len(spec.get("data", [])),
                          plots))
    finally:
        cdp.detach()
        page.close()
    return spent


def page_table(results: dict[str, list[dict]]) -> list[str]:
    """Per page (and app): medians of the renderer's metrics and the plots per chart."""
    lines = ["| page | main-thread CPU (s) | renderer process CPU (s) | tasks (s) | script (s) | layout (s) | "
             "style (s) | charts | full plots (all charts) |", "|---|---|---|---|---|---|---|---|---|"]
    for name, visits in results.items():
        cells = [statistics.median(v["metrics"][m] for v in visits) for m in METRICS]
        charts = statistics.median(len(v["widths"]) for v in visits)
        plots = statistics.median(v["full_plots"] for v in visits)
        lines.append(f"| {name} | " + " | ".join(f"{c:.2f}" for c in cells) + f" | {charts:.0f} | {plots:.0f} |")
    return lines


def pushed_table(last: dict[str, dict]) -> list[str]:
    """Charts of the last visit per page drawn with a wider left, top or bottom margin than the layout asked: axis
    labels that needed it (plotly then plots the chart again), or a legend below the plot (placed within the first
    plot; `full plots` in the page table says which)."""
    lines = ["| page | chart | margins asked → drawn (l, r, t, b) |", "|---|---|---|"]
    for page, visited in last.items():
        for key, (_, _, _, sides) in visited["widths"].items():
            pushed = [asked is None or drawn > asked + 1 for side, (asked, drawn) in zip("lrtb", sides) if side != "r"]
            if any(pushed):
                lines.append(f"| {page} | {key} | " + ", ".join(f"{asked} → {drawn}" for asked, drawn in sides) + " |")
    return lines


def alone_table(drawn: dict[str, list[tuple[str, float, int, float]]]) -> list[str]:
    """Per page, each figure's main-thread CPU drawn alone, largest first, and the page's sum."""
    lines = ["| page | figure (chart key) | traces | main-thread CPU per draw (s) | full plots per draw |",
             "|---|---|---|---|---|"]
    for page, figures in drawn.items():
        for key, seconds, traces, plots in sorted(figures, key=lambda f: -f[1]):
            lines.append(f"| {page} | {key} | {traces} | {seconds:.3f} | {plots:.0f} |")
        lines.append(f"| {page} | **all {len(figures)}** | | **{sum(f[1] for f in figures):.3f}** | |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", default=",".join(PAGES), help="comma-separated url paths")
    parser.add_argument("--repeats", type=int, default=3, help="warm visits per page, medians reported (default 3)")
    parser.add_argument("--before-root", type=Path, default=None,
                        help="also serve this earlier checkout and visit it in the same rounds")
    parser.add_argument("--clicks", type=int, default=0,
                        help="also walk the reader's clicks in one tab of each app this many times (default: not)")
    parser.add_argument("--alone", type=int, default=0, help="draw each figure alone this many times (default: not)")
    parser.add_argument("--screenshots", type=Path, default=None, help="save each chart of the last visit here")
    parser.add_argument("--save-figures", type=Path, default=None,
                        help="with --alone: write the figures drawn alone (spec, config, size, template) here as JSON")
    add_out_option(parser)
    args = parser.parse_args()
    require_chromium()
    scratch = Path(tempfile.mkdtemp(prefix="nlivis-chart-draw-"))
    pages = [p for p in args.pages.split(",") if p]
    apps = {"nlivis": ROOT, **({"before": args.before_root} if args.before_root else {})}
    results: dict[str, list[dict]] = {}
    last: dict[str, dict] = {}
    start_load = load_average("the start")
    with chromium() as browser:
        context = browser.new_context(viewport=VIEWPORT)
        count_plots(context)
        servers = {name: AppServer(bench_environment(root / "checkpoints", scratch / name), scratch / f"{name}.log",
                                   root).__enter__() for name, root in apps.items()}
        floor = AppServer(bench_environment(ROOT / "checkpoints", scratch / "floor"), scratch / "floor.log",
                          write_floor_app(scratch / "floor")).__enter__()
        try:
            for server in servers.values():
                for page in pages:
                    visit(context, page_url(server, page))  # warm: models, caches, the browser's JavaScript
            visit(context, floor.url)
            for round_ in range(args.repeats):
                for page in pages:
                    for name, server in servers.items():
                        shots = args.screenshots if name == "nlivis" and round_ == args.repeats - 1 else None
                        if shots:
                            (shots / page).mkdir(parents=True, exist_ok=True)
                        visited = visit(context, page_url(server, page), shots / page if shots else None)
                        results.setdefault(f"{page} ({name})", []).append(visited)
                        if name == "nlivis":
                            last[page] = visited
                    results.setdefault("Streamlit floor", []).append(visit(context, floor.url))
            clicked: dict[str, list] = {}
            for _ in range(args.clicks):
                for name, server in servers.items():
                    clicked.setdefault(name, []).append(clicks(context, server))
            drawn, saved = {}, {}
            for page, visited in last.items() if args.alone else ():
                keys = list(visited["widths"])
                figures = [{**e, "key": chart_key(e, keys)} for e in visited["elements"]]
                for figure in figures:
                    figure["width"], figure["height"], figure["template"], _ = visited["widths"].get(
                        figure["key"], [None, None, None, None])
                drawn[page] = draw_alone(context, figures, args.alone)
                saved[page] = figures
        finally:
            for server in (*servers.values(), floor):
                server.__exit__(None, None, None)
    lines = [command_line("warm visits by URL, each page's apps and the floor in turn; medians; CPU from the "
                          "tab renderer's DevTools Performance metrics"), f"{start_load}; {load_average('the end')}",
             "", *page_table(results), "", "Charts drawn with wider margins than asked (axis labels: plotly plots them again; a legend below: not):",
             "", *pushed_table(last)]
    if clicked:
        lines += ["", "The reader's clicks in one tab (browser_speed.reader_clicks), medians:", "", *click_table(clicked)]
    if args.save_figures is not None:
        args.save_figures.write_text(json.dumps(saved), encoding="utf-8")
    if drawn:
        lines += ["", "Each figure drawn alone (Plotly.newPlot in a blank page at its width on the page):", "",
                  *alone_table(drawn)]
    publish(lines, args.out)


if __name__ == "__main__":
    main()
