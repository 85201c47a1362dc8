"""viz stage of nlivis: what figures show, built from typed trace entries and analysis tables — the data each view
draws (matrices with padding cut, panels, gate values, head families) here, the Vega-Lite specs that draw them in
the subpackage `nlivis.viz.vega` (plain dicts; the app draws no plotly chart).

Names are imported from their modules on first use (PEP 562), so `nlivis.viz.common` alone — colours, token
labels — does not import torch (Home lists checkpoints without it). `drawable` is also a module name: import that
function from its module.
"""
from __future__ import annotations

from importlib import import_module
from typing import Any

_MODULES = {
    "channel_grid": ("SELECTIONS", "real_maps", "select_channels"),
    "common": ("model_colours",),
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
