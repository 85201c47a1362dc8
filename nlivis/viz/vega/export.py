"""A Vega-Lite spec as SVG: the vector file a researcher puts in a paper or on a slide, and the figure a page shows
when the chart takes no clicks.

Streamlit 1.67's Vega-Lite toolbar saves PNG only, so the app offers each chart's SVG beside its CSV, made on the
server by vl-convert (the Vega project's own converter: Vega and Vega-Lite run in an embedded JavaScript engine, no
browser, no network) only when the button is clicked. The figure is drawn in the light look, whatever the page's
theme: a paper's page is white.

A page's figure that takes no clicks is drawn the same way, on the server, in the page's look (`page_svg`): the
browser then only inserts an SVG. Vega-Lite in the browser costs a new tab about 0.5 s of CPU for its first chart
and more for each further one (bench/spec_cost.py: its compiler and dataflow run as code V8 has not optimised yet
in that tab), which was all that a chart page's clicks still cost over Streamlit's own floor
(bench/chart_share.py). A mark's hover text is its tooltip's lines as the mark's `aria-label` (what a screen reader
reads; the page shows it on hover, `app.components.figures.HOVER_JS`). A chart whose only input is a click on a
mark (`click_selection`) is drawn the same way with each mark numbered by its row (`with_click_numbers`), so the
page can tell which row was clicked (`clicked_point`); any other chart that reads the pointer (`takes_input`: a box
dragged, a hover) stays Vega-Lite in the browser.
"""
from __future__ import annotations

import json
import re
import threading
from collections.abc import Mapping
from typing import Any

import pandas as pd
import vl_convert

from nlivis.viz.vega.common import LABEL_SEPARATOR, axis_labels, plain, themed, token_axis, with_records
from nlivis.viz.vega.raster_cells import raster_cells

EXPORT_WIDTH_PX = 760
"""The width a chart that fills its container ("width": "container") is drawn at in the file: a file has no
container; 760 px is about the width the app's wide layout gives a chart on a laptop screen."""

PAGE_WIDTH_PX = 900
"""The width a page's figure that fills its container is drawn at on the server (`page_svg`), for a whole row of
the wide layout (a figure in one of n columns gets about 1/n of it): about the main area beside the sidebar on a
1280-1600 px wide window. A narrower window scales the figure down to fit; a wider one leaves it at this size, so
its text never grows past the page's."""
COLUMN_GAP_PX = 16
"""The gap between Streamlit's columns ("small"), taken from a row's width before it is shared."""
HOVER_FIELD = "nlivis_hover"
"""The data field holding a mark's hover text in a page's SVG (`with_hover_text`)."""

NESTED = ("layer", "hconcat", "vconcat", "concat", "spec")
"""The keys under which a Vega-Lite spec holds its views."""

VEGA_LITE_VERSION = "6.4"
"""The Vega-Lite release the converter compiles with: the newest vl-convert 1.9 carries of the v6 schema the specs
name (`common.SCHEMA`)."""


def fixed_width(spec: Any, width: int = EXPORT_WIDTH_PX) -> Any:
    """`spec` with every `"width": "container"` (at any depth: a concatenated or layered part's) replaced by
    `width` pixels; `spec` itself is not changed. Only views are walked (a view's width is its own key): walking
    every row of its data too was most of the time a page spent preparing its figures (0.15 s of a pair's run)."""
    if isinstance(spec, Mapping):
        return {key: width if key == "width" and value == "container"
                else fixed_width(value, width) if key in NESTED else value
                for key, value in spec.items()}
    if isinstance(spec, list):
        return [fixed_width(part, width) for part in spec]
    return spec


def spec_svg(spec: Mapping[str, Any]) -> str:
    """The SVG text of `spec` drawn in the light look at `EXPORT_WIDTH_PX` where it fills its container. The
    converter's first call starts its JavaScript engine (about 1 s here); later calls take tens of ms. Nothing is
    fetched (`allowed_base_urls=[]`): every spec here carries its data inline."""
    return vl_convert.vegalite_to_svg(fixed_width(themed(with_records(spec))), vl_version=VEGA_LITE_VERSION,
                                      allowed_base_urls=[])


def selections(spec: Any) -> list[Mapping[str, Any]]:
    """Every selection parameter of `spec`, in any of its views."""
    if isinstance(spec, list):
        return [found for part in spec for found in selections(part)]
    if not isinstance(spec, Mapping):
        return []
    params = spec.get("params")
    own = [p for p in params if isinstance(p, Mapping) and "select" in p] if isinstance(params, list) else []
    return own + [found for key, value in spec.items() if key in NESTED for found in selections(value)]


def takes_input(spec: Any) -> bool:
    """Whether the chart reads the pointer: a selection parameter anywhere in it (a click that picks a cell or a
    point, a box dragged over a map, the dot nearest the pointer). Such a chart is drawn by Vega-Lite in the
    browser, unless its only input is a click on a mark (`click_selection`); any other can be an SVG."""
    return bool(selections(spec))


UNESCAPED = re.compile(r"\\(.)")
"""A backslash escape in a Vega-Lite field name (`a\\.b` names the row key `a.b`)."""
CLICK_FIELD = "nlivis_click"
"""The data field numbering a clickable chart's rows in a page's SVG (`with_click_numbers`)."""
CLICK_DESCRIPTION = "nlivis_click_description"
"""The data field holding a clickable mark's description followed by its row's number (`with_click_numbers`)."""
CLICK_MARK = " \u241f"
"""What separates a clickable mark's description from its row's number in the converter's output; `page_svg`
moves the number into the mark's `data-click` attribute, so neither the hover text nor a screen reader shows it."""
MAX_CLICKABLE_ROWS = 3000
"""The most rows a clickable chart drawn on the server may have: each mark is an SVG element with its hover text
(about 0.3 kB), so a larger scatter is drawn by Vega-Lite in the browser, on a canvas."""


def own_rows(spec: Mapping[str, Any]) -> list[dict[str, Any]] | None:
    """The rows of `spec`'s top-level data (`common.with_records`: a typed frame's converted), or None when its
    data is not rows of its own."""
    data = with_records(spec).get("data") if own_row_count(spec) is not None else None
    return data["values"] if isinstance(data, Mapping) else None


def own_row_count(spec: Mapping[str, Any]) -> int | None:
    """How many rows `spec`'s top-level data has (a list of rows or a typed frame, not converted), or None when its
    data is not rows of its own: what every page run asks of a clickable chart, before any row is needed."""
    data = spec.get("data")
    values = data.get("values") if isinstance(data, Mapping) else None
    if isinstance(values, pd.DataFrame) or (isinstance(values, list)
                                            and all(isinstance(row, Mapping) for row in values)):
        return len(values)
    return None


def click_selection(spec: Mapping[str, Any]) -> tuple[str, tuple[str, ...]] | None:
    """(name, fields) of `spec`'s selection when a page's SVG can take its clicks: its only selection, a point
    selection a click on a mark sets to that mark's `fields` (`common.point_selection`), over at most
    `MAX_CLICKABLE_ROWS` rows of the spec's own data. None for any other chart (a box dragged over it, a hover,
    several selections, named tables): Vega-Lite draws it in the browser."""
    found = selections(spec)
    select = found[0].get("select") if len(found) == 1 else None
    if not (isinstance(select, Mapping) and select.get("type") == "point" and select.get("on") == "click"
            and select.get("fields")):
        return None
    count = own_row_count(spec)
    if count is None or count > MAX_CLICKABLE_ROWS:
        return None
    return str(found[0]["name"]), tuple(str(name) for name in select["fields"])


def with_click_numbers(spec: Mapping[str, Any]) -> dict[str, Any]:
    """`spec` (with its hover text: `with_hover_text`) with its rows numbered and, in the view its click selection
    (`click_selection`) is on, each mark's description followed by `CLICK_MARK` and its row's number, which
    `page_svg` makes the mark's `data-click` attribute: the page's SVG tells which row a click was on
    (`clicked_point`). `spec` itself is not changed; a spec without such a selection is returned as it is."""
    chosen = click_selection(spec)
    if chosen is None:
        return dict(spec)
    name = chosen[0]

    def walk(node: Any) -> Any:
        if isinstance(node, list):
            return [walk(part) for part in node]
        if not isinstance(node, Mapping):
            return node
        result = {key: walk(value) if key in NESTED else value for key, value in node.items()}
        if not any(isinstance(p, Mapping) and p.get("name") == name for p in result.get("params", [])):
            return result
        encoding = result.get("encoding", {})
        described = encoding.get("description", {})
        if "field" in described:
            text = "datum[" + json.dumps(UNESCAPED.sub(r"\1", str(described["field"]))) + "]"
        else:
            text = json.dumps(str(described.get("value", "")))
        numbered = {"calculate": f"{text} + {json.dumps(CLICK_MARK)} + datum.{CLICK_FIELD}", "as": CLICK_DESCRIPTION}
        return {**result, "transform": [*result.get("transform", []), numbered],
                "encoding": {**encoding, "description": {"field": CLICK_DESCRIPTION}}}

    walked = walk(with_records(spec))
    rows = [{**row, CLICK_FIELD: number} for number, row in enumerate(walked["data"]["values"])]
    return {**walked, "data": {**walked["data"], "values": rows}}


def clicked_point(spec: Mapping[str, Any], number: Any) -> tuple[str, dict[str, Any]] | None:
    """(the selection's name, the clicked row's selection fields) for a click on the mark of row `number` of
    `spec`'s page SVG (`with_click_numbers`), as Vega-Lite's own selection would give them; None when `number`
    names no row of it."""
    if number is None or isinstance(number, bool):  # every run without a click: nothing to convert
        return None
    try:
        position = int(number)
    except (TypeError, ValueError):
        return None
    chosen = click_selection(spec)
    rows = own_rows(spec) if chosen is not None else None
    if rows is None or not 0 <= position < len(rows):
        return None
    name, fields = chosen
    return name, {field: rows[position].get(field) for field in fields}
def hover_expression(tooltip: Any) -> str | None:
    """A Vega expression for a mark's hover text from its tooltip encoding: one "title: value" line per field,
    numbers in the tooltip's format; None when the tooltip is not plain fields (an aggregate, a binned or time
    field), which then keeps Vega's own description of the mark."""
    entries = tooltip if isinstance(tooltip, list) else [tooltip]
    lines = []
    for entry in entries:
        if not isinstance(entry, Mapping) or "field" not in entry or any(k in entry for k in ("aggregate", "bin",
                                                                                                 "timeUnit")):
            return None
        name = UNESCAPED.sub(r"\1", str(entry["field"]))  # the row's key, not Vega-Lite's escaped field
        value = f"datum[{json.dumps(name)}]"
        if entry.get("format") and entry.get("type", "quantitative") == "quantitative":
            value = f"(isValid({value}) ? format({value}, {json.dumps(entry['format'])}) : '')"
        title = entry.get("title", name)
        lines.append(f"{json.dumps(f'{title}: ' if title else '')} + {value}")
    return " + '\\n' + ".join(lines) if lines else None


def with_hover_text(spec: Any) -> Any:
    """`spec` with each view's tooltip also as its marks' description (Vega writes it as the mark's `aria-label`
    in SVG, which `page_svg` keeps as its hover text), and ARIA switched back on where a view turned it off (in a
    browser chart it only costs time; here it carries the hover text); `spec` itself is not changed."""
    if isinstance(spec, list):
        return [with_hover_text(part) for part in spec]
    if not isinstance(spec, Mapping):
        return spec
    result = {key: with_hover_text(value) if key in NESTED else value for key, value in spec.items()}
    if isinstance(result.get("mark"), Mapping) and result["mark"].get("aria") is False:
        result["mark"] = {key: value for key, value in result["mark"].items() if key != "aria"}
    if isinstance(result.get("config"), Mapping) and result["config"].get("aria") is False:
        result["config"] = {key: value for key, value in result["config"].items() if key != "aria"}
    encoding = result.get("encoding")
    if not isinstance(encoding, Mapping) or "description" in encoding or "tooltip" not in encoding:
        return result
    tooltip = encoding["tooltip"]
    if isinstance(tooltip, Mapping) and "value" in tooltip:
        return {**result, "encoding": {**encoding, "description": {"value": str(tooltip["value"])}}}
    expression = hover_expression(tooltip)
    if expression is None:
        return result
    return {**result, "transform": [*result.get("transform", []), {"calculate": expression, "as": HOVER_FIELD}],
            "encoding": {**encoding, "description": {"field": HOVER_FIELD}}}


LABELS_PARAM = "nlivis_labels_"
"""The name stem of the parameters holding a token axis's labels in a page's SVG (`with_label_params`)."""
TOKEN_LABELS = re.compile(r"^split\(.*, " + re.escape(json.dumps(LABEL_SEPARATOR)) + r"\)\[datum\.value\]$", re.S)
"""A token axis's label expression (`common.token_axis`): one string split at each drawing of a label."""


def with_label_params(spec: Mapping[str, Any]) -> dict[str, Any]:
    """`spec` with each token axis's labels (`common.token_axis`) as a top-level parameter holding their list,
    read by position (`nlivis_labels_0[datum.value]`), instead of one string split at every label: the same
    labels, drawn ~20 ms sooner per token heatmap by the server's converter (a 10 × 5 alignment 70 → 47 ms).
    `spec` itself is not changed."""
    labels: list[list[str]] = []

    def walk(node: Any) -> Any:
        if isinstance(node, list):
            return [walk(part) for part in node]
        if not isinstance(node, Mapping):
            return node
        result = {}
        for key, value in node.items():
            if key == "axis" and isinstance(value, Mapping) and TOKEN_LABELS.match(str(value.get("labelExpr", ""))):
                result[key] = {**value, "labelExpr": f"{LABELS_PARAM}{len(labels)}[datum.value]"}
                labels.append(axis_labels(value))
            else:
                result[key] = value if key in ("data", "datasets") else walk(value)
        return result

    walked = walk(spec)
    if labels:
        walked["params"] = [*walked.get("params", []),
                            *({"name": f"{LABELS_PARAM}{i}", "value": axis} for i, axis in enumerate(labels))]
    return walked


def page_width(columns: int) -> int:
    """The pixels a figure in one of `columns` columns of a row is drawn at (`PAGE_WIDTH_PX` shared)."""
    return max(200, (PAGE_WIDTH_PX + COLUMN_GAP_PX) // max(columns, 1) - COLUMN_GAP_PX)


COMPOSITE = ("facet", "hconcat", "vconcat", "concat", "repeat")
"""The keys of a spec made of several views, whose size is its views' own."""


def stretched(spec: Mapping[str, Any]) -> dict[str, Any]:
    """`spec` filling its container's width where it names no width of its own and is one view (or one layered
    view), and each such view of a vertical stack (`vconcat`) doing so, as Streamlit draws a spec in the browser
    (`width="stretch"`); Vega-Lite's default for a continuous axis is 200 px (a projection's scatter was drawn that
    narrow on the server), for a band axis 20 px a band (a short pair's gate strips were a sixth of the page, session
    36). Views side by side (`hconcat`, facets) keep their own widths. `spec` itself is not changed."""
    if "width" in spec:
        return dict(spec)
    if "vconcat" in spec:
        return {**spec, "vconcat": [stretched(view) for view in spec["vconcat"]]}
    if any(key in spec for key in COMPOSITE):
        return dict(spec)
    return {**spec, "width": "container"}


def page_json(spec: Mapping[str, Any], dark: bool, columns: int = 1) -> str:
    """The JSON text `page_svg` draws for `spec` on a page in the `dark` or light look, in one of `columns`
    columns: it is also the key its SVG is kept under (`app.cache.figures.page_svg`). A NaN or infinity is an
    error here (ValueError): JSON has neither, and the data's builders write them as null (`common.plain`)."""
    width = page_width(columns)
    prepared = with_label_params(with_click_numbers(with_hover_text(fixed_width(
        themed(stretched(with_records(spec)), dark), width))))
    return json.dumps(prepared, default=plain, allow_nan=False, ensure_ascii=False, separators=(",", ":"))


HOVER_ATTRIBUTE = "data-hover"
"""Marks a mark whose `aria-label` is its hover text (`page_svg`), apart from the axes' and legends' own labels."""
MARK_LABEL = re.compile(r'<(\w+) aria-label="([^"]*)" role="graphics-symbol"([^>]*?)(/?)>')
"""A mark's element in Vega's SVG: its tag, description (already escaped for XML), other attributes, and "/" when
it has no content."""


def page_svg(spec_json: str) -> str:
    """The SVG a page shows for `page_json`'s text: each mark's description as its `aria-label` (its hover text,
    which the page shows for a mark marked `HOVER_ATTRIBUTE`, and what a screen reader reads), a clickable mark's
    row number as its `data-click` attribute (`with_click_numbers`), a heatmap's cells as one image
    (`raster_cells`), and the drawing scaled down, never up, to its
    container's width.

    The hover text is an attribute, not an SVG `<title>` child: a title is two more nodes per mark (the element and
    its text), and the browser building and laying them out cost a chart page 0.1-0.3 s over Streamlit's floor on
    every new pair (bench/RESULTS.md, session 30). ValueError when the converter rejects the spec."""
    svg = vl_convert.vegalite_to_svg(spec_json, vl_version=VEGA_LITE_VERSION, allowed_base_urls=[])

    def described(match: re.Match) -> str:
        tag, label, rest, empty = match.groups()
        text, mark, number = label.rpartition(CLICK_MARK)
        clicked = f' data-click="{number}"' if mark and number.isdigit() else ""
        label = text if clicked else label
        described_as = f' {HOVER_ATTRIBUTE}="1" aria-label="{label}"' if label else ""
        return f'<{tag} role="graphics-symbol"{clicked}{described_as}{rest}{empty}>'

    svg = raster_cells(MARK_LABEL.sub(described, svg))
    return svg.replace('<svg ', '<svg style="max-width: 100%; height: auto" ', 1)


WARM_UP_SPECS: tuple[dict[str, Any], ...] = (
    {"title": {"text": "a heatmap", "subtitle": "its own range"}, "width": "container",
     "data": {"values": [{"row": r, "col": c, "weight": (r + c) / 4, "token": "a"} for r in range(3) for c in range(3)]},
     "mark": "rect", "encoding": {
         "x": {"field": "col", "type": "ordinal", "axis": token_axis(["a", "b", "c"])},
         "y": {"field": "row", "type": "ordinal"}, "color": {"field": "weight", "type": "quantitative"},
         "tooltip": [{"field": "token", "type": "nominal"}, {"field": "weight", "type": "quantitative",
                                                             "format": ".4f"}]}},
    {"title": "grouped bars", "width": "container",
     "data": {"values": [{"label": label, "model": model, "p": 0.1 * i}
                         for i, (label, model) in enumerate((l, m) for l in "xyz" for m in "ab")]},
     "layer": [{"mark": "bar", "encoding": {"x": {"field": "label", "type": "nominal"}, "xOffset": {"field": "model"},
                                            "y": {"field": "p", "type": "quantitative"},
                                            "color": {"field": "model", "type": "nominal"}}},
               {"mark": {"type": "text", "dy": -4}, "encoding": {"x": {"field": "label", "type": "nominal"},
                                                                 "xOffset": {"field": "model"},
                                                                 "y": {"field": "p", "type": "quantitative"},
                                                                 "text": {"field": "p", "format": ".1%"}}}]},
    {"vconcat": [{"facet": {"field": "panel", "type": "nominal"}, "columns": 2,
                  "data": {"values": [{"panel": p, "x": x, "v": x} for p in "pq" for x in range(3)]},
                  "spec": {"mark": "rect", "encoding": {"x": {"field": "x", "type": "ordinal"},
                                                        "color": {"field": "v", "type": "quantitative"}}}}]},
)
"""One spec of each kind the pages draw (a heatmap with a token axis and hover text, grouped bars with printed
values, a faceted grid): `start_converter` draws them so that V8 has compiled the converter's code for each."""
_READY = threading.Event()
_STARTING = threading.Lock()


def start_converter() -> None:
    """Start the converter and draw `WARM_UP_SPECS` (about 1.5 s of one core, once per process; later calls
    return at once), then say the converter is ready (`converter_ready`). A cold converter spent 2-3 s more of the
    server's CPU on the first page after a launch (bench/first_page.py) than Vega-Lite in the browser did, so a
    page draws on the server only once this has run (the server's warm-up runs it while no page runs)."""
    with _STARTING:
        if _READY.is_set():
            return
        for spec in WARM_UP_SPECS:
            page_svg(page_json(spec, dark=False))
        _READY.set()


def converter_ready() -> bool:
    """Whether `start_converter` has run in this process."""
    return _READY.is_set()
