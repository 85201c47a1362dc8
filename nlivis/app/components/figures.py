"""A figure with its downloads (its numbers as CSV, the chart as SVG, each made only when clicked), and the clicks
a figure sends back (a point's fields, a confusion-matrix cell).

A figure is a Vega-Lite spec (a dict, nlivis.viz.vega): Vega-Lite's chunk costs a new browser tab about 0.25 s
where plotly's cost 1.1 s (bench/chart_libraries.py), so the app draws no plotly chart. Streamlit 1.67's Vega-Lite
toolbar offers "Download as PNG" (at twice the screen's resolution) but no SVG, so a spec's vector file is a button
of its own beside its CSV (`viz.vega.export`: made on the server when clicked)."""
from __future__ import annotations

from typing import Any

import streamlit as st

from nlivis.app import state
from nlivis.viz.common import clean_file_name
from nlivis.viz.vega.common import clicked_values, data_csv, themed
from nlivis.viz.vega.export import spec_svg


def show(spec: dict[str, Any], key: str, filename: str | None = None, clickable: bool = False, where: Any = st) -> Any:
    """Draw a Vega-Lite spec in Streamlit's look (`viz.vega.common.themed`, light or dark) with its downloads, the
    CSV and the SVG side by side, each made only when clicked; with `clickable`, a selection (every selection
    parameter of the spec) reruns the page and the selection event is returned (else None)."""
    name = clean_file_name(filename or key)
    options: dict[str, Any] = {"on_select": "rerun"} if clickable else {}
    event = where.vega_lite_chart(themed(spec, dark_theme()), theme=None, key=f"chart_{key}", width="stretch",
                                  **options)
    downloads = where.container(horizontal=True, gap="small")
    downloads.download_button("data (CSV)", lambda: data_csv(spec), file_name=f"{name}.csv", mime="text/csv",
                              key=f"csv_{key}", help="the numbers drawn in this figure", on_click="ignore")
    downloads.download_button("figure (SVG)", lambda: spec_svg(spec), file_name=f"{name}.svg", mime="image/svg+xml",
                              key=f"svg_{key}", on_click="ignore",
                              help="this chart as a vector image in the light look, for a paper or slides")
    return event if clickable else None


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
