"""A gate entry as its figure needs it: one pair's values over its real tokens, and the figure's title (the
Vega-Lite spec itself: `nlivis.viz.vega.gates`)."""
from __future__ import annotations

from typing import Sequence

import numpy as np

from nlivis.models.trace import Gate
from nlivis.viz.common import entry_array, real_length


def gate_values(entry: Gate, index: int, tokens: Sequence[str]) -> np.ndarray:
    """One pair's gate values [T, d] for the real tokens only."""
    values = entry_array(entry.values[index])
    return values[: real_length(tokens, values.shape[0])]


def gate_title(entry: Gate, label: str = "") -> str:
    return " · ".join(p for p in (label, f"{entry.name} gate", f"layer {entry.layer}", entry.tokens) if p)
