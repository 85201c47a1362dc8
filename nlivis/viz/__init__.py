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
    "charts": ("probability_bars",),
    "common": ("empty_figure", "figure_data", "figure_data_csv", "model_colours"),
    "drawable": ("MISSING_MESSAGES", "VIEW_TYPES", "views_of"),
    "gate_strips": ("gate_title", "gate_values"),
    "heatmaps": ("alignment_heatmap", "alignment_matrix", "difference_heatmap",
                 "memory_keys_heatmap"),
    "overview": ("ModelReading", "overview_grid"),
}
_WHERE = {name: module for module, names in _MODULES.items() for name in names}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'nlivis.viz' has no attribute {name!r}")
    return getattr(import_module(f"nlivis.viz.{_WHERE[name]}"), name)
