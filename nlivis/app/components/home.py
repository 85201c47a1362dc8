"""Home: where checkpoints and data come from, the checkpoints found (with the papers' numbers beside ours on the
same dataset), and which are loaded — the five shipped snli-small models unless the reader or a link chose."""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any, Sequence

import pandas as pd
import streamlit as st

from nlivis.analysis.paper_tables import SOURCE_NOTE, our_split, paper_reference
from nlivis.app import cache, paths, state
from nlivis.app.components.frame import NOTE_ICON
from nlivis.app.text import md
from nlivis.data.protocols import get_protocol, split_key
from nlivis.store.checkpoints import CheckpointError, CheckpointInfo, read_json
from nlivis.store.files import file_stamp
from nlivis.workflows.checkpoints import FoundCheckpoints, default_model_names

PAPER_COLUMN = "paper reports (full data)"
"""The Home table's column with the paper's own number for the row a checkpoint's config reproduces."""
ACCURACY_COLUMN = "accuracy (selection split)"
SELECTED_KEY = "home_selected"


MNLI_COLUMN = "MultiNLI dev matched / mismatched"
SAME_SPLIT_COLUMN = "ours on the paper's split"


def checkpoint_row(info: CheckpointInfo, copies: Sequence[str] = ()) -> dict[str, Any]:
    """One row of the Home table: what a checkpoint is, how it was trained and how well it did on the split that
    selected it (named in the cell: snli_dev and xnli_en_dev are different tests), on MultiNLI dev where it was
    scored there, and the paper's number for the same model on the same dataset (its full training data) with
    ours on that very split where we have it and did not train on it; its folder, and the `copies` of the same
    model found in later folders."""
    reference = paper_reference(info.config_name, info.protocol)
    accuracy = info.dev_accuracy
    report = reported_accuracies(str(info.path), file_stamp(info.path / "metrics.json"))
    matched, mismatched = report.get("mnli_dev_matched"), report.get("mnli_dev_mismatched")
    same = None
    if reference is not None:
        key, very_split = our_split(reference.dataset, reference.split, report, training_splits(info.protocol))
        same = report[key] if key and very_split else None  # a stand-in split is no "paper's split"
    return {  # the numbers to compare first, beside the name: the table is wider than a window
        "checkpoint": info.name,
        ACCURACY_COLUMN: f"{accuracy:.1%} on {info.select_split}" if isinstance(accuracy, (int, float)) else "—",
        MNLI_COLUMN: f"{matched:.1%} / {mismatched:.1%}" if matched is not None and mismatched is not None else "—",
        PAPER_COLUMN: f"{reference.accuracy:.1f}% ({reference.where})" if reference else "—",
        SAME_SPLIT_COLUMN: (f"{same:.1%}" if same is not None else "splits differ") if reference else "—",
        "model": info.model,
        "config": info.config_name,
        "protocol": info.protocol,
        "size": info.size,
        "embeddings": info.embedding_source,
        "parameters": f"{info.parameters:,}" if isinstance(info.parameters, int) else "—",
        "folder": str(info.path) + (f" (the same model also in {', '.join(copies)})" if copies else ""),
    }


def checkpoint_table(found: FoundCheckpoints) -> pd.DataFrame:
    """The Home table, a `checkpoint_row` per checkpoint found, built once per state of the checkpoint folders
    (`cache.roots_stamps`: every folder's files, metrics.json among them) and shared: never modify it."""
    key = (repr(cache.roots_stamps(paths.checkpoint_roots())), repr([str(info.path) for info in found.good]),
           repr(sorted(found.copies.items())))
    return cache.memo("home table", key, lambda: pd.DataFrame(
        [checkpoint_row(info, found.copies.get(info.name, ())) for info in found.good]))


@lru_cache(maxsize=512)
def reported_accuracies(folder: str, stamp: float) -> dict[str, float]:
    """Split key → our accuracy from the checkpoint's metrics.json `report` (every split it was scored on);
    empty when unreadable (the checkpoint scan reports broken folders). `stamp` renews it when the file changes."""
    try:
        report = read_json(Path(folder), "metrics.json").get("report", {})
    except CheckpointError:
        return {}
    return {key: float(entry["accuracy"]) for key, entry in report.items()
            if isinstance(entry, dict) and isinstance(entry.get("accuracy"), (int, float))}


@lru_cache(maxsize=64)
def training_splits(protocol: str) -> frozenset[str]:
    """The split keys a protocol trains on (snli-small: snli_test): our number there is no test."""
    try:
        return frozenset(split_key(ref) for ref in get_protocol(protocol).train)
    except (KeyError, ValueError):
        return frozenset()


def folders_sidebar() -> None:
    """The sidebar's folders: the checkpoint folders scanned (folded: the table names each checkpoint's own
    folder), another one to scan, and the data folder."""
    with st.sidebar:
        st.subheader("Folders")
        with st.expander("Checkpoint folders scanned"):
            for root in paths.checkpoint_roots():
                st.caption(md(root))
        folder = st.text_input("Another checkpoint folder", key="home_extra_root", placeholder="/path/to/checkpoints")
        if st.button("Scan this folder", disabled=not folder):
            error = paths.add_checkpoint_root(folder)
            if error:
                st.error(md(error))
        data_folder = st.text_input("Data folder (layout of ../shared/data)", key="home_data_root",
                                    placeholder=str(paths.ROOT.parent / "shared" / "data"))
        if st.button("Use this data folder", disabled=not data_folder):
            error = paths.set_data_root(data_folder)
            if error:
                st.error(md(error))
        root = paths.data_root()
        if notice := paths.data_root_notice():
            st.warning(md(notice))
        st.caption(f"data: {md(root)}" if root else "no data folder found: dataset pairs and split statistics are unavailable")


def _chosen() -> None:
    state.set_model_names(st.session_state.get(SELECTED_KEY, []))


def checkpoints() -> None:
    found = cache.scan_checkpoints()
    st.subheader("Checkpoints")
    for missing in found.missing_roots:
        st.warning(f"Checkpoint folder {md(missing)} does not exist.")
    if not found.good:
        roots = ", ".join(str(root) for root in paths.checkpoint_roots())
        st.info(f"No checkpoints found in {md(roots)}. Train one on the **Train** page (or with `python -m nlivis "
                "train … --out checkpoints/<name>`), or point the sidebar at a folder holding checkpoint folders.")
    else:
        st.dataframe(checkpoint_table(found), hide_index=True, width="stretch")
        st.caption(f"{NOTE_ICON} *{ACCURACY_COLUMN}*: on the split that picked the checkpoint (the protocol's select "
                   f"split; snli-small's is SNLI dev, mnli-small's XNLI-en dev). *{MNLI_COLUMN}*: ours on MultiNLI's "
                   f"dev sets where the checkpoint was scored there (mnli-small). *{PAPER_COLUMN}*: the paper's accuracy "
                   f"for the same model on the same dataset — {SOURCE_NOTE}, so it shows how far the reduced protocol is "
                   "from the paper, not a comparison of methods; — where the paper reports no number on that dataset "
                   f"(e.g. GCNN on SNLI) or the config has no paper row. *{SAME_SPLIT_COLUMN}*: ours on exactly the "
                   "split of the paper's number; *splits differ* where we have no such number — the papers report SNLI "
                   "and Quora **test**, which snli-small and quora-small train on, and MultiNLI test, whose labels are "
                   "not public — so the two numbers on that row are on different splits.")
        options = list(dict.fromkeys(info.name for info in found.good))
        if not state.models_chosen():
            state.set_model_names(default_model_names(found.good))
        st.session_state[SELECTED_KEY] = [name for name in state.model_names() if name in options]
        st.multiselect("Models to use on the other pages (kept while you move between pages; the five shipped "
                       "snli-small models unless you choose)", options, key=SELECTED_KEY, on_change=_chosen)
        chosen = state.model_names()
        if chosen:
            st.success(f"Selected: {md(', '.join(chosen))} — each loads once, on the first page that needs it.")
        else:
            st.info("Select one or more checkpoints above to use them on the other pages.")
    if found.broken:
        st.subheader("Checkpoints that cannot be used")
        st.dataframe(pd.DataFrame(found.broken, columns=["folder", "problem"]), hide_index=True, width="stretch")


def introduction() -> None:
    st.write("GCNN, DIIN, AttentiveConvNet, ESAN and AMN: the five shipped models are loaded for you (choose others "
             "below); use the pages on the left to see their alignments, gates, DIIN's interaction space, errors by "
             "annotation tag, ablations and projections, or train a new model. Start from **Error analysis** to see "
             "where a model fails, then open any pair to see why.")
