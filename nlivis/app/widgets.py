"""Widgets the pages share: the pair form, figures with downloads, clickable pair tables and points.

Pages lay these out; the state behind them lives in nlivis.app.selection (session and URL).

Click-through, for any page that shows pairs:
- `pair_table(frame, key, split)`: a table of pairs (an `id` column, or a 0-based `row` column); clicking a
  line opens that pair in the Pair explorer with the models loaded now (`selection.open_pair`).
- `show_figure(figure, key, clickable=True)` returns plotly's selection; `open_clicked_pair(event)` opens the
  pair of a clicked point whose customdata ends with (split key, row) — `nlivis.viz.projection_scatter` does
  that when the frame has `split` and `row` columns.
- `clicked_cell(event)`: the (gold, predicted) cell clicked on `nlivis.viz.confusion_matrix_heatmap`.
"""
from __future__ import annotations

from typing import Any, Iterable, Sequence

import pandas as pd
import streamlit as st

from nlivis.app import selection
from nlivis.app.loading import (LoadedModel, clean_sentence, default_split, loaded_models, local_splits, split_label,
                                split_rows, training_splits)


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
        st.page_link("pages/1_Home.py", label="Go to Home", icon=":material/home:")
        st.stop()
    return models


# ---------------------------------------------------------------- figures

_IMAGE_FORMAT = "nlivis_image_format"


def image_format_choice() -> None:
    """Sidebar radio: which format the plotly camera button saves (kept across pages)."""
    formats = ["svg", "png"]
    current = st.session_state.get(_IMAGE_FORMAT, "svg")
    chosen = st.sidebar.radio("Figure download format (camera button)", formats, index=formats.index(current),
                              horizontal=True, key=f"{_IMAGE_FORMAT}_widget")
    st.session_state[_IMAGE_FORMAT] = chosen


def show_figure(figure: Any, key: str, filename: str | None = None, clickable: bool = False) -> Any:
    """A plotly figure with its camera button (SVG or PNG) and a CSV download of the data behind it.
    `clickable`: a click on a point reruns the page and the selection event is returned (else None)."""
    from nlivis.viz import figure_data_csv, plotly_config
    from nlivis.viz.common import clean_file_name

    name = clean_file_name(filename or key)
    options: dict[str, Any] = {"on_select": "rerun", "selection_mode": "points"} if clickable else {}
    event = st.plotly_chart(figure, config=plotly_config(st.session_state.get(_IMAGE_FORMAT, "svg"), name),
                            key=f"chart_{key}", width="stretch", **options)
    st.download_button("data (CSV)", figure_data_csv(figure), file_name=f"{name}.csv", mime="text/csv",
                       key=f"csv_{key}", help="the numbers drawn in this figure")
    return event if clickable else None


def clicked_points(event: Any) -> list[dict[str, Any]]:
    """The points of a plotly selection event (empty when nothing is selected)."""
    try:
        return list(event["selection"]["points"])
    except (KeyError, TypeError):
        return []


def open_clicked_pair(event: Any) -> None:
    """Open the pair of the first clicked point in the Pair explorer; its customdata ends with (split, row)."""
    for point in clicked_points(event):
        custom = point.get("customdata")
        if isinstance(custom, (list, tuple)) and len(custom) >= 2:
            try:
                row = int(custom[-1])
            except (TypeError, ValueError):
                continue
            if row >= 0:  # -1: the pair is not in the local split
                selection.open_pair(str(custom[-2]), row)


def clicked_cell(event: Any) -> tuple[str, str] | None:
    """(gold, predicted) of the confusion-matrix cell clicked, or None."""
    for point in clicked_points(event):
        custom = point.get("customdata")
        if isinstance(custom, (list, tuple)) and len(custom) >= 2:
            return str(custom[0]), str(custom[1])
    return None


# ---------------------------------------------------------------- tables of pairs

def with_rows(frame: pd.DataFrame, split: str, id_column: str = "id") -> pd.DataFrame:
    """`frame` with a first column `row`: each pair's 0-based row in the local split (empty when the split is
    not local or the id is not in it)."""
    rows = split_rows(split)
    shown = frame.copy()
    if "row" not in shown.columns:
        shown.insert(0, "row", shown[id_column].astype(str).map(rows).astype("Int64"))
    return shown


def pair_table(frame: pd.DataFrame, key: str, split: str, id_column: str = "id", models: Sequence[str] | None = None,
               **options: Any) -> None:
    """A table of pairs of `split`; clicking a line opens that pair in the Pair explorer with the models loaded
    now, or with the checkpoint folders `models` (e.g. the variants a table compares). Pairs are numbered by their
    0-based split row (column `row`, added from `id_column` when missing); `options` go to st.dataframe."""
    shown = with_rows(frame, split, id_column)
    options = {"hide_index": True, "width": "stretch", **options}
    event = st.dataframe(shown, key=key, on_select="rerun", selection_mode="single-row", **options)
    st.caption(":material/touch_app: Click a line to open that pair in the Pair explorer with "
               + ("these checkpoints" if models else "the loaded models") + " (the browser's Back returns here).")
    picked = list(getattr(getattr(event, "selection", None), "rows", []) or [])
    if picked:
        row = shown.iloc[picked[0]]["row"]
        if pd.isna(row):
            st.warning(f"That pair is not in the local copy of {split}, so it cannot be opened.")
        else:
            selection.open_pair(split, int(row), models)


# ---------------------------------------------------------------- the pair form

SOURCES = ("type a pair", "pick from a dataset split")


def _sync(key: str, value: Any) -> None:
    """Give widget `key` the selection's value when it has none or the pair changed since it last got one."""
    marker = f"nlivis_synced_{key}"
    version = selection.pair_version()
    if key not in st.session_state or st.session_state.get(marker) != version:
        st.session_state[key] = value
        st.session_state[marker] = version


def pair_input(prefix: str, models: Sequence[LoadedModel] = ()) -> dict[str, Any]:
    """The pair form: type a pair or pick a row of a local split, then press Analyse (a half-typed edit is never
    analysed). Returns the pair to analyse — the last one analysed on any page, shared with them and the URL.
    The split picker starts on the models' select split; a training split is marked as one."""
    pair = selection.current_pair()
    is_split = pair.get("source", selection.TYPED) != selection.TYPED
    _sync(f"{prefix}_source", SOURCES[1] if is_split else SOURCES[0])
    source = st.radio("Pair", SOURCES, horizontal=True, key=f"{prefix}_source")
    if source == SOURCES[0]:
        _sync(f"{prefix}_premise", pair["premise"])
        _sync(f"{prefix}_hypothesis", pair["hypothesis"])
        with st.form(f"{prefix}_pair_form", border=False):
            left, right = st.columns(2)
            premise = left.text_area("Premise", key=f"{prefix}_premise", height=90)
            hypothesis = right.text_area("Hypothesis", key=f"{prefix}_hypothesis", height=90)
            submitted = st.form_submit_button("Analyse", type="primary", key=f"{prefix}_analyse")
        if submitted:
            typed = {"premise": premise, "hypothesis": hypothesis, "gold": None, "source": selection.TYPED}
            if (typed["premise"], typed["hypothesis"]) != (pair["premise"], pair["hypothesis"]) or is_split:
                selection.set_current_pair(typed)
                st.session_state[f"nlivis_synced_{prefix}_premise"] = selection.pair_version()
                st.session_state[f"nlivis_synced_{prefix}_hypothesis"] = selection.pair_version()
                pair = typed
    else:
        splits = list(local_splits())
        if not splits:
            st.info("No dataset split found: set a data folder on the Home page (layout of ../shared/data) to pick pairs.")
        else:
            trained = training_splits(models)
            start = pair["source"] if is_split and pair["source"] in splits else default_split(models, splits)
            _sync(f"{prefix}_split", start)
            _sync(f"{prefix}_number", int(pair.get("number", 0)) if is_split else 0)
            with st.form(f"{prefix}_row_form", border=False):
                left, right, button = st.columns([3, 2, 1], vertical_alignment="bottom")
                split = left.selectbox("Split", splits, key=f"{prefix}_split", format_func=lambda k: split_label(k, trained))
                number = right.number_input("Row (0-based)", min_value=0, step=1, key=f"{prefix}_number")
                submitted = button.form_submit_button("Analyse", type="primary", key=f"{prefix}_analyse_row")
            if submitted:
                picked, error = selection.split_row_pair(split, int(number))
                if error:
                    st.error(error)
                else:
                    selection.set_current_pair(picked)
                    for name in ("split", "number"):
                        st.session_state[f"nlivis_synced_{prefix}_{name}"] = selection.pair_version()
                    pair = picked
    show_pair(pair, training_splits(models))
    return pair


def show_pair(pair: dict[str, Any], trained: dict[str, list[str]] | None = None) -> None:
    """The analysed pair's sentences, gold label, split row and pair id."""
    if pair.get("source", selection.TYPED) == selection.TYPED:
        return
    where = f"row {pair['number']} of {split_label(pair['source'], trained or {})}"
    if pair.get("id") is not None:
        where += f" (pair id {pair['id']})"
    st.markdown(f"**Premise:** {pair['premise']}  \n**Hypothesis:** {pair['hypothesis']}  \n"
                f"**Gold:** {pair.get('gold')}" + (f" · genre {pair['genre']}" if pair.get("genre") else "") + f" · {where}")


def clean_pair(pair: dict[str, Any]) -> tuple[str, str, list[str]]:
    """(premise, hypothesis, notes about cutting) of a pair, ready for the models."""
    premise, premise_note = clean_sentence(pair["premise"])
    hypothesis, hypothesis_note = clean_sentence(pair["hypothesis"])
    return premise, hypothesis, [n for n in (premise_note, hypothesis_note) if n]
