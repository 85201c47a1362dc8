"""viz stage of nlivis: plotly figures built from typed trace entries and analysis tables.

Every figure carries the data it draws, so `figure_data` / `figure_data_csv` give it back as a table
for download; `PLOTLY_CONFIG` makes the modebar camera save SVG. Names are imported from their modules on
first use (PEP 562), so `nlivis.viz.common` alone — colours, the download config — does not import torch
(Home lists checkpoints without it). `drawable` is also a module name: import that function from its module.
Vega-Lite specs live in the subpackage `nlivis.viz.vega`.
"""
from __future__ import annotations

from importlib import import_module
from typing import Any

_MODULES = {
    "channel_grid": ("SELECTIONS", "real_maps", "select_channels"),
    "common": ("PLOTLY_CONFIG", "PLOTLY_CONFIG_PNG", "empty_figure", "figure_data", "figure_data_csv", "model_colours",
               "plotly_config"),
    "drawable": ("MISSING_MESSAGES", "VIEW_TYPES", "views_of"),
    "gate_strips": ("gate_title", "gate_values"),
    "heatmaps": ("alignment_matrix", "memory_keys_matrix"),
    "overview": ("ModelReading", "model_panels"),
}
_WHERE = {name: module for module, names in _MODULES.items() for name in names}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'nlivis.viz' has no attribute {name!r}")
    return getattr(import_module(f"nlivis.viz.{_WHERE[name]}"), name)
