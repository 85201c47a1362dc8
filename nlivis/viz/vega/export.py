"""A Vega-Lite spec as a standalone SVG file: the vector figure a researcher puts in a paper or on a slide.

Streamlit 1.67's Vega-Lite toolbar saves PNG only, so the app offers each chart's SVG beside its CSV, made on the
server by vl-convert (the Vega project's own converter: Vega and Vega-Lite run in an embedded JavaScript engine, no
browser, no network) only when the button is clicked. The figure is drawn in the light look, whatever the page's
theme: a paper's page is white.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import vl_convert

from nlivis.viz.vega.common import themed, with_records

EXPORT_WIDTH_PX = 760
"""The width a chart that fills its container ("width": "container") is drawn at in the file: a file has no
container; 760 px is about the width the app's wide layout gives a chart on a laptop screen."""

VEGA_LITE_VERSION = "6.4"
"""The Vega-Lite release the converter compiles with: the newest vl-convert 1.9 carries of the v6 schema the specs
name (`common.SCHEMA`)."""


def fixed_width(spec: Any, width: int = EXPORT_WIDTH_PX) -> Any:
    """`spec` with every `"width": "container"` (at any depth: a concatenated or layered part's) replaced by
    `width` pixels; `spec` itself is not changed."""
    if isinstance(spec, Mapping):
        return {key: width if key == "width" and value == "container" else fixed_width(value, width)
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
