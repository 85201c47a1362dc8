"""How fast the Data map draws in a real browser (issue 23: 10k–50k points in ≤ 1 s warm).

    OMP_NUM_THREADS=1 python bench/datamap_draw.py [--warm 3] [--out bench/results/datamap_draw.md]

The Data map page opened by URL on a warm server (`streamlit run app.py`, as bench/browser_speed.py does), ESAN's
and GCNN's maps side by side (Vega-Lite specs, `nlivis.viz.vega.datamap.data_map_spec`, drawn by Streamlit on a
canvas), in Debian's Chromium driven headless by Playwright: when the script finished and when the last chart was
drawn, median of `--warm` visits (a new tab each, after one priming visit). Until session 25 the maps were plotly
WebGL figures and this bench also timed `Plotly.newPlot` of them in a blank page (bench/results/datamap_draw.md
holds those rows); the page now loads no plotly at all.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from browser import AppServer, chromium, require_chromium
from browser_speed import VIEWPORT, bench_environment, visit
from harness import ROOT, add_out_option, publish


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--warm", type=int, default=3, help="warm visits of the page, median reported (default 3)")
    add_out_option(parser)
    args = parser.parse_args()
    require_chromium()
    scratch = Path(tempfile.mkdtemp(prefix="nlivis-datamap-draw-"))
    rows = []
    with chromium() as browser:
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
    lines = [f"Data map (Vega-Lite on a canvas) in headless Chromium; load average (1 min) {os.getloadavg()[0]:.2f}; "
             f"{time.strftime('%Y-%m-%d %H:%M')}",
             "", "| what | points | median (s) | slowest (s) | n |", "|---|---|---|---|---|"]
    lines += [f"| {what} | {points:,} | {median:.3f} | {slowest:.3f} | {n} |" for what, points, median, slowest, n in rows]
    publish(lines, args.out)


if __name__ == "__main__":
    main()
