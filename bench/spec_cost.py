"""What each of a page's charts costs the browser on its own: the app's Vega-Lite specs, taken from a page's run,
each drawn alone on a stand-in Streamlit page in a new tab, under the renderer's CPU profiler.

    OMP_NUM_THREADS=1 python bench/spec_cost.py [--pages Pair_explorer,Gates] [--rounds 4] [--out FILE]

Each page of `--pages` is run headless (Streamlit's AppTest, the five shipped snli-small models, as a link opens
it) and every `st.vega_lite_chart` it sends is kept: the spec and its Arrow data, exactly the bytes the browser
would get. A stand-in app (a title, the one chart, a closing line; nothing of nlivis) then draws one of them per
visit, and a one-cell heatmap as the smallest chart there is, each in a new tab of one browser profile (Streamlit's
JavaScript from the browser cache after an uncounted first round), with V8's sampling profiler (DevTools
`Profiler`, 200 µs) on from the navigation until the chart has drawn. Per spec, medians over `--rounds`: the
renderer's CPU (samples that are not idle) minus that of the same page with no chart, and of it the time under
Streamlit's Vega chunks (`embed`: Vega-Lite's compiler, Vega's dataflow and renderer; `vega-interpreter`: the
CSP-safe expression interpreter Streamlit gives Vega). Profiling slows the renderer: read the numbers against
each other, not as seconds a reader waits.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
from pathlib import Path

from browser import DATA, AppServer, chromium, require_chromium
from harness import ROOT, SHIPPED, add_out_option, command_line, load_average, publish

STAND_IN = '''
import json
from pathlib import Path

import pyarrow as pa
import streamlit as st

name = st.query_params.get("spec", "")
st.title(f"spec {name or 'none'}")
if name:
    folder = Path(__file__).parent / "specs"
    spec = json.loads((folder / f"{name}.json").read_text())
    data = pa.ipc.open_stream((folder / f"{name}.arrow").read_bytes()).read_all().to_pandas()
    st.vega_lite_chart(data, spec, theme=None, key="chart", width="stretch")
st.write("done")
'''
"""The stand-in page: `?spec=NAME` draws specs/NAME.json with specs/NAME.arrow; no `spec`, no chart."""

ONE_CELL = {"mark": "rect", "encoding": {"x": {"field": "x", "type": "ordinal"}, "y": {"field": "y", "type": "ordinal"},
                                         "color": {"field": "v", "type": "quantitative"}}}
SETTLED = """(charts) => {
  const app = document.querySelector('[data-testid="stApp"]');
  return !!app && app.getAttribute('data-test-script-state') === 'notRunning' && document.body.innerText.includes('done')
         && document.querySelectorAll('.vega-embed canvas.marks, .vega-embed svg.marks').length >= charts;
}"""
VEGA_CHUNKS = ("embed", "vega-interpreter")
TIMEOUT_MS = 300_000


def page_specs(pages: list[str], folder: Path) -> list[str]:
    """Run each page headless and save every Vega-Lite chart it sends as folder/PAGE_i.json (the spec) and
    folder/PAGE_i.arrow (its data); returns the saved names, the one-cell heatmap first."""
    import pandas as pd
    import pyarrow as pa
    from streamlit.testing.v1 import AppTest

    from nlivis.app import paths

    os.chdir(ROOT)  # the app's paths are read as a served app reads them, from the checkout
    os.environ.update(NLIVIS_CHECKPOINTS=str(ROOT / "checkpoints"), NLIVIS_WARM_UP="0",
                      NLIVIS_DATA=os.environ.get("NLIVIS_DATA", str(DATA)),
                      NLIVIS_FIGURES="vega-lite")  # every figure as the spec it is, not the server's SVG of it
    by_url = {page.url_path: page.path for page in paths.PAGES}
    one_cell = pa.Table.from_pandas(pd.DataFrame({"x": [0], "y": [0], "v": [1.0]}), preserve_index=False)
    saved = [save(folder, "one_cell", json.dumps(ONE_CELL), arrow_bytes(one_cell))]
    for page in pages:
        app = AppTest.from_file(str(ROOT / "app.py"), default_timeout=900)
        app.query_params["models"] = ",".join(f"{family}-snli-small" for family in SHIPPED)
        app.switch_page(str(ROOT / by_url[page])).run()
        if app.exception:
            raise RuntimeError(f"{page}: {app.exception}")
        for i, chart in enumerate(app.get("vega_lite_chart")):
            saved.append(save(folder, f"{page}_{i}", chart.proto.spec, chart.proto.data.data))
    return saved


def arrow_bytes(table) -> bytes:
    """`table` as an Arrow IPC stream, the form Streamlit sends a chart's data in."""
    import pyarrow as pa  # deferred with the other heavy imports of `page_specs`

    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


def save(folder: Path, name: str, spec: str, data: bytes) -> str:
    """Write one chart as `name`.json and `name`.arrow in `folder`; returns `name`."""
    (folder / f"{name}.json").write_text(spec, encoding="utf-8")
    (folder / f"{name}.arrow").write_bytes(data)
    return name


def profiled_visit(context, url: str, charts: int) -> tuple[float, float]:
    """Renderer CPU seconds (not idle) and of them under Vega's chunks, from opening `url` in a new tab until its
    run ended and `charts` charts drew."""
    page = context.new_page()
    try:
        session = context.new_cdp_session(page)
        session.send("Profiler.enable")
        session.send("Profiler.setSamplingInterval", {"interval": 200})
        session.send("Profiler.start")
        page.goto(url, wait_until="commit", timeout=TIMEOUT_MS)
        page.wait_for_function(SETTLED, arg=charts, polling=20, timeout=TIMEOUT_MS)
        profile = session.send("Profiler.stop")["profile"]
    finally:
        page.close()
    return busy_seconds(profile)


def busy_seconds(profile: dict) -> tuple[float, float]:
    """A V8 CPU profile's non-idle seconds, and those with a frame of Vega's chunks on the stack."""
    nodes = {node["id"]: node for node in profile["nodes"]}
    parent = {child: node["id"] for node in profile["nodes"] for child in node.get("children", [])}
    busy = vega = 0.0
    for sample, delta in zip(profile["samples"], profile["timeDeltas"]):
        if nodes[sample]["callFrame"]["functionName"] == "(idle)":
            continue
        busy += delta
        frame = sample
        while frame is not None:
            if nodes[frame]["callFrame"]["url"].rsplit("/", 1)[-1].split(".")[0] in VEGA_CHUNKS:
                vega += delta
                break
            frame = parent.get(frame)
    return busy / 1e6, vega / 1e6


def measure(names: list[str], rounds: int, app: Path) -> dict[str, list[tuple[float, float]]]:
    """Per spec name ("" for the page without a chart): (busy, Vega) seconds of each counted visit."""
    timed: dict[str, list[tuple[float, float]]] = {name: [] for name in ["", *names]}
    with AppServer(dict(os.environ), app / "streamlit.log", app_root=app) as server, chromium() as browser:
        context = browser.new_context(viewport={"width": 1600, "height": 1000})
        for round_number in range(rounds + 1):
            for name in timed:
                cost = profiled_visit(context, f"{server.url}/?spec={name}", 1 if name else 0)
                if round_number:
                    timed[name].append(cost)
    return timed


def table(timed: dict[str, list[tuple[float, float]]], folder: Path) -> list[str]:
    """Per spec: its data's size, the renderer's CPU over the chartless page's and the part of it in Vega."""
    bare = statistics.median(busy for busy, _ in timed[""])
    lines = [f"Renderer CPU of the page with no chart: {bare:.2f} s (median)", "",
             "| spec | data (kB) | renderer CPU over no chart (s) | of it Vega (s) |", "|---|---:|---:|---:|"]
    for name, costs in timed.items():
        if name:
            size = (folder / f"{name}.arrow").stat().st_size / 1024
            lines.append(f"| {name} | {size:.0f} | {statistics.median(b for b, _ in costs) - bare:+.2f} | "
                         f"{statistics.median(v for _, v in costs):.2f} |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", default="Pair_explorer,Gates", help="url paths whose charts are measured")
    parser.add_argument("--rounds", type=int, default=4, help="counted rounds, medians reported (default 4)")
    add_out_option(parser)
    args = parser.parse_args()
    require_chromium()
    header = load_average("start")
    with tempfile.TemporaryDirectory(prefix="nlivis-spec-cost-") as scratch:
        app = Path(scratch)
        (app / "specs").mkdir()
        (app / "app.py").write_text(STAND_IN, encoding="utf-8")
        names = page_specs([p for p in args.pages.split(",") if p], app / "specs")
        timed = measure(names, args.rounds, app)
        lines = table(timed, app / "specs")
    publish([command_line(f"each spec alone in a new tab, medians of {args.rounds}"), header, load_average("end"), "",
             *lines], args.out)


if __name__ == "__main__":
    main()
