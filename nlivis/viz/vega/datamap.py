"""The data map (dataset cartography) as a Vega-Lite scatter: a point per trained pair at (variability, confidence),
coloured by a category, the region thresholds drawn and each region's count written in it. A box dragged over the
map is an interval selection (`BOX`, read back by `boxed_ranges`), a click on a point a point selection
(`CLICKED`, its pair id, `clicked_pair`), so the page can list a part of the map or open a pair.

The points are the spec's data, a typed frame of the four fields the encodings, tooltip and click read (a map holds
ten thousand pairs or more: Streamlit draws them on a canvas past 2,000 points, and the browser decodes and encodes
every row, through Streamlit's CSP-safe expression interpreter, on every visit): `point_frame`. The thresholds,
labels and outline carry their own few rows.

A page draws the map on the server instead (`frame_spec`, `points_image`, `browser_points`): Vega in the browser
cost every new tab of the Data map about 0.9 s of CPU (session 31's profile), where the server's drawing is an SVG
of the axes, legend, thresholds and outline with the points as one image over the plot, and the browser finds the
point under the pointer itself."""
from __future__ import annotations

import io
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from PIL import Image, ImageColor, ImageDraw

from nlivis.viz.common import CATEGORY_COLOURS, RED_YELLOW_BLUE, scale_colours
from nlivis.viz.vega.common import clicked_values, message_spec, point_selection

MAX_VARIABILITY = 0.5
"""The x axis ends here: the largest standard deviation probabilities can have."""
X, Y = "variability", "confidence"
"""The fields of a point's coordinates; an interval selection names its ranges by them."""
BOX = "box"
"""The interval selection a dragged box sets: {X: [low, high], Y: [low, high]} in data units."""
CLICKED = "point"
"""The point selection a click sets (to the point's `PAIR` id, read back by `clicked_pair`)."""
PAIR = "pair"
ID_LIMIT = 2 ** 31
"""Pair ids written as decimal integers below this travel as int32 (`pair_ids`)."""
_PLAIN_INTEGER = re.compile(r"0|[1-9][0-9]{0,9}")
"""A pair id that reads back the same from its number: ASCII digits, no leading zero, at most 10 of them."""
POINT_AREA = 14
"""A point's area in square pixels, a disc about 4 px across: ten thousand must not hide each other's density."""
POINT_OPACITY = 0.7
OUTLINE_COLOUR = "#111111"
LABEL_COLOUR = "#222222"
HALO = "#ffffff"
"""Region counts and the selection's outline are dark on a white halo: read over dense points, in either theme."""
GREYS = {"other": "#c7c7c7", "(not tagged)": "#e0e0e0", "not trained on": "#9d9d9d", "training pair": "#d4d4d4"}
"""Groups that are background: grey (training pairs are the light background augmented kinds stand out on)."""


def group_colours(groups: Sequence[str]) -> dict[str, str]:
    """A colour per group: "k/E right" groups on a red (never right) → blue (always right) scale, as the paper's
    figure; any other categories in distinct hues, the `GREYS` groups grey."""
    colours: dict[str, str] = {}
    right = sorted((g for g in groups if g.endswith(" right") and "/" in g), key=lambda g: int(g.split("/")[0]))
    if right:
        shares = [int(g.split("/")[0]) / max(1, int(g.split("/")[1].split()[0])) for g in right]
        colours.update(zip(right, scale_colours([0.05 + 0.9 * share for share in shares], RED_YELLOW_BLUE, 0.0, 1.0)))
    # beside a grey group, a grey hue would differ from it only in lightness
    beside_grey = any(g in GREYS for g in groups)
    hues = [c for c in CATEGORY_COLOURS if not (beside_grey and is_grey(c))]
    position = 0
    for group in groups:
        if group in colours:
            continue
        if group in GREYS:
            colours[group] = GREYS[group]
        else:
            colours[group] = hues[position % len(hues)]
            position += 1
    return colours


def is_grey(colour: str) -> bool:
    """Whether a "#rrggbb" colour has no hue."""
    red, green, blue = (colour[i:i + 2] for i in (1, 3, 5))
    return red == green == blue


def group_order(group: str) -> tuple:
    """Sort "k/E right" first, by k; token ranges by their first number; the rest by name."""
    head = group.split("/")[0].split("–")[0].split()[0] if group else ""
    return (not group.endswith(" right"), *((0, int(head), group) if head.isdigit() else (1, 0, group)))


def data_map_spec(variability: np.ndarray, confidence: np.ndarray, groups: Sequence[str], ids: Sequence[str],
                  thresholds: tuple[float, float, float], counts: Mapping[str, int], title: str,
                  colour_name: str = "colour", outline: tuple[str, Sequence[float], Sequence[float]] | None = None,
                  height: int = 620) -> dict[str, Any]:
    """The map: a point per pair with finite coordinates, at the coordinates given (the page gives them rounded to
    four digits, `analysis.datamap.drawn_coordinates`); the spec's data (and its CSV) is each point's `PAIR` id,
    `X`, `Y` and group under `colour_name` (`point_frame`); the legend's groups sorted, each with
    its count. `thresholds` = (ambiguous variability, easy confidence, hard confidence) are drawn as dashed lines,
    `counts` = pairs per region written in the regions; `outline` = ("box" or "lasso", xs, ys) draws the current
    selection over the points, so that a restored view shows it. Dragging sets the `BOX` selection, a click the
    `CLICKED` one."""
    variability, confidence = np.asarray(variability, dtype=float), np.asarray(confidence, dtype=float)
    drawable = np.flatnonzero(np.isfinite(variability) & np.isfinite(confidence))
    if not len(drawable):
        return message_spec("no pair of this checkpoint was trained on: nothing to map", height)
    chosen = [str(groups[i]) for i in drawable]
    present = sorted(set(chosen), key=group_order)
    colours = group_colours(present)
    sizes = {group: chosen.count(group) for group in present}
    legend_counts = json.dumps({group: f" ({sizes[group]:,})" for group in present}, ensure_ascii=False)
    points = point_frame([str(ids[i]) for i in drawable], variability[drawable], confidence[drawable], chosen,
                         present, colour_name)
    layers = [{
        # aria: no per-point description (Vega-Lite writes one per datum, an expression run per point in the
        # browser, for a canvas that shows a screen reader none of them)
        "mark": {"type": "circle", "size": POINT_AREA, "opacity": POINT_OPACITY, "cursor": "pointer", "aria": False},
        "params": [{"name": BOX, "select": {"type": "interval", "encodings": ["x", "y"], "zoom": False,
                                            "clear": "dblclick"}},
                   point_selection(CLICKED, (PAIR,))],
        "encoding": {
            "x": axis(X, "variability (std of the gold label's probability over epochs)"),
            "y": axis(Y, "confidence (mean probability of the gold label)"),
            "color": {"field": colour_name, "type": "nominal",
                      "scale": {"domain": present, "range": [colours[g] for g in present]},
                      "legend": {"title": colour_name, "orient": "right", "symbolOpacity": 1,
                                 "labelExpr": f"datum.label + {legend_counts}[datum.label]"}},
            "tooltip": [{"field": PAIR, "type": "nominal"}, {"field": X, "type": "quantitative", "format": ".3f"},
                        {"field": Y, "type": "quantitative", "format": ".3f"},
                        {"field": colour_name, "type": "nominal"}]}}]
    layers += threshold_layers(thresholds, counts)
    if outline is not None:
        layers += outline_layers(*outline)
    return {"title": title, "height": height, "data": {"values": points}, "layer": layers}


def point_frame(ids: Sequence[str], variability: np.ndarray, confidence: np.ndarray, groups: Sequence[str],
                present: Sequence[str], colour_name: str) -> pd.DataFrame:
    """The points as the chart's data, each field in the smallest type that draws and reads back the same: the pair
    id (`pair_ids`), the coordinates as float32 (they are rounded to 4 digits; float32 keeps 7, far below a pixel,
    and a box is tested on the server against the float64 values, `analysis.datamap.members`), the group as a
    category of the `present` groups (Arrow sends each name once, the points as small codes; Vega reads the
    names). Streamlit sends the frame to the browser as Arrow with these types: a third of the bytes of rows of
    Python values, and no row dict to build on the server."""
    return pd.DataFrame({PAIR: pair_ids(ids), X: np.asarray(variability, dtype=np.float32),
                         Y: np.asarray(confidence, dtype=np.float32),
                         colour_name: pd.Categorical(list(groups), categories=list(present))})


def pair_ids(ids: Sequence[str]) -> np.ndarray | list[str]:
    """Pair ids as the chart carries them: int32 when every one is a plain decimal integer below `ID_LIMIT` (SNLI's,
    MultiNLI's rows: written back the same by `clicked_pair`), else the text."""
    if ids and all(map(_PLAIN_INTEGER.fullmatch, ids)):  # a C loop: a Python test per id cost a map ~30 ms a run
        numbers = np.fromiter(map(int, ids), dtype=np.int64, count=len(ids))
        if numbers.max() < ID_LIMIT:
            return numbers.astype(np.int32)
    return list(ids)


def clicked_pair(selection: Any) -> str | None:
    """The pair id of the one point a `CLICKED` selection holds in a Vega-Lite selection event's `selection` (an
    integer id back as its text), or None: no click, several points, or a click on no point (a line, a label)."""
    chosen = clicked_values(selection, CLICKED)
    if len(chosen) != 1:
        return None
    value = chosen[0].get(PAIR)
    if isinstance(value, bool):
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value) if isinstance(value, (int, str)) else None


def axis(name: str, title: str) -> dict[str, Any]:
    """A coordinate's encoding over its whole possible range (maps of two checkpoints share their axes)."""
    top = MAX_VARIABILITY if name == X else 1.0
    pad = 0.01 * top
    return {"field": name, "type": "quantitative", "title": title,
            "scale": {"domain": [-pad, top + pad], "nice": False, "zero": False}, "axis": {"values": ticks(top)}}


def ticks(top: float) -> list[float]:
    return [round(top * i / 5, 2) for i in range(6)]


def threshold_layers(thresholds: tuple[float, float, float], counts: Mapping[str, int]) -> list[dict[str, Any]]:
    """The dashed threshold lines and each region's count, written in its corner (dark on a white halo)."""
    ambiguous, easy, hard = thresholds
    lines = [{X: ambiguous, "x2": ambiguous, Y: 0.0, "y2": 1.0}, {X: 0.0, "x2": ambiguous, Y: easy, "y2": easy},
             {X: 0.0, "x2": ambiguous, Y: hard, "y2": hard}]
    labels = [{"text": f"{region}: {counts.get(region, 0):,}", X: x, Y: y, "baseline": baseline}
              for region, x, y, baseline in (("easy-to-learn", 0.005, 1.0, "top"),
                                             ("hard-to-learn", 0.005, 0.0, "bottom"),
                                             ("ambiguous", ambiguous + 0.005, 1.0, "top"))]
    position = {"x": {"field": X, "type": "quantitative"}, "y": {"field": Y, "type": "quantitative"}}
    text = {"type": "text", "align": "left", "fontSize": 13, "fontWeight": "bold"}
    layers = [{"data": {"values": lines}, "mark": {"type": "rule", "color": LABEL_COLOUR, "strokeWidth": 2,
                                                   "strokeDash": [6, 4]},
               "encoding": {**position, "x2": {"field": "x2"}, "y2": {"field": "y2"}}}]
    for label in labels:  # one layer per baseline: Vega-Lite's text baseline is a mark property, not a channel
        mark = {**text, "baseline": label["baseline"], "dy": 3 if label["baseline"] == "top" else -3}
        row = {"data": {"values": [{k: v for k, v in label.items() if k != "baseline"}]},
               "encoding": {**position, "text": {"field": "text"}}}
        layers += [{**row, "mark": {**mark, "stroke": HALO, "strokeWidth": 4, "strokeOpacity": 0.85, "color": HALO}},
                   {**row, "mark": {**mark, "color": LABEL_COLOUR}}]
    return layers


def outline_layers(kind: str, xs: Sequence[float], ys: Sequence[float]) -> list[dict[str, Any]]:
    """The current selection's outline, a closed line over the points (dark on a white halo): a box from its two
    corners, a lasso (a link made before boxes replaced it) through its vertices; clipped to the plot, as a box past
    an axis's end (a link's `box:0,1,0,1` over a map whose variability ends at 0.5) otherwise widened the drawing and
    the page scaled the whole map down until its text could not be read."""
    if kind == "box":
        xs, ys = [xs[0], xs[1], xs[1], xs[0]], [ys[0], ys[0], ys[1], ys[1]]
    vertices = [{"order": i, X: float(x), Y: float(y)} for i, (x, y) in enumerate(zip([*xs, xs[0]], [*ys, ys[0]]))]
    encoding = {"x": {"field": X, "type": "quantitative"}, "y": {"field": Y, "type": "quantitative"},
                "order": {"field": "order", "type": "quantitative"}}
    return [{"data": {"values": vertices}, "mark": {"type": "line", "color": colour, "strokeWidth": width, "clip": True},
             "encoding": encoding} for colour, width in ((HALO, 4.5), (OUTLINE_COLOUR, 2))]


def boxed_ranges(selection: Any) -> tuple[list[float], list[float]] | None:
    """(the x range, the y range) of the box a `BOX` selection holds in a Vega-Lite selection event's `selection`
    (st.vega_lite_chart sends an interval as {field: [one end, other end]}, in data units), each end within the
    axis's range of values (a drag past an axis's end reaches its padding, below 0), or None when no box is drawn;
    ValueError when the selection holds something else."""
    try:
        box = selection[BOX]
    except (KeyError, TypeError, IndexError):
        return None
    if not box:
        return None
    if not isinstance(box, Mapping) or X not in box or Y not in box:
        raise ValueError(f"a box selection needs {X} and {Y} ranges, got {box!r}")
    ranges = [box[X], box[Y]]
    if not all(isinstance(values, Sequence) and not isinstance(values, str) and len(values) == 2 for values in ranges):
        raise ValueError(f"a box selection's ranges have two ends each, got {box!r}")
    try:
        return ([min(max(float(v), 0.0), MAX_VARIABILITY) for v in ranges[0]],
                [min(max(float(v), 0.0), 1.0) for v in ranges[1]])
    except (TypeError, ValueError) as error:
        raise ValueError(f"a box selection's ends are numbers, got {box!r}") from error


IMAGE_SCALE = 2
"""Image pixels per pixel of the plot (`points_image`): sharp on a high-density screen, and the browser's scaling
down smooths the discs' edges on any other."""
POINTS_LAYER = 0
"""The layer of `data_map_spec` that draws the points (the spec's own data)."""
IMAGE_DESCRIPTION = "the training pairs' points: hover one for its pair, click it to open it, drag a box to list pairs"
"""What the points' image says to a screen reader (`frame_spec`); a hovered point's own text replaces it."""


def domain(spec: Mapping[str, Any], name: str) -> tuple[float, float]:
    """The (low, high) data range the map's `X` or `Y` axis spans (`axis`: the whole possible range, padded)."""
    low, high = spec["layer"][POINTS_LAYER]["encoding"]["x" if name == X else "y"]["scale"]["domain"]
    return float(low), float(high)


def frame_spec(spec: Mapping[str, Any], image_url: str) -> dict[str, Any]:
    """`data_map_spec`'s map without its points and inputs, for the server to draw: the points layer keeps its axes
    and legend (the colour scale names its groups itself) but draws no datum and takes no selection, and an image
    mark at `image_url` (`points_image`) is stretched over the plot under the thresholds, counts and outline.
    `spec` itself is not changed."""
    layers = [dict(layer) for layer in spec["layer"]]
    points = layers[POINTS_LAYER]
    points.pop("params", None)
    points["encoding"] = {key: value for key, value in points["encoding"].items() if key != "tooltip"}
    (x_low, x_high), (y_low, y_high) = domain(spec, X), domain(spec, Y)
    image = {"data": {"values": [{X: x_low, "x2": x_high, Y: y_low, "y2": y_high, "url": image_url}]},
             "mark": {"type": "image", "aspect": False, "aria": False},
             "encoding": {"x": {"field": X, "type": "quantitative"}, "x2": {"field": "x2"},
                          "y": {"field": Y, "type": "quantitative"}, "y2": {"field": "y2"},
                          "url": {"field": "url", "type": "nominal"}, "description": {"value": IMAGE_DESCRIPTION}}}
    return {**spec, "data": {"values": []}, "layer": [points, image, *layers[POINTS_LAYER + 1:]]}


def point_colours(spec: Mapping[str, Any]) -> tuple[str, dict[str, str]]:
    """(the field naming each point's group, group → its colour) as the map's colour scale draws them."""
    colour = spec["layer"][POINTS_LAYER]["encoding"]["color"]
    return colour["field"], dict(zip(colour["scale"]["domain"], colour["scale"]["range"]))


def points_image(spec: Mapping[str, Any], plot_width: int, plot_height: int) -> bytes:
    """The map's points as a lossless WebP spanning the axes' `domain`s over a plot of `plot_width` × `plot_height`
    pixels, `IMAGE_SCALE` image pixels to each (transparent between points): each point a disc of `POINT_AREA`
    plot pixels in its group's colour at `POINT_OPACITY`, in the data's order, later points over earlier ones, as
    Vega draws them. WebP: a third of a PNG's bytes for ten thousand discs, and as fast to make."""
    points = spec["data"]["values"]
    field, colours = point_colours(spec)
    (x_low, x_high), (y_low, y_high) = domain(spec, X), domain(spec, Y)
    width, height = max(1, plot_width) * IMAGE_SCALE, max(1, plot_height) * IMAGE_SCALE
    xs = (np.asarray(points[X], dtype=float) - x_low) / (x_high - x_low) * width
    ys = (y_high - np.asarray(points[Y], dtype=float)) / (y_high - y_low) * height
    alpha = round(255 * POINT_OPACITY)
    fills = {group: (*ImageColor.getrgb(colour)[:3], alpha) for group, colour in colours.items()}
    radius = (POINT_AREA / np.pi) ** 0.5 * IMAGE_SCALE
    image = Image.new("RGBA", (width, height), (0, 0, 0, 0))
    draw = ImageDraw.Draw(image, "RGBA")
    for x, y, group in zip(xs.tolist(), ys.tolist(), list(points[field])):
        draw.ellipse((x - radius, y - radius, x + radius, y + radius), fill=fills[group])
    out = io.BytesIO()
    image.save(out, "WEBP", lossless=True, method=2)
    return out.getvalue()


def browser_points(spec: Mapping[str, Any]) -> dict[str, Any]:
    """What the browser needs to find the point under the pointer and say what it is: each point's coordinates in
    ten-thousandths (the map draws them rounded to four digits), pair id, and group (an index into `groups`), the
    axes' `domain`s and the group field's name; about 20 bytes a point as JSON."""
    points = spec["data"]["values"]
    field, colours = point_colours(spec)
    codes = {group: index for index, group in enumerate(colours)}
    scaled = {name: np.rint(np.asarray(points[name], dtype=float) * 10_000).astype(int).tolist() for name in (X, Y)}
    return {"x": scaled[X], "y": scaled[Y], "ids": list(pd.Series(points[PAIR]).tolist()),
            "groups": [codes[group] for group in points[field]], "names": list(colours), "field": field,
            "domain": {"x": list(domain(spec, X)), "y": list(domain(spec, Y))}}
