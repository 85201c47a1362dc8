"""Pair explorer: every loaded model's prediction for one pair, and its alignments layer by layer."""
from __future__ import annotations

from collections import defaultdict

import pandas as pd
import streamlit as st

from nlivis.app import loading, notes, selection, tagging, widgets
from nlivis.models.trace import Alignment, MemoryKeys
from nlivis.viz import MISSING_MESSAGES, ModelReading, alignment_heatmap, memory_keys_heatmap, overview_grid, probability_bars

st.set_page_config(page_title="nlivis · pair explorer", page_icon=":material/compare_arrows:", layout="wide")
selection.follow_url()
st.title("Pair explorer")
widgets.image_format_choice()
models = widgets.require_models("pair explorer")

pair = widgets.pair_input("explorer", models)
premise, hypothesis, cut_notes = widgets.clean_pair(pair)
for note in cut_notes:
    st.warning(note)
if not premise or not hypothesis:
    st.info("Type a premise and a hypothesis (both need at least one word) to see what the models make of them.")
    st.stop()

results: dict[str, loading.PairResult] = {}
for model in models:
    result, error = loading.analyse_pair(model, premise, hypothesis)
    if error:
        st.error(f"{model.label}: {error}")
    elif result is not None:
        results[model.label] = result
if not results:
    st.stop()
previous = selection.remember_results(results)

st.subheader("Predictions")
notes.show_protocol_notes(models)
rows = []
for label, result in results.items():
    row = {"model": label, "predicted": result.predicted}
    row.update({f"P({name})": f"{p:.3f}" for name, p in zip(result.labels, result.probs)})
    if pair.get("gold"):
        row["gold"] = pair["gold"]
    row["notes"] = "; ".join(result.notices)
    rows.append(row)
st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")
taxonomy = tagging.pair_taxonomy(pair)
if taxonomy is not None:
    references = ", ".join(f"{name} **{label}**" for name, label in taxonomy["references"].items())
    st.markdown(f"**TaxiNLI** (pair {taxonomy['pair_id']}, genre {taxonomy['genre']}): "
                f"{', '.join(taxonomy['categories']) or 'no category'} · {references}")
for label, result in results.items():
    st.markdown(f"**{label}** predicts **{result.predicted}**")

by_labels: dict[tuple[str, ...], dict[str, list[float]]] = defaultdict(dict)
for label, result in results.items():
    by_labels[tuple(result.labels)][label] = result.probs
compare = False
if previous:
    before = next(iter(previous.values()))
    compare = st.toggle(f"Show the previous pair beside this one (premise “{before.premise[:60]}”, hypothesis “{before.hypothesis[:60]}”)",
                        value=True, key="explorer_compare")
for i, (labels, probs) in enumerate(by_labels.items()):
    if compare and previous:
        now_col, before_col = st.columns(2)
        with now_col:
            widgets.show_figure(probability_bars(probs, list(labels), "this pair"), f"probs_{i}", "probabilities")
        with before_col:
            old = {m: r.probs for m, r in previous.items() if tuple(r.labels) == labels}
            if old:
                widgets.show_figure(probability_bars(old, list(labels), "previous pair"), f"probs_prev_{i}", "probabilities_previous")
    else:
        widgets.show_figure(probability_bars(probs, list(labels)), f"probs_{i}", "probabilities")

st.subheader("At a glance")
st.caption("One row per model: its main alignment (last layer, both directions), DIIN's interaction summary and "
           "AMN's memory keys, on shared token axes; details per model below.")
readings = [ModelReading(label.split(" · ")[-1], r.trace, r.premise_tokens, r.hypothesis_tokens) for label, r in results.items()]
widgets.show_figure(overview_grid(readings, title="all loaded models"), "overview", "overview_all_models")

st.subheader("Alignments")
st.caption("Rows attend over columns; padding is cut; softmax and sparsemax weights share the range 0–1 unless they span "
           "less than a tenth of it (then the title states their own range). "
           "Models with several layers (ESAN blocks, GCNN aggregation) show one row per layer.")
for m, (label, result) in enumerate(results.items()):
    output = result.trace["output"]
    with st.expander(f"{label} · output normalised by {output.kind}", expanded=True):
        alignments = result.trace.of_type(Alignment)
        if not alignments:
            st.info(f"{label}: {MISSING_MESSAGES['alignment']}.")
        layers: dict[int, list[tuple[str, Alignment]]] = defaultdict(list)
        for name, entry in alignments.items():
            layers[entry.layer].append((name, entry))
        old_result = previous.get(label) if (compare and previous) else None
        for layer, entries in sorted(layers.items()):
            st.markdown(f"**Layer {layer}**")
            if old_result is None:  # both directions of a layer side by side
                for start in range(0, len(entries), 2):
                    for column, (name, entry) in zip(st.columns(2), entries[start:start + 2]):
                        with column:
                            figure = alignment_heatmap(entry, 0, result.premise_tokens, result.hypothesis_tokens, label=name)
                            widgets.show_figure(figure, f"align_{m}_{name}", f"{label}_{name}")
                continue
            for name, entry in entries:  # this pair | the previous pair
                now_col, before_col = st.columns(2)
                with now_col:
                    figure = alignment_heatmap(entry, 0, result.premise_tokens, result.hypothesis_tokens, label=name)
                    widgets.show_figure(figure, f"align_{m}_{name}", f"{label}_{name}")
                if name in old_result.trace:
                    with before_col:
                        figure = alignment_heatmap(old_result.trace[name], 0, old_result.premise_tokens,
                                                   old_result.hypothesis_tokens, label=f"{name} (previous pair)")
                        widgets.show_figure(figure, f"align_prev_{m}_{name}", f"{label}_{name}_previous")
        memory = result.trace.of_type(MemoryKeys)
        for name, entry in memory.items():
            tokens = result.premise_tokens if entry.tokens == "premise" else result.hypothesis_tokens
            widgets.show_figure(memory_keys_heatmap(entry, 0, tokens, label=name), f"memory_{m}_{name}", f"{label}_{name}")
