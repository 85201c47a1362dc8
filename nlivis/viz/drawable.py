"""Which views a trace can feed, decided by entry type only (pages never look at model attributes)."""
from __future__ import annotations

from typing import Iterable

from nlivis.models.trace import Alignment, FeatureMaps, Gate, MemoryKeys, OutputDistribution, Representation, Trace

VIEW_TYPES: dict[str, type] = {
    "alignment": Alignment,
    "gates": Gate,
    "feature_maps": FeatureMaps,
    "memory_keys": MemoryKeys,
    "representation": Representation,
    "output": OutputDistribution,
}
"""View name → the trace entry type it draws."""

MISSING_MESSAGES: dict[str, str] = {
    "alignment": "this model has no alignment (attention) weights",
    "gates": "this model has no gates",
    "feature_maps": "this model has no 2-D interaction maps (only DIIN builds a premise×hypothesis tensor)",
    "memory_keys": "this model has no memory addressing (only AMN has memory keys)",
    "representation": "this model emits no pooled representation",
    "output": "this model emits no output distribution",
}
"""What a page says when a model lacks the entry type of a view."""


def drawable(trace: Trace) -> dict[str, list[str]]:
    """View → names of the trace entries it can draw, in computation order (views with none are absent)."""
    found: dict[str, list[str]] = {}
    for view, kind in VIEW_TYPES.items():
        names = list(trace.of_type(kind))
        if names:
            found[view] = names
    return found


def views_of(trace_types: Iterable[type]) -> set[str]:
    """The views a model can feed, from the entry types it declares (`model.trace_types()`), known before it
    runs: a page decides what it shows from this, never by running a model and filtering its trace."""
    declared = set(trace_types)
    return {view for view, kind in VIEW_TYPES.items() if kind in declared}
