"""Projection: one model's pooled pair representations of a split sample in 2-D (UMAP or PCA), coloured by
correctness, gold label, prediction, genre or a tag; a clicked point opens its pair, with the points of its
colour as the list to step through. Vectors, predictions and layouts are cached on disk (under the cache root),
so recolouring never runs the model."""
from __future__ import annotations

from typing import Sequence

import pandas as pd
import streamlit as st

from nlivis.analysis.projection import METHODS, informative_tag, tag_counts
from nlivis.app import cache, state
from nlivis.app.cache import samples as cached_samples
from nlivis.app.components import controls, figures, pair_list, samples
from nlivis.app.components.frame import protocol_notes
from nlivis.app.text import md
from nlivis.data.split_choice import split_label
from nlivis.viz.vega.projection import CLICKED, LINK_FIELDS, projection_scatter

PAGE = "projection"
COLOURS = ("correctness", "gold", "prediction", "genre", "tag")


def page(models: Sequence[cache.Model]) -> None:
    left, middle, right = st.columns([2, 2, 1])
    name = controls.select(PAGE, "model", "Model", [m.name for m in models], where=left)
    model = next(m for m in models if m.name == name)
    splits = list(cache.local_splits())
    if not splits:
        st.info("No dataset split found: set a data folder on the Home page to project a split's pairs.")
        state.stop()
    start, trained = cache.split_choice([model], splits)
    split = controls.select(PAGE, "split", "Split", splits, start, where=middle,
                            format_func=lambda key: split_label(key, trained))
    method = controls.radio(PAGE, "method", "Method", METHODS, METHODS[0], where=right, format_func=str.upper)
    total = cache.split_size(split) or 0
    size = total
    if total > 20:
        size = controls.number(PAGE, "size", "Pairs (random sample, fixed seed)", min(1000, total), 20, min(total, 5000),
                               slider=True, step=20)
    protocol_notes([model])
    colour = controls.radio(PAGE, "colour", "Colour by", COLOURS, "correctness",
                            help="right/wrong shows where the model errs; the others read the pairs or the model's answer")
    tag = None
    if colour == "tag":
        tagged, tag_error = cached_samples.tagged_sample(split, size)
        counts = tag_counts(tagged.tags, list(tagged.tags)) if tagged is not None else {}
        if not counts:
            st.info(md(tag_error) if tag_error else "No pair in this sample carries an annotation tag; colouring by gold "
                    "label instead.")
            colour = "gold"
        else:
            present = sorted(counts)
            tag = controls.select(PAGE, "tag", "Tag (first shown: the one that splits the points most evenly)", present,
                                  informative_tag(tagged.tags, list(tagged.tags)),
                                  format_func=lambda t: f"{t} ({counts[t]} of {len(tagged.tags)} pairs)")
    progress = None if cached_samples.projection_cached(model, split, size, method) else st.progress(0.0, text="starting …")

    def report(message: str, fraction: float | None) -> None:
        if progress is not None:
            progress.progress(fraction if fraction is not None else 0.5, text=message)

    frame, problem = cached_samples.projection_frame(model, split, size, method, colour, tag, progress=report)
    if progress is not None:
        progress.empty()
    if frame is None:
        st.error(md(problem))
        state.stop()
    if colour == "genre" and set(frame["genre"]) == {"(none)"}:
        st.info(f"{md(split)} has no genres; colouring by gold label instead.")
        colour = "gold"
        frame["colour"] = frame["gold"]
    items, _ = cached_samples.analysed_sample(split, size)
    samples.sample_truncation([model], items, split)
    figure = projection_scatter(frame.assign(**{colour: frame["colour"]}), colour,
                                hover=("premise", "hypothesis", "gold", "prediction"),
                                title=f"{name} · {split} · {len(frame)} pairs · {method.upper()}")
    event = figures.show(figure, "projection", f"{name}_projection_{split}_{method}", clickable=True)
    custom = figures.clicked_fields(figures.new_click("projection", event, CLICKED), LINK_FIELDS)
    st.caption(":material/touch_app: Click a point to open its pair in the Pair explorer; Previous / Next there step "
               "through the points of the same colour.")
    if custom and len(custom) >= 2:
        open_point(frame, str(custom[-2]), custom[-1], model, split, size, method, colour, tag)


def open_point(frame: pd.DataFrame, split: str, row, model: cache.Model, key: str, size: int, method: str, colour: str,
               tag: str | None) -> None:
    try:
        row = int(row)
    except (TypeError, ValueError):
        return
    if row < 0:  # the pair is not in the local split
        st.warning("That point's pair is not in the local copy of the split, so it cannot be opened.")
        return
    value = frame.loc[frame["row"] == row, "colour"]
    ref = state.ListRef.of("projection", model=model.name, split=key, size=size, method=method, colour=colour,
                           tag=tag, value=value.iloc[0] if len(value) else None, via="point")
    state.switch_to(pair_list.EXPLORER, state.pair_link(state.PairRef(split=split, row=row), ref))
