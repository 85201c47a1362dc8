"""Ablations: the checkpoints of one model family side by side, against the full model, with the papers' numbers."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from nlivis import app_state
from nlivis.analysis.ablations import (compare_variants, families, family_members, full_model_seeds, paper_ablations,
                                       seed_noise, tag_deltas, variant_table)
from nlivis.analysis.breakdown import disagreements
from nlivis.analysis.paper_tables import SOURCE_NOTE
from nlivis.viz import comparison_bars, delta_bars, difference_intervals

ACCURACY_COLUMNS = ("accuracy", "reference accuracy", "difference", "CI low", "CI high", "delta")

st.set_page_config(page_title="nlivis · ablations", page_icon="🔎", layout="wide")
st.title("Ablations")
st.caption("Every checkpoint of one model under one protocol — the full model, its ablations and other seeds — "
           "read from what the checkpoint folders recorded (no weights are loaded, nothing has to be selected on Home).")
app_state.image_format_choice()

records, problems = app_state.variant_records()
for problem in problems:
    st.warning(problem)
if not records:
    st.info("No checkpoints found. Train a model and its ablations on the **Train** page (e.g. configs `gcnn` and "
            "`gcnn-no_forget_gate` on the same dataset), or point Home at a folder holding checkpoints.")
    st.stop()

by_family = families(records)
left, right = st.columns(2)
model = left.selectbox("Model family", list(by_family), key="ablations_model")
protocol = right.selectbox("Protocol (variants are compared within one)", by_family[model], key=f"ablations_protocol_{model}")
members = family_members(records, model, protocol)
seeds = full_model_seeds(members)
st.caption(f"{app_state.NOTE_ICON} {app_state.protocol_note_for(protocol)}")

names = [m.name for m in members]
reference_name = st.selectbox("Reference (differences are variant − reference)", names, key=f"ablations_reference_{model}_{protocol}",
                              index=names.index(seeds[0].name) if seeds else 0,
                              help="the full model (its first seed) when one was trained")
reference = members[names.index(reference_name)]
if not seeds:
    st.warning(f"No checkpoint of the full `{model}` config under {protocol}: differences are against {reference_name}.")

st.subheader("Variants")
table = variant_table(members, reference)
st.dataframe(table, hide_index=True, width="stretch", column_config={
    **app_state.percent_columns(table.attrs["accuracy_columns"]), "parameters": st.column_config.NumberColumn(format="localized"),
    "training time (min)": st.column_config.NumberColumn(format="%.1f"),
    "training pairs/s": st.column_config.NumberColumn(format="%.0f")})
select_column = table.attrs["select_column"]
chart = table.dropna(subset=[select_column])
app_state.show_figure(comparison_bars(chart, "checkpoint", select_column, title=f"{model} · {protocol} · accuracy on {select_column}"),
                      "ablations_accuracy", f"ablations_{model}_{protocol}")
if len(members) < 2:
    st.info(f"Only one checkpoint of {model} under {protocol}. Train a variant on the **Train** page (a config "
            f"named `{model}-…`) or a second seed to compare.")

st.subheader("Paired comparison with the reference")
split_sets = {m.name: set(m.prediction_splits) for m in members}
shared = sorted(s for s in split_sets[reference.name] if any(s in split_sets[n] for n in names if n != reference.name))
if len(members) < 2:
    st.caption("Needs at least two checkpoints.")
elif not shared:
    st.info(f"{reference_name} shares no prediction file (predictions_<split>.jsonl) with the other variants.")
else:
    split = st.selectbox("Evaluation split", shared, key=f"ablations_split_{model}_{protocol}",
                         index=shared.index(reference.select_split) if reference.select_split in shared else 0)
    reference_predictions, error = app_state.checkpoint_predictions(reference.folder, split)
    variants: dict[str, list] = {}
    for member in members:
        if member.name == reference.name or split not in split_sets[member.name]:
            continue
        predictions, member_error = app_state.checkpoint_predictions(member.folder, split)
        if member_error:
            st.error(member_error)
        else:
            variants[member.name] = predictions
    if error:
        st.error(error)
    elif variants:
        noise = None
        if len(seeds) >= 2 and all(split in split_sets[s.name] for s in seeds[:2]):
            first, _ = app_state.checkpoint_predictions(seeds[0].folder, split)
            second, _ = app_state.checkpoint_predictions(seeds[1].folder, split)
            try:
                noise = seed_noise(first, second, seeds[0].name, seeds[1].name)
            except ValueError as noise_error:
                st.warning(f"Seed noise cannot be measured between {seeds[0].name} and {seeds[1].name}: {noise_error}.")
            else:
                st.caption(f"Seed noise: {noise.first} and {noise.second} (the same config, different seeds) differ by "
                           f"{noise.gap:.1%} on {split} ({noise.pairs} pairs). A variant whose difference is no larger "
                           "is *within seed noise*: the ablation did not change accuracy by more than re-training does.")
        else:
            st.caption(f"Only one seed of the full `{model}` config under {protocol}: whether a difference is within "
                       f"seed noise cannot be said. Train `{model}` with seed 2 (folder suffix `-seed2`) to know.")
        comparison = compare_variants(reference_predictions, variants, noise)
        app_state.show_figure(difference_intervals(comparison, noise=noise.gap if noise else None,
                                                   title=f"accuracy difference vs {reference_name} on {split}"),
                              "ablations_differences", f"ablations_differences_{split}")
        st.dataframe(comparison, hide_index=True, width="stretch",
                     column_config=app_state.percent_columns(c for c in ACCURACY_COLUMNS if c in comparison))
        st.caption("Difference: variant − reference on the pairs both predicted, 95% paired-bootstrap interval; "
                   "McNemar's exact test on the pairs only one of them gets right (significant: p < 0.05).")

        st.subheader("Accuracy by annotation tag, variant − reference")
        total = app_state.split_size(split)
        if total is None:
            st.info(f"The pairs of {split} are not in the data folder, so they cannot be tagged (tags need the "
                    "sentences). Set a data folder on the Home page.")
        else:
            size = total
            if total > 10:
                size = st.slider("Pairs to tag (random sample, fixed seed; tagging parses every sentence)", min_value=10,
                                 max_value=total, value=min(500, total), step=10, key="ablations_tag_size")
            tagged, tag_error = app_state.tagged_sample(split, size)
            if tag_error or tagged is None:
                st.error(tag_error)
            else:
                for tag, reason in tagged.unavailable.items():
                    st.caption(f"{tag}: {reason}")
                deltas = tag_deltas(reference_predictions, variants, tagged.tags, tagged.unavailable)
                if deltas.empty:
                    st.info(f"No tagged pair of the {len(tagged.tags)} sampled is predicted by both the reference and a variant.")
                else:
                    app_state.show_figure(delta_bars(deltas, title=f"accuracy change per tag vs {reference_name} on {split}"),
                                          "ablations_tags", f"ablations_tags_{split}")
                    st.dataframe(deltas, hide_index=True, width="stretch",
                                 column_config=app_state.percent_columns(c for c in ACCURACY_COLUMNS if c in deltas))

        st.subheader("Pairs where the checkpoints disagree")
        ranked = disagreements({reference.name: reference_predictions, **variants}, reference.labels)
        if ranked.empty:
            st.info(f"The {len(variants) + 1} checkpoints give every pair of {split} the same label.")
        else:
            pairs, _ = app_state.read_local_split(split)
            by_id = {pair.id: pair for pair in pairs}
            ranked.insert(1, "premise", ranked["id"].map(lambda i: by_id[i].premise if i in by_id else ""))
            ranked.insert(2, "hypothesis", ranked["id"].map(lambda i: by_id[i].hypothesis if i in by_id else ""))
            st.caption(f"{len(ranked)} pairs, most distinct labels first, then the widest spread of the probability "
                       "given to the gold label" + ("" if by_id else " (sentences appear when the split is in the data folder)"))
            st.dataframe(ranked.head(200), hide_index=True, width="stretch")

st.subheader("What the paper reports")
ours = {}
for member in members:
    if member.select_accuracy is not None:
        ours.setdefault(member.config_name, 100 * member.select_accuracy)
our_label = f"ours: {protocol} {reference.select_split or 'select split'} (%)"
reported = paper_ablations(model, ours, our_label)
if reported.empty:
    st.info(f"No paper table lists variants of {model}.")
else:
    st.caption(f"{reported.attrs['paper']}: {SOURCE_NOTE}. The papers trained on the full datasets; ours come from the "
               f"reduced protocol {protocol}, so compare the differences between rows, not the levels.")
    st.dataframe(reported, hide_index=True, width="stretch",
                 column_config={our_label: st.column_config.NumberColumn(format="%.1f"),
                                "reported parameters": st.column_config.NumberColumn(format="localized")})
