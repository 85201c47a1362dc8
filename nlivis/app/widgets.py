"""Widgets the pages share: the pair input, figure display with downloads, the "load a model first" guard.

Pages lay these out; the state behind them lives in nlivis.app.selection.
"""
from __future__ import annotations

from typing import Any, Iterable

import streamlit as st

from nlivis.app.loading import LoadedModel, loaded_models, local_splits, read_local_split
from nlivis.app.selection import current_pair, set_current_pair


def percent_columns(columns: Iterable[str]) -> dict[str, Any]:
    """`st.dataframe(column_config=...)` showing the given 0–1 columns as percentages."""
    return {column: st.column_config.NumberColumn(format="percent") for column in columns}


def require_models(view: str) -> list[LoadedModel]:
    """The loaded models, or stop the page with a message saying how to load one."""
    models, errors = loaded_models()
    for error in errors:
        st.error(f"Could not load {error}")
    if not models:
        st.info(f"No model is loaded. Choose checkpoints on the Home page to use the {view}.")
        st.page_link("app.py", label="Go to Home", icon="🏠")
        st.stop()
    return models


_IMAGE_FORMAT = "nlivis_image_format"


def image_format_choice() -> None:
    """Sidebar radio: which format the plotly camera button saves (kept across pages)."""
    formats = ["svg", "png"]
    current = st.session_state.get(_IMAGE_FORMAT, "svg")
    chosen = st.sidebar.radio("Figure download format (camera button)", formats, index=formats.index(current),
                              horizontal=True, key=f"{_IMAGE_FORMAT}_widget")
    st.session_state[_IMAGE_FORMAT] = chosen


def show_figure(figure: Any, key: str, filename: str | None = None) -> None:
    """A plotly figure with its camera button (SVG or PNG) and a CSV download of the data behind it."""
    from nlivis.viz import figure_data_csv, plotly_config

    name = filename or key
    st.plotly_chart(figure, config=plotly_config(st.session_state.get(_IMAGE_FORMAT, "svg"), name), key=f"chart_{key}",
                    width="stretch")
    st.download_button("data (CSV)", figure_data_csv(figure), file_name=f"{name}.csv", mime="text/csv",
                       key=f"csv_{key}", help="the numbers drawn in this figure")


def pair_input(prefix: str) -> dict[str, Any]:
    """Widgets to type a pair or pick one from a local dataset split; the choice is shared by all pages."""
    pair = current_pair()
    sources = ["type a pair", "pick from a dataset split"]
    source = st.radio("Pair", sources, horizontal=True, key=f"{prefix}_source",
                      index=1 if pair.get("source", "typed") != "typed" else 0)
    if source == sources[0]:
        left, right = st.columns(2)
        premise = left.text_area("Premise", value=pair["premise"], key=f"{prefix}_premise", height=90)
        hypothesis = right.text_area("Hypothesis", value=pair["hypothesis"], key=f"{prefix}_hypothesis", height=90)
        pair = {"premise": premise, "hypothesis": hypothesis, "gold": None, "source": "typed"}
    else:
        splits = local_splits()
        if not splits:
            st.info("No dataset split found: set a data folder on the Home page (layout of ../shared/data) to pick pairs.")
        else:
            keys = list(splits)
            left, right = st.columns([2, 1])
            split = left.selectbox("Split", keys, key=f"{prefix}_split",
                                   index=keys.index(pair["source"]) if pair.get("source") in keys else 0)
            pairs, error = read_local_split(split)
            if error:
                st.error(error)
            elif pairs:
                number = right.number_input(f"Pair number (0–{len(pairs) - 1})", min_value=0, max_value=len(pairs) - 1,
                                            value=min(int(pair.get("number", 0)), len(pairs) - 1), step=1, key=f"{prefix}_number")
                chosen = pairs[int(number)]
                pair = {"premise": chosen.premise, "hypothesis": chosen.hypothesis, "gold": chosen.label,
                        "source": split, "number": int(number), "id": chosen.id, "genre": chosen.genre}
                st.markdown(f"**Premise:** {chosen.premise}  \n**Hypothesis:** {chosen.hypothesis}  \n"
                            f"**Gold:** {chosen.label}" + (f" · genre {chosen.genre}" if chosen.genre else ""))
    set_current_pair(pair)
    return pair
