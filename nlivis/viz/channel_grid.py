"""DIIN's interaction space: one pair's channel maps cut to its tokens, and which channels to draw (the grid itself
is a Vega-Lite spec, nlivis.viz.vega.channel_grid; the Pair explorer's overview takes `real_maps` too)."""
from __future__ import annotations

from typing import Literal, Sequence

import numpy as np

from nlivis.models.trace import FeatureMaps
from nlivis.viz.common import entry_array, real_length

ChannelSelection = Literal["index", "max_activation", "variance"]
SELECTIONS: tuple[str, ...] = ("index", "max_activation", "variance")
"""index: the channels asked for (or the first k); max_activation: the k with the highest value in the
real region; variance: the k that vary most across the real region."""


def real_maps(entry: FeatureMaps, index: int, premise_tokens: Sequence[str], hypothesis_tokens: Sequence[str]) -> np.ndarray:
    """One pair's maps [C, P', H'], cut to the real tokens while the axes still index tokens."""
    maps = entry_array(entry.maps[index])
    if entry.token_axes:
        maps = maps[:, : real_length(premise_tokens, maps.shape[1]), : real_length(hypothesis_tokens, maps.shape[2])]
    return maps


def select_channels(maps: np.ndarray, selection: ChannelSelection = "index", k: int = 8,
                    channels: Sequence[int] | None = None) -> list[int]:
    """Which channels of maps [C, P', H'] to draw.

    "index" keeps `channels` (in range, in the order given) or the first k; the other two rank the
    channels by their maximum or their variance over the map and keep the top k (ties by index).
    """
    n_channels = int(maps.shape[0])
    k = max(0, min(int(k), n_channels))
    if selection == "index":
        if channels is None:
            return list(range(k))
        chosen = [int(c) for c in channels if 0 <= int(c) < n_channels]
        return list(dict.fromkeys(chosen))
    if selection not in SELECTIONS:
        raise ValueError(f"channel selection must be one of {SELECTIONS}, got {selection!r}")
    if maps[0].size == 0:
        return list(range(k))
    flat = maps.reshape(n_channels, -1)
    score = flat.max(axis=1) if selection == "max_activation" else flat.var(axis=1)
    order = sorted(range(n_channels), key=lambda c: (-float(score[c]), c))
    return order[:k]
