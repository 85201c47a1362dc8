"""A figure with its downloads (camera button as SVG or PNG, the numbers behind it as CSV, made only when
clicked), and the clicks a figure sends back (a point's customdata, a confusion-matrix cell)."""
from __future__ import annotations

from typing import Any

import streamlit as st

from nlivis.app import state
from nlivis.app.components.frame import image_format
from nlivis.viz.common import clean_file_name, figure_data_csv, plotly_config
from nlivis.viz.margins import fit_margins
from nlivis.viz.themed import for_browser


def show(figure: Any, key: str, filename: str | None = None, clickable: bool = False, where: Any = st,
         selection_mode: tuple[str, ...] = ("points",)) -> Any:
    """Draw a plotly figure with its downloads; with `clickable`, a click on a point (and a box or lasso drawn,
    when `selection_mode` names them) reruns the page and the selection event is returned (else None)."""
    name = clean_file_name(filename or key)
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


def clicked_points(event: Any) -> list[dict[str, Any]]:
    """The points of a plotly selection event (empty when nothing is selected)."""
    try:
        return list(event["selection"]["points"])
    except (KeyError, TypeError):
        return []


def new_click(key: str, event: Any) -> list[dict[str, Any]]:
    """The clicked points of `event` when it is a click not acted on before (else []): a chart's selection
    stays in the session on later reruns, and after Back the URL, not an old click, says what is shown."""
    points = clicked_points(event)
    return points if state.new_event(f"chart_{key}", points) else []


def clicked_customdata(points: list[dict[str, Any]]) -> list[Any] | None:
    """The customdata of the first clicked point, when it has some."""
    for point in points:
        custom = point.get("customdata")
        if isinstance(custom, (list, tuple)) and custom:
            return list(custom)
    return None
