"""Ablations: the checkpoints of one model family side by side, against the full model, with the papers' numbers."""
from __future__ import annotations

import streamlit as st

from nlivis.app import loading, notes, selection, widgets
from nlivis.analysis.ablations import (comparable_splits, compare_variants, families, family_members, full_model_seeds,
                                       our_accuracies, paper_ablations, short_names, tag_deltas, variant_table,
                                       with_sentences)
from nlivis.analysis.breakdown import disagreements
from nlivis.analysis.paper_tables import SOURCE_NOTE, paper_dataset
from nlivis.analysis.tags import approximate_tags
from nlivis.viz import comparison_bars, delta_bars, difference_intervals

ACCURACY_COLUMNS = ("accuracy", "reference accuracy", "difference", "CI low", "CI high", "delta")
# p-values in scientific notation: 1.5e-18, not 0.0000000000000000015
P_VALUE_COLUMN = {"McNemar p": st.column_config.NumberColumn(format="%.1e", help="McNemar's exact p (two-sided), unadjusted"),
                  "Holm p": st.column_config.NumberColumn(format="%.1e", help="Holm-adjusted over the table's tests"),
                  "BH q": st.column_config.NumberColumn(format="%.1e", help="Benjamini–Hochberg q over the table's tests")}

st.set_page_config(page_title="nlivis · ablations", page_icon=":material/science:", layout="wide")
selection.follow_url()
st.title("Ablations")
st.caption("Every checkpoint of one model under one protocol — the full model, its ablations and other seeds — "
           "read from what the checkpoint folders recorded (no weights are loaded, nothing has to be selected on Home).")
widgets.image_format_choice()

records, problems = loading.variant_records()
for problem in problems:
    st.warning(problem)
if not records:
    st.info("No checkpoints found. Train a model and its ablations on the **Train** page (e.g. configs `gcnn` and "
            "`gcnn-no_forget_gate` on the same dataset), or point Home at a folder holding checkpoints.")
    st.stop()

by_family = families(records)
linked = next((r for r in records if r.name == selection.current_variant()), None)  # the URL's variant, if any
left, right = st.columns(2)
model = left.selectbox("Model family", list(by_family), key="ablations_model",
                       index=list(by_family).index(linked.model) if linked else 0)
protocol = right.selectbox("Protocol (variants are compared within one)", by_family[model], key=f"ablations_protocol_{model}",
                           index=by_family[model].index(linked.protocol) if linked and linked.model == model else 0)
members = family_members(records, model, protocol)
seeds = full_model_seeds(members)
st.caption(f"{notes.NOTE_ICON} {notes.protocol_note_for(protocol)}")

names = [m.name for m in members]
reference_name = st.selectbox("Reference (differences are variant − reference)", names, key=f"ablations_reference_{model}_{protocol}",
                              index=names.index(linked.name) if linked and linked.name in names else names.index(seeds[0].name) if seeds else 0,
                              help="the full model (its first seed) when one was trained")
selection.set_variant(reference_name)
reference = members[names.index(reference_name)]
if not seeds:
    st.warning(f"No checkpoint of the full `{model}` config under {protocol}: differences are against {reference_name}.")

st.subheader("Variants")
table = variant_table(members, reference)
st.dataframe(table, hide_index=True, width="stretch", column_config={
    **widgets.percent_columns(table.attrs["accuracy_columns"]), "parameters": st.column_config.NumberColumn(format="localized"),
    "training time (min)": st.column_config.NumberColumn(format="%.1f"),
    "training pairs/s": st.column_config.NumberColumn(format="%.0f")})
select_column = table.attrs["select_column"]
chart = table.dropna(subset=[select_column])
widgets.show_figure(comparison_bars(chart, "variant", select_column, title=f"{model} · {protocol} · accuracy on {select_column}"),
                    "ablations_accuracy", f"{model}_{protocol}_ablations_accuracy")
if len(members) < 2:
    st.info(f"Only one checkpoint of {model} under {protocol}. Train a variant on the **Train** page (a config "
            f"named `{model}-…`) or a second seed to compare.")

st.subheader("Paired comparison with the reference")
shared = comparable_splits(members, reference)
if len(members) < 2:
    st.caption("Needs at least two checkpoints.")
elif not shared:
    st.info(f"{reference_name} shares no prediction file (predictions_<split>.jsonl) with the other variants.")
else:
    split = st.selectbox("Evaluation split", shared, key=f"ablations_split_{model}_{protocol}")
    reference_predictions, variants, problems = loading.family_predictions(members, reference, split)
    for problem in problems:
        st.error(problem)
    if not (variants and reference_predictions):
        st.info(f"No predictions on {split} to compare.")
    else:
        noise, noise_problem = loading.measure_seed_noise(seeds, split)
        if noise is not None:
            st.caption(f"Seed noise: {noise.describe(split)}. A variant whose difference is no larger than the range "
                       "is *within seed noise*: the ablation did not change accuracy by more than re-training does"
                       + (" (two seeds give a rough estimate: train a third with `scripts/train_shipped.py --only "
                          f"{model}-{protocol}-seed3`)." if len(noise.seeds) < 3 else "."))
        elif len(seeds) < 2:
            st.caption(f"Only one seed of the full `{model}` config under {protocol}: whether a difference is within "
                       f"seed noise cannot be said. Train `{model}` with seed 2 (folder suffix `-seed2`) to know.")
        else:
            st.warning(f"Seed noise cannot be measured: {noise_problem}.")
        comparison = compare_variants(reference_predictions, variants, noise)
        labels = short_names(members)
        widgets.show_figure(difference_intervals(comparison.assign(label=comparison["variant"].map(labels)), label="label",
                                                 noise=noise.gap if noise else None,
                                                 title=f"{model} · {protocol} · accuracy difference vs {labels[reference_name]} on {split}"),
                            "ablations_differences", f"{model}_{protocol}_differences_{split}")
        st.dataframe(comparison, hide_index=True, width="stretch",
                     column_config={**widgets.percent_columns(c for c in ACCURACY_COLUMNS if c in comparison), **P_VALUE_COLUMN})
        st.caption("Difference: variant − reference on the pairs both predicted, 95% paired-bootstrap interval; "
                   "McNemar's exact test on the pairs only one of them gets right, Holm-adjusted over the variants "
                   "of this table (significant: Holm p < 0.05; Benjamini–Hochberg q beside it)"
                   + ("; within seed noise: the difference is no larger than the gap between two seeds of the full "
                      "model, so even a significant one may be what re-training alone gives." if noise is not None else "."))

        st.subheader("Accuracy by annotation tag, variant − reference")
        total = loading.split_size(split)
        if total is None:
            st.info(f"The pairs of {split} are not in the data folder, so they cannot be tagged (tags need the "
                    "sentences). Set a data folder on the Home page.")
        else:
            size = total
            if total > 10:
                size = st.slider("Pairs to tag (random sample, fixed seed; tagging parses every sentence)", min_value=10,
                                 max_value=total, value=min(500, total), step=10, key="ablations_tag_size")
            tagged, tag_error = loading.tagged_sample(split, size)
            if tag_error or tagged is None:
                st.error(tag_error)
            else:
                for tag, reason in tagged.unavailable.items():
                    st.caption(f"{tag}: {reason}")
                deltas = tag_deltas(reference_predictions, variants, tagged.tags, tagged.unavailable,
                                    approximate=approximate_tags())
                if deltas.empty:
                    st.info(f"No tagged pair of the {len(tagged.tags)} sampled is predicted by both the reference and a variant.")
                else:
                    widgets.show_figure(delta_bars(deltas.assign(variant=deltas["variant"].map(labels)),
                                                   title=f"{model} · {protocol} · accuracy change per tag vs {labels[reference_name]} on {split}"),
                                        "ablations_tags", f"{model}_{protocol}_tag_differences_{split}")
                    st.dataframe(deltas, hide_index=True, width="stretch",
                                 column_config={**widgets.percent_columns(c for c in ACCURACY_COLUMNS if c in deltas), **P_VALUE_COLUMN})
                    st.caption(f"McNemar's exact p per tag, Holm-adjusted over all {len(deltas)} tag × variant tests "
                               "of this table (significant: Holm p < 0.05); BH q: Benjamini–Hochberg. `tag status` "
                               "marks the automatic tags whose rule agrees poorly with the annotators (F1 below 0.5 "
                               "on a half of the annotated MultiNLI dev pairs: `python -m nlivis tags-report`) as "
                               "approximate.")

        st.subheader("Pairs where the checkpoints disagree")
        ranked = disagreements({reference.name: reference_predictions, **variants}, reference.labels)
        if ranked.empty:
            st.info(f"The {len(variants) + 1} checkpoints give every pair of {split} the same label.")
        else:
            pairs, _ = loading.read_local_split(split)
            st.caption(f"{len(ranked)} pair(s), most distinct labels first, then the widest spread of the probability "
                       "given to the gold label" + ("" if pairs else " (sentences appear when the split is in the data folder)"))
            compared = [reference.folder] + [m.folder for m in members if m.name in variants]
            widgets.pair_table(with_sentences(ranked.head(200), pairs), "ablations_disagreements", split, models=compared)

st.subheader("What the paper reports")
our_label = f"ours: {protocol} {reference.select_split or 'select split'} (%)"
dataset = paper_dataset(protocol)
reported = paper_ablations(model, our_accuracies(members), our_label, dataset=dataset) if dataset else None
reported_formats = {our_label: st.column_config.NumberColumn(format="%.1f"),
                    "reported parameters": st.column_config.NumberColumn(format="localized")}
if reported is not None and not reported.empty:
    st.caption(f"{reported.attrs['paper']}, its {dataset} rows: {SOURCE_NOTE}. The papers trained on the full datasets; "
               f"ours come from the reduced protocol {protocol}, so compare the differences between rows, not the levels.")
    st.dataframe(reported, hide_index=True, width="stretch", column_config=reported_formats)
else:
    elsewhere = paper_ablations(model)
    if elsewhere.empty:
        st.info(f"No paper table lists variants of {model}.")
    else:
        st.info(f"{elsewhere.attrs['paper']} reports no {dataset or protocol} rows for {model}, so ours ({protocol}) are "
                "not set beside any: a number on another dataset is no comparison. Its rows on other datasets:")
        st.dataframe(elsewhere, hide_index=True, width="stretch", column_config=reported_formats)
