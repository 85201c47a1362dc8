"""DIIN's interaction space for the current pair: channels of the premise×hypothesis tensor and of the maps built
on it, picked by index, highest activation or highest variance (the default: the channels that vary over the
pair, not the first eight, which are often flat), one colour range with its colour bar unless asked otherwise."""
from __future__ import annotations

from typing import Sequence

import streamlit as st

from nlivis.app import cache, paths, state
from nlivis.app.components import controls, figures, pairs
from nlivis.app.components.frame import NOTE_ICON, protocol_notes
from nlivis.app.text import md
from nlivis.models.trace import FeatureMaps
from nlivis.viz.channel_grid import SELECTIONS
from nlivis.viz.drawable import MISSING_MESSAGES
from nlivis.viz.vega.channel_grid import channel_grid

PAGE = "diin"
SELECTION_NAMES = {"index": "by index", "max_activation": "highest activation", "variance": "highest variance"}


def page(models: Sequence[cache.Model]) -> None:
    with_maps = [m for m in models if FeatureMaps in m.trace_types]  # declared, known before any model runs
    without = [m.name for m in models if m not in with_maps]
    if len(without) == 1:
        st.info(f"{md(without[0])}: {MISSING_MESSAGES['feature_maps']}.")
    elif without:  # one box for all, so the grid is not pushed below a stack of them
        st.info(f"{len(without)} loaded models have no 2-D interaction maps (only DIIN builds a premise×hypothesis "
                f"tensor): {md(', '.join(without))}.")
    if not with_maps:
        state.stop()
    shown = pairs.picker(PAGE, models)
    premise, hypothesis, _ = pairs.clean(shown)
    if not premise or not hypothesis:
        st.info("Type a premise and a hypothesis (both need at least one word).")
        state.stop()
    pairs.describe(shown)
    pairs.came_from(PAGE)
    pairs.links_to_other_pages(paths.DIIN)
    name = controls.select(PAGE, "model", "Model", [m.name for m in with_maps])
    model = next(m for m in with_maps if m.name == name)
    readings = pairs.read_all([model], shown)
    if name not in readings:
        state.stop()
    reading = readings[name]
    protocol_notes([model])
    verdict = "" if not shown.gold else (" (right)" if reading.predicted == shown.gold else f" (wrong: gold {md(shown.gold)})")
    st.markdown(f"**{md(name)}** predicts **{md(reading.predicted)}**{verdict}")
    for notice in reading.notices:
        st.caption(f"{NOTE_ICON} {md(notice)}")
    stages = reading.trace.of_type(FeatureMaps)
    left, middle, right = st.columns([2, 2, 1])
    first_learned = next((n for n in stages if n.startswith("dense_block")), next(iter(stages)))  # learned 3×3 maps
    stage = controls.select(PAGE, "stage", "Stage", list(stages), first_learned, where=left,
                            format_func=lambda n: f"{n} ({stages[n].maps.shape[1]} channels, "
                                                  f"{stages[n].maps.shape[2]}×{stages[n].maps.shape[3]})")
    entry = stages[stage]
    n_channels = int(entry.maps.shape[1])
    choice = controls.radio(PAGE, "pick", "Choose channels", SELECTIONS, "variance", where=middle,
                            format_func=SELECTION_NAMES.get)
    k = controls.number(PAGE, "k", "How many", min(8, n_channels), 1, max(1, min(n_channels, 48)), where=right)
    channels = None
    if choice == "index":
        channels = controls.multiselect(PAGE, f"channels_{stage}", "Channels", list(range(n_channels)),
                                        list(range(min(k, n_channels))))
        if not channels:
            st.info("Select at least one channel.")
            state.stop()
    shared = controls.toggle(PAGE, "shared", "One colour range for all panels (with its colour bar)", True)
    figure = channel_grid(entry, 0, reading.premise_tokens, reading.hypothesis_tokens, channels=channels,
                          selection=choice, k=int(k), shared_scale=shared, label=name)
    figures.show(figure, f"diin_{stage}", f"diin_{stage}")
