"""Streamlit's plotly look written into a figure's own layout and traces, so that the browser plots it once.

With st.plotly_chart's default theme ("streamlit") the look reaches plotly.js as a `layout.template`, and
Streamlit's chart component applies it twice: when the chart is first drawn, and again in an effect right after it
mounts, on a JSON copy of the figure. plotly.js's `react` then finds a new template object (compared by identity,
edit type "calc") and plots the whole chart a second time (bench/chart_draw.py counts plotly's full plots: two
per chart on every page; the renderer's CPU profile, bench/chart_profile.py, puts the second ones at a fifth of a
page's drawing). `for_browser` makes the figure the browser is sent: the same look with no template at all, its
arrays as plain lists (plotly.py writes a numpy array as a typed array, which `react` never finds equal to its
copy) and a `datarevision` digested from its content (equal revisions tell `react` the data arrays are the same;
the same figure built again gets the same one, so Streamlit, whose chart id is digested from the figure, keeps the
chart's selection across reruns). Shown with
`theme=None`, the component's copy then changes nothing plotly compares, and each chart is plotted once.

The look is Streamlit 1.67's, light or dark: the template its Python side sets as plotly's default (colour
scales, colourway, per-trace defaults, its colours resolved) merged with what its chart component adds in the
browser (fonts, text and grid colours, backgrounds, automatic margins, a bold title), read off the charts it drew.
"""
from __future__ import annotations

import base64
import copy
import hashlib
import json
import re
from typing import Any

import numpy as np
import plotly.graph_objects as go

from nlivis.viz.margins import THEME_MARGINS, TICK_FONT_PX, TITLE_FONT_PX, TITLE_STANDOFF_PX

FONT = '"Source Sans", sans-serif'
TEXT_FONT_PX = 12
"""Size of Streamlit's chart text: legends, colour bar ticks, hover labels."""
HEADING_FONT_PX = 16
"""Size of a chart's (bold) title under Streamlit's theme."""
CLEAR = "rgba(0,0,0,0)"
"""Streamlit's "transparent" (plotly.py's validator knows no such colour; plotly.js reads both alike)."""

LIGHT: dict[str, Any] = {
    "text": "#808495", "heading": "#2F2D2B", "legend": "#262730", "grid": "#e6eaf1", "background": "#FFFFFF",
    "hover_border": "#DCD8D4",
    "colourway": ["#0068c9", "#83c9ff", "#ff2b2b", "#ffabab", "#29b09d", "#7defa1", "#ff8700", "#ffd16a", "#6d3fc0",
                  "#d5dae5"],
    "sequential": ["#e4f5ff", "#c7ebff", "#a6dcff", "#83c9ff", "#60b4ff", "#3d9df3", "#1c83e1", "#0068c9", "#0054a3",
                   "#004280"],
}
"""Streamlit's light theme as its plotly charts show it."""

DARK: dict[str, Any] = {
    "text": "#e6eaf1", "heading": "#EDEBE8", "legend": "#fafafa", "grid": "#31333F", "background": "#171614",
    "hover_border": "#4A4742",
    "colourway": ["#83c9ff", "#0068c9", "#ffabab", "#ff2b2b", "#7defa1", "#29b09d", "#ffd16a", "#ff8700", "#6d3fc0",
                  "#d5dae5"],
    "sequential": LIGHT["sequential"][::-1],
}
"""Streamlit's dark theme as its plotly charts show it."""

DIVERGING = ["#7d353b", "#bd4043", "#ff4b4b", "#ff8c8c", "#ffc7c7", "#a6dcff", "#60b4ff", "#1c83e1", "#0054a3",
             "#004280"]
"""Streamlit's diverging scale (the same in both themes)."""


def scale(colours: list[str]) -> list[list[Any]]:
    """A plotly colour scale of evenly spaced colours."""
    return [[i / (len(colours) - 1) if i else 0, colour] for i, colour in enumerate(colours)]


def streamlit_look(dark: bool = False) -> dict[str, Any]:
    """Streamlit's plotly template, colours resolved: {"layout": …, "data": {trace type: [defaults]}} (the trace
    types nlivis draws or could: those of Streamlit's template for financial, table and hierarchy charts are
    left out)."""
    theme = DARK if dark else LIGHT
    text, grid, background = theme["text"], theme["grid"], theme["background"]
    sequential = scale(theme["sequential"])
    axis = {"zerolinecolor": grid, "gridcolor": grid, "tickcolor": grid, "minor": {"gridcolor": grid},
            "tickfont": {"color": text, "size": TICK_FONT_PX}, "automargin": True}
    layout = {
        "coloraxis": {"colorscale": sequential, "colorbar": {
            "thickness": 16, "xpad": 24, "ticklabelposition": "outside", "outlinecolor": CLEAR,
            "outlinewidth": 8, "len": 0.75, "y": 0.5745, "title": {"font": {"color": text, "size": TITLE_FONT_PX}},
            "tickfont": {"color": text, "size": TEXT_FONT_PX}}},
        "colorscale": {"diverging": scale(DIVERGING), "sequential": sequential, "sequentialminus": sequential},
        "colorway": list(theme["colourway"]),
        "font": {"color": text, "family": FONT, "size": TEXT_FONT_PX, "weight": 400},
        "title": {"font": {"family": FONT, "size": HEADING_FONT_PX, "color": theme["heading"]}, "pad": {"l": 4},
                  "xanchor": "left", "x": 0},
        "legend": {"title": {"font": {"size": TEXT_FONT_PX, "color": text}, "side": "top"}, "valign": "top",
                   "bordercolor": CLEAR, "borderwidth": 0, "font": {"size": TEXT_FONT_PX, "color": theme["legend"]}},
        "paper_bgcolor": background, "plot_bgcolor": background,
        "yaxis": {**axis, "ticklabelposition": "outside",
                  "title": {"font": {"color": text, "size": TITLE_FONT_PX}, "standoff": TITLE_STANDOFF_PX["y"]}},
        "xaxis": {**axis, "showgrid": False, "zeroline": False,
                  "title": {"font": {"color": text, "size": TITLE_FONT_PX}, "standoff": TITLE_STANDOFF_PX["x"]}},
        "margin": {"pad": 8, "r": THEME_MARGINS["r"], "l": THEME_MARGINS["l"]},
        "hoverlabel": {"bgcolor": background, "bordercolor": theme["hover_border"],
                       "font": {"color": text, "family": FONT, "size": TEXT_FONT_PX}},
    }
    data = {kind: [{"colorscale": sequential}] for kind in ("heatmap", "contour", "histogram2d")}
    data["scatter"] = [{"marker": {"line": {"width": 0}}}]
    return {"layout": layout, "data": data}


NOT_CARTESIAN = {"pie", "table", "sankey", "sunburst", "treemap", "icicle", "funnelarea", "parcoords", "parcats",
                 "indicator", "scatterpolar", "scatterpolargl", "barpolar", "scattergeo", "choropleth",
                 "scattermap", "scattermapbox", "choroplethmap", "choroplethmapbox", "densitymap", "densitymapbox",
                 "scatter3d", "surface", "mesh3d", "cone", "streamtube", "volume", "isosurface", "scatterternary",
                 "scattersmith", "carpet", "scattercarpet", "contourcarpet"}
"""Trace types drawn on no x/y axes (a template's axis defaults create no axis for them)."""


def fill(target: dict[str, Any], defaults: dict[str, Any]) -> None:
    """Give `target` (in place) every value of `defaults` it does not set itself, nested dicts merged: what a
    template does."""
    for key, value in defaults.items():
        if target.get(key) is None:
            target[key] = copy.deepcopy(value)
        elif isinstance(value, dict) and isinstance(target[key], dict):
            fill(target[key], value)


TWO_D_MAPS = {"heatmap", "contour", "histogram2d", "histogram2dcontour"}
"""Trace types whose axes plotly.js gives outside ticks by default."""

ORIENTED = {"bar", "box", "violin", "histogram", "funnel", "waterfall"}
"""Trace types whose category axis plotly.js draws without grid lines (or zero line) by default."""


def axis_name(trace: dict[str, Any], letter: str) -> str:
    """The layout name of the x or y axis (`letter`) a trace is drawn on: "xaxis", "yaxis2", …"""
    return f"{letter}axis{str(trace.get(f'{letter}axis', letter))[1:]}"


def drawn_by_default(spec: dict[str, Any]) -> dict[str, dict[str, bool]]:
    """Per axis name, what plotly.js draws on it unless the axis says otherwise: grid lines (and with them the
    zero line) unless a bar-like trace has its categories there, outside ticks when a heatmap-like trace uses it."""
    defaults: dict[str, dict[str, bool]] = {}
    for trace in spec["data"]:
        kind = trace.get("type", "scatter")
        if kind in NOT_CARTESIAN:
            continue
        for letter in "xy":
            axis = defaults.setdefault(axis_name(trace, letter), {"grid": True, "ticks": False})
            axis["ticks"] |= kind in TWO_D_MAPS
            categories = "y" if trace.get("orientation") == "h" else "x"
            if kind in ORIENTED and letter == categories:
                axis["grid"] = False
    return defaults


def style_axis(axis: dict[str, Any], defaults: dict[str, Any], drawn: dict[str, bool]) -> None:
    """Fill an axis (in place) with a template's axis defaults as plotly.js reads them. A template's grid, zero
    line and tick colours only colour what the axis draws anyway (`drawn`: plotly's defaults for it), whereas the
    same colours set on the axis itself turn its grid, zero line and ticks on; so they are written only where the
    axis draws those, and a template's `minor` only into an axis that asks for minor ticks."""
    conditional = ("gridcolor", "zerolinecolor", "tickcolor", "minor")
    fill(axis, {key: value for key, value in defaults.items() if key not in conditional})
    shown = {"gridcolor": axis.get("showgrid", drawn["grid"]), "zerolinecolor": axis.get("zeroline", drawn["grid"]),
             "tickcolor": axis.get("ticks", "outside" if drawn["ticks"] else ""),
             "minor": isinstance(axis.get("minor"), dict)}
    fill(axis, {key: defaults[key] for key in conditional if key in defaults and shown[key]})


def subplot_names(spec: dict[str, Any], letter: str) -> list[str]:
    """The x (`letter` "x") or y axes a figure draws: those its layout names and those its traces use."""
    names = {key for key in spec["layout"] if re.fullmatch(f"{letter}axis[0-9]*", key)}
    for trace in spec["data"]:
        if trace.get("type", "scatter") not in NOT_CARTESIAN:
            names.add(axis_name(trace, letter))
    return sorted(names)


def apply_look(spec: dict[str, Any], look: dict[str, Any]) -> None:
    """Write a template (`streamlit_look`) into a figure's dict (in place) as plotly.js applies one: layout values
    the figure does not set, the axis defaults to every axis, the colour axis defaults to every colour axis it
    names, each trace type's defaults to its traces (in turn, when there are several); the title bold, as
    Streamlit's theme makes it."""
    layout = spec["layout"]
    drawn = drawn_by_default(spec)
    for key, defaults in look["layout"].items():
        if key in ("xaxis", "yaxis"):
            names = subplot_names(spec, key[0])
        elif key == "coloraxis":
            names = [name for name in layout if re.fullmatch("coloraxis[0-9]*", name)]
        else:
            names = [key]
        for name in names:
            if not isinstance(defaults, dict):
                fill(layout, {name: defaults})
            elif not isinstance(layout.setdefault(name, {}), dict):
                continue
            elif key in ("xaxis", "yaxis"):
                style_axis(layout[name], defaults, drawn.get(name, {"grid": True, "ticks": False}))
            else:
                fill(layout[name], defaults)
    seen: dict[str, int] = {}
    for trace in spec["data"]:
        kind = trace.get("type", "scatter")
        defaults = look["data"].get(kind)
        if defaults:
            fill(trace, defaults[seen.get(kind, 0) % len(defaults)])
            seen[kind] = seen.get(kind, 0) + 1
    if isinstance(layout.get("title"), dict):  # Streamlit wraps the title's text in <b>: the same drawing
        fill(layout["title"], {"font": {"weight": "bold"}})


def plain_values(value: Any) -> Any:
    """`value` with every array as a plain list: numpy arrays, and the typed arrays (`{"dtype", "bdata"}`)
    plotly.py writes for numeric ones; 32-bit floats written with the fewest digits that give them back."""
    if isinstance(value, dict):
        if "bdata" in value and "dtype" in value:
            array = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
            if "shape" in value:
                array = array.reshape([int(n) for n in str(value["shape"]).split(",")])
            return plain_values(array)
        return {key: plain_values(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain_values(item) for item in value]
    if isinstance(value, np.ndarray):
        if value.dtype == np.float32:  # 0.1, not 0.10000000149011612
            return value.astype(str).astype(float).tolist()  # numpy writes each with its shortest digits
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    return value


def selection_modes(layout: dict[str, Any], selection: tuple[str, ...]) -> None:
    """The click, hover and drag modes Streamlit's chart component gives a chart shown with these selection modes
    (st.plotly_chart's `selection_mode`, its `on_select` on), written into the layout (in place) where it sets
    none: the component sets them after mounting, and clickmode's change would plot the chart again."""
    points = "points" in selection
    fill(layout, {"hovermode": "closest",
                  "dragmode": "pan" if points else "select" if "box" in selection else "lasso" if "lasso" in selection
                  else "pan"})
    fill(layout, {"clickmode": "event" if layout["dragmode"] in ("select", "lasso")
                  else "event+select" if points else "none"})


def for_browser(figure: go.Figure, dark: bool = False, selection: tuple[str, ...] = ()) -> go.Figure:
    """The figure to hand to `st.plotly_chart(…, theme=None)`: `figure`'s look under Streamlit's theme (light or
    `dark`) written into its own layout and traces, no template, arrays as lists, `layout.datarevision` a digest
    of the rest; trace `meta` left out (plotly.js draws nothing from it; the CSV download reads it from `figure`);
    for a chart shown with `selection` modes, the modes Streamlit's component would give it (`selection_modes`).
    `figure` itself is not changed."""
    spec = plain_values(figure.to_dict())
    spec["layout"].pop("template", None)
    for trace in spec["data"]:
        trace.pop("meta", None)
    apply_look(spec, streamlit_look(dark))
    if selection:
        selection_modes(spec["layout"], selection)
    content = json.dumps(spec, sort_keys=True, default=str).encode()
    spec["layout"]["datarevision"] = hashlib.blake2b(content, digest_size=8).hexdigest()
    browser = go.Figure(spec, _validate=False)  # made of a valid figure's values and the look (checked by the tests)
    browser.layout.template = None  # sent as null: plotly.js reads no template
    return browser
