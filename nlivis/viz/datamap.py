"""The data map (dataset cartography): one WebGL point per training pair at (variability, confidence), coloured
by a category, with the region thresholds drawn and each region's count written in it."""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.colors import sample_colorscale

from nlivis.viz.common import CATEGORY_COLOURS, empty_figure

MAX_VARIABILITY = 0.5
"""The x axis ends here: the largest standard deviation probabilities can have."""
OUTLINE_COLOUR = "#111111"
POINT_SIZE = 4
"""Small markers: 10k points must not hide each other's density."""


def group_colours(groups: Sequence[str]) -> dict[str, str]:
    """A colour per group: "k/E right" groups on a red (never right) → blue (always right) scale, as the paper's
    figure; any other categories in distinct hues, the "other" / "(not tagged)" / "not trained on" groups grey."""
    colours: dict[str, str] = {}
    right = sorted((g for g in groups if g.endswith(" right") and "/" in g), key=lambda g: int(g.split("/")[0]))
    if right:
        epochs = max(int(g.split("/")[1].split()[0]) for g in right)
        for group in right:
            share = int(group.split("/")[0]) / max(1, int(group.split("/")[1].split()[0]))
            colours[group] = sample_colorscale("RdYlBu", [0.05 + 0.9 * share])[0] if epochs else "#4c78a8"
    # training pairs are the light background the augmented kinds stand out on (blue collided with the first kind)
    grey = {"other": "#c7c7c7", "(not tagged)": "#e0e0e0", "not trained on": "#9d9d9d", "training pair": "#d4d4d4"}
    # beside a grey group, a grey hue would differ from it only in lightness
    hues = [c for c in CATEGORY_COLOURS if not is_grey(c)] if any(g in grey for g in groups) else list(CATEGORY_COLOURS)
    position = 0
    for group in groups:
        if group in colours:
            continue
        if group in grey:
            colours[group] = grey[group]
        else:
            colours[group] = hues[position % len(hues)]
            position += 1
    return colours


def is_grey(colour: str) -> bool:
    """Whether a "#rrggbb" colour has no hue."""
    red, green, blue = (colour[i:i + 2] for i in (1, 3, 5))
    return red == green == blue


def data_map_scatter(variability: np.ndarray, confidence: np.ndarray, groups: Sequence[str], ids: Sequence[str],
                     thresholds: tuple[float, float, float], counts: Mapping[str, int], title: str,
                     colour_name: str = "colour", outline: tuple[str, Sequence[float], Sequence[float]] | None = None,
                     height: int = 620) -> go.Figure:
    """One Scattergl trace per group (legend order: groups sorted, "k/E right" by k); each point's customdata is
    its column in the map (what a click or a selection sends back), its text the pair id. `thresholds` =
    (ambiguous variability, easy confidence, hard confidence); `counts` = pairs per region, written in the
    regions; `outline` = ("box" or "lasso", xs, ys) draws the current selection, so a restored view shows it.
    Thresholds and outline are line traces drawn after the points (`overlay`), named "thresholds" and "selection"."""
    variability, confidence = np.asarray(variability, dtype=float), np.asarray(confidence, dtype=float)
    drawable = np.isfinite(variability) & np.isfinite(confidence)
    if not drawable.any():
        return empty_figure("no pair of this checkpoint was trained on: nothing to map")
    groups = np.asarray(groups, dtype=object)
    ids = np.asarray(ids, dtype=object)
    present = sorted(set(groups[drawable]), key=lambda g: (not g.endswith(" right"), _group_key(g)))
    colours = group_colours(present)
    figure = go.Figure()
    for group in present:
        chosen = np.flatnonzero(drawable & (groups == group))
        figure.add_trace(go.Scattergl(
            x=variability[chosen].round(4), y=confidence[chosen].round(4), mode="markers", name=f"{group} ({len(chosen):,})",
            marker={"size": POINT_SIZE, "color": colours[group], "opacity": 0.7}, customdata=chosen, text=ids[chosen],
            hovertemplate="pair %{text}<br>variability %{x:.3f}<br>confidence %{y:.3f}<extra>%{fullData.name}</extra>"))
    ambiguous, easy, hard = thresholds
    # lines as WebGL traces after the points: plotly draws layout shapes under a WebGL canvas, hidden by dense points
    overlay(figure, [ambiguous, ambiguous, None, 0, ambiguous, None, 0, ambiguous], [0, 1, None, easy, easy, None, hard, hard],
            "thresholds", {"color": "#222222", "width": 2, "dash": "dash"})
    for text, x, y, anchor in ((f"easy-to-learn: {counts.get('easy-to-learn', 0):,}", 0.005, 1.0, "top"),
                               (f"hard-to-learn: {counts.get('hard-to-learn', 0):,}", 0.005, 0.0, "bottom"),
                               (f"ambiguous: {counts.get('ambiguous', 0):,}", ambiguous + 0.005, 1.0, "top")):
        figure.add_annotation(x=x, y=y, text=f"<b>{text}</b>", showarrow=False, xanchor="left", yanchor=anchor,
                              font={"size": 13}, bgcolor="rgba(255,255,255,0.75)")
    if outline is not None:
        kind, xs, ys = outline
        if kind == "box":
            xs, ys = [xs[0], xs[1], xs[1], xs[0]], [ys[0], ys[0], ys[1], ys[1]]
        overlay(figure, [*xs, xs[0]], [*ys, ys[0]], "selection", {"color": OUTLINE_COLOUR, "width": 2.5})
    top = 1.02
    figure.update_layout(
        title=title, height=height, margin={"l": 60, "r": 10, "t": 60, "b": 50}, clickmode="event+select", legend={"title": colour_name, "itemsizing": "constant", "font": {"size": 11}},
        xaxis={"title": "variability (std of the gold label's probability over epochs)", "range": [-0.005, MAX_VARIABILITY],
               "zeroline": False},
        yaxis={"title": "confidence (mean probability of the gold label)", "range": [-0.02, top], "zeroline": False})
    return figure


def overlay(figure: go.Figure, xs: Sequence[float | None], ys: Sequence[float | None], name: str, line: dict) -> None:
    """A line drawn over the points, not in the legend, not hoverable or selectable, left out of the CSV."""
    figure.add_trace(go.Scattergl(x=list(xs), y=list(ys), mode="lines", name=name, line=line, showlegend=False,
                                  hoverinfo="skip", meta={"kind": "overlay"}))


def _group_key(group: str) -> tuple:
    """Sort "k/E right" by k, token ranges by their first number, the rest by name."""
    head = group.split("/")[0].split("–")[0].split()[0] if group else ""
    return (0, int(head), group) if head.isdigit() else (1, 0, group)
