"""Gates: how open each gate is per token and layer for one pair, and on average over a dataset split."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from nlivis.app import challenge, loading, notes, selection, widgets
from nlivis.models.trace import Gate
from nlivis.viz import MISSING_MESSAGES, gate_strip, gate_summary_bars
from nlivis.viz.gate_strips import GATE_DIMS_SHOWN, dimension_windows
from nlivis.analysis.gates import gate_summary

st.set_page_config(page_title="nlivis · gates", page_icon=":material/tune:", layout="wide")
selection.follow_url()
st.title("Gates")
st.caption(f"Top strip: the gate's mean over all its dimensions per token (1 = fully open); below: its dimensions, "
           f"{GATE_DIMS_SHOWN} at a time (pick the window). A model's figures are drawn when its section is opened.")
widgets.image_format_choice()
models = widgets.require_models("gate view")

tab_pair, tab_split = st.tabs(["One pair", "Over a dataset split"])
with tab_pair:
    pair = widgets.pair_input("gates", models)
    premise, hypothesis, _ = widgets.clean_pair(pair)
    if not premise or not hypothesis:
        st.info("Type a premise and a hypothesis (both need at least one word).")
    else:
        for m, model in enumerate(models):
            result, error = loading.analyse_pair(model, premise, hypothesis)
            if error:
                st.error(f"{model.label}: {error}")
                continue
            gates = result.trace.of_type(Gate)
            if not gates:
                st.info(f"{model.label}: {MISSING_MESSAGES['gates']}.")
                continue
            section = st.expander(f"{model.label} · predicts {result.predicted} · {len(gates)} gate entries",
                                  expanded=m == 0, key=f"gates_open_{m}", on_change="rerun")
            if not section.open:  # a closed section draws nothing: all figures of all models took 13 s
                continue
            with section:
                layers = sorted({g.layer for g in gates.values()})
                left, right = st.columns([2, 1])
                chosen_layers = left.multiselect("Layers", layers, default=layers, key=f"gates_layers_{m}")
                widest = max(int(g.values.shape[-1]) for g in gates.values())
                windows = dimension_windows(widest)
                first_dim = 0
                if len(windows) > 1:
                    first_dim = right.select_slider(
                        f"Dimensions (of {widest})", windows, key=f"gates_dims_{m}",
                        format_func=lambda start: f"{start}–{min(start + GATE_DIMS_SHOWN, widest) - 1}")
                for name, entry in gates.items():
                    if entry.layer not in chosen_layers:
                        continue
                    tokens = result.premise_tokens if entry.tokens == "premise" else result.hypothesis_tokens
                    start = min(first_dim, dimension_windows(int(entry.values.shape[-1]))[-1])  # a narrower gate: its last window
                    widgets.show_figure(gate_strip(entry, 0, tokens, label=f"{model.label} · {name}", first_dim=start),
                                        f"gate_{m}_{name}", f"{model.label}_{name}_gate")

with tab_split:
    splits = loading.local_splits()
    if not splits:
        st.info("No dataset split found: set a data folder on the Home page to average gates over a split.")
    else:
        left, right = st.columns([2, 1])
        trained = loading.training_splits(models)
        split = left.selectbox("Split", list(splits), key="gates_split", index=list(splits).index(loading.default_split(models, list(splits))),
                               format_func=lambda key: loading.split_label(key, trained))
        size = right.slider("Sample size (pairs)", min_value=10, max_value=1000, value=100, step=10, key="gates_size",
                            help="pairs drawn at random (fixed seed) and analysed with spaCy; larger is slower")
        if st.button("Compute gate statistics", key="gates_compute"):
            items, error = loading.analysed_sample(split, size)
            if error:
                st.error(error)
            else:
                tables = []
                progress = st.progress(0.0, text="running the models …")
                for i, model in enumerate(models):
                    tables.append(gate_summary(model.model, loading.encoded_batches(model, items), model.label))
                    progress.progress((i + 1) / len(models), text=f"{model.label} done")
                progress.empty()
                summary = pd.concat(tables, ignore_index=True) if tables else pd.DataFrame()
                st.session_state["gates_summary"] = (split, size, summary)
        stored = st.session_state.get("gates_summary")
        if stored:
            split_used, size_used, summary = stored
            challenge.show_sample_truncation(models, loading.analysed_sample(split_used, size_used)[0], split_used)
            without = [m.label for m in models if m.label not in set(summary.get("model", []))]
            for label in without:
                st.info(f"{label}: {MISSING_MESSAGES['gates']}.")
            if not summary.empty:
                notes.show_protocol_notes(models)
                title = f"mean gate value over {size_used} pairs of {split_used} (real tokens only; error bars: std)"
                widgets.show_figure(gate_summary_bars(summary, title), "gate_summary", f"gates_{split_used}")
                st.dataframe(summary, hide_index=True, width="stretch")
