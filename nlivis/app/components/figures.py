"""A figure with its downloads (its numbers as CSV, the chart as SVG, each made only when clicked), and the clicks
a figure sends back (a point's fields, a confusion-matrix cell).

A figure that takes no clicks or hovers is drawn on the server as SVG (`viz.vega.export.page_svg`, kept in
`cache.figures.page_svg`) and the browser only inserts it: Vega-Lite drawing it in the browser cost each new tab
0.5 s or more of CPU per chart, which was all that the chart pages' clicks still cost over Streamlit's own floor
(bench/RESULTS.md). Its hover text shows in a box beside the pointer (`HOVER_JS`). A figure whose only input is a
click on a mark (a confusion cell, a projection's point, a head's thumbnail) is drawn the same way, each mark
numbered with its row, and a small component (`clickable_figure`) sends the clicked row back. Until the server's
warm-up has started the converter, and with `NLIVIS_FIGURES=vega-lite`, Vega-Lite draws every figure in the
browser instead (Vega's tooltips; the in-process page tests read the specs that way).

A figure is a Vega-Lite spec (a dict, nlivis.viz.vega): Vega-Lite's chunk costs a new browser tab about 0.25 s
where plotly's cost 1.1 s (bench/chart_libraries.py), so the app draws no plotly chart. Streamlit 1.67's Vega-Lite
toolbar offers "Download as PNG" (at twice the screen's resolution) but no SVG, so a spec's vector file is a button
of its own beside its CSV (`viz.vega.export`: made on the server when clicked)."""
from __future__ import annotations

import json
import logging
import os
from functools import cache
from typing import Any, Mapping

import numpy as np
import pandas as pd
import streamlit as st

from nlivis.app import state
from nlivis.app.cache import figures as cached_figures
from nlivis.viz.common import clean_file_name
from nlivis.viz.vega.common import clicked_values, data_csv, themed
from nlivis.viz.vega.export import (HOVER_ATTRIBUTE, click_selection, clicked_point, converter_ready,
                                   spec_svg, takes_input)
from nlivis.viz.vega.raster_cells import GRID_ATTRIBUTE

FIGURES_ENV = "NLIVIS_FIGURES"
"""How a figure that takes no input is drawn: "svg" (the default: on the server) or "vega-lite" (in the browser)."""
FIGURE_CLASS = "nlivis-figure"
"""The class of the element a server-drawn figure's SVG is put in (`figure_html`)."""
LOG = logging.getLogger(__name__)


def show(spec: dict[str, Any], key: str, filename: str | None = None, clickable: bool = False, where: Any = st,
         columns: int = 1) -> Any:
    """Draw a Vega-Lite spec in Streamlit's look (`viz.vega.common.themed`, light or dark) with its downloads, the
    CSV and the SVG side by side, each made only when clicked; with `clickable`, a selection (every selection
    parameter of the spec) reruns the page and the selection event is returned (else None), in Vega-Lite's shape
    whoever drew the chart. A figure is drawn on the server for one of `columns` columns of the page's width
    (`server_svg`) when it takes no input, or takes only clicks on its marks (`clickable_figure`)."""
    name = clean_file_name(filename or key)
    event = None
    svg = server_svg(spec, key, dark_theme(), columns, clickable)
    if svg is not None and clickable:
        st.session_state.setdefault(_DRAWN, {})[key] = spec  # what its next click's row number is a row of
        with where.container(key=f"chart_{key}"):
            event = clicked_event(spec, clickable_figure()(data={"svg": svg}, key=f"figure_{key}",
                                                           on_click_change=lambda: None))
    elif svg is not None:  # in a container keyed as a chart's element is
        where.container(key=f"chart_{key}").html(figure_html(svg), unsafe_allow_javascript=True)
    else:
        holder = where if clickable else where.container(key=f"chart_{key}")
        options: dict[str, Any] = {"key": f"chart_{key}", "on_select": "rerun"} if clickable else {}
        event = holder.vega_lite_chart(compact_tables(themed(spec, dark_theme())), theme=None, width="stretch",
                                       **options)
    downloads(spec, key, name, where)
    return event if clickable else None


def downloads(spec: dict[str, Any], key: str, name: str, where: Any = st) -> None:
    """The figure's two downloads side by side, each made only when clicked: its numbers as CSV and the chart as
    SVG in the light look (from the spec, whoever drew it on the page), as files named `name`."""
    row = where.container(horizontal=True, gap="small")
    row.download_button("data (CSV)", lambda: data_csv(spec), file_name=f"{name}.csv", mime="text/csv",
                        key=f"csv_{key}", help="the numbers drawn in this figure", on_click="ignore")
    row.download_button("figure (SVG)", lambda: spec_svg(spec), file_name=f"{name}.svg", mime="image/svg+xml",
                        key=f"svg_{key}", on_click="ignore",
                        help="this chart as a vector image in the light look, for a paper or slides")


HOVER_JS = """() => {
  if (window.nlivisHover) return;
  window.nlivisHover = true;
  document.addEventListener("pointermove", (event) => {
    const mark = event.target.closest
      ? event.target.closest(".FIGURE_CLASS [HOVER_ATTRIBUTE][aria-label], .FIGURE_CLASS [GRID_ATTRIBUTE]") : null;
    let tip = document.getElementById("nlivis-hover");
    let text = mark && mark.getAttribute("aria-label");
    if (mark && mark.hasAttribute("GRID_ATTRIBUTE")) {  // a heatmap's cells as one image: the cell under the pointer
      mark.nlivisGrid = mark.nlivisGrid || JSON.parse(mark.getAttribute("GRID_ATTRIBUTE"));
      const grid = mark.nlivisGrid, box = mark.getBoundingClientRect();
      const column = Math.min(grid.columns - 1, Math.max(0, Math.floor((event.clientX - box.left) / box.width * grid.columns)));
      const row = Math.min(grid.rows - 1, Math.max(0, Math.floor((event.clientY - box.top) / box.height * grid.rows)));
      text = grid.labels[row * grid.columns + column];
    }
    if (!mark || !text) {
      if (tip) tip.style.display = "none";
      return;
    }
    if (!tip) {
      tip = document.body.appendChild(document.createElement("div"));
      tip.id = "nlivis-hover";
      tip.setAttribute("role", "tooltip");
      tip.style.cssText = "position: fixed; z-index: 1000000; pointer-events: none; white-space: pre-line; "
        + "max-width: 28rem; padding: 0.3rem 0.5rem; border-radius: 0.25rem; font: 0.8rem sans-serif; "
        + "background: rgba(38, 39, 48, 0.95); color: #fff";
    }
    tip.textContent = text;
    tip.style.display = "block";
    const left = event.clientX + 14 + tip.offsetWidth > window.innerWidth ? event.clientX - 14 - tip.offsetWidth
                                                                           : event.clientX + 14;
    const top = event.clientY + 14 + tip.offsetHeight > window.innerHeight ? event.clientY - 14 - tip.offsetHeight
                                                                           : event.clientY + 14;
    tip.style.left = `${Math.max(0, left)}px`;
    tip.style.top = `${Math.max(0, top)}px`;
  }, { passive: true });
}""".replace("FIGURE_CLASS", FIGURE_CLASS).replace("HOVER_ATTRIBUTE", HOVER_ATTRIBUTE).replace("GRID_ATTRIBUTE",
                                                                                                GRID_ATTRIBUTE)
"""Shows a server-drawn figure's hover text: one listener on the page, installed by the first figure (not an SVG
`<title>` per mark, which cost the browser two nodes a mark, `viz.vega.export.page_svg`), puts the `aria-label` of
the figure's mark under the pointer (only a mark's: an axis's or a legend's label is for screen readers) in one box
beside it, kept inside the window, and hides it anywhere else — also where a figure was just replaced. Over a
heatmap whose cells the server drew as one image (`viz.vega.raster_cells`) it shows the hover text of the cell
under the pointer, found from the pointer's place in the image."""

PLACE_FIGURE_JS = """
function placeFigure(parentElement, svg, kind) {
  let figure = parentElement.querySelector(".FIGURE_CLASS");
  if (!figure) {
    figure = parentElement.appendChild(document.createElement("div"));
    figure.className = kind ? `FIGURE_CLASS ${kind}` : "FIGURE_CLASS";
  }
  if (figure.nlivisSvg !== svg) {
    figure.innerHTML = svg;
    figure.nlivisSvg = svg;
  }
  (SHOW_HOVER_TEXT)();
  return figure;
}
""".replace("FIGURE_CLASS", FIGURE_CLASS).replace("SHOW_HOVER_TEXT", HOVER_JS)
"""For a component that shows a figure drawn on the server (`clickable_figure`, `point_map`): `placeFigure` puts
the SVG in the component's element, in a `FIGURE_CLASS` element (of a further class `kind` when given), again only
when it changed, shows the marks' hover text (`HOVER_JS`) and returns the figure's element."""

CLICKABLE_FIGURE_JS = PLACE_FIGURE_JS + """
export default function ({ parentElement, data, setTriggerValue }) {
  const figure = placeFigure(parentElement, data.svg);
  figure.onclick = (event) => {
    const mark = event.target.closest("[data-click]");
    if (mark) setTriggerValue("click", Number(mark.dataset.click));
  };
}
"""
"""The browser's half of a clickable figure drawn on the server: it puts the SVG in the page (again only when it
changed), sends the row number (`data-click`) of a clicked mark as the trigger value `click`, and shows the hover
text (`HOVER_JS`)."""
CLICKABLE_FIGURE_CSS = """
.FIGURE_CLASS [data-click] { cursor: pointer; }
.FIGURE_CLASS .mark-text { pointer-events: none; }
""".replace("FIGURE_CLASS", FIGURE_CLASS)
"""A clickable mark shows the hand; a value printed on a mark lets the click through to the mark."""


@cache
def clickable_figure() -> Any:
    """The component that shows a clickable figure drawn on the server (Streamlit's components v2: no iframe, the
    page's own DOM), registered once per process."""
    return st.components.v2.component("nlivis_clickable_figure", js=CLICKABLE_FIGURE_JS, css=CLICKABLE_FIGURE_CSS,
                                      isolate_styles=False)


_DRAWN = "nlivis_clickable_figures"
"""Session state: figure key → the spec its clickable figure was last drawn from on the server (`drawn_event`)."""


def clicked_event(spec: dict[str, Any], result: Any) -> dict[str, Any]:
    """The clickable figure's `result` (its component's value) as Vega-Lite's selection event would be: the
    clicked row's selection fields under the selection's name (`viz.vega.export.clicked_point`), or an empty
    selection when this run was not caused by a click on a mark."""
    point = clicked_point(spec, trigger_value(result, "click"))
    return {"selection": {point[0]: [point[1]]} if point else {}}


def trigger_value(result: Any, name: str) -> Any:
    """The trigger value `name` a server-drawn figure's component sent in this run (None when this run was not
    caused by it): Streamlit's component result reads as a mapping or by attribute."""
    return result.get(name) if isinstance(result, Mapping) else getattr(result, name, None)


def drawn_event(key: str) -> Any:
    """The selection event of the clickable figure `key` as the page's last run drew it, read before this run
    draws it again (a click that changes the figure itself, such as the head it frames): the clicked row of the
    server's drawing, else Vega-Lite's selection state."""
    spec = st.session_state.get(_DRAWN, {}).get(key)
    if spec is not None:
        event = clicked_event(spec, st.session_state.get(f"figure_{key}"))
        if event["selection"]:
            return event
    return st.session_state.get(f"chart_{key}")


def server_svg(spec: dict[str, Any], key: str, dark: bool, columns: int, clickable: bool = False) -> str | None:
    """The server's SVG of `spec` in the `dark` or light look for one of `columns` columns (kept:
    `cache.figures.page_svg`); None when the server does not draw it (`server_draws`) or the converter rejects it
    (logged: the browser then draws it, nothing is lost)."""
    if not server_draws(spec, clickable):
        return None
    try:
        return cached_figures.page_svg(cached_figures.fingerprint(spec), dark, columns, spec)
    except ValueError as error:
        LOG.warning("figure %s drawn in the browser: the server could not draw it (%s)", key, error)
        return None


def server_draws(spec: dict[str, Any], clickable: bool = False) -> bool:
    """Whether `show` draws `spec` on the server: `NLIVIS_FIGURES` does not ask for Vega-Lite, the converter is
    warm (`viz.vega.export.start_converter`, which the server's warm-up runs: a cold one made the first page after
    a launch 2-3 s slower than Vega-Lite in the browser), and it takes no input — or, `clickable`, only a click
    on one of its marks (`viz.vega.export.click_selection`)."""
    if os.environ.get(FIGURES_ENV, "svg") == "vega-lite" or not converter_ready():
        return False
    return not takes_input(spec) or (clickable and click_selection(spec) is not None)


def draw_ahead(spec: dict[str, Any], dark: bool, columns: int = 1) -> None:
    """Draw `spec` on the server now, as `show` will for a page in the `dark` or light look in one of `columns`
    columns, and keep it (`server_svg`): a page's work ahead, in the background, for what it shows next."""
    server_svg(spec, "ahead", dark, columns)


def figure_html(svg: str) -> str:
    """An element that the browser fills with `svg` by its own HTML parser: a script sets it as the element's
    inner HTML. `st.html` alone would not do: its sanitizer keeps HTML only and drops an SVG whole (Streamlit 1.67:
    DOMPurify's html profile), and Markdown's raw HTML is parsed in JavaScript and built node by node by React (a
    500 kB gates drawing took longer than Vega-Lite itself). The SVG travels as a JSON string with every "<"
    written "\\u003c": no text in it can end the script, and the sanitizer, which removes a script whose text
    looks like markup, keeps it. It is the converter's output from the app's own specs, every text in it escaped
    by Vega. The script also shows each mark's hover text (`HOVER_JS`)."""
    text = json.dumps(svg).replace("<", "\\u003c")
    return (f'<div class="{FIGURE_CLASS}"></div>'
            f"<script>{{const figure = document.currentScript.previousElementSibling; figure.innerHTML = {text}; "
            f"({HOVER_JS})();}}</script>")


INT32 = np.iinfo(np.int32)
"""The range a whole-number column must fit to be sent as int32 (`compact_table`)."""


def compact_table(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """A named table's rows as the frame Streamlit sends as Arrow: whole numbers as int32 where they fit, other
    numbers as float32, text as a categorical (each distinct string once, a small index per row) — about half
    the bytes of int64, float64 and a string per row, for the browser to fetch and decode. float32 keeps about 7
    significant digits, more than a hover's format shows (the CSV download is made from the spec's own
    numbers)."""
    frame = pd.DataFrame.from_records(rows)
    for name, column in frame.items():
        if pd.api.types.is_bool_dtype(column):
            continue
        if pd.api.types.is_integer_dtype(column) and (column.empty or INT32.min <= column.min() <= column.max()
                                                      <= INT32.max):
            frame[name] = column.astype(np.int32)
        elif pd.api.types.is_float_dtype(column):
            frame[name] = column.astype(np.float32)
        elif pd.api.types.is_string_dtype(column):  # pandas' str, or object holding only strings
            frame[name] = column.astype("category")
    return frame


def compact_tables(spec: Mapping[str, Any]) -> dict[str, Any]:
    """`spec` with each named table of its `datasets` (views that each read their own table) as a `compact_table`
    frame; `spec` itself, which the caches share, is not changed. A spec's top-level `data.values` stay as they
    are: Streamlit converts them to Arrow as it always has."""
    named = spec.get("datasets")
    if not isinstance(named, Mapping):
        return dict(spec)
    return {**spec, "datasets": {name: compact_table(rows) if isinstance(rows, list) else rows
                                 for name, rows in named.items()}}


def dark_theme() -> bool:
    """Whether the reader's browser shows Streamlit's dark theme (light until the browser has said)."""
    theme = getattr(st.context, "theme", None)
    return getattr(theme, "type", None) == "dark"


def clicked_points(event: Any, param: str) -> list[dict[str, Any]]:
    """The field dicts a Vega-Lite chart's point selection `param` holds (empty when nothing is selected)."""
    try:
        return clicked_values(event["selection"], param)
    except (KeyError, TypeError):
        return []


def new_click(key: str, event: Any, param: str) -> list[dict[str, Any]]:
    """The clicked points of `event` (of the chart's selection `param`) when it is a click not acted on before
    (else []): a chart's selection stays in the session on later reruns, and after Back the URL, not an old click,
    says what is shown."""
    points = clicked_points(event, param)
    return points if state.new_event(f"chart_{key}", points) else []


def clicked_fields(points: list[dict[str, Any]], fields: tuple[str, ...]) -> list[Any] | None:
    """The values of `fields` (what the chart's builder put in each point's row to say what it stands for, e.g. a
    pair's split and row) of the first clicked point that has them all, else None."""
    return next(([point[field] for field in fields] for point in points if all(f in point for f in fields)), None)
