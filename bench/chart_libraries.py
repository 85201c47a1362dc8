"""What a chart library costs a Streamlit page in the browser, beside the same page with no chart: plotly, Vega-Lite
and ECharts drawing the same heatmaps in a stand-in app, nothing of nlivis loaded.

    OMP_NUM_THREADS=1 python bench/chart_libraries.py [--rounds 5] [--out bench/results/chart_libraries.md]

Serves `STAND_IN` (a title, a button that reruns, `n` heatmaps of 12×25 random cells drawn with `kind`'s library,
a closing line) and drives Debian's Chromium headless through Playwright, every visit a new tab of one browser
profile, as a reader's are (each library's JavaScript comes from the browser cache after the first round, which is
not counted). Per library and per number of heatmaps (1 and 6), in `--rounds` rounds: the page opened by URL in a
new tab, from navigation until the script is idle and every chart has drawn (plotly's heatmap image, Vega's or
ECharts' canvas), then two reruns by the button in that tab, from the click until the new run's line shows, the
script is idle and the charts are drawn. The table gives medians and each one minus the chartless page's, with the
load average: plotly's 4.7 MB chunk is parsed and compiled in every new tab, Vega-Lite's 775 kB one and ECharts'
are not as dear. Each library is drawn as nlivis would call it (`theme=None`, the look written into the figure).

nlivis no longer depends on plotly (this bench is why): its rows are measured where plotly is installed
(`pip install plotly==7.1.0`, the release last used) and left out, with a line saying so, where it is not.
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import tempfile
import time
from pathlib import Path

from browser import AppServer, chromium, require_chromium
from harness import add_out_option, command_line, load_average, publish

STAND_IN = '''
import numpy as np
import streamlit as st

kind = st.query_params.get("kind", "none")
st.title(f"charts: {kind}")
if st.button("again", key="again"):
    st.session_state["runs"] = st.session_state.get("runs", 0) + 1
rng = np.random.default_rng(st.session_state.get("runs", 0))
xs, ys = [f"w{j}" for j in range(25)], [f"p{j}" for j in range(12)]
for i in range(int(st.query_params.get("n", 1)) if kind != "none" else 0):
    z = rng.random((12, 25))
    if kind == "plotly":
        import plotly.graph_objects as go
        figure = go.Figure(go.Heatmap(z=z, x=xs, y=ys, colorscale="Blues"))
        figure.update_layout(height=300, title=f"heatmap {i}")
        st.plotly_chart(figure, key=f"chart_{i}", theme=None)
    elif kind == "vega":
        cells = [{"x": xs[c], "y": ys[r], "v": float(z[r, c])} for r in range(12) for c in range(25)]
        st.vega_lite_chart({"data": {"values": cells}, "mark": "rect", "title": f"heatmap {i}", "height": 240,
                            "encoding": {"x": {"field": "x", "type": "ordinal", "sort": None},
                                         "y": {"field": "y", "type": "ordinal", "sort": None},
                                         "color": {"field": "v", "type": "quantitative"},
                                         "tooltip": [{"field": "x"}, {"field": "y"}, {"field": "v"}]}},
                           key=f"chart_{i}", width="stretch", theme=None)
    elif kind == "echarts":
        cells = [[c, r, float(z[r, c])] for r in range(12) for c in range(25)]
        st.echarts_chart({"title": {"text": f"heatmap {i}"}, "tooltip": {}, "xAxis": {"type": "category", "data": xs},
                          "yAxis": {"type": "category", "data": ys}, "visualMap": {"min": 0, "max": 1},
                          "series": [{"type": "heatmap", "data": cells}]}, key=f"chart_{i}", height=300)
st.write(f"done {st.session_state.get('runs', 0)}")
'''
"""The stand-in page: `?kind=none|plotly|vega|echarts&n=N`."""

PLOTLY_INSTALLED = importlib.util.find_spec("plotly") is not None
KINDS = {"none": "no chart", **({"plotly": "plotly"} if PLOTLY_INSTALLED else {}), "vega": "Vega-Lite",
         "echarts": "ECharts"}
COUNTS = (1, 6)

DRAWN = {
    "none": "() => true",
    "plotly": "n => document.querySelectorAll('.js-plotly-plot .heatmaplayer image').length >= n",
    "vega": "n => document.querySelectorAll('.vega-embed canvas.marks, .vega-embed svg.marks').length >= n",
    "echarts": "n => document.querySelectorAll('[data-testid=\"stEChartsChart\"] canvas').length >= n",
}
"""Per library, that `n` charts have drawn."""

IDLE = """
(runs) => {
  const app = document.querySelector('[data-testid="stApp"]');
  return !!app && app.getAttribute('data-test-script-state') === 'notRunning'
         && document.body.innerText.includes(`done ${runs}`);
}
"""
"""The run that counted `runs` button presses has ended."""

TIMEOUT_MS = 120_000


def settled(page, kind: str, n: int, runs: int) -> None:
    """Wait (polling every 20 ms) until the run numbered `runs` has ended and its `n` charts have drawn."""
    page.wait_for_function(IDLE, arg=runs, polling=20, timeout=TIMEOUT_MS)
    page.wait_for_function(DRAWN[kind], arg=n, polling=20, timeout=TIMEOUT_MS)


def one_visit(context, url: str, kind: str, n: int, reruns: int) -> tuple[float, list[float]]:
    """Seconds to open `url` in a new tab until drawn, and seconds of each of `reruns` button reruns there."""
    page = context.new_page()
    try:
        started = time.perf_counter()
        page.goto(url, wait_until="commit", timeout=TIMEOUT_MS)
        settled(page, kind, n, 0)
        opened = time.perf_counter() - started
        timed = []
        for runs in range(1, reruns + 1):
            started = time.perf_counter()
            page.locator(".st-key-again button").click()
            settled(page, kind, n, runs)
            timed.append(time.perf_counter() - started)
        return opened, timed
    finally:
        page.close()


def measure(rounds: int, scratch: Path) -> tuple[dict[tuple[str, int], dict[str, list[float]]], list[float]]:
    """Per (library, heatmaps): the seconds of each visit by URL and each rerun over `rounds` counted rounds (a
    first round fills the browser's cache and is not counted), and the load average after each round."""
    (scratch / "app.py").write_text(STAND_IN, encoding="utf-8")
    cases = [(kind, n) for n in COUNTS for kind in KINDS if kind != "none" or n == COUNTS[0]]
    timed: dict[tuple[str, int], dict[str, list[float]]] = {case: {"url": [], "rerun": []} for case in cases}
    loads = []
    with AppServer(dict(os.environ), scratch / "streamlit.log", app_root=scratch) as server, chromium() as browser:
        context = browser.new_context(viewport={"width": 1600, "height": 1000})
        for round_number in range(rounds + 1):
            for kind, n in cases:
                opened, reruns = one_visit(context, f"{server.url}/?kind={kind}&n={n}", kind, n, 2)
                if round_number:
                    timed[(kind, n)]["url"].append(opened)
                    timed[(kind, n)]["rerun"].extend(reruns)
            if round_number:
                loads.append(os.getloadavg()[0])
    return timed, loads


def table(timed: dict[tuple[str, int], dict[str, list[float]]], loads: list[float], rounds: int) -> list[str]:
    """The medians as a markdown table, each beside its difference from the page without a chart."""
    median = {case: {what: statistics.median(values) for what, values in actions.items()}
              for case, actions in timed.items()}
    floor = median[("none", COUNTS[0])]
    lines = [command_line(f"{rounds} rounds after one uncounted, medians; every visit a new tab of one browser "
                          "profile; a rerun is the button's, twice per visit"),
             f"Load average (1 min) after each round: {', '.join(f'{load:.1f}' for load in loads)}",
             "", "| chart | heatmaps | by URL, new tab (s) | − no chart | rerun (s) | − no chart |",
             "|---|---:|---:|---:|---:|---:|"]
    for (kind, n), values in median.items():
        lines.append(f"| {KINDS[kind]} | {n if kind != 'none' else 0} | {values['url']:.2f} | "
                     f"{values['url'] - floor['url']:+.2f} | {values['rerun']:.2f} | "
                     f"{values['rerun'] - floor['rerun']:+.2f} |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5, help="counted rounds (one more fills the browser's cache)")
    add_out_option(parser)
    args = parser.parse_args()
    require_chromium()
    header = load_average("start")
    with tempfile.TemporaryDirectory(prefix="chart_libraries_") as scratch:
        timed, loads = measure(args.rounds, Path(scratch))
    lines = table(timed, loads, args.rounds)
    missing = [] if PLOTLY_INSTALLED else ["plotly is not installed here (nlivis no longer needs it): its rows are "
                                           "left out; `pip install plotly==7.1.0` to measure them"]
    publish([lines[0], header, *missing, *lines[1:]], args.out)


if __name__ == "__main__":
    main()
