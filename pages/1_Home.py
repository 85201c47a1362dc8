"""Home: the checkpoints found (with the papers' reported numbers beside ours), which are loaded, where data is."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from nlivis.analysis.paper_tables import SOURCE_NOTE
from nlivis.app import loading, notes, paths, selection

st.set_page_config(page_title="nlivis · models", page_icon=":material/home:", layout="wide")
selection.follow_url()
st.title("nlivis — look inside sentence-matching models")
st.write("GCNN, DIIN, AttentiveConvNet, ESAN and AMN: load trained checkpoints here, then use the pages on the "
         "left to see their alignments, gates, DIIN's interaction space, errors by annotation tag, ablations "
         "and projections, or train a new model.")
st.caption(f"{notes.NOTE_ICON} {notes.SMALL_PROTOCOL_NOTE}")

with st.sidebar:
    st.subheader("Folders")
    folder = st.text_input("Another checkpoint folder", key="home_extra_root", placeholder="/path/to/checkpoints")
    if st.button("Scan this folder", disabled=not folder):
        error = paths.add_checkpoint_root(folder)
        if error:
            st.error(error)
    data_folder = st.text_input("Data folder (layout of ../shared/data)", key="home_data_root",
                                placeholder=str(paths.ROOT.parent / "shared" / "data"))
    if st.button("Use this data folder", disabled=not data_folder):
        error = paths.set_data_root(data_folder)
        if error:
            st.error(error)
    root = paths.data_root()
    if notice := paths.data_root_notice():
        st.warning(notice)
    st.caption(f"data: {root}" if root else "no data folder found: dataset pairs and split statistics are unavailable")

found = loading.scan_checkpoints()
roots = ", ".join(str(r) for r in paths.checkpoint_roots())
st.subheader("Checkpoints")
st.caption(f"scanned: {roots}")
for missing in found.missing_roots:
    st.warning(f"Checkpoint folder {missing} does not exist.")

if not found.good:
    st.info("No checkpoints found. Train one on the **Train** page (or with `python -m nlivis train … --out "
            "checkpoints/<name>`), or point the sidebar at a folder holding checkpoint folders.")
else:
    table = pd.DataFrame([loading.checkpoint_row(info) for info in found.good])
    st.dataframe(table, hide_index=True, width="stretch")
    st.caption(f"{notes.NOTE_ICON} *{loading.PAPER_COLUMN}*: the paper's accuracy for the same model on the same "
               f"dataset — {SOURCE_NOTE}, so it shows how far the reduced protocol is from the paper, not a "
               "comparison of methods; — where the paper reports no number on that dataset (e.g. GCNN on SNLI) or "
               "the config has no paper row.")
    options = [str(info.path) for info in found.good]
    labels = {str(info.path): loading.checkpoint_label(info.path, info) for info in found.good}
    current = [p for p in selection.selected_paths() if p in options]
    chosen = st.multiselect("Models to load (kept while you move between pages)", options, default=current,
                            format_func=lambda p: labels.get(p, p), key="home_selected")
    selection.set_selected_paths(chosen)
    models, errors = loading.loaded_models()
    for error in errors:
        st.error(f"Could not load {error}")
    if models:
        st.success("Loaded: " + "; ".join(m.label for m in models))
    else:
        st.info("Select one or more checkpoints above to use them on the other pages.")

if found.broken:
    st.subheader("Checkpoints that cannot be used")
    st.dataframe(pd.DataFrame(found.broken, columns=["folder", "problem"]), hide_index=True, width="stretch")
