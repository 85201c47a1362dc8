"""How fast the Data map's WebGL scatter draws in a real browser (issue 23: 10k–50k points in ≤ 1 s warm).

    OMP_NUM_THREADS=1 python bench/datamap_draw.py [--repeat 10] [--warm 3] [--out bench/results/datamap_draw.md]

Two measurements, in Debian's Chromium driven headless by Playwright (no GPU: WebGL runs on Chromium's software
renderer, SwiftShader, so a desktop with a GPU draws faster):
  * draw: the figures `nlivis.viz.datamap.data_map_scatter` builds from the shipped checkpoints' dynamics, drawn
    by `Plotly.newPlot` into a blank page (plotly.js as bundled with the Python plotly package), median of
    `--repeat` draws after one warm-up draw — one map (ESAN, 9,824 pairs), and the five snli-small maps' points
    in one figure (49,120 points, the issue's 50k end);
  * in the app: the Data map page opened by URL on a warm server (`streamlit run app.py`, as
    bench/browser_speed.py does), ESAN's and GCNN's maps side by side: when the script finished and when the
    last chart was drawn, median of `--warm` visits (a new tab each, after one priming visit).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from browser import AppServer, chromium, require_chromium
from browser_speed import VIEWPORT, bench_environment, visit
from harness import ROOT, add_out_option, publish

MODELS = ("esan", "gcnn", "diin", "attentive_conv", "amn")
DRAW = """
async ([figure, repeat]) => {
  const times = [];
  for (let i = 0; i <= repeat; i++) {
    const holder = document.createElement('div');
    holder.style.width = '1500px';
    document.body.appendChild(holder);
    const start = performance.now();
    await Plotly.newPlot(holder, figure.data, figure.layout);
    await new Promise(resolve => requestAnimationFrame(() => resolve()));
    if (i > 0) times.push(performance.now() - start);  // the first draw compiles WebGL shaders: warm-up
    const points = holder._fullData.filter(t => t.mode === 'markers').reduce((n, t) => n + t._length, 0);
    Plotly.purge(holder);
    holder.remove();
    if (points !== figure.expected) throw new Error(`drew ${points} points, expected ${figure.expected}`);
  }
  return times;
}
"""


def figure_json(names: list[str]) -> dict:
    """The page's figure of one checkpoint's map, or of several checkpoints' points pooled in one figure."""
    import numpy as np

    from nlivis.analysis.datamap import correctness_groups, data_map
    from nlivis.store.dynamics import read_dynamics
    from nlivis.viz.datamap import data_map_scatter

    maps = [data_map(read_dynamics(ROOT / "checkpoints" / name)) for name in names]
    variability = np.concatenate([m.variability for m in maps])
    confidence = np.concatenate([m.confidence for m in maps])
    groups = [g for m in maps for g in correctness_groups(m)]
    ids = [f"{name}:{pid}" for name, m in zip(names, maps) for pid in m.ids]
    figure = data_map_scatter(variability, confidence, groups, ids, (0.2, 0.75, 0.25), maps[0].region_counts(),
                              " + ".join(names))
    spec = json.loads(figure.to_json())
    spec["expected"] = int(np.isfinite(variability).sum())
    return spec


def plotly_page(folder: Path) -> Path:
    import plotly

    script = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
    page = folder / "draw.html"
    page.write_text(f"<html><body><script src='{script.as_uri()}'></script></body></html>", encoding="utf-8")
    return page


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=10, help="timed draws per figure after one warm-up (default 10)")
    parser.add_argument("--warm", type=int, default=3, help="warm visits of the page, median reported (default 3)")
    add_out_option(parser)
    args = parser.parse_args()
    require_chromium()
    from plotly.offline import get_plotlyjs_version

    scratch = Path(tempfile.mkdtemp(prefix="nlivis-datamap-draw-"))
    rows = []
    with chromium() as browser:
        tab = browser.new_context(viewport=VIEWPORT).new_page()
        tab.goto(plotly_page(scratch).as_uri())
        tab.wait_for_function("() => window.Plotly !== undefined")
        for names in ([f"{MODELS[0]}-snli-small"], [f"{m}-snli-small" for m in MODELS]):
            spec = figure_json(names)
            times = tab.evaluate(DRAW, [spec, args.repeat])
            rows.append((f"draw: {' + '.join(names)}", spec["expected"], statistics.median(times) / 1000,
                         max(times) / 1000, len(times)))
        with AppServer(bench_environment(ROOT / "checkpoints", scratch), scratch / "streamlit.log") as server:
            url = (f"{server.url}/Data_map?models=esan-snli-small,gcnn-snli-small&checkpoint=esan-snli-small"
                   "&compare=gcnn-snli-small")
            context = browser.new_context(viewport=VIEWPORT)
            visit(context, url)  # priming: the server reads the dynamics, the browser caches the JavaScript
            visits = [visit(context, url) for _ in range(args.warm)]
            for visited in visits:
                if visited.problems:
                    sys.exit(f"the page showed an exception: {visited.problems}")
            rows.append(("in the app, script finished: Data map, ESAN + GCNN side by side", 2 * 9824,
                         statistics.median(v.script_s for v in visits), max(v.script_s for v in visits), len(visits)))
            rows.append(("in the app, last map drawn: Data map, ESAN + GCNN side by side", 2 * 9824,
                         statistics.median(v.drawn_s for v in visits), max(v.drawn_s for v in visits), len(visits)))
    lines = [f"Data map scatter in headless Chromium (software WebGL), plotly.js {get_plotlyjs_version()} (bundled "
             f"with the Python plotly package) for the draw rows; load average (1 min) {os.getloadavg()[0]:.2f}; "
             f"{time.strftime('%Y-%m-%d %H:%M')}",
             "", "| what | points | median (s) | slowest (s) | n |", "|---|---|---|---|---|"]
    lines += [f"| {what} | {points:,} | {median:.3f} | {slowest:.3f} | {n} |" for what, points, median, slowest, n in rows]
    publish(lines, args.out)

if __name__ == "__main__":
    main()
