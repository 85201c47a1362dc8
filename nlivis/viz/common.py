"""What every figure shares, whatever draws it: colours (per model, per category, along a scale), token labels
that stay legible, percent ticks, colour ranges, clean file names.

Heatmaps put token *positions* on their axes and label the ticks with the tokens, because a chart merges repeated
category names ("the … the") into one row.
"""
from __future__ import annotations

import re
import unicodedata
from typing import Any, Sequence

import numpy as np

from nlivis.models.families import FAMILIES

SEQUENTIAL_SCALE = "Viridis"
"""Colour scale of every non-negative map (DIIN Figure 2 uses viridis)."""

CATEGORY_COLOURS: tuple[str, ...] = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
                                     "#7f7f7f", "#bcbd22", "#17becf")
"""Distinct hues for categories (D3's category10): labels in a scatter must not differ only in lightness."""

FAMILY_COLOURS: dict[str, str] = {name: family.colour for name, family in FAMILIES.items()}
"""One colour per model family (declared in `models.families`), the same on every page (a figure of several
models colours each by it)."""

EXTRA_COLOURS: tuple[str, ...] = ("#17becf", "#bcbd22", "#e377c2", "#7f7f7f", "#aec7e8", "#ffbb78", "#98df8a",
                                  "#ff9896", "#c5b0d5", "#c49c94")
"""For a second checkpoint of a family shown beside the first, and for families without a colour of their own."""


def model_colours(models: Sequence[tuple[str, str]]) -> dict[str, str]:
    """Checkpoint name → colour, for (name, model family) in display order: the first checkpoint of a family
    gets the family's colour (FAMILY_COLOURS), any other checkpoint the next unused colour of EXTRA_COLOURS."""
    colours: dict[str, str] = {}
    used: set[str] = set()
    spare = iter(EXTRA_COLOURS * (1 + len(models) // len(EXTRA_COLOURS)))
    for name, family in models:
        own = FAMILY_COLOURS.get(family)
        if own is not None and own not in used:
            colours[name] = own
        else:
            colours[name] = next(c for c in spare if c not in used)
        used.add(colours[name])
    return colours


NICE_PERCENT_STEPS = (0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.25, 0.5)
"""Tick steps (as fractions) an axis of percentages may use."""


def percent_ticks(low: float, high: float, most: int = 8, signed: bool = True) -> dict[str, Any]:
    """Axis settings with ticks at a round step covering [low, high] (fractions) and labels with just
    enough decimals for that step: 0.5% steps read −1.0%, −0.5%, +0.0%, … rather than plotly's rounded
    "+.0%" labels (−1%, −1%, +0%, …). At most `most` ticks; `signed` puts a + on positive values."""
    low, high = float(min(low, high)), float(max(low, high))
    if not np.isfinite(low) or not np.isfinite(high):
        raise ValueError(f"percent ticks need finite bounds, got {low}, {high}")
    span = max(high - low, 1e-9)
    step = next((s for s in NICE_PERCENT_STEPS if span / s <= most - 1), NICE_PERCENT_STEPS[-1])
    first, last = int(np.floor(low / step + 1e-9)), int(np.ceil(high / step - 1e-9))
    values = [round(k * step, 10) for k in range(first, last + 1)]
    decimals = max(0, int(np.ceil(-np.log10(step * 100) - 1e-9)))
    sign = "+" if signed else ""
    text = [f"{value * 100:{sign if value else ''}.{decimals}f}%".replace("-", "−") for value in values]
    return {"tickmode": "array", "tickvals": values, "ticktext": text, "range": [values[0] - step, values[-1] + step]}


def clean_file_name(name: str, fallback: str = "nlivis_figure") -> str:
    """A file name any system accepts, from a label: `gcnn · snli-small · gcnn-snli-small_forget gate` →
    `gcnn_snli-small_gcnn-snli-small_forget_gate` (runs of other characters become one `_`)."""
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._-")
    return cleaned[:150] or fallback


def entry_array(values: Any) -> np.ndarray:
    """A trace entry's values (one pair's slice) as a float32 numpy array: a pair's reading holds arrays
    (`Trace.as_arrays`, and so does one read back from disk without torch), a model's own trace tensors."""
    if hasattr(values, "detach"):  # a torch tensor, converted without importing torch here
        return values.detach().float().cpu().numpy()
    return np.asarray(values, dtype=np.float32)


def real_length(tokens: Sequence[str], available: int) -> int:
    """How many positions of a padded axis are real tokens: the token count, never beyond the tensor."""
    return max(0, min(len(tokens), int(available)))


INVISIBLE_NAMES = {"\u200d": "ZWJ", "\u200c": "ZWNJ", "\u200b": "ZWSP", "\u2060": "WJ", "\ufeff": "BOM", "\u00ad": "SHY"}
"""Short names for the zero-width characters a tokenizer can leave as tokens of their own (emoji sequences)."""


def _invisible(char: str) -> bool:
    code = ord(char)
    return (unicodedata.category(char) == "Cf" or 0xFE00 <= code <= 0xFE0F or 0xE0100 <= code <= 0xE01EF
            or code in (0x180B, 0x180C, 0x180D, 0x180F))


def _invisible_name(char: str) -> str:
    code = ord(char)
    if 0xFE00 <= code <= 0xFE0F:
        return f"VS{code - 0xFE00 + 1}"
    if 0xE0100 <= code <= 0xE01EF:
        return f"VS{code - 0xE0100 + 17}"
    return INVISIBLE_NAMES.get(char, f"U+{code:04X}")


def visible_token(token: str) -> str:
    """A token as an axis can show it: zero-width joiners and variation selectors are dropped from a token
    that has visible characters, and a token made only of them is named ("ZWJ", "VS16"), never left blank."""
    token = str(token)
    visible = "".join(c for c in token if not _invisible(c))
    if visible.strip():
        return visible
    if token and all(_invisible(c) for c in token):
        return "·".join(_invisible_name(c) for c in token)
    return token if token.strip() else "␣"


LONG_AXIS = 16
"""More tokens than this: x labels stand upright and get smaller, so neighbours never overlap."""

MAX_TICK_CHARS = 14
"""Longer tokens are cut with an ellipsis on the axis (hover shows them whole)."""


def token_ticks(tokens: Sequence[str], axis: str = "x") -> dict[str, Any]:
    """Axis settings that label positions 0..n-1 with the tokens (each position once, even repeats). Long
    axes stay legible: upright, smaller x labels past LONG_AXIS tokens; every label visible and short."""
    labels = [visible_token(t) for t in tokens]
    labels = [label if len(label) <= MAX_TICK_CHARS else label[:MAX_TICK_CHARS - 1] + "…" for label in labels]
    settings: dict[str, Any] = {"tickmode": "array", "tickvals": list(range(len(tokens))), "ticktext": labels}
    if axis == "x":
        settings["tickangle"] = -90 if len(tokens) > LONG_AXIS else -45
    if len(tokens) > 2 * LONG_AXIS:
        settings["tickfont"] = {"size": 9}
    elif len(tokens) > LONG_AXIS:
        settings["tickfont"] = {"size": 10}
    return settings


RED_YELLOW_BLUE: tuple[tuple[int, int, int], ...] = (
    (165, 0, 38), (215, 48, 39), (244, 109, 67), (253, 174, 97), (254, 224, 144), (255, 255, 191), (224, 243, 248),
    (171, 217, 233), (116, 173, 209), (69, 117, 180), (49, 54, 149))
"""ColorBrewer's RdYlBu, eleven classes, red to blue: evenly spaced stops of a diverging scale."""


def scale_colours(values: Sequence[float], stops: Sequence[tuple[int, int, int]], low: float, high: float) -> list[str]:
    """The colour of each value along evenly spaced RGB `stops` over [low, high] (values outside are clipped),
    interpolated linearly between neighbouring stops, as "rgb(r, g, b)": a colour per category that a legend can
    name, where a continuous colour scale would need numbers."""
    span = (high - low) or 1.0
    colours = []
    for value in values:
        where = min(max((float(value) - low) / span, 0.0), 1.0) * (len(stops) - 1)
        left = min(int(where), len(stops) - 2)
        share = where - left
        mixed = (int(a + (b - a) * share + 0.5) for a, b in zip(stops[left], stops[left + 1]))
        colours.append("rgb({}, {}, {})".format(*mixed))
    return colours


NARROW_SPAN = 0.1
"""Values spanning less than this share of a fixed colour range get their own range (and say so)."""


def fitted_range(values: np.ndarray, low: float = 0.0, high: float = 1.0) -> tuple[float, float, str | None]:
    """(zmin, zmax, note): the fixed range [low, high] so figures compare by eye, unless the values span less
    than NARROW_SPAN of it — then their own range (one flat block otherwise), with a note stating it."""
    values = np.asarray(values, dtype=float)
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return low, high, None
    smallest, largest = float(finite.min()), float(finite.max())
    if largest - smallest >= NARROW_SPAN * (high - low):
        return low, high, None
    if largest == smallest:
        return smallest - 1e-6, largest + 1e-6, f"all values {smallest:.4g}"
    return smallest, largest, f"own colour scale {smallest:.4g}–{largest:.4g} (narrow range)"
