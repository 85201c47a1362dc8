"""The Pair explorer's view of a multi-head model (MiniLM): one layer × head grid of thumbnails instead of a
heatmap per head, the head picked there by a click drawn large over the full square of both sentences' words, and
the summaries over heads (attention rollout) beside it. The pick (`head=3.7`) and the thumbnails' block
(`heads_block=h→p`) are view state, in the URL like every other; one pick serves every multi-head model loaded,
so two MiniLM checkpoints are compared head for head."""
from __future__ import annotations

from typing import Iterable

import streamlit as st

from nlivis.app import state
from nlivis.app.components import controls, figures
from nlivis.app.text import md
from nlivis.viz.head_grid import SIDES, HeadFamily, head_family, summaries
from nlivis.viz.vega.head_grid import HEAD_FIELDS, PICKED, colour_domain, head_grid, square_heatmap
from nlivis.workflows.reading import PairReading

PAGE = "explorer"


def block_choice(readings: Iterable[PairReading]) -> str | None:
    """The block the thumbnails show (p→h unless the view says otherwise), asked once above the models; None when
    no loaded model has a head family."""
    families = [family for family in (head_family(r.trace) for r in readings) if family is not None]
    if not families:
        return None
    directions = list(dict.fromkeys(d for family in families for d in family.directions))
    return controls.radio(PAGE, "heads_block", "Thumbnails of the multi-head models show", directions,
                          default="p→h", format_func=_describe_block)


def _describe_block(direction: str) -> str:
    return f"{direction} ({SIDES[direction[0]]} over {SIDES[direction[-1]]})" if direction[0] in SIDES else direction


def _picked(family: HeadFamily, clicked: list | None) -> str:
    """The head to draw large: the one just clicked, else the view's (`head=layer.head`), else the last layer's
    first; a pick from a link that this model lacks is said and the default drawn."""
    if clicked:
        state.remember(PAGE, "head", f"{clicked[0]}.{clicked[1]}", "")
    pick = str(controls.kept(PAGE, "head", ""))
    if pick and pick not in family.picks():
        st.warning(md(f"head={pick} is not a head here ({len(family.layers)} layers × {len(family.heads)} heads, "
                      f"written layer.head such as {family.default_pick()}); showing {family.default_pick()}"))
    return pick if pick in family.picks() else family.default_pick()


def section(m: int, name: str, reading: PairReading, old: PairReading | None, direction: str) -> None:
    """The grid, the picked head large and the summaries, for this pair (and the previous one when compared)."""
    family = head_family(reading.trace)
    if family is None:
        return
    key = f"heads_{m}"
    clicked = figures.new_click(key, figures.drawn_event(key), PICKED)  # before drawing: framed at once
    custom = figures.clicked_fields(clicked, HEAD_FIELDS)
    pick = _picked(family, custom)
    st.caption("Each thumbnail is one head's attention between the words of the two sentences (rows attend over "
               "columns; a word's pieces are folded onto it). Click a thumbnail to draw that head large below, over "
               "the whole square of both sentences' words, the thumbnails' block outlined.")
    grid = head_grid(family, 0, reading.premise_tokens, reading.hypothesis_tokens, direction, pick, label=name)
    figures.show(grid, key, f"{name}_heads_{direction}", clickable=True)
    _large(m, name, reading, pick, direction, colour_domain(grid), "")
    if old is not None and head_family(old.trace) is not None:
        _large(m, name, old, pick, direction, None, " (previous pair)")


def _large(m: int, name: str, reading: PairReading, pick: str, direction: str,
           colour_range: tuple[float, float] | None, suffix: str) -> None:
    """The picked head and each summary over heads side by side."""
    family = head_family(reading.trace)
    layer, head = pick.split(".")
    panels = [(f"layer {layer} · head {head}{suffix}", family.blocks(pick), colour_range, "picked", f"head_{pick}")]
    panels += [(f"{stem}: a summary of every layer and head{suffix}", blocks, None, stem, stem)
               for stem, blocks in summaries(reading.trace).items()]
    tag = "prev_" if suffix else ""
    for start in range(0, len(panels), 2):
        for column, (title, blocks, scale, key, file) in zip(st.columns(2), panels[start:start + 2]):
            figure = square_heatmap(blocks, 0, reading.premise_tokens, reading.hypothesis_tokens, title, direction,
                                    scale)
            figures.show(figure, f"{tag}heads_{m}_{key}", f"{name}_{file}{'_previous' if suffix else ''}", where=column,
                         columns=2)
