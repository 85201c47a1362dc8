"""A figure with its downloads (camera button as SVG or PNG, the numbers behind it as CSV, made only when
clicked), and the clicks a figure sends back (a point's customdata, a confusion-matrix cell).

A figure is a plotly figure or a Vega-Lite spec (a dict, nlivis.viz.vega): Vega-Lite's chunk costs a new browser
tab about 0.15 s where plotly's costs 1.3 s (bench/chart_libraries.py). Streamlit 1.67's Vega-Lite toolbar offers
"Download as PNG" (at twice the screen's resolution) but no SVG, so a spec's vector file is a button of its own beside
its CSV (`viz.vega.export`: made on the server when clicked); the sidebar's figure-format choice applies to plotly
figures only (the spec's `usermeta.embedOptions` reaches vega-embed for the theme, renderer and padding alone)."""
from __future__ import annotations

from typing import Any

import streamlit as st

from nlivis.app import state
from nlivis.app.components.frame import image_format
from nlivis.viz.common import clean_file_name, figure_data_csv, plotly_config
from nlivis.viz.margins import fit_margins
from nlivis.viz.themed import for_browser
from nlivis.viz.vega.common import clicked_values, data_csv, themed
from nlivis.viz.vega.export import spec_svg


def show(figure: Any, key: str, filename: str | None = None, clickable: bool = False, where: Any = st,
         selection_mode: tuple[str, ...] = ("points",)) -> Any:
    """Draw a plotly figure or a Vega-Lite spec with its downloads; with `clickable`, a click on a point (and a
    box or lasso drawn, when `selection_mode` names them; a spec's own selection parameters) reruns the page and
    the selection event is returned (else None)."""
    name = clean_file_name(filename or key)
    if isinstance(figure, dict):
        return show_spec(figure, key, name, clickable, where)
    if not getattr(figure, "_margins_fitted", False):  # once per figure object: the app caches many of them
        fit_margins(figure)
        figure._margins_fitted = True
    options: dict[str, Any] = {"on_select": "rerun", "selection_mode": selection_mode} if clickable else {}
    sent = browser_figure(figure, selection_mode if clickable else ())
    event = where.plotly_chart(sent, theme=None, config=plotly_config(image_format(), name), key=f"chart_{key}",
                               width="stretch", **options)
    where.download_button("data (CSV)", lambda: figure_data_csv(figure), file_name=f"{name}.csv", mime="text/csv",
                          key=f"csv_{key}", help="the numbers drawn in this figure", on_click="ignore")
    return event if clickable else None


def show_spec(spec: dict[str, Any], key: str, name: str, clickable: bool, where: Any) -> Any:
    """Draw a Vega-Lite spec in Streamlit's look (`viz.vega.common.themed`, light or dark) with its downloads, the
    CSV and the SVG side by side, each made only when clicked; with `clickable`, a selection (every selection
    parameter of the spec) reruns the page and is returned."""
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


def browser_figure(figure: Any, selection: tuple[str, ...] = ()) -> Any:
    """`figure` as the browser is sent it (`viz.themed.for_browser`: Streamlit's look written in, so that each
    chart is plotted once), made once per figure object, theme and selection modes: the app caches many figures."""
    wanted = (dark_theme(), tuple(selection))
    made = getattr(figure, "_for_browser", None)
    if made is None or made[0] != wanted:
        made = (wanted, for_browser(figure, *wanted))
        figure._for_browser = made
    return made[1]


def clicked_points(event: Any, param: str | None = None) -> list[dict[str, Any]]:
    """The points of a plotly selection event, or with `param` the field dicts a Vega-Lite chart's point
    selection `param` holds (empty when nothing is selected)."""
    try:
        return clicked_values(event["selection"], param) if param else list(event["selection"]["points"])
    except (KeyError, TypeError):
        return []


def new_click(key: str, event: Any, param: str | None = None) -> list[dict[str, Any]]:
    """The clicked points of `event` (a Vega-Lite chart's: of its selection `param`) when it is a click not acted
    on before (else []): a chart's selection stays in the session on later reruns, and after Back the URL, not an
    old click, says what is shown."""
    points = clicked_points(event, param)
    return points if state.new_event(f"chart_{key}", points) else []


def clicked_customdata(points: list[dict[str, Any]], fields: tuple[str, ...] = ()) -> list[Any] | None:
    """The customdata of the first clicked point, when it has some; for a Vega-Lite chart's points, the values of
    `fields` (what its builder put where a plotly figure put customdata), when the point has them all."""
    if fields:
        return next(([point[field] for field in fields] for point in points if all(f in point for f in fields)),
                    None)
    for point in points:
        custom = point.get("customdata")
        if isinstance(custom, (list, tuple)) and custom:
            return list(custom)
    return None
