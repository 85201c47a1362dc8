"""A data map drawn on the server, and the browser's half that reads it: the pair under the pointer, a click on a
point, a box dragged over the map.

Vega-Lite drawing ten thousand points in the browser cost every new tab of the Data map about 0.9 s of CPU
(session 31's profile: Vega's parser, its expression interpreter and Arrow decoding), the page's whole excess over
Streamlit's floor. Here the server draws the map's frame — axes, legend, thresholds, region counts, the
selection's outline — as an SVG (`viz.vega.datamap.frame_spec`, the converter figures.show uses) with the points
as one image stretched over the plot (`points_image`), and a small component (Streamlit's components v2: no
iframe) shows it. The component gets each point's coordinates, id and group (`browser_points`), finds the point
nearest the pointer for its hover text and for a click, and turns a drag into a box in data units, sending what
Vega-Lite's selections sent: the page reads the same event either way (`viz.vega.datamap.clicked_pair`,
`boxed_ranges`). Until the converter is warm, and with `NLIVIS_FIGURES=vega-lite`, Vega-Lite draws the map.
"""
from __future__ import annotations

import base64
import re
from functools import cache
from typing import Any, Mapping

import pandas as pd
import streamlit as st

from nlivis.app.cache import figures as cached_figures
from nlivis.app.components import figures
from nlivis.viz.common import clean_file_name
from nlivis.viz.vega.datamap import BOX, CLICKED, PAIR, X, Y, frame_spec

PLACEHOLDER = "data:image/webp;base64,UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA=="
"""A 1×1 image the frame is drawn with (its SVG is kept per frame, whatever the points): replaced in the SVG by the
map's points (`points_image`), drawn at the size the converter gave the plot."""
IMAGE_SIZE = re.compile(r'<image [^>]*?width="([\d.]+)" height="([\d.]+)"')
NEAR_PX = 6
"""How far (screen pixels) from a point's centre the pointer may be for the point to be hovered or clicked."""

POINT_MAP_JS = figures.PLACE_FIGURE_JS + """
export default function ({ parentElement, data, setTriggerValue }) {
  const figure = placeFigure(parentElement, data.svg, "nlivis-point-map");
  figure.nlivisPoints = data.points;
  const image = figure.querySelector("image");
  if (!image) return;
  image.nlivisLabel = image.nlivisLabel || image.getAttribute("aria-label") || "";
  const points = data.points, near = NEAR_PX;
  const toData = (clientX, clientY) => {
    const box = image.getBoundingClientRect(), [x0, x1] = points.domain.x, [y0, y1] = points.domain.y;
    return [x0 + (clientX - box.left) / box.width * (x1 - x0), y1 - (clientY - box.top) / box.height * (y1 - y0)];
  };
  const nearest = (clientX, clientY) => {  // the last drawn (topmost) of the nearest points within `near` pixels
    const box = image.getBoundingClientRect(), [x0, x1] = points.domain.x, [y0, y1] = points.domain.y;
    const kx = box.width / (x1 - x0) / 10000, ky = box.height / (y1 - y0) / 10000;
    const ox = box.left - x0 * 10000 * kx - clientX, oy = box.top + y1 * 10000 * ky - clientY;
    let best = -1, bestDistance = near * near;
    for (let i = 0; i < points.x.length; i++) {
      const dx = points.x[i] * kx + ox, dy = oy - points.y[i] * ky, distance = dx * dx + dy * dy;
      if (distance <= bestDistance) { best = i; bestDistance = distance; }
    }
    return best;
  };
  const describe = i => `pair: ${points.ids[i]}\\nvariability: ${(points.x[i] / 10000).toFixed(3)}`
    + `\\nconfidence: ${(points.y[i] / 10000).toFixed(3)}\\n${points.field}: ${points.names[points.groups[i]]}`;
  let brush = figure.querySelector(".nlivis-brush");
  if (!brush) {
    brush = figure.appendChild(document.createElement("div"));
    brush.className = "nlivis-brush";
  }
  if (!figure.nlivisDrag) brush.style.display = "none";  // a rerun drew the box (its outline) or dropped it
  figure.onpointermove = event => {  // before the page's hover listener reads the image's label
    if (figure.nlivisDrag) return;
    const i = event.target === image ? nearest(event.clientX, event.clientY) : -1;
    if (i >= 0) {
      image.setAttribute("data-hover", "1");
      image.setAttribute("aria-label", describe(i));
      image.style.cursor = "pointer";
    } else {
      image.removeAttribute("data-hover");
      image.setAttribute("aria-label", image.nlivisLabel);
      image.style.cursor = "crosshair";
    }
  };
  figure.onpointerdown = event => {
    if (event.target !== image || event.button !== 0) return;
    event.preventDefault();
    figure.nlivisDrag = { x: event.clientX, y: event.clientY };
    const frame = figure.getBoundingClientRect(), plot = image.getBoundingClientRect();
    const draw = (x, y) => {
      const left = Math.max(plot.left, Math.min(x, figure.nlivisDrag.x)), right = Math.min(plot.right, Math.max(x, figure.nlivisDrag.x));
      const top = Math.max(plot.top, Math.min(y, figure.nlivisDrag.y)), bottom = Math.min(plot.bottom, Math.max(y, figure.nlivisDrag.y));
      brush.style.cssText = `display: block; left: ${left - frame.left}px; top: ${top - frame.top}px; `
        + `width: ${right - left}px; height: ${bottom - top}px`;
    };
    const moved = move => draw(move.clientX, move.clientY);
    const released = up => {
      window.removeEventListener("pointermove", moved);
      window.removeEventListener("pointerup", released);
      const start = figure.nlivisDrag;
      figure.nlivisDrag = null;
      if (Math.abs(up.clientX - start.x) < 4 && Math.abs(up.clientY - start.y) < 4) {
        brush.style.display = "none";
        const i = nearest(up.clientX, up.clientY);
        if (i >= 0) setTriggerValue("click", i);
        return;
      }
      const [ax, ay] = toData(start.x, start.y), [bx, by] = toData(up.clientX, up.clientY);
      setTriggerValue("box", { x: [ax, bx], y: [ay, by] });
    };
    window.addEventListener("pointermove", moved);
    window.addEventListener("pointerup", released);
  };
}
""".replace("NEAR_PX", str(NEAR_PX))
"""The browser's half: puts the SVG in the page (again only when it changed); on a hover, labels the plot's image
with the nearest point's pair, coordinates and group (`HOVER_JS` shows it) and shows the hand; a press and release
in place sends the nearest point's row as the trigger value `click`, a drag (drawn as a box while it lasts) the
box's two corners in data units as `box`."""
POINT_MAP_CSS = """
.nlivis-point-map { position: relative; user-select: none; touch-action: none; }
.nlivis-point-map .mark-text, .nlivis-point-map .mark-rule, .nlivis-point-map .mark-line { pointer-events: none; }
.nlivis-brush { display: none; position: absolute; pointer-events: none; border: 1px solid #111;
                background: rgba(128, 128, 128, 0.2); }
"""
"""The thresholds, counts and outline let the pointer through to the points under them; the box while dragged."""


@cache
def point_map() -> Any:
    """The component that shows a data map drawn on the server, registered once per process."""
    return st.components.v2.component("nlivis_point_map", js=POINT_MAP_JS, css=POINT_MAP_CSS, isolate_styles=False)


def show(spec: dict[str, Any], key: str, filename: str, columns: int = 1) -> dict[str, Any] | None:
    """Draw `viz.vega.datamap.data_map_spec`'s map for one of `columns` columns, with its downloads; the selection
    event a click or a box gave this run, in Vega-Lite's shape (`{"selection": {CLICKED: [{PAIR: id}]}}`,
    `{"selection": {BOX: {X: [a, b], Y: [c, d]}}}`, or no selection), whoever drew the map."""
    # a map of no trained pair is a message, drawn as any figure; a frame the server does not draw (the converter
    # cold or refusing it, NLIVIS_FIGURES=vega-lite) leaves the map to Vega-Lite
    svg = figures.server_svg(frame_spec(spec, PLACEHOLDER), key, figures.dark_theme(), columns) if "layer" in spec \
        else None
    size = IMAGE_SIZE.search(svg) if svg is not None else None
    if size is None:
        return figures.show(spec, key, filename, clickable=True)
    width, height = round(float(size.group(1))), round(float(size.group(2)))
    fingerprint = cached_figures.fingerprint(spec)
    image = base64.b64encode(cached_figures.points_image(fingerprint, width, height, spec)).decode("ascii")
    drawn = svg.replace(PLACEHOLDER, f"data:image/webp;base64,{image}")
    with st.container(key=f"chart_{key}"):
        result = point_map()(data={"svg": drawn, "points": cached_figures.browser_points(fingerprint, spec)},
                             key=f"figure_{key}",
                             on_click_change=lambda: None, on_box_change=lambda: None)
    figures.downloads(spec, key, clean_file_name(filename))
    return selection_event(spec, result)


def selection_event(spec: Mapping[str, Any], result: Any) -> dict[str, Any]:
    """The component's `result` as Vega-Lite's selection event: a clicked row's pair id under `CLICKED`, a box's
    ranges under `BOX`; an empty selection when this run was not caused by either (or the row names no point)."""
    click, box = figures.trigger_value(result, "click"), figures.trigger_value(result, "box")
    if isinstance(click, int) and not isinstance(click, bool):
        ids = pd.Series(spec["data"]["values"][PAIR]).tolist()
        if 0 <= click < len(ids):
            return {"selection": {CLICKED: [{PAIR: ids[click]}]}}
    if isinstance(box, Mapping):
        return {"selection": {BOX: {X: box.get("x"), Y: box.get("y")}}}
    return {"selection": {}}
