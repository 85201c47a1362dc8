"""What each kind of Streamlit element costs a page opened by URL in a new tab, against the floor, in one run.

    OMP_NUM_THREADS=1 python bench/element_costs.py [--rounds 5] [--only dataframe,table] [--out FILE]

One Streamlit server runs a router over stand-in pages: the floor (`browser_speed.FLOOR_PAGE`: a title, a line, a
button, two sidebar links) and, per variant, the floor plus the elements a page of nlivis shows — the ten sidebar
page links every page draws, a five-row table as `st.dataframe` and as `st.table`, four figures' download buttons,
twenty containers, markdown lines, expanders, tabs, server-drawn SVGs, inputs — and those together, all but one,
sixty containers, sixty captions and the same text as one caption, a component given ten thousand points (as the
Data map's), each kind of widget the pages' forms use alone (and lighter kinds for the same choices), and
stand-ins for the Pair explorer's page and the Data map's: their mixes of elements by kind and count
(the explorer's as `bench/browser_messages.py` counts them), with figures and data of similar size, and no nlivis
code (the explorer's pair form and its predictions also drawn other ways). Each page is opened by URL in a new tab, the variants in turn for `--rounds`
rounds, and timed from the navigation until the floor's line is shown, the script state is back to notRunning and no element waits for its code (`browser_speed.FLOOR_RAN`; before session 38 a data grid still loading its code was not waited for), with the renderer's main-thread CPU over the visit
(DevTools `Performance.getMetrics`: TaskDuration). Printed: medians, and each variant minus the floor — what the
element kind adds to every page that shows it, on this machine at this load (said in the header).
"""
from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from browser import AppServer, chromium, require_chromium
from browser_speed import FLOOR_PAGE, FLOOR_RAN, TIMEOUT_S, VIEWPORT
from harness import add_out_option, command_line, load_average, publish


def downloads(holder: str, index: str) -> str:
    """A figure's two download buttons (as `figures.show` draws them) in `holder`, keyed by `index`: page code."""
    return (f'    {holder}.download_button("data (CSV)", lambda: "a,b", file_name="a.csv", key=f"c{{{index}}}",'
            ' on_click="ignore")\n'
            f'    {holder}.download_button("figure (SVG)", lambda: "<svg/>", file_name="a.svg", key=f"s{{{index}}}",'
            ' on_click="ignore")\n')


SVG = ("<svg xmlns='http://www.w3.org/2000/svg' width='600' height='300'>"
       + "".join(f"<rect x='{i * 6}' y='{300 - 3 * i}' width='5' height='{3 * i}' fill='steelblue'/>"
                 for i in range(100)) + "</svg>")
VARIANTS = {
    "floor": "",
    "ten sidebar page links": 'for _ in range(5):\n'
                              '    for path, label in (("home.py", "Home"), ("other.py", "Other")):\n'
                              '        st.sidebar.page_link(path, label=label, icon=":material/search:", width="stretch")\n',
    "dataframe, five rows": 'import pandas as pd\n'
                            'st.dataframe(pd.DataFrame({"model": list("abcde"), "P": [0.1, 0.2, 0.3, 0.4, 0.5]}),'
                            ' hide_index=True, width="stretch")\n',
    "table, five rows": 'import pandas as pd\n'
                        'st.table(pd.DataFrame({"model": list("abcde"), "P": [0.1, 0.2, 0.3, 0.4, 0.5]}))\n',
    "four pairs of download buttons": ('for i in range(4):\n    row = st.container(horizontal=True, gap="small")\n'
                                       + downloads("row", "i")),
    "twenty containers": 'for i in range(20):\n    st.container(key=f"box{i}").write(" ")\n',
    "six markdown lines": 'for i in range(6):\n    st.markdown(f"**Line {i}** with *some* `code` and a [link](#x)")\n',
    "four expanders": 'for i in range(4):\n    st.expander(f"Section {i}", expanded=i == 0).write("text")\n',
    "three tabs": 'for tab in st.tabs(["One", "Two", "Three"]):\n    tab.write("text")\n',
    "four server SVGs (st.html)": f'for i in range(4):\n    st.html({SVG!r})\n',
    "radio, two text areas": 'st.radio("Pair", ["a", "b", "c"], horizontal=True)\n'
                             'st.text_area("Premise", "A man plays.")\nst.text_area("Hypothesis", "A man sleeps.")\n',
    "multiselect, selectbox": 'st.multiselect("Models", ["a", "b", "c"], default=["a", "b"])\n'
                              'st.selectbox("Layer", [1, 2, 3])\n',
    "number input, text input": 'st.number_input("Steps", 1, 1000, 30)\nst.text_input("Run name", "run-1")\n',
    "a code block": 'st.code("python -m nlivis train --config esan --dataset snli-small", language="bash")\n',
}
PARTS = {name: extra for name, extra in VARIANTS.items() if extra}
VARIANTS["all of the above on one page"] = "".join(PARTS.values())
for left_out in PARTS:  # what one kind adds to a page that has all the others
    VARIANTS[f"all but {left_out}"] = "".join(extra for name, extra in PARTS.items() if name != left_out)
VARIANTS["all, the download buttons in popovers"] = "".join(
    extra for name, extra in PARTS.items() if name != "four pairs of download buttons") + (
    'for i in range(4):\n'
    '    menu = st.popover("Download", icon=":material/download:")\n' + downloads("menu", "i"))
VARIANTS["sixty containers"] = 'for i in range(60):\n    st.container(key=f"box{i}").write(" ")\n'
SINGLE_KINDS = {
    "a radio": 'st.radio("Pair", ["a dev pair", "your own"], horizontal=True)\n',
    "a segmented control": 'st.segmented_control("Pair", ["a dev pair", "your own"], default="a dev pair")\n',
    "pills": 'st.pills("Pair", ["a dev pair", "your own"], default="a dev pair")\n',
    "two text areas": 'st.text_area("Premise", "A man plays.")\nst.text_area("Hypothesis", "A man sleeps.")\n',
    "two text inputs": 'st.text_input("Premise", "A man plays.")\nst.text_input("Hypothesis", "A man sleeps.")\n',
    "a selectbox": 'st.selectbox("Layer", [1, 2, 3])\n',
    "a multiselect": 'st.multiselect("Models", ["a", "b", "c"], default=["a", "b"])\n',
    "a checkbox": 'st.checkbox("Show all")\n',
    "a toggle": 'st.toggle("Show all")\n',
    "a form with a submit button": 'with st.form("f", border=False):\n    st.form_submit_button("Analyse")\n',
    "a slider": 'st.slider("Neighbours", 2, 50, 15)\n',
}
"""One kind of widget each, alone beside the floor: which of the kinds the pages' forms use costs a page what, and
what a lighter kind for the same choice (a segmented control or pills for a radio, text inputs for text areas)
would cost instead."""
VARIANTS.update(SINGLE_KINDS)
BIG_SVG = ("<svg xmlns='http://www.w3.org/2000/svg' width='700' height='400'>"
           + "".join(f"<g><rect data-hover='1' aria-label='cell {i}: weight 0.{i:03d}' x='{i % 40 * 17}' "
                     f"y='{i // 40 * 17}' width='16' height='16' fill='rgb({i % 256},80,160)'/></g>" for i in range(800))
           + "".join(f"<text x='{i * 17}' y='395' font-size='10'>word{i}</text>" for i in range(40)) + "</svg>")
"""About a quarter of the Pair explorer's figure bytes (307 kB for four): 800 described cells and 40 labels."""
PAIR_FORM = ('st.radio("Pair", ["a dev pair", "your own"], horizontal=True)\n'
             'left, right = st.columns(2)\n'
             'left.text_area("Premise", "A man plays a guitar on stage.")\n'
             'right.text_area("Hypothesis", "A person plays music.")\n'
             'st.button("Analyse")\n')
"""The pair pages' form as they draw it at the top: the source radio, two text areas and Analyse."""


def inside(block: str, code: str) -> str:
    """Page code running `code` inside the `with` block opened by `block`."""
    return f"with {block}:\n" + "".join(f"    {line}\n" for line in code.splitlines())


PAIR_FORM_PLACES = {
    "": PAIR_FORM,
    ", the pair form in a collapsed expander": inside('st.expander("Change the pair")', PAIR_FORM),
    ", the pair form in a popover": inside('st.popover("Change the pair")', PAIR_FORM),
    ", a button in place of the pair form": 'st.button("Change the pair")\n',
}
"""Where the stand-in puts the pair form: as the pages draw it, or out of the page's first view."""


PREDICTION_ROWS = 'rows = pd.DataFrame({"model": list("abcde"), "predicted": ["entailment"] * 5, "P": [0.9] * 5})\n'
PREDICTIONS = {
    "": PREDICTION_ROWS + 'st.table(rows.style.format({"P": "{:.3f}"}), hide_index=True)\n',
    ", predictions as a data grid": PREDICTION_ROWS + 'st.dataframe(rows, hide_index=True, width="stretch")\n',
    ", predictions as an HTML table": PREDICTION_ROWS + 'st.html(rows.to_html(index=False))\n',
}
"""How the stand-in draws the five-line predictions: as the page does (a styled `st.table`, since session 29), as a
data grid (before), or as HTML (`st.html`, whose code the page's figures load anyway)."""


def explorer_stand_in(pair_form: str, predictions: str = PREDICTIONS[""]) -> str:
    """Page code with the Pair explorer's elements by kind and count, its pair form drawn by `pair_form` and its
    predictions by `predictions`."""
    return (
        'import pandas as pd\n'
        'links = st.sidebar.container()\n'
        'for _ in range(5):\n'
        '    for path, label in (("home.py", "Home"), ("other.py", "Other")):\n'
        '        links.page_link(path, label=label, icon=":material/search:", width="stretch")\n'
        + pair_form +
        'for i in range(3):\n'
        '    st.markdown(f"**Gold** entailment · pair {i} · *snli dev*")\n'
        'st.caption("Numbers come from models trained on reduced protocols.")\n'
        + predictions +
        'for column, page in zip(st.columns(3), ("home.py", "other.py", "home.py")):\n'
        '    column.page_link(page, label="This pair in another view", icon=":material/open_in_new:")\n'
        'st.subheader("Overview")\n'
        'for figure in range(4):\n'
        '    where = st.expander(f"Model {figure}", expanded=figure == 0) if figure >= 2 else st\n'
        '    if figure >= 2:\n'
        '        where.markdown("**Layer 1**")\n'
        f'    where.container(key=f"chart_{{figure}}").html({BIG_SVG!r})\n'
        '    row = where.container(horizontal=True, gap="small")\n'
        + downloads("row", "figure") +
        'st.subheader("Alignments")\nst.subheader("Edits")\n'
        'for model in range(3):\n'
        '    st.expander(f"Model {model + 4}").caption("no alignment")\n')


POINTS_COMPONENT = (
    'points = st.components.v2.component("points", js="export default function ({ parentElement, data }) '
    '{ parentElement.textContent = data.ids.length; }", isolate_styles=False)\n'
    'points(data={"ids": [f"snli_test_{i}" for i in range(10000)], "x": [i * 7 % 10000 for i in range(10000)],'
    ' "y": [i * 13 % 10000 for i in range(10000)]}, key="points")\n')
"""A component of Streamlit's components v2 given ten thousand points (~300 kB), as the Data map's map is."""
CAPTION = 'f"A **note** {i} with a [link](https://example.org). " * 3'
VARIANTS["sixty captions"] = f'for i in range(60):\n    st.caption({CAPTION})\n'
VARIANTS["sixty captions' text as one caption"] = f'st.caption("\\n\\n".join({CAPTION} for i in range(60)))\n'
VARIANTS["a component given 10,000 points"] = POINTS_COMPONENT
VARIANTS["the Data map's elements, stand-in"] = (
    POINTS_COMPONENT + f'st.html({BIG_SVG!r})\n'
    'first, second, colour = st.columns([2, 2, 3])\n'
    'first.selectbox("Checkpoint", [f"model-{i}" for i in range(60)])\n'
    'second.selectbox("Side by side with", ["(none)"] + [f"model-{i}" for i in range(60)])\n'
    'colour.radio("Colour by", ["correctness", "gold label", "length", "augmented", "tag"], horizontal=True)\n'
    'st.expander("Region thresholds").caption("How the regions are drawn.")\n'
    f'for i in range(5):\n    st.caption({CAPTION})\n'
    'for figure in range(1):\n    row = st.container(horizontal=True, gap="small")\n' + downloads("row", "figure") +
    'one, two = st.tabs(["Selected pairs", "Possibly mislabelled"])\n'
    'left, right = one.columns([3, 2])\n'
    'left.selectbox("Pairs of", ["hard-to-learn", "ambiguous", "easy-to-learn"])\n'
    'right.selectbox("Order", ["confidence", "variability"])\n'
    'one.number_input("Page (of 19)", 1, 19, 1)\n'
    'table = st.components.v2.component("table", js="export default function ({ parentElement, data }) '
    '{ parentElement.textContent = data.rows.length; }", isolate_styles=False)\n'
    'with one:\n'
    '    table(data={"rows": [[f"cell {r} {c} " * 3 for c in range(10)] for r in range(50)]}, key="table")\n'
    'one.caption("Pairs 1–50 of 922.")\n')
"""The Data map's elements by kind and count (its 300-kB map component, a drawn figure, its five choices and page
number, captions, downloads, tabs, a 50-line list component) and none of its Python: what Streamlit alone charges a
page like it."""
for place, form in PAIR_FORM_PLACES.items():
    VARIANTS[f"the Pair explorer's elements, stand-in{place}"] = explorer_stand_in(form)
for drawn, code in list(PREDICTIONS.items())[1:]:
    VARIANTS[f"the Pair explorer's elements, stand-in{drawn}"] = explorer_stand_in(PAIR_FORM, code)
# VARIANTS, variant → the code added after the floor page's own lines: each kind alone, all of them on one page, all
# but one, one kind sixty times (how a page's cost grows with the number of its elements), and the Pair explorer's
# stand-ins.


def app_files(folder: Path) -> dict[str, str]:
    """The router (every variant a page, url path `v0`, `v1`, …) and the pages' scripts, written to `folder`."""
    pages = []
    for index, (name, extra) in enumerate(VARIANTS.items()):
        (folder / f"v{index}.py").write_text(FLOOR_PAGE.format(title=name) + extra, encoding="utf-8")
        pages.append(f'st.Page("v{index}.py", title={name!r}, url_path="v{index}", default={index == 0})')
    for name in ("home.py", "other.py"):  # the floor's sidebar links point here
        (folder / name).write_text(FLOOR_PAGE.format(title=name), encoding="utf-8")
    pages += ['st.Page("home.py", title="Home")', 'st.Page("other.py", title="Other")']
    router = ('import streamlit as st\nst.set_page_config(layout="wide")\n'
              f'st.navigation([{", ".join(pages)}], position="hidden").run()\n')
    (folder / "app.py").write_text(router, encoding="utf-8")
    return {name: f"v{index}" for index, name in enumerate(VARIANTS)}


def visit(context, url: str) -> tuple[float, float]:
    """Seconds from the navigation until the run ended with the page shown, and the renderer's main-thread CPU
    seconds in that time."""
    page = context.new_page()
    try:
        cdp = context.new_cdp_session(page)
        cdp.send("Performance.enable")
        started = time.perf_counter()
        page.goto(url, wait_until="commit", timeout=TIMEOUT_S * 1000)
        page.wait_for_function(FLOOR_RAN, arg="", timeout=TIMEOUT_S * 1000, polling=20)
        wall = time.perf_counter() - started
        metrics = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
        return wall, metrics.get("TaskDuration", float("nan"))
    finally:
        page.close()


def report(times: dict[str, list[tuple[float, float]]], rounds: int) -> list[str]:
    floor_wall = statistics.median(w for w, _ in times["floor"])
    floor_cpu = statistics.median(c for _, c in times["floor"])
    lines = [f"Each variant opened by URL in a new tab, {rounds} rounds in turn; medians (s). "
             f"{load_average('the end')}", "",
             "| page | shown (s) | − floor (s) | renderer CPU (s) | − floor (s) |", "|---|---|---|---|---|"]
    for name, visits in times.items():
        wall = statistics.median(w for w, _ in visits)
        cpu = statistics.median(c for _, c in visits)
        lines.append(f"| {name} | {wall:.2f} | {wall - floor_wall:+.2f} | {cpu:.2f} | {cpu - floor_cpu:+.2f} |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5, help="visits per variant, medians reported (default 5)")
    parser.add_argument("--only", default="", help="comma-separated words: only variants whose name has one "
                                                   "(the floor always runs)")
    add_out_option(parser)
    args = parser.parse_args()
    require_chromium()
    chosen = [word.strip() for word in args.only.split(",") if word.strip()]
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        url_paths = app_files(folder)
        if chosen:
            url_paths = {name: path for name, path in url_paths.items()
                         if name == "floor" or any(word in name for word in chosen)}
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in url_paths}
        with AppServer(dict(os.environ), folder / "server.log", app_root=folder) as server, \
                chromium() as browser:
            context = browser.new_context(viewport=VIEWPORT)
            for path in url_paths.values():  # warm: each page's script compiled, the browser's files cached
                visit(context, f"{server.url}/{path}")
            for _ in range(args.rounds):
                for name, path in url_paths.items():
                    times[name].append(visit(context, f"{server.url}/{path}"))
        publish([command_line(), "", *report(times, args.rounds)], args.out)


if __name__ == "__main__":
    main()
